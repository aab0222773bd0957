// edge-quant-bench --mode gemm: the batched products of prefill, calibration and validation, one
// weight matrix at a time, on the Llama-3.2-1B shapes (Q/O 2048 -> 2048, gate/up 2048 -> 8192,
// down 8192 -> 2048), INT4 and INT8 g32 RTN symmetric with half scales (what `compile` writes) and
// FP16 and BF16 (a reference model's weights as stored, multiplied in floats),
// for 1, 16, 128 and 512 tokens at 1 and 2 threads. Each cell: the median and the best of
// --calib-seqs runs (default 32) after a warm-up (--only 2048x8192 picks one shape, --only BF16 one
// type, --tokens 1,128 the token counts), the useful
// multiply-adds per second (rows · cols · tokens / median time), and that as a share of two peaks
// this command measures itself on this processor, per thread times the threads:
//   dot peak   independent vpdpbusd (AVX-512 VNNI, 64 int8 multiply-adds each) or vpmaddubsw
//              (AVX2, 32; also printed: vpmaddubsw + vpmaddwd pairs) per second: what the integer units can do;
//   FMA peak   independent 16-lane (AVX-512) or 8-lane (AVX2) float FMAs per second.
// FP16 and BF16 rows (a reference's weights as stored) are multiplied in floats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>

#include "bench_common.h"
#include "engine/core/half.h"
#include "engine/runtime/cpu/qkernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace edge;
using namespace edge::quant;

namespace {

using Clock = std::chrono::steady_clock;

#if defined(__x86_64__)
// 12 independent accumulators: enough to hide a 4-5 cycle latency on two ports.
__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) double vnni512_dots_per_s() {
    __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0,
            a10 = a0, a11 = a0;
    const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(2);
    const long iters = 20'000'000;
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
#define EDGE_DP(a) a = _mm512_dpbusd_epi32(a, x, y)
        EDGE_DP(a0);
        EDGE_DP(a1);
        EDGE_DP(a2);
        EDGE_DP(a3);
        EDGE_DP(a4);
        EDGE_DP(a5);
        EDGE_DP(a6);
        EDGE_DP(a7);
        EDGE_DP(a8);
        EDGE_DP(a9);
        EDGE_DP(a10);
        EDGE_DP(a11);
#undef EDGE_DP
        asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
        asm volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return double(iters) * 12 * 64 / s;  // int8 multiply-adds per second
}

__attribute__((target("avx512f"), noinline)) double fma512_per_s() {
    __m512 a0 = _mm512_set1_ps(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0,
           a10 = a0, a11 = a0;
    const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-3f);
    const long iters = 20'000'000;
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
#define EDGE_FMA(a) a = _mm512_fmadd_ps(a, x, y)
        EDGE_FMA(a0);
        EDGE_FMA(a1);
        EDGE_FMA(a2);
        EDGE_FMA(a3);
        EDGE_FMA(a4);
        EDGE_FMA(a5);
        EDGE_FMA(a6);
        EDGE_FMA(a7);
        EDGE_FMA(a8);
        EDGE_FMA(a9);
        EDGE_FMA(a10);
        EDGE_FMA(a11);
#undef EDGE_FMA
        asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
        asm volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return double(iters) * 12 * 16 / s;  // float multiply-adds per second
}

// AVX2 integer products, two ways, 6 independent chains (all in the 16 registers) whose operands pass through an empty asm
// each iteration (distinct per chain, so the products can be neither hoisted out of the loop nor
// shared between chains; before 2026-12-06 they were both, and the "peak" was mostly adds):
//   pairs=false  vpmaddubsw alone into int16 sums: what the multiply units can do, 32 int8
//                multiply-adds each (the instruction tables' peak; the INT4 tile adds 8 of these
//                in int16 before widening)
//   pairs=true   vpmaddubsw + vpmaddwd + vpaddd: the widening at every product that INT8 and the
//                row kernels need
template <bool Pairs>
__attribute__((target("avx2,fma"), noinline)) double avx2_dots_per_s() {
    __m256i a0 = _mm256_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
    __m256i x0 = _mm256_set1_epi8(1), x1 = _mm256_set1_epi8(2), x2 = _mm256_set1_epi8(3), x3 = _mm256_set1_epi8(4),
            x4 = _mm256_set1_epi8(5), x5 = _mm256_set1_epi8(6);
    const __m256i y = _mm256_set1_epi8(2), ones = _mm256_set1_epi16(1);
    const long iters = 20'000'000;
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
        asm volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(x4), "+v"(x5));
