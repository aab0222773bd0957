// GPTQ (Frantar et al.): quantize W column by column in the order of H's Cholesky factor,
// spreading each column's rounding error over the columns not yet quantized.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <cblas.h>

#include "methods.h"

namespace edge::quant {

namespace {

// LAPACK (Debian's liblapack3, normally OpenBLAS through the alternatives system): Cholesky
// factorisation and the inverse from it. Column-major; a symmetric matrix reads the same either way.
extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
}

// a (n x n, row-major, symmetric positive definite) -> U, upper triangular (row-major, the strict
// lower triangle is left undefined), with a⁻¹ = UᵀU. False when a (or its inverse, numerically)
// is not positive definite. LAPACK's "L" in column-major order is the row-major upper triangle:
// dpotrf gives a = LLᵀ, dpotri overwrites L with the triangle of a⁻¹, dpotrf again gives
// a⁻¹ = L'L'ᵀ, and row-major element (i, j≥i) is L'[j][i], so U = L'ᵀ.
bool inverse_cholesky_upper(std::vector<double>& a, int64_t n) {
    const int ni = int(n);
    int info = 0;
    dpotrf_("L", &ni, a.data(), &ni, &info, 1);
    if (info != 0) return false;
    dpotri_("L", &ni, a.data(), &ni, &info, 1);
    if (info != 0) return false;
    dpotrf_("L", &ni, a.data(), &ni, &info, 1);
    return info == 0;
}

}  // namespace

std::vector<double> hessian_from_inputs(const float* x, int64_t rows, int64_t cols) {
    std::vector<double> h(size_t(cols * cols), 0.0);
    // XᵀX by BLAS (dsyrk) over chunks of rows converted to double: the lower triangle (row-major).
    constexpr int64_t kChunk = 256;
    std::vector<double> buf(size_t(std::min(rows, kChunk) * cols));
    for (int64_t r0 = 0; r0 < rows; r0 += kChunk) {
        const int64_t m = std::min(kChunk, rows - r0);
        std::copy(x + r0 * cols, x + (r0 + m) * cols, buf.begin());
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, int(cols), int(m), 1.0, buf.data(), int(cols), 1.0, h.data(),
                    int(cols));
    }
    const double f = rows > 0 ? 2.0 / double(rows) : 0.0;
    for (int64_t i = 0; i < cols; ++i)
        for (int64_t j = 0; j <= i; ++j) h[size_t(j * cols + i)] = h[size_t(i * cols + j)] *= f;
    return h;
}

Result<Tensor> quantize_gptq(const std::string& name, const float* w_in, int64_t rows, int64_t cols,
                             const std::vector<double>& h_in, const QuantSpec& spec_in, const GptqOptions& opts,
                             ThreadPool* pool) {
    return quantize_gptq(name, w_in, rows, cols, std::vector<double>(h_in), spec_in, opts, pool);
}

