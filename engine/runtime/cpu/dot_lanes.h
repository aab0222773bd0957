// Internal to the CPU kernels (x86-64 with AVX2+FMA only): 8 dot products at a time with the 8
// vectors' elements in the lanes, computed in kernels::dot's own sum order so each lane is the
// bits dot(a, row) gives. Used where many rows meet the same vectors: attention's keys
// (attention.cpp) and FP32 weight rows in batched products (qkernels_float.cpp).
#pragma once
#if defined(__x86_64__)
#include <immintrin.h>

namespace edge::runtime::kernels::lanes {

// 8 × 8 floats: r[i] (row i) -> r[j] = column j (lane i = row i).
__attribute__((target("avx2,fma"), always_inline)) inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// 8 rows' dot products with q (n = N when N > 0, else the run-time n; n % 8 == 0), the rows
// transposed: rt[d] holds element d of the 8 rows (lane j: row j). kernels.cpp's dot_avx2 keeps
// four 8-wide partial sums s0..s3 (element d in s_{(d/8)%4}, lane d%8, chained over d in steps
// of 32; a remainder of 8..24 elements into s0), adds them as (s0 + s1) + (s2 + s3), then the 8
// lanes as ((e0 + e4) + (e2 + e6)) + ((e1 + e5) + (e3 + e7)). Here e_k of every row is one vector,
// so the same operations in the same order give each row's dot product.
template <int N>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 dot8(const float* q, const __m256* rt, int n) {
    if constexpr (N > 0) n = N;
    __m256 e[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        int i = 0;
        for (; i + 32 <= n; i += 32) {
            s0 = _mm256_fmadd_ps(_mm256_broadcast_ss(q + i + k), rt[i + k], s0);
            s1 = _mm256_fmadd_ps(_mm256_broadcast_ss(q + i + 8 + k), rt[i + 8 + k], s1);
            s2 = _mm256_fmadd_ps(_mm256_broadcast_ss(q + i + 16 + k), rt[i + 16 + k], s2);
            s3 = _mm256_fmadd_ps(_mm256_broadcast_ss(q + i + 24 + k), rt[i + 24 + k], s3);
        }
        for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_broadcast_ss(q + i + k), rt[i + k], s0);
        e[k] = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    }
    const __m256 l0 = _mm256_add_ps(e[0], e[4]), l1 = _mm256_add_ps(e[1], e[5]), l2 = _mm256_add_ps(e[2], e[6]),
                 l3 = _mm256_add_ps(e[3], e[7]);
    return _mm256_add_ps(_mm256_add_ps(l0, l2), _mm256_add_ps(l1, l3));
}

// dot8 for T vectors q[0..T) at once: each lane of out[t] is the bits dot8(q[t], rt, n) gives (the
// same chains, each in the same order), with every transposed row vector loaded once for the T
// vectors' FMAs instead of once each: batched FP32 products (qkernels_float.cpp) were bound by
// those loads.
template <int N, int T>
__attribute__((target("avx2,fma"), always_inline)) inline void dot8_tokens(const float* const* q, const __m256* rt,
                                                                           int n, __m256* out) {
    if constexpr (N > 0) n = N;
    __m256 e[T][8];
#pragma GCC unroll 1
    for (int k = 0; k < 8; ++k) {
        __m256 s[T][4];
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = _mm256_setzero_ps();
        int i = 0;
        for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const __m256 w = rt[i + 8 * j + k];
#pragma GCC unroll 4
                for (int t = 0; t < T; ++t)
                    s[t][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(q[t] + i + 8 * j + k), w, s[t][j]);
            }
        for (; i + 8 <= n; i += 8) {
            const __m256 w = rt[i + k];
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) s[t][0] = _mm256_fmadd_ps(_mm256_broadcast_ss(q[t] + i + k), w, s[t][0]);
        }
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
            e[t][k] = _mm256_add_ps(_mm256_add_ps(s[t][0], s[t][1]), _mm256_add_ps(s[t][2], s[t][3]));
    }
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
        const __m256 l0 = _mm256_add_ps(e[t][0], e[t][4]), l1 = _mm256_add_ps(e[t][1], e[t][5]),
                     l2 = _mm256_add_ps(e[t][2], e[t][6]), l3 = _mm256_add_ps(e[t][3], e[t][7]);
        out[t] = _mm256_add_ps(_mm256_add_ps(l0, l2), _mm256_add_ps(l1, l3));
    }
}

// Rows r[0..count) (count <= 8; the rest read as zeros) of n floats (n % 8 == 0, row stride
// `stride`) transposed into rt[0..n).
__attribute__((target("avx2,fma"), always_inline)) inline void transpose_rows(const float* rows, int64_t stride,
                                                                              int count, int n, __m256* rt) {
    for (int d0 = 0; d0 < n; d0 += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i)
            r[i] = i < count ? _mm256_loadu_ps(rows + int64_t(i) * stride + d0) : _mm256_setzero_ps();
        transpose8(r);
        for (int j = 0; j < 8; ++j) rt[d0 + j] = r[j];
    }
}

}  // namespace edge::runtime::kernels::lanes
#endif
