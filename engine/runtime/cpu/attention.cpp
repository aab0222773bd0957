#include "engine/runtime/cpu/attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/runtime/cpu/dot_lanes.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/qkernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace edge::runtime::kernels {

namespace {

#if defined(__x86_64__)
struct alignas(32) Vec8 {
    float v[8];
};
#endif

// One (token, head) the plain way: the reference arithmetic the fast layout reproduces.
void attend_rows(float* out, const float* q, int t, int h, int len, const AttentionShape& s, const KvBlocks& kv,
                 float* att) {
    const int HD = s.head_dim, B = s.block_tokens;
    const int64_t kvo = int64_t(h / (s.n_heads / s.n_kv_heads)) * HD;
    const float* qh = q + (int64_t(t) * s.n_heads + h) * HD;
    for (int p = 0; p < len; p += B)
        dot_rows(att + p, qh, kv.rows(kv.ctx, t, p / B, false) + kvo, s.kv_width, std::min(B, len - p), HD, s.scale);
    softmax(att, len);
    float* o = out + (int64_t(t) * s.n_heads + h) * HD;
    std::fill(o, o + HD, 0.0f);
    for (int p = 0; p < len; p += B)
        axpy_rows(o, att + p, kv.rows(kv.ctx, t, p / B, true) + kvo, s.kv_width, std::min(B, len - p), HD);
}

#if defined(__x86_64__)
bool fast_layout_available() {
    static const bool ok = [] {
        __builtin_cpu_init();
        // The same test kernels.cpp's dispatch makes for dot (AVX2+FMA) and axpy (AVX).
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    return ok;
}

// The softmax of every (token, head) score row of a run (tokens [t0, t1), heads [h0, h1)), their
// sequential loops side by side.
void softmax_run(float* scores, int t0, int t1, const int* pos, int h0, int h1, const AttentionShape& s) {
    thread_local std::vector<float*> rows;
    thread_local std::vector<int> lens;
    rows.clear();
    lens.clear();
    for (int t = t0; t < t1; ++t)
        for (int h = h0; h < h1; ++h) {
            rows.push_back(scores + (int64_t(t) * s.n_heads + h) * s.score_stride);
            lens.push_back(pos[t] + 1);
        }
    softmax_rows(rows.data(), lens.data(), int(rows.size()));
}

// out[0..HD) = Σ_p att[p]·v_p over `len` positions, a multiply then an add per element and
// position (axpy_avx's rounding), C = HD / 8 accumulators in registers. Compiled for AVX without
// FMA, as axpy_avx is: with FMA enabled the compiler fuses the multiply and the add (GCC contracts
// intrinsics too), which rounds once instead of twice.
template <int C>
__attribute__((target("avx"), noinline)) void weighted_values(float* out, const float* att, int len, int B, int HD,
                                                              int64_t kv_width, int64_t kvo, const KvBlocks& kv,
                                                              int t) {
    const int chunks = C > 0 ? C : HD / 8;
    __m256 acc[std::max(C, 1)];
    thread_local std::vector<Vec8> wide;
    __m256* o = acc;
    if constexpr (C == 0) {
        wide.resize(size_t(chunks));
        o = reinterpret_cast<__m256*>(wide.data());
    }
    for (int c = 0; c < chunks; ++c) o[c] = _mm256_setzero_ps();
    for (int p0 = 0; p0 < len; p0 += B) {
        const float* v = kv.rows(kv.ctx, t, p0 / B, true) + kvo;
        const int m = std::min(B, len - p0);
        for (int j = 0; j < m; ++j, v += kv_width) {
            const __m256 a = _mm256_set1_ps(att[p0 + j]);
#pragma GCC unroll 16
            for (int c = 0; c < chunks; ++c) o[c] = _mm256_add_ps(o[c], _mm256_mul_ps(a, _mm256_loadu_ps(v + 8 * c)));
        }
    }
    for (int c = 0; c < chunks; ++c) _mm256_storeu_ps(out + 8 * c, o[c]);
}

// Tokens [t0, t1) of one sequence × the query heads of KV head g; HDT: head_dim when it is one of
// the sizes compiled for (the dot products unrolled), else 0.
template <int HDT>
__attribute__((target("avx2,fma"))) void attend_run(float* out, const float* q, int t0, int t1, const int* pos, int g,
                                                    const AttentionShape& s, const KvBlocks& kv, float* scores) {
    const int HD = HDT > 0 ? HDT : s.head_dim, B = s.block_tokens, kv_mul = s.n_heads / s.n_kv_heads;
    const int64_t kvo = int64_t(g) * HD;
    int max_len = 0;
    for (int t = t0; t < t1; ++t) max_len = std::max(max_len, pos[t] + 1);
    const int groups = (B + 7) / 8;  // vectors of 8 keys per block
    thread_local std::vector<Vec8> kt_buf;
    kt_buf.resize(size_t(groups) * size_t(HD));
    __m256* kt = reinterpret_cast<__m256*>(kt_buf.data());
    const __m256 scale = _mm256_set1_ps(s.scale);
    for (int p0 = 0; p0 < max_len; p0 += B) {
        const int count = std::min(B, max_len - p0);
        const float* k = kv.rows(kv.ctx, t0, p0 / B, false) + kvo;
        // The block's keys (of this KV head) transposed, zero past `count`.
        for (int kg = 0; kg * 8 < count; ++kg)
            lanes::transpose_rows(k + int64_t(kg) * 8 * s.kv_width, s.kv_width, std::min(8, count - kg * 8), HD,
                                  kt + int64_t(kg) * HD);
        for (int t = t0; t < t1; ++t) {
            const int valid = std::min(B, pos[t] + 1 - p0);
            if (valid <= 0) continue;
            for (int h = g * kv_mul; h < (g + 1) * kv_mul; ++h) {
                const float* qh = q + (int64_t(t) * s.n_heads + h) * HD;
                float* att = scores + (int64_t(t) * s.n_heads + h) * s.score_stride + p0;
                for (int kg = 0; kg * 8 < valid; ++kg) {
                    const __m256 r = _mm256_mul_ps(lanes::dot8<HDT>(qh, kt + int64_t(kg) * HD, HD), scale);
                    if (valid - kg * 8 >= 8) {
                        _mm256_storeu_ps(att + kg * 8, r);
                    } else {
                        alignas(32) float tmp[8];
                        _mm256_store_ps(tmp, r);
                        std::memcpy(att + kg * 8, tmp, sizeof(float) * size_t(valid - kg * 8));
                    }
                }
            }
        }
    }
    softmax_run(scores, t0, t1, pos, g * kv_mul, (g + 1) * kv_mul, s);
    for (int t = t0; t < t1; ++t)
        for (int h = g * kv_mul; h < (g + 1) * kv_mul; ++h) {
            const int len = pos[t] + 1;
            const float* att = scores + (int64_t(t) * s.n_heads + h) * s.score_stride;
            float* o = out + (int64_t(t) * s.n_heads + h) * HD;
            switch (HD / 8) {
                case 1: weighted_values<1>(o, att, len, B, HD, s.kv_width, kvo, kv, t); break;
                case 2: weighted_values<2>(o, att, len, B, HD, s.kv_width, kvo, kv, t); break;
                case 4: weighted_values<4>(o, att, len, B, HD, s.kv_width, kvo, kv, t); break;
                case 8: weighted_values<8>(o, att, len, B, HD, s.kv_width, kvo, kv, t); break;
                case 16: weighted_values<16>(o, att, len, B, HD, s.kv_width, kvo, kv, t); break;
                default: weighted_values<0>(o, att, len, B, HD, s.kv_width, kvo, kv, t); break;
            }
        }
}

void attend_run_any(float* out, const float* q, int t0, int t1, const int* pos, int g, const AttentionShape& s,
                    const KvBlocks& kv, float* scores) {
    switch (s.head_dim) {
        case 8: return attend_run<8>(out, q, t0, t1, pos, g, s, kv, scores);
        case 16: return attend_run<16>(out, q, t0, t1, pos, g, s, kv, scores);
        case 32: return attend_run<32>(out, q, t0, t1, pos, g, s, kv, scores);
        case 64: return attend_run<64>(out, q, t0, t1, pos, g, s, kv, scores);
        case 128: return attend_run<128>(out, q, t0, t1, pos, g, s, kv, scores);
        default: return attend_run<0>(out, q, t0, t1, pos, g, s, kv, scores);
    }
}
// The same arithmetic with AVX-512 (processors whose kernel family is AVX-512 VNNI, the cap of
// qkernels::force_kernels included): 16 keys per score vector (a KV block of 16 positions is one
// vector), up to four query heads of the group per pass over the keys (each transposed key vector
// feeds all of them), and the values' sums 16 lanes wide for up to four heads of a token at once
// (each value vector loaded once for them). Lane arithmetic is the AVX2 layout's: dot's partial
// sums per lane, then a multiply and an add per value element.
struct alignas(64) Vec16 {
    float v[16];
};

bool avx512_layout_available() { return qkernels::kernel_level() >= qkernels::KernelLevel::Avx512Vnni; }

// Rows r[0..count) (count <= 16; the rest read as zeros) of n floats (n % 8 == 0) transposed into
// rt[0..n): rt[d] lane j = element d of row j.
__attribute__((target("avx512f,avx2,fma"))) void transpose_rows16(const float* rows, int64_t stride, int count, int n,
                                                                  __m512* rt) {
    for (int d0 = 0; d0 < n; d0 += 8) {
        __m256 lo[8], hi[8];
        for (int i = 0; i < 8; ++i) {
            lo[i] = i < count ? _mm256_loadu_ps(rows + int64_t(i) * stride + d0) : _mm256_setzero_ps();
            hi[i] = i + 8 < count ? _mm256_loadu_ps(rows + int64_t(i + 8) * stride + d0) : _mm256_setzero_ps();
        }
        lanes::transpose8(lo);
        lanes::transpose8(hi);
        for (int j = 0; j < 8; ++j) {
            float* dst = reinterpret_cast<float*>(rt + d0 + j);
            _mm256_store_ps(dst, lo[j]);
            _mm256_store_ps(dst + 8, hi[j]);
        }
    }
}

// R query rows' dot products with 16 keys (rt as transpose_rows16 leaves them), lanes::dot8's
// order per lane (kernels::dot's partial sums s0..s3, then ((e0 + e4) + (e2 + e6)) + ((e1 + e5) +
// (e3 + e7))). The e_k are made in the order 0, 4, 2, 6, 1, 5, 3, 7 and folded as soon as their
// pair is there, so a row holds at most three of them beside its four partial sums: four rows fit
// the 32 registers.
// e_k of R rows: dot's four partial sums over elements k, k + 8, ... (lane: key), added.
template <int N, int R>
__attribute__((target("avx512f"), always_inline)) inline void dot16_e(const float* const* q, const __m512* rt, int n,
                                                                      int k, __m512* e) {
    if constexpr (N > 0) n = N;
    __m512 s[R][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) s[r][0] = s[r][1] = s[r][2] = s[r][3] = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m512 kv = rt[i + 8 * c + k];
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r) s[r][c] = _mm512_fmadd_ps(_mm512_set1_ps(q[r][i + 8 * c + k]), kv, s[r][c]);
        }
    for (; i + 8 <= n; i += 8)
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) s[r][0] = _mm512_fmadd_ps(_mm512_set1_ps(q[r][i + k]), rt[i + k], s[r][0]);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) e[r] = _mm512_add_ps(_mm512_add_ps(s[r][0], s[r][1]), _mm512_add_ps(s[r][2], s[r][3]));
}