#define EDGE_DP(a, x)                                                                    \
    a = Pairs ? _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones)) \
              : _mm256_add_epi16(a, _mm256_maddubs_epi16(x, y))
        EDGE_DP(a0, x0);
        EDGE_DP(a1, x1);
        EDGE_DP(a2, x2);
        EDGE_DP(a3, x3);
        EDGE_DP(a4, x4);
        EDGE_DP(a5, x5);
#undef EDGE_DP
        asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return double(iters) * 6 * 32 / s;
}

__attribute__((target("avx2,fma"), noinline)) double fma256_per_s() {
    __m256 a0 = _mm256_set1_ps(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0;
    const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f);
    const long iters = 20'000'000;
    const auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) {
#define EDGE_FMA(a) a = _mm256_fmadd_ps(a, x, y)
        EDGE_FMA(a0);
        EDGE_FMA(a1);
        EDGE_FMA(a2);
        EDGE_FMA(a3);
        EDGE_FMA(a4);
        EDGE_FMA(a5);
        EDGE_FMA(a6);
        EDGE_FMA(a7);
        EDGE_FMA(a8);
        EDGE_FMA(a9);
#undef EDGE_FMA
        asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7));
        asm volatile("" : "+v"(a8), "+v"(a9));
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return double(iters) * 10 * 8 / s;
}
#endif

struct Peaks {
    double dot = 0, fma = 0;  // multiply-adds per second and thread
    double pairs = 0;         // AVX2: vpmaddubsw + vpmaddwd pairs (0 elsewhere)
    double dot_both = 0;      // the dot loop on two threads at once, both threads' sum
    const char* dot_name = "none";
};

// Best of 3 on one thread, and the dot loop on two threads at once: whether a virtual machine's two
// processors are two cores (about twice one thread's figure) or the two hyperthreads of one core
// (about one thread's), which decides what two threads can reach.
Peaks measure_peaks() {
    Peaks p;
#if defined(__x86_64__)
    // The family the products run on (EDGE_KERNELS=avx2 measures the AVX2 units on a processor
    // that also has AVX-512).
    const auto level = runtime::qkernels::kernel_level();
    const bool v512 = level >= runtime::qkernels::KernelLevel::Avx512Vnni;
    const bool avx2 = level >= runtime::qkernels::KernelLevel::Avx2;
    for (int i = 0; i < 3; ++i) {
        if (v512) {
            p.dot = std::max(p.dot, vnni512_dots_per_s());
            p.fma = std::max(p.fma, fma512_per_s());
        } else if (avx2) {
            p.dot = std::max(p.dot, avx2_dots_per_s<false>());
            p.pairs = std::max(p.pairs, avx2_dots_per_s<true>());
            p.fma = std::max(p.fma, fma256_per_s());
        }
    }
    p.dot_name = v512 ? "vpdpbusd zmm" : avx2 ? "vpmaddubsw ymm" : "none";
    if (v512 || avx2)
        for (int i = 0; i < 3; ++i) {
            double other = 0;
            std::thread t([&] { other = v512 ? vnni512_dots_per_s() : avx2_dots_per_s<false>(); });
            const double mine = v512 ? vnni512_dots_per_s() : avx2_dots_per_s<false>();
            t.join();
            p.dot_both = std::max(p.dot_both, mine + other);
        }
#endif
    return p;
}

}  // namespace

