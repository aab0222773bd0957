// GPTQ (Frantar et al.): quantize W column by column in the order of H's Cholesky factor,
// spreading each column's rounding error over the columns not yet quantized.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "methods.h"

namespace edge::quant {

namespace {

// In-place lower Cholesky of a (n x n, row-major, symmetric positive definite). False if not PD.
bool cholesky_lower(std::vector<double>& a, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
        double d = a[size_t(j * n + j)];
        for (int64_t k = 0; k < j; ++k) d -= a[size_t(j * n + k)] * a[size_t(j * n + k)];
        if (!(d > 0.0)) return false;
        d = std::sqrt(d);
        a[size_t(j * n + j)] = d;
        for (int64_t i = j + 1; i < n; ++i) {
            double s = a[size_t(i * n + j)];
            for (int64_t k = 0; k < j; ++k) s -= a[size_t(i * n + k)] * a[size_t(j * n + k)];
            a[size_t(i * n + j)] = s / d;
        }
        for (int64_t k = j + 1; k < n; ++k) a[size_t(j * n + k)] = 0.0;
    }
    return true;
}

// H^-1 from its lower Cholesky factor L (H = L Lᵀ): invert L, then Lᵀ⁻¹ L⁻¹. L⁻¹ is held
// transposed (lt[j][k] = L⁻¹[k][j]) so both passes read rows, not columns; the sums run in the
// same order as over L⁻¹'s columns. Takes L by value and frees it once L⁻¹ is made, so at most
// two n×n matrices live at once.
std::vector<double> inverse_from_cholesky(std::vector<double> l, int64_t n) {
    std::vector<double> lt(size_t(n * n), 0.0);
    for (int64_t j = 0; j < n; ++j) {
        double* tj = &lt[size_t(j * n)];
        tj[j] = 1.0 / l[size_t(j * n + j)];
        for (int64_t i = j + 1; i < n; ++i) {
            const double* li_row = &l[size_t(i * n)];
            double s = 0;
            for (int64_t k = j; k < i; ++k) s -= li_row[k] * tj[k];
            tj[i] = s / l[size_t(i * n + i)];
        }
    }
    std::vector<double>().swap(l);
    std::vector<double> inv(size_t(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) {
            const double* ti = &lt[size_t(i * n)];
            const double* tj = &lt[size_t(j * n)];
            double s = 0;
            for (int64_t k = i; k < n; ++k) s += ti[k] * tj[k];
            inv[size_t(i * n + j)] = inv[size_t(j * n + i)] = s;
        }
    return inv;
}

}  // namespace

std::vector<double> hessian_from_inputs(const float* x, int64_t rows, int64_t cols) {
    std::vector<double> h(size_t(cols * cols), 0.0);
    for (int64_t t = 0; t < rows; ++t) {
        const float* xr = x + t * cols;
        for (int64_t i = 0; i < cols; ++i) {
            const double xi = xr[i];
            if (xi == 0.0) continue;
            double* hr = &h[size_t(i * cols)];
            for (int64_t j = 0; j <= i; ++j) hr[j] += xi * xr[j];
        }
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

// Memory: H (moved in) is freed once permuted; the Cholesky factor once inverted; U is made in
// place from the inverse. Peak: three cols×cols double matrices (hp, the factor, its inverse).
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

    std::vector<float> w(w_in, w_in + rows * cols);
    // Columns no calibration token touches carry no information: zero them, keep H invertible.
    for (int64_t j = 0; j < cols; ++j)
        if (h[size_t(j * cols + j)] == 0.0) {
            h[size_t(j * cols + j)] = 1.0;
            for (int64_t r = 0; r < rows; ++r) w[size_t(r * cols + j)] = 0.0f;
        }
    std::vector<int64_t> perm(static_cast<size_t>(cols));
    std::iota(perm.begin(), perm.end(), 0);
    if (opts.act_order)
        std::stable_sort(perm.begin(), perm.end(),
                         [&](int64_t a, int64_t b) { return h[size_t(a * cols + a)] > h[size_t(b * cols + b)]; });
    // Static group parameters (from the original weights) when columns are visited out of order.
    std::vector<GroupParams> params(size_t(qi.n_groups));
    if (opts.act_order)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t g = 0; g < qi.groups_per_row; ++g) {
                const int64_t c0 = g * qi.group_size, len = std::min(qi.group_size, cols - c0);
                params[size_t(r * qi.groups_per_row + g)] = group_params(&w[size_t(r * cols + c0)], len, spec);
            }
    // Permuted, dampened H; U = upper Cholesky factor of H^-1 (H^-1 = UᵀU).
    std::vector<double> hp(size_t(cols * cols));
    double mean_diag = 0;
    for (int64_t i = 0; i < cols; ++i) mean_diag += h[size_t(i * cols + i)];
    mean_diag /= double(cols);
    for (int64_t i = 0; i < cols; ++i)
        for (int64_t j = 0; j < cols; ++j) hp[size_t(i * cols + j)] = h[size_t(perm[size_t(i)] * cols + perm[size_t(j)])];
    std::vector<double>().swap(h);
    std::vector<double> u;
    double damp = opts.damp * mean_diag;
    for (int attempt = 0;; ++attempt) {
        std::vector<double> a = hp;
        for (int64_t i = 0; i < cols; ++i) a[size_t(i * cols + i)] += damp;
        if (cholesky_lower(a, cols)) {
            std::vector<double> inv = inverse_from_cholesky(std::move(a), cols);
            if (cholesky_lower(inv, cols)) {
                // U = Lᵀ in place: the upper triangle takes the lower one's values (cholesky_lower
                // leaves the upper triangle zero), the lower triangle becomes zero.
                for (int64_t i = 0; i < cols; ++i)
                    for (int64_t j = i + 1; j < cols; ++j) {
                        inv[size_t(i * cols + j)] = inv[size_t(j * cols + i)];
                        inv[size_t(j * cols + i)] = 0.0;
                    }
                u = std::move(inv);
                break;
            }
        }
        if (attempt >= 6) return err(name, ": the calibration Hessian is not positive definite even with dampening");
        damp = std::max(damp * 10.0, 1e-6 * std::max(mean_diag, 1e-12));
    }

    std::vector<double>().swap(hp);
    const int64_t B = std::max<int64_t>(1, opts.block);
    auto do_rows = [&](int64_t r0, int64_t r1) {
        std::vector<double> row(static_cast<size_t>(cols)), e(static_cast<size_t>(B));
        for (int64_t r = r0; r < r1; ++r) {
            for (int64_t i = 0; i < cols; ++i) row[size_t(i)] = w[size_t(r * cols + perm[size_t(i)])];
            for (int64_t i1 = 0; i1 < cols; i1 += B) {
                const int64_t i2 = std::min(cols, i1 + B);
                for (int64_t i = i1; i < i2; ++i) {
                    const int64_t c = perm[size_t(i)];
                    const int64_t g = qi.group_of(r, c);
                    if (!opts.act_order && (c % qi.group_size == 0)) {
                        // Group parameters from the error-updated weights of the group (in order).
                        const int64_t len = std::min(qi.group_size, cols - c);
                        std::vector<float> gw(static_cast<size_t>(len));
                        for (int64_t k = 0; k < len; ++k) gw[size_t(k)] = float(row[size_t(i + k)]);
                        params[size_t(g)] = group_params(gw.data(), len, spec);
                    }
                    const GroupParams& p = params[size_t(g)];
                    const int code = quantize_value(float(row[size_t(i)]), p, spec.bits, spec.symmetric);
                    set_code(t, r, c, code);
                    const double err_i = (row[size_t(i)] - double(dequantize_value(code, p))) / u[size_t(i * cols + i)];
                    for (int64_t j = i + 1; j < i2; ++j) row[size_t(j)] -= err_i * u[size_t(i * cols + j)];
                    e[size_t(i - i1)] = err_i;
                }
                // Lazy update of the columns after the block.
                for (int64_t k = i1; k < i2; ++k) {
                    const double ek = e[size_t(k - i1)];
                    const double* uk = &u[size_t(k * cols)];
                    for (int64_t j = i2; j < cols; ++j) row[size_t(j)] -= ek * uk[j];
                }
            }
        }
    };
    if (pool)
        pool->parallel_for(rows, do_rows, 1);
    else
        do_rows(0, rows);
    for (int64_t g = 0; g < qi.n_groups; ++g) set_group(t, g, params[size_t(g)]);
    return t;
}

}  // namespace edge::quant