template <int N, int R>
__attribute__((target("avx512f"), always_inline)) inline void dot16(const float* const* q, const __m512* rt, int n,
                                                                    __m512* out) {
    __m512 half[2][R];  // (e0 + e4) + (e2 + e6), then (e1 + e5) + (e3 + e7)
#pragma GCC unroll 2
    for (int odd = 0; odd < 2; ++odd) {
        __m512 a[R], b[R], pair[R];
        dot16_e<N, R>(q, rt, n, odd, a);
        dot16_e<N, R>(q, rt, n, odd + 4, b);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) pair[r] = _mm512_add_ps(a[r], b[r]);
        dot16_e<N, R>(q, rt, n, odd + 2, a);
        dot16_e<N, R>(q, rt, n, odd + 6, b);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) half[odd][r] = _mm512_add_ps(pair[r], _mm512_add_ps(a[r], b[r]));
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) out[r] = _mm512_add_ps(half[0][r], half[1][r]);
}

// out[r][0..16C) = Σ_p att[r][p]·v_p for R rows of the same length, weighted_values' multiply
// then add per element and position (the product is kept apart from the add: no contraction).
template <int C, int R>
__attribute__((target("avx512f"), noinline)) void weighted_values16(float* const* out, const float* const* att, int len,
                                                                    int B, int64_t kv_width, int64_t kvo,
                                                                    const KvBlocks& kv, int t) {
    __m512 o[R][C];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) o[r][c] = _mm512_setzero_ps();
    for (int p0 = 0; p0 < len; p0 += B) {
        const float* v = kv.rows(kv.ctx, t, p0 / B, true) + kvo;
        const int m = std::min(B, len - p0);
        for (int j = 0; j < m; ++j, v += kv_width) {
            __m512 a[R];
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r) a[r] = _mm512_set1_ps(att[r][p0 + j]);
#pragma GCC unroll 8
            for (int c = 0; c < C; ++c) {
                const __m512 x = _mm512_loadu_ps(v + 16 * c);
#pragma GCC unroll 4
                for (int r = 0; r < R; ++r) {
                    __m512 prod = _mm512_mul_ps(a[r], x);
                    asm("" : "+v"(prod));  // (a separate multiply and add: the reference rounds twice)
                    o[r][c] = _mm512_add_ps(o[r][c], prod);
                }
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) _mm512_storeu_ps(out[r] + 16 * c, o[r][c]);
}