int run_gemm_bench(const BenchArgs& a) {
    const Peaks peak = measure_peaks();
    std::printf("CPU: %s; kernels %s\n", cpu_model().c_str(), runtime::qkernels::kernel_name());
    std::printf("measured peak per thread: %s %.1f G int8 multiply-adds/s, FMA %.1f G float multiply-adds/s",
                peak.dot_name, peak.dot / 1e9, peak.fma / 1e9);
    if (peak.pairs > 0) std::printf(" (vpmaddubsw + vpmaddwd pairs: %.1f G int8 multiply-adds/s)", peak.pairs / 1e9);
    std::printf("\ntwo threads at once: %s %.1f G int8 multiply-adds/s (%.2fx one thread)\n\n", peak.dot_name,
                peak.dot_both / 1e9, peak.dot > 0 ? peak.dot_both / peak.dot : 0.0);
    std::printf(
        "| shape (out x in) | type | tokens | threads | median ms | best ms | G MAC/s (median) | of dot peak | of FMA "
        "peak |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    const std::pair<int64_t, int64_t> shapes[] = {{2048, 2048}, {8192, 2048}, {2048, 8192}};
    std::vector<int> thread_counts{1, 2};
    std::vector<int> token_counts{1, 16, 128, 512};
    if (!a.tokens.empty()) {
        token_counts.clear();
        for (size_t i = 0; i < a.tokens.size();) {
            const size_t j = std::min(a.tokens.find(',', i), a.tokens.size());
            const int n = std::atoi(a.tokens.substr(i, j - i).c_str());
            if (n <= 0) return std::fprintf(stderr, "--tokens: counts like 1,128, got '%s'\n", a.tokens.c_str()), 2;
            token_counts.push_back(n);
            i = j + 1;
        }
    }
    for (auto [rows, cols] : shapes) {
        Tensor w = Tensor::zeros_f32("w", {rows, cols});
        std::mt19937 rng(1);
        std::normal_distribution<float> nd(0.0f, 0.02f);
        for (int64_t i = 0; i < rows * cols; ++i) w.f32_mut()[i] = nd(rng);
        char shape[64];
        std::snprintf(shape, sizeof shape, "%lldx%lld", (long long)rows, (long long)cols);
        const char* const types[] = {"INT4 g32", "INT8 g32", "FP16", "BF16"};
        const bool only_type = std::find(std::begin(types), std::end(types), a.only) != std::end(types);
        if (!a.only.empty() && a.only != shape && !only_type) continue;
        for (const char* type : types) {
            // FP16 and BF16: a reference model's weights as stored (validation's reference side, a
            // BF16 Hugging Face folder), multiplied in floats: against the FMA peak.
            const std::string name = type;
            if (only_type && a.only != name) continue;
            Result<Tensor> q = Tensor::alloc("w", name == "BF16" ? DType::BF16 : DType::F16, {rows, cols});
            if (name == "FP16" || name == "BF16") {
                auto* h = reinterpret_cast<uint16_t*>(q->data.get());
                for (int64_t i = 0; i < rows * cols; ++i)
                    h[i] = name == "FP16" ? f32_to_f16(w.f32()[i]) : f32_to_bf16(w.f32()[i]);
            } else {
                q = quantize_rtn(w, QuantSpec{name == "INT4 g32" ? 4 : 8, true, QGrouping::Group, 32, QMethod::RTN,
                                              false, QuantSpec::Scales::F16});
            }
            if (!q.ok()) return std::fprintf(stderr, "%s\n", q.message().c_str()), 1;
            for (int n : token_counts) {
                std::vector<float> x(size_t(n * cols)), out(size_t(n * rows));
                for (auto& v : x) v = nd(rng) * 50.0f;
                for (int threads : thread_counts) {
                    ThreadPool pool(threads);
                    std::vector<double> ms;
                    for (int r = 0; r <= a.calib_seqs; ++r) {
                        const auto t0 = Clock::now();
                        runtime::qkernels::matmul(out.data(), x.data(), *q, n, pool);
                        if (r > 0) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
                    }
                    const double med = median(ms), best = *std::min_element(ms.begin(), ms.end());
                    const double macs = double(rows) * double(cols) * n / (med / 1e3);
                    std::printf("| %lld x %lld | %s | %d | %d | %.3f | %.3f | %.1f | %.0f%% | %.0f%% |\n",
                                (long long)rows, (long long)cols, type, n, threads, med, best, macs / 1e9,
                                peak.dot > 0 ? 100 * macs / (peak.dot * threads) : 0.0,
                                peak.fma > 0 ? 100 * macs / (peak.fma * threads) : 0.0);
                }
            }
        }
    }
    return 0;
}
