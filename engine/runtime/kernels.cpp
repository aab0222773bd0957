#include "kernels.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace edge::kernels {

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
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
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

#if defined(__x86_64__)
__attribute__((target("avx"))) void axpy_avx(float* y, float a, const float* x, int64_t n) {
    const __m256 av = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(av, _mm256_loadu_ps(x + i))));
    for (; i < n; ++i) y[i] += a * x[i];
}
#endif

using DotFn = float (*)(const float*, const float*, int64_t);
using AxpyFn = void (*)(float*, float, const float*, int64_t);

struct Dispatch {
    DotFn fn = dot_portable;
    AxpyFn axpy = axpy_portable;
    const char* name = "portable";
    Dispatch() {
#if defined(__x86_64__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            fn = dot_avx2;
            name = "avx2-fma";
        }
        if (__builtin_cpu_supports("avx")) axpy = axpy_avx;
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
const char* dot_kernel_name() { return dispatch().name; }

void rmsnorm(float* out, const float* x, const float* w, int n, float eps) {
    float ss = 0.0f;
    for (int i = 0; i < n; ++i) ss += x[i] * x[i];
    ss = 1.0f / std::sqrt(ss / float(n) + eps);
    for (int i = 0; i < n; ++i) out[i] = w[i] * (ss * x[i]);
}

void softmax(float* x, int n) {
    float mx = x[0];
    for (int i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - mx);
        sum += x[i];
    }
    const float inv = 1.0f / sum;
    for (int i = 0; i < n; ++i) x[i] *= inv;
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

void swiglu(float* a, const float* b, int n) {
    for (int i = 0; i < n; ++i) {
        const float g = a[i];
        a[i] = g / (1.0f + std::exp(-g)) * b[i];
    }
}

void rope_interleaved(float* vec, int heads, int head_dim, int half, const float* cs, const float* sn) {
    for (int h = 0; h < heads; ++h) {
        float* hv = vec + size_t(h) * size_t(head_dim);
        for (int i = 0; i < half; ++i) {
            const float a = hv[2 * i], b = hv[2 * i + 1];
            hv[2 * i] = a * cs[i] - b * sn[i];
            hv[2 * i + 1] = a * sn[i] + b * cs[i];
        }
    }
}

}  // namespace edge::kernels
