#include "engine/runtime/cpu/attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/runtime/cpu/dot_lanes.h"
#include "engine/runtime/cpu/kernels.h"

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
    // The softmax of every (token, head) row of the run, their sequential loops side by side.
    thread_local std::vector<float*> rows;
    thread_local std::vector<int> lens;
    rows.clear();
    lens.clear();
    for (int t = t0; t < t1; ++t)
        for (int h = g * kv_mul; h < (g + 1) * kv_mul; ++h) {
            rows.push_back(scores + (int64_t(t) * s.n_heads + h) * s.score_stride);
            lens.push_back(pos[t] + 1);
        }
    softmax_rows(rows.data(), lens.data(), int(rows.size()));
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
        pool.parallel_for(int64_t(runs) * s.n_kv_heads, [&](int64_t b, int64_t e) {
            for (int64_t job = b; job < e; ++job) {
                const int r = int(job / s.n_kv_heads), g = int(job % s.n_kv_heads);
                attend_run_any(out, q, starts[size_t(r)], starts[size_t(r) + 1], pos, g, s, kv, scores);
            }
        });
        return;
    }
#endif
    (void)seq;
    causal_attention_rows(out, q, n, pos, s, kv, scores, pool);
}

}  // namespace edge::runtime::kernels
