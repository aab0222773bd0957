// AVX2/FMA/F16C row kernels, compiled with target attributes and only called when the processor
// has the features (qkernels.cpp checks at run time).
#include "qkernels_impl.h"

#if defined(__x86_64__)
// The whole file (lambdas included) is compiled for AVX2/FMA/F16C.
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>

namespace edge::qkernels::detail {

namespace {

inline float hsum(__m256 s) {
    __m128 lo = _mm256_castps256_ps128(s), hi = _mm256_extractf128_ps(s, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
    return _mm_cvtss_f32(lo);
}

}  // namespace

// Codes are int8: |w| (unsigned) times x carrying w's sign, so maddubs sees unsigned × signed.
float row_dot_q8_avx2(const QuantInfo& q, const uint8_t* base, int64_t r,
                                                         const ActsView& x) {
    const int8_t* codes = reinterpret_cast<const int8_t*>(base + r * q.row_bytes);
    const float* sw = reinterpret_cast<const float*>(base + q.scales_offset) + r * q.groups_per_row;
    const int8_t* zw = q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float corr = 0.0f;
    int64_t b = 0;
    auto block = [&](int64_t bb, __m256& acc) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + bb * kQBlock));
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + bb * kQBlock));
        const __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(xv, w));
        const __m256i p32 = _mm256_madd_epi16(p16, ones);
        const int64_t g = block_group(q, bb);
        const float s = sw[g] * x.scale[bb];
        acc = _mm256_fmadd_ps(_mm256_set1_ps(s), _mm256_cvtepi32_ps(p32), acc);
        if (zw) corr += s * float(zw[g]) * float(x.sum[bb]);
    };
    for (; b + 2 <= x.blocks; b += 2) {
        block(b, acc0);
        block(b + 1, acc1);
    }
    for (; b < x.blocks; ++b) block(b, acc0);
    return hsum(_mm256_add_ps(acc0, acc1)) - corr;
}

// Nibbles 0..15 are already unsigned: maddubs(u, xq), then subtract z·Σxq per block.
float row_dot_q4_avx2(const QuantInfo& q, const uint8_t* base, int64_t r,
                                                         const ActsView& x) {
    const uint8_t* codes = base + r * q.row_bytes;
    const float* sw = reinterpret_cast<const float*>(base + q.scales_offset) + r * q.groups_per_row;
    const int8_t* zw = q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    const __m256i ones = _mm256_set1_epi16(1);
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float corr = 0.0f;
    auto block = [&](int64_t bb, __m256& acc) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + bb * (kQBlock / 2)));
        const __m256i w = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), low4), _mm_and_si128(raw, low4));
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + bb * kQBlock));
        const __m256i p32 = _mm256_madd_epi16(_mm256_maddubs_epi16(w, xv), ones);
        const int64_t g = block_group(q, bb);
        const float s = sw[g] * x.scale[bb];
        acc = _mm256_fmadd_ps(_mm256_set1_ps(s), _mm256_cvtepi32_ps(p32), acc);
        corr += s * float(zw ? int(zw[g]) : 8) * float(x.sum[bb]);
    };
    int64_t b = 0;
    for (; b + 2 <= x.blocks; b += 2) {
        block(b, acc0);
        block(b + 1, acc1);
    }
    for (; b < x.blocks; ++b) block(b, acc0);
    return hsum(_mm256_add_ps(acc0, acc1)) - corr;
}

float dot_f16_avx2(const uint16_t* w, const float* x, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
        const __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i + 8)));
        a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + i + 8), a1);
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i))),
                             _mm256_loadu_ps(x + i), a0);
    float s = hsum(_mm256_add_ps(a0, a1));
    if (i < n) s += dot_f16_portable(w + i, x + i, n - i);
    return s;
}

}  // namespace edge::qkernels::detail

#endif
