#include "kernels.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace edge::runtime::kernels {

namespace {

float dot_portable(const float* a, const float* b, int64_t n) {
    // Eight independent partial sums: enough instruction-level parallelism for the FPU and a
    // pattern the compiler turns into packed multiplies.
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) float dot_avx2(const float* a, const float* b, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 lo = _mm256_castps256_ps128(s), hi = _mm256_extractf128_ps(s, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
    float r = _mm_cvtss_f32(lo);
    for (; i < n; ++i) r += a[i] * b[i];
    return r;
}
#endif

void axpy_portable(float* y, float a, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void add_portable(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void scale_mul_portable(float* out, const float* x, const float* w, float s, int n) {
    for (int i = 0; i < n; ++i) out[i] = w[i] * (s * x[i]);
}

void rope_portable(float* vec, int heads, int head_dim, int half, const float* cs, const float* sn) {
    for (int h = 0; h < heads; ++h) {
        float* hv = vec + size_t(h) * size_t(head_dim);
        for (int i = 0; i < half; ++i) {
            const float a = hv[2 * i], b = hv[2 * i + 1];
            hv[2 * i] = a * cs[i] - b * sn[i];
            hv[2 * i + 1] = a * sn[i] + b * cs[i];
        }
    }
}

#if defined(__x86_64__)
__attribute__((target("avx"))) void axpy_avx(float* y, float a, const float* x, int64_t n) {
    const __m256 av = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(av, _mm256_loadu_ps(x + i))));
    axpy_portable(y + i, a, x + i, n - i);
}
#endif

float sum_squares_portable(const float* x, int n) {
    float ss = 0.0f;
    for (int i = 0; i < n; ++i) ss += x[i] * x[i];
    return ss;
}

void swiglu_portable(float* a, const float* b, int n) {
    for (int i = 0; i < n; ++i) {
        const float g = a[i];
        a[i] = g / (1.0f + std::exp(-g)) * b[i];
    }
}

#if defined(__x86_64__)
// The first `left` of 8 lanes (all when left >= 8): the mask of a partial last vector.
__attribute__((target("avx2"))) inline __m256i first_n8(int left) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Σ x² in four 8-lane FMA chains (the scalar loop is one dependent add per element: ~4 cycles
// each, 2.7 µs for a 2048-wide RMSNorm, which decode runs twice per block on one thread). A
// masked tail, so every length takes the same path.
__attribute__((target("avx2,fma"))) float sum_squares_avx2(const float* x, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        const __m256 c = _mm256_loadu_ps(x + i + 16), d = _mm256_loadu_ps(x + i + 24);
        s0 = _mm256_fmadd_ps(a, a, s0);
        s1 = _mm256_fmadd_ps(b, b, s1);
        s2 = _mm256_fmadd_ps(c, c, s2);
        s3 = _mm256_fmadd_ps(d, d, s3);
    }
    for (; i < n; i += 8) {
        const __m256i m = first_n8(n - i);
        const __m256 a = _mm256_maskload_ps(x + i, m);
        s0 = _mm256_fmadd_ps(a, a, s0);
    }
    const __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 lo = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    return _mm_cvtss_f32(_mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1)));
}

// e^x for 8 floats: x = n·ln2 + r with |r| ≤ ln2/2 (ln2 split in a high part exact in float and a
// low part, so n·ln2_hi is exact), e^r by its Taylor series to r⁷ (truncation ≤ 5.3e-9 relative)
// in Horner form, 2^n added to the exponent. Inputs are clamped to [-87.3, 88.3], where 2^n
// stays a normal float; NaN passes through. Relative error ≤ ~2 ulp of float
// (Kernels.VectorExpMatchesLibm).
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(-87.3f), _mm256_min_ps(_mm256_set1_ps(88.3f), x));  // NaN kept (second operand)
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// SwiGLU with exp8: decode's 5632 expf per block and token were ~2% of the step (libm's scalar
// expf, ~10 ns each). Same formula as the portable loop, g / (1 + e^-g) · b; every element (the
// tail too, under a mask) takes the vector path, so a row gives the same values whether it is
// processed whole or in pieces (the gate/up region applies it per chunk of rows).
__attribute__((target("avx2,fma"))) inline __m256 swiglu8(__m256 g, __m256 b) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), b);
}

__attribute__((target("avx2,fma"))) void swiglu_avx2(float* a, const float* b, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(a + i, swiglu8(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    if (i < n) {
        const __m256i m = first_n8(n - i);
        _mm256_maskstore_ps(a + i, m, swiglu8(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m)));
    }
}

__attribute__((target("avx2,fma"))) void exp_avx2(float* y, const float* x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = first_n8(n - i);
        _mm256_maskstore_ps(y + i, m, exp8(_mm256_maskload_ps(x + i, m)));
    }
}
#endif