// Memory: H (moved in) is freed once permuted; U is made in place from a dampened copy of it
// (LAPACK). Peak: two cols×cols double matrices (the permuted H and U), then U and W in double
// (W itself is read in place, never copied as floats).
Result<Tensor> quantize_gptq(const std::string& name, const float* w_in, int64_t rows, int64_t cols,
                             std::vector<double>&& h, const QuantSpec& spec_in, const GptqOptions& opts,
                             ThreadPool* pool) {
    if (spec_in.grouping == QGrouping::Flat) return err(name, ": gptq needs per-channel or per-row groups");
    if (int64_t(h.size()) != cols * cols) return err(name, ": Hessian is not ", cols, "x", cols);
    QuantSpec spec = spec_in;
    spec.method = QMethod::GPTQ;
    auto made = make_quant_tensor(name, {rows, cols}, spec);
    if (!made.ok()) return made.error();
    Tensor t = std::move(made).value();
    const QuantInfo& qi = *t.quant;
    for (int64_t i = 0; i < rows * cols; ++i)
        if (!std::isfinite(w_in[i])) return err(name, ": weight ", i, " is not finite; cannot quantize");

    // Columns no calibration token touches carry no information: they count as zero weights
    // (w_in itself is read in place, never copied), and H stays invertible.
    std::vector<uint8_t> dead(static_cast<size_t>(cols), 0);
    for (int64_t j = 0; j < cols; ++j)
        if (h[size_t(j * cols + j)] == 0.0) {
            h[size_t(j * cols + j)] = 1.0;
            dead[size_t(j)] = 1;
        }
    auto weight = [&](int64_t r, int64_t c) { return dead[size_t(c)] ? 0.0f : w_in[r * cols + c]; };
    std::vector<int64_t> perm(static_cast<size_t>(cols));
    std::iota(perm.begin(), perm.end(), 0);
    if (opts.act_order)
        std::stable_sort(perm.begin(), perm.end(),
                         [&](int64_t a, int64_t b) { return h[size_t(a * cols + a)] > h[size_t(b * cols + b)]; });
    // Static group parameters (from the original weights) when columns are visited out of order.
    std::vector<GroupParams> params(size_t(qi.n_groups));
    if (opts.act_order) {
        std::vector<float> gw;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t g = 0; g < qi.groups_per_row; ++g) {
                const int64_t c0 = g * qi.group_size, len = std::min(qi.group_size, cols - c0);
                gw.resize(size_t(len));
                for (int64_t k = 0; k < len; ++k) gw[size_t(k)] = weight(r, c0 + k);
                params[size_t(r * qi.groups_per_row + g)] = group_params(gw.data(), len, spec);
            }
    }
    // Permuted, dampened H; U = upper Cholesky factor of H^-1 (H^-1 = UᵀU).
    std::vector<double> hp(size_t(cols * cols));
    double mean_diag = 0;
    for (int64_t i = 0; i < cols; ++i) mean_diag += h[size_t(i * cols + i)];
    mean_diag /= double(cols);
    for (int64_t i = 0; i < cols; ++i)
        for (int64_t j = 0; j < cols; ++j)
            hp[size_t(i * cols + j)] = h[size_t(perm[size_t(i)] * cols + perm[size_t(j)])];
    std::vector<double>().swap(h);
    std::vector<double> u;
    double damp = opts.damp * mean_diag;
    for (int attempt = 0;; ++attempt) {
        std::vector<double> a = hp;
        for (int64_t i = 0; i < cols; ++i) a[size_t(i * cols + i)] += damp;
        if (inverse_cholesky_upper(a, cols)) {
            u = std::move(a);
            break;
        }
        if (attempt >= 6) return err(name, ": the calibration Hessian is not positive definite even with dampening");
        damp = std::max(damp * 10.0, 1e-6 * std::max(mean_diag, 1e-12));
    }

    std::vector<double>().swap(hp);
    const int64_t B = std::max<int64_t>(1, std::min<int64_t>(opts.block, cols));
    // All rows advance together one block of B columns at a time: within the block each row is
    // quantized column by column with its error spread over the block's later columns; then the
    // block's errors update every later column at once, W[:, i2:] -= E·U[i1:i2, i2:] (one dgemm),
    // so U streams from memory once per matrix instead of once per row.
    std::vector<double> wd(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < cols; ++i) wd[size_t(r * cols + i)] = weight(r, perm[size_t(i)]);
    std::vector<double> e(size_t(rows * B));
    for (int64_t i1 = 0; i1 < cols; i1 += B) {
        const int64_t i2 = std::min(cols, i1 + B);
        auto do_rows = [&](int64_t r0, int64_t r1) {
            std::vector<float> gw;
            for (int64_t r = r0; r < r1; ++r) {
                double* row = &wd[size_t(r * cols)];
                double* er = &e[size_t(r * B)];
                for (int64_t i = i1; i < i2; ++i) {
                    const int64_t c = perm[size_t(i)];
                    const int64_t g = qi.group_of(r, c);
                    if (!opts.act_order && (c % qi.group_size == 0)) {
                        // Group parameters from the error-updated weights of the group (in order).
                        const int64_t len = std::min(qi.group_size, cols - c);
                        gw.resize(size_t(len));
                        for (int64_t k = 0; k < len; ++k) gw[size_t(k)] = float(row[i + k]);
                        params[size_t(g)] = group_params(gw.data(), len, spec);
                    }
                    const GroupParams& p = params[size_t(g)];
                    const int code = quantize_value(float(row[i]), p, spec.bits, spec.symmetric);
                    set_code(t, r, c, code);
                    const double err_i = (row[i] - double(dequantize_value(code, p))) / u[size_t(i * cols + i)];
                    const double* ui = &u[size_t(i * cols)];
                    for (int64_t j = i + 1; j < i2; ++j) row[j] -= err_i * ui[j];
                    er[i - i1] = err_i;
                }
            }
        };
        if (pool)
            pool->parallel_for(rows, do_rows, 1);
        else
            do_rows(0, rows);
        if (i2 < cols)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(cols - i2), int(i2 - i1), -1.0,
                        e.data(), int(B), &u[size_t(i1 * cols + i2)], int(cols), 1.0, &wd[size_t(i2)], int(cols));
    }
    for (int64_t g = 0; g < qi.n_groups; ++g) set_group(t, g, params[size_t(g)]);
    return store_scales(std::move(t), spec);
}

}  // namespace edge::quant