template <int C>
void weighted_values16_rows(float* const* out, const float* const* att, int rows, int len, int B, int64_t kv_width,
                            int64_t kvo, const KvBlocks& kv, int t) {
    switch (rows) {
        case 4: return weighted_values16<C, 4>(out, att, len, B, kv_width, kvo, kv, t);
        case 3: return weighted_values16<C, 3>(out, att, len, B, kv_width, kvo, kv, t);
        case 2: return weighted_values16<C, 2>(out, att, len, B, kv_width, kvo, kv, t);
        default: return weighted_values16<C, 1>(out, att, len, B, kv_width, kvo, kv, t);
    }
}

// attend_run's work with 16 keys per vector and up to four heads per pass (head_dim % 16 == 0).
template <int HDT>
__attribute__((target("avx512f,avx2,fma"))) void attend_run16(float* out, const float* q, int t0, int t1,
                                                              const int* pos, int g, const AttentionShape& s,
                                                              const KvBlocks& kv, float* scores) {
    const int HD = HDT > 0 ? HDT : s.head_dim, B = s.block_tokens, kv_mul = s.n_heads / s.n_kv_heads;
    const int64_t kvo = int64_t(g) * HD;
    const int h0 = g * kv_mul, h1 = h0 + kv_mul;
    int max_len = 0;
    for (int t = t0; t < t1; ++t) max_len = std::max(max_len, pos[t] + 1);
    const int groups = (B + 15) / 16;  // vectors of 16 keys per block
    thread_local std::vector<Vec16> kt_buf;
    kt_buf.resize(size_t(groups) * size_t(HD));
    __m512* kt = reinterpret_cast<__m512*>(kt_buf.data());
    const __m512 scale = _mm512_set1_ps(s.scale);
    for (int p0 = 0; p0 < max_len; p0 += B) {
        const int count = std::min(B, max_len - p0);
        const float* k = kv.rows(kv.ctx, t0, p0 / B, false) + kvo;
        for (int kg = 0; kg * 16 < count; ++kg)
            transpose_rows16(k + int64_t(kg) * 16 * s.kv_width, s.kv_width, std::min(16, count - kg * 16), HD,
                             kt + int64_t(kg) * HD);
        for (int t = t0; t < t1; ++t) {
            const int valid = std::min(B, pos[t] + 1 - p0);
            if (valid <= 0) continue;
            for (int h = h0; h < h1; h += 4) {
                const int R = std::min(4, h1 - h);
                const float* qh[4];
                float* att[4];
                for (int j = 0; j < 4; ++j) {  // (rows past R repeat the last: computed, not stored)
                    const int hj = h + std::min(j, R - 1);
                    qh[j] = q + (int64_t(t) * s.n_heads + hj) * HD;
                    att[j] = scores + (int64_t(t) * s.n_heads + hj) * s.score_stride + p0;
                }
                for (int kg = 0; kg * 16 < valid; ++kg) {
                    __m512 r[4];
                    const __m512* rt = kt + int64_t(kg) * HD;
                    switch (R) {
                        case 4: dot16<HDT, 4>(qh, rt, HD, r); break;
                        case 3: dot16<HDT, 3>(qh, rt, HD, r); break;
                        case 2: dot16<HDT, 2>(qh, rt, HD, r); break;
                        default: dot16<HDT, 1>(qh, rt, HD, r); break;
                    }
                    const int left = valid - kg * 16;
                    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << unsigned(left)) - 1u);
                    for (int j = 0; j < R; ++j) _mm512_mask_storeu_ps(att[j] + kg * 16, m, _mm512_mul_ps(r[j], scale));
                }
            }
        }
    }
    softmax_run(scores, t0, t1, pos, h0, h1, s);
    // The values: up to 4 heads of a token (the same positions) share each loaded value vector.
    for (int t = t0; t < t1; ++t)
        for (int h = h0; h < h1; h += 4) {
            const int R = std::min(4, h1 - h), len = pos[t] + 1;
            const float* att[4];
            float* o[4];
            for (int j = 0; j < R; ++j) {
                att[j] = scores + (int64_t(t) * s.n_heads + h + j) * s.score_stride;
                o[j] = out + (int64_t(t) * s.n_heads + h + j) * HD;
            }
            switch (HD / 16) {
                case 1: weighted_values16_rows<1>(o, att, R, len, B, s.kv_width, kvo, kv, t); break;
                case 2: weighted_values16_rows<2>(o, att, R, len, B, s.kv_width, kvo, kv, t); break;
                case 4: weighted_values16_rows<4>(o, att, R, len, B, s.kv_width, kvo, kv, t); break;
                case 8: weighted_values16_rows<8>(o, att, R, len, B, s.kv_width, kvo, kv, t); break;
                default:  // (other multiples of 16: the AVX2 sums, one head at a time)
                    for (int j = 0; j < R; ++j) weighted_values<0>(o[j], att[j], len, B, HD, s.kv_width, kvo, kv, t);
                    break;
            }
        }
}

