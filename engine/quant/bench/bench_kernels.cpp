// edge-quant-bench --mode kernels: one matrix-vector product per kernel family (portable, AVX2,
// AVX-512 VNNI) on the TinyLlama-1.1B shapes (2048 -> 5632 and 5632 -> 2048), INT4 and INT8 RTN
// g32 symmetric, 1 thread, median of 7 (after a warm-up) per cell, in G weights/s and as cycles
// per 32-weight block at the nominal clock given by --parts (MHz; default 3000). The matrices
// (23 MB INT8) do not fit in cache, so this mixes compute and memory like decode does; a small
// matrix (256 x 2048) that stays in L2 is reported too (compute only).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "bench_common.h"
#include "engine/runtime/cpu/qkernels.h"

using namespace edge;
using namespace edge::quant;

int run_kernel_bench(const BenchArgs& a) {
    using Clock = std::chrono::steady_clock;
    const double mhz = a.parts > 400 ? a.parts : 3000;
    ThreadPool pool(1);
    std::printf(
        "| shape (out x in) | type | kernels | median us | G weights/s | cycles / 32 weights @ %.0f MHz |\n"
        "|---|---|---|---:|---:|---:|\n",
        mhz);
    const std::pair<int64_t, int64_t> shapes[] = {{5632, 2048}, {2048, 5632}, {256, 2048}};
    for (auto [rows, cols] : shapes) {
        Tensor w = Tensor::zeros_f32("w", {rows, cols});
        std::mt19937 rng(1);
        std::normal_distribution<float> nd(0.0f, 0.02f);
        for (int64_t i = 0; i < rows * cols; ++i) w.f32_mut()[i] = nd(rng);
        std::vector<float> x(static_cast<size_t>(cols)), out(static_cast<size_t>(rows));
        for (auto& v : x) v = nd(rng) * 50.0f;
        for (int bits : {4, 8}) {
            auto q = quantize_rtn(w, QuantSpec{bits, true, QGrouping::Group, 32, QMethod::RTN});
            if (!q.ok()) return std::fprintf(stderr, "%s\n", q.message().c_str()), 1;
            for (auto level :
                 {runtime::qkernels::KernelLevel::Portable, runtime::qkernels::KernelLevel::Avx2,
                  runtime::qkernels::KernelLevel::Avx512Vnni, runtime::qkernels::KernelLevel::Avx512VnniGfni}) {
                if (!runtime::qkernels::kernel_available(level)) continue;
                runtime::qkernels::force_kernels(level);
                const int reps = rows * cols > 1000000 ? 7 : 101;
                std::vector<double> us;
                for (int r = 0; r <= reps; ++r) {
                    const auto t0 = Clock::now();
                    runtime::qkernels::matmul(out.data(), x.data(), *q, 1, pool);
                    if (r > 0) us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
                }
                const double med = median(us);
                const double gw = double(rows * cols) / med / 1e3;
                std::printf("| %lld x %lld | INT%d g32 | %s | %.1f | %.2f | %.2f |\n", (long long)rows, (long long)cols,
                            bits, runtime::qkernels::kernel_name(), med, gw,
                            mhz * 1e6 * med * 1e-6 / (double(rows * cols) / 32));
            }
            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
        }
    }
    return 0;
}