void exp_portable(float* y, const float* x, int n) {
    for (int i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

#if defined(__x86_64__)
// Element-wise kernels the executor runs on one thread between parallel regions (residual adds,
// RMSNorm's scaling, RoPE): AVX without FMA, so every element rounds exactly as in the portable
// loops (the compiler does not vectorise those at -O2: the pointers may alias).
__attribute__((target("avx"))) void add_avx(float* y, const float* x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
    add_portable(y + i, x + i, n - i);
}

__attribute__((target("avx"))) void scale_mul_avx(float* out, const float* x, const float* w, float s, int n) {
    const __m256 sv = _mm256_set1_ps(s);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(w + i), _mm256_mul_ps(sv, _mm256_loadu_ps(x + i))));
    scale_mul_portable(out + i, x + i, w + i, s, n - i);
}

// Four pairs per vector: v = (a0 b0 a1 b1 ...), its pairs swapped (b0 a0 ...), cos doubled
// (c0 c0 c1 c1 ...) and sin doubled with the even lanes negated: v·c + swapped·s gives
// a·c − b·s and b·c + a·s, the same products and one add or subtract each, as the loop.
__attribute__((target("avx"))) void rope_avx(float* vec, int heads, int head_dim, int half, const float* cs,
                                             const float* sn) {
    const __m256 neg_even = _mm256_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f);
    for (int h = 0; h < heads; ++h) {
        float* hv = vec + size_t(h) * size_t(head_dim);
        int i = 0;
        for (; i + 4 <= half; i += 4) {
            const __m128 c = _mm_loadu_ps(cs + i), s = _mm_loadu_ps(sn + i);
            const __m256 c2 = _mm256_set_m128(_mm_unpackhi_ps(c, c), _mm_unpacklo_ps(c, c));
            const __m256 s2 = _mm256_xor_ps(_mm256_set_m128(_mm_unpackhi_ps(s, s), _mm_unpacklo_ps(s, s)), neg_even);
            const __m256 v = _mm256_loadu_ps(hv + 2 * i);
            const __m256 swapped = _mm256_permute_ps(v, 0xB1);
            _mm256_storeu_ps(hv + 2 * i, _mm256_add_ps(_mm256_mul_ps(v, c2), _mm256_mul_ps(swapped, s2)));
        }
        rope_portable(hv + 2 * i, 1, head_dim, half - i, cs + i, sn + i);  // the last pairs
    }
}
#endif

using DotFn = float (*)(const float*, const float*, int64_t);
using AxpyFn = void (*)(float*, float, const float*, int64_t);
using DotRowsFn = void (*)(float*, const float*, const float*, int64_t, int, int64_t, float);
using AxpyRowsFn = void (*)(float*, const float*, const float*, int64_t, int, int64_t);

// Several rows with the single-row kernel inlined: the same sums in the same order as calling it
// per row, without a dispatched call per row (attention at head_dim 8 was mostly calls).
template <DotFn Dot>
inline void dot_rows_of(float* out, const float* q, const float* rows, int64_t stride, int count, int64_t n,
                        float scale) {
    for (int j = 0; j < count; ++j) out[j] = Dot(q, rows + int64_t(j) * stride, n) * scale;
}
template <AxpyFn Axpy>
inline void axpy_rows_of(float* y, const float* a, const float* rows, int64_t stride, int count, int64_t n) {
    for (int j = 0; j < count; ++j) Axpy(y, a[j], rows + int64_t(j) * stride, n);
}
void dot_rows_portable(float* out, const float* q, const float* rows, int64_t stride, int count, int64_t n,
                       float scale) {
    dot_rows_of<dot_portable>(out, q, rows, stride, count, n, scale);
}
void axpy_rows_portable(float* y, const float* a, const float* rows, int64_t stride, int count, int64_t n) {
    axpy_rows_of<axpy_portable>(y, a, rows, stride, count, n);
}
#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void dot_rows_avx2(float* out, const float* q, const float* rows, int64_t stride,
                                                       int count, int64_t n, float scale) {
    dot_rows_of<dot_avx2>(out, q, rows, stride, count, n, scale);
}
__attribute__((target("avx"))) void axpy_rows_avx(float* y, const float* a, const float* rows, int64_t stride,
                                                  int count, int64_t n) {
    axpy_rows_of<axpy_avx>(y, a, rows, stride, count, n);
}
#endif

struct Dispatch {
    DotFn fn = dot_portable;
    AxpyFn axpy = axpy_portable;
    DotRowsFn dot_rows = dot_rows_portable;
    AxpyRowsFn axpy_rows = axpy_rows_portable;
    float (*sum_squares)(const float*, int) = sum_squares_portable;
    void (*swiglu)(float*, const float*, int) = swiglu_portable;
    void (*exp)(float*, const float*, int) = exp_portable;
    void (*add)(float*, const float*, int64_t) = add_portable;
    void (*scale_mul)(float*, const float*, const float*, float, int) = scale_mul_portable;
    void (*rope)(float*, int, int, int, const float*, const float*) = rope_portable;
    const char* name = "portable";
    Dispatch() {
#if defined(__x86_64__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            fn = dot_avx2;
            dot_rows = dot_rows_avx2;
            sum_squares = sum_squares_avx2;
            swiglu = swiglu_avx2;
            exp = exp_avx2;
            name = "avx2-fma";
        }
        if (__builtin_cpu_supports("avx")) {
            axpy = axpy_avx;
            axpy_rows = axpy_rows_avx;
            add = add_avx;
            scale_mul = scale_mul_avx;
            rope = rope_avx;
        }
#endif
    }
};

