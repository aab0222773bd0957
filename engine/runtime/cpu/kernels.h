// FP32 CPU kernels used by the reference executor. The dot product is dispatched at run time
// (AVX2+FMA where the processor has it, a portable unrolled loop otherwise); the rest is plain
// C++ that the compiler vectorises.
#pragma once
#include <cstdint>
#include <vector>

namespace edge::runtime::kernels {

// Sum of a[i]*b[i] for i < n.
float dot(const float* a, const float* b, int64_t n);
// Name of the dot kernel picked for this processor ("avx2-fma" or "portable").
const char* dot_kernel_name();

// y[i] += a * x[i] for i < n: a multiply, then an add (no fused multiply-add), so every
// element rounds as the plain loop does (AVX where the processor has it; attention's weighted sum
// of the values).
void axpy(float* y, float a, const float* x, int64_t n);
// out[j] = dot(q, rows + j·stride, n) · scale for j < count, and y += Σ_j a[j]·(rows + j·stride)
// applied row after row: exactly the per-row calls' results (attention over one KV block), with
// one dispatched call for all the rows.
void dot_rows(float* out, const float* q, const float* rows, int64_t stride, int count, int64_t n, float scale);
void axpy_rows(float* y, const float* a, const float* rows, int64_t stride, int count, int64_t n);
// y[i] += x[i] (residual adds; AVX where the processor has it, bit-identical to the loop).
void add(float* y, const float* x, int64_t n);
// y[r][i] += b[i] for rows r of width n (a projection's bias; every executor adds it this way).
void add_rows(float* y, const float* b, int rows, int64_t n);

// out = x / sqrt(mean(x^2) + eps) * w. With AVX2+FMA the sum of squares runs in 32 partial sums
// (four 8-lane FMA chains), not one sequential sum: the last bits of a norm differ across
// processors, as the dot product's do.
void rmsnorm(float* out, const float* x, const float* w, int n, float eps);
// In-place softmax over n values (its exponentials are kernels::exp).
void softmax(float* x, int n);
// softmax of each rows[r] over lens[r] values, the rows' sequential loops interleaved: the same
// results as softmax per row, several times faster on short rows (attention's scores).
void softmax_rows(float* const* rows, const int* lens, int count);
// out[i] = log softmax(x)[i], in double (for KL divergences and NLLs over a vocabulary).
void log_softmax(const float* x, int n, std::vector<double>& out);
// a[i] = silu(a[i]) * b[i] = a[i] / (1 + e^-a[i]) * b[i]. With AVX2+FMA e^x is exp8 in
// kernels.cpp (within ~2 ulp of libm's expf), elsewhere libm's: the values are the same for any
// split of a row into pieces, not across processors.
void swiglu(float* a, const float* b, int n);
// y[i] = e^x[i] (y may be x): the exponential swiglu and softmax use on this processor.
void exp(float* y, const float* x, int n);
// Rotary embedding, interleaved pairs (2i, 2i+1) of each of `heads` heads (stride head_dim),
// pairs i < half rotated by (cos[i], sin[i]); the rest of a head is left as it is.
void rope_interleaved(float* vec, int heads, int head_dim, int half, const float* cos, const float* sin);

}  // namespace edge::runtime::kernels
