#include <algorithm>
#include <cmath>

#include "engine/runtime/cpu/qkernels.h"
#include "methods.h"

namespace edge::quant {

namespace {

// out[t][o] = Σ_i w[o][i] x[t][i]  (double accumulation; small calibration matrices)
void small_matmul(const float* x, int64_t n, const float* w, int64_t out, int64_t in, std::vector<float>& y) {
    y.assign(size_t(n * out), 0.0f);
    for (int64_t t = 0; t < n; ++t)
        for (int64_t o = 0; o < out; ++o) {
            double s = 0;
            const float* wr = w + o * in;
            const float* xr = x + t * in;
            for (int64_t i = 0; i < in; ++i) s += double(wr[i]) * xr[i];
            y[size_t(t * out + o)] = float(s);
        }
}

}  // namespace

Result<AwqResult> awq_search(const std::vector<AwqMember>& members, int64_t in, const float* x, int64_t x_rows,
                             const AwqOptions& opts) {
    if (x_rows <= 0) return err("AWQ needs calibration inputs");
    // Evenly spaced subsample of the captured rows.
    const int64_t n = std::min<int64_t>(x_rows, 512);
    std::vector<float> xs(size_t(n * in));
    for (int64_t t = 0; t < n; ++t) {
        const int64_t src = t * x_rows / n;
        std::copy(x + src * in, x + (src + 1) * in, xs.begin() + t * in);
    }
    std::vector<double> mean_abs(size_t(in), 0.0);
    for (int64_t t = 0; t < x_rows; ++t)
        for (int64_t i = 0; i < in; ++i) mean_abs[size_t(i)] += std::fabs(x[t * in + i]);
    for (auto& v : mean_abs) v = std::max(v / double(x_rows), 1e-8);

    std::vector<std::vector<float>> ref(members.size());
    for (size_t k = 0; k < members.size(); ++k)
        if (members[k].searched) small_matmul(xs.data(), n, members[k].w, members[k].rows, in, ref[k]);

    AwqResult best;
    best.error_after = -1;
    std::vector<float> s(static_cast<size_t>(in)), ws, xsc(size_t(n * in)), y;
    for (int step = 0; step <= opts.grid; ++step) {
        const double alpha = double(step) / opts.grid;
        double mx = 0, mn = 1e300;
        for (int64_t i = 0; i < in; ++i) {
            s[size_t(i)] = float(std::pow(mean_abs[size_t(i)], alpha));
            mx = std::max(mx, double(s[size_t(i)]));
            mn = std::min(mn, double(s[size_t(i)]));
        }
        const float norm = float(1.0 / std::sqrt(mx * mn));
        for (auto& v : s) v = std::max(v * norm, 1e-4f);
        for (int64_t t = 0; t < n; ++t)
            for (int64_t i = 0; i < in; ++i) xsc[size_t(t * in + i)] = xs[size_t(t * in + i)] / s[size_t(i)];
        double total = 0;
        for (size_t k = 0; k < members.size(); ++k) {
            if (!members[k].searched) continue;
            const AwqMember& m = members[k];
            ws.resize(size_t(m.rows * in));
            for (int64_t r = 0; r < m.rows; ++r)
                for (int64_t i = 0; i < in; ++i) ws[size_t(r * in + i)] = m.w[r * in + i] * s[size_t(i)];
            auto q = quantize_rtn("awq", ws.data(), {m.rows, in}, m.spec);
            if (!q.ok()) return q.error();
            const std::vector<float> dq = runtime::qkernels::dequantize(*q);
            small_matmul(xsc.data(), n, dq.data(), m.rows, in, y);
            for (size_t j = 0; j < y.size(); ++j) {
                const double d = double(y[j]) - ref[k][j];
                total += d * d;
            }
        }
        if (step == 0) best.error_before = total;
        if (best.error_after < 0 || total < best.error_after) {
            best.error_after = total;
            best.alpha = alpha;
            best.scales = s;
        }
    }
    return best;
}

}  // namespace edge::quant