const Dispatch& dispatch() {
    static const Dispatch d;
    return d;
}

}  // namespace

float dot(const float* a, const float* b, int64_t n) { return dispatch().fn(a, b, n); }
void axpy(float* y, float a, const float* x, int64_t n) { dispatch().axpy(y, a, x, n); }
void dot_rows(float* out, const float* q, const float* rows, int64_t stride, int count, int64_t n, float scale) {
    dispatch().dot_rows(out, q, rows, stride, count, n, scale);
}
void axpy_rows(float* y, const float* a, const float* rows, int64_t stride, int count, int64_t n) {
    dispatch().axpy_rows(y, a, rows, stride, count, n);
}
void add(float* y, const float* x, int64_t n) { dispatch().add(y, x, n); }
void add_rows(float* y, const float* b, int rows, int64_t n) {
    for (int r = 0; r < rows; ++r) add(y + size_t(r) * size_t(n), b, n);
}
const char* dot_kernel_name() { return dispatch().name; }

void rmsnorm(float* out, const float* x, const float* w, int n, float eps) {
    float ss = dispatch().sum_squares(x, n);
    ss = 1.0f / std::sqrt(ss / float(n) + eps);
    dispatch().scale_mul(out, x, w, ss, n);
}

void softmax(float* x, int n) {
    float mx = x[0];
    for (int i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
    for (int i = 0; i < n; ++i) x[i] -= mx;
    dispatch().exp(x, x, n);
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += x[i];
    const float inv = 1.0f / sum;
    for (int i = 0; i < n; ++i) x[i] *= inv;
}

namespace {
// (Loops over one pointer, which the compiler vectorizes; written inline over x[j] they stayed scalar.)
void subtract(float* x, float m, int n) {
    for (int i = 0; i < n; ++i) x[i] -= m;
}
void scale(float* x, float s, int n) {
    for (int i = 0; i < n; ++i) x[i] *= s;
}
}  // namespace

void softmax_rows(float* const* rows, const int* lens, int count) {
    // softmax's two sequential loops (the running max and the running sum, each waiting on the
    // previous element) run for 4 rows side by side; each row's operations and order are softmax's.
    for (int r0 = 0; r0 < count; r0 += 4) {
        const int m = std::min(4, count - r0);
        float* x[4];
        int len[4], common = 1 << 30;
        for (int j = 0; j < 4; ++j) {
            x[j] = rows[r0 + std::min(j, m - 1)];
            len[j] = lens[r0 + std::min(j, m - 1)];
            common = std::min(common, len[j]);
        }
        // (Four named chains: as arrays indexed in a loop they were kept in memory.)
        const float *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
        float m0 = x0[0], m1 = x1[0], m2 = x2[0], m3 = x3[0];
        for (int i = 1; i < common; ++i) {
            m0 = x0[i] > m0 ? x0[i] : m0;
            m1 = x1[i] > m1 ? x1[i] : m1;
            m2 = x2[i] > m2 ? x2[i] : m2;
            m3 = x3[i] > m3 ? x3[i] : m3;
        }
        const float mx[4] = {m0, m1, m2, m3};
        for (int j = 0; j < m; ++j) {
            float* row = x[j];
            float top = mx[j];
            for (int i = common; i < len[j]; ++i) top = row[i] > top ? row[i] : top;
            subtract(row, top, len[j]);
            dispatch().exp(row, row, len[j]);
        }
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        for (int i = 0; i < common; ++i) {
            s0 += x0[i];
            s1 += x1[i];
            s2 += x2[i];
            s3 += x3[i];
        }
        const float sum[4] = {s0, s1, s2, s3};
        for (int j = 0; j < m; ++j) {
            const float* row = x[j];
            float total = sum[j];
            for (int i = common; i < len[j]; ++i) total += row[i];
            scale(x[j], 1.0f / total, len[j]);
        }
    }
}

void log_softmax(const float* x, int n, std::vector<double>& out) {
    out.resize(size_t(n));
    double mx = x[0];
    for (int i = 1; i < n; ++i) mx = x[i] > mx ? double(x[i]) : mx;
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::exp(double(x[i]) - mx);
    const double lse = mx + std::log(s);
    for (int i = 0; i < n; ++i) out[size_t(i)] = double(x[i]) - lse;
}

void swiglu(float* a, const float* b, int n) { dispatch().swiglu(a, b, n); }
void exp(float* y, const float* x, int n) { dispatch().exp(y, x, n); }

void rope_interleaved(float* vec, int heads, int head_dim, int half, const float* cs, const float* sn) {
    dispatch().rope(vec, heads, head_dim, half, cs, sn);
}

}  // namespace edge::runtime::kernels