void attend_run16_any(float* out, const float* q, int t0, int t1, const int* pos, int g, const AttentionShape& s,
                      const KvBlocks& kv, float* scores) {
    switch (s.head_dim) {
        case 16: return attend_run16<16>(out, q, t0, t1, pos, g, s, kv, scores);
        case 32: return attend_run16<32>(out, q, t0, t1, pos, g, s, kv, scores);
        case 64: return attend_run16<64>(out, q, t0, t1, pos, g, s, kv, scores);
        case 128: return attend_run16<128>(out, q, t0, t1, pos, g, s, kv, scores);
        default: return attend_run16<0>(out, q, t0, t1, pos, g, s, kv, scores);
    }
}
#endif

}  // namespace

void causal_attention_rows(float* out, const float* q, int n, const int* pos, const AttentionShape& s,
                           const KvBlocks& kv, float* scores, ThreadPool& pool) {
    pool.parallel_for(int64_t(n) * s.n_heads, [&](int64_t b, int64_t e) {
        for (int64_t job = b; job < e; ++job) {
            const int t = int(job / s.n_heads), h = int(job % s.n_heads);
            attend_rows(out, q, t, h, pos[t] + 1, s, kv, scores + job * s.score_stride);
        }
    });
}

void causal_attention(float* out, const float* q, int n, const int* pos, const int* seq, const AttentionShape& s,
                      const KvBlocks& kv, float* scores, ThreadPool& pool) {
#if defined(__x86_64__)
    if (fast_layout_available() && s.head_dim % 8 == 0 && s.head_dim > 0) {
        // Runs of up to kRun consecutive tokens of one sequence share each block's transposed keys.
        constexpr int kRun = 16;
        std::vector<int> starts;
        for (int t = 0; t < n; ++t)
            if (t == 0 || seq[t] != seq[t - 1] || t - starts.back() == kRun) starts.push_back(t);
        starts.push_back(n);
        const int runs = int(starts.size()) - 1;
        const bool wide = s.head_dim % 16 == 0 && avx512_layout_available();
        pool.parallel_for(int64_t(runs) * s.n_kv_heads, [&](int64_t b, int64_t e) {
            for (int64_t job = b; job < e; ++job) {
                const int r = int(job / s.n_kv_heads), g = int(job % s.n_kv_heads);
                (wide ? attend_run16_any : attend_run_any)(out, q, starts[size_t(r)], starts[size_t(r) + 1], pos, g, s,
                                                           kv, scores);
            }
        });
        return;
    }
#endif
    (void)seq;
    causal_attention_rows(out, q, n, pos, s, kv, scores, pool);
}

}  // namespace edge::runtime::kernels
