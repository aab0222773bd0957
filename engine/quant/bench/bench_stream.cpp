// edge-quant-bench --mode stream: the matrix-vector products of one decode step of the
// TinyLlama-1.1B shape, and nothing else (no attention, norms or sampling), so the kernels'
// streaming efficiency can be told apart from the rest of decode. 22 blocks of Q/K/V (one
// parallel region, as the executor runs them), output, gate|up (one region) and down, then the
// 32000 x 2048 head: 1.1 G weights in distinct buffers (every block its own copy, so nothing is
// served from the last-level cache), RTN group 32 (or FP16 with --only f16, ggml's K-quant blocks
// as a GGUF holds them with --only q4_k / q6_k). Reports, at 1 and 2
// threads, the median of 5 steps (after one warm-up), the weight bytes streamed per second
// against the read bandwidth of the same number of threads (best of 5 over 1 GiB), and at 2
// threads the time per product kind. --parts N: N steps per thread count (default 5).
// --lead A,B,...: an A/B of how many passes ahead the AVX-512 row kernels prefetch (qkernels.h,
// force_prefetch_lead; 0 = auto) at --threads T: --parts rounds, each a fresh read
// bandwidth reading followed by every lead in turn (best of 2 steps after a warm-up), so all
// leads of a round meet the host in the same memory state; then each lead's median fraction.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <sstream>

#include "bench_common.h"
#include "engine/core/half.h"
#include "engine/model/ggml_kquant.h"
#include "engine/runtime/cpu/qkernels.h"

using namespace edge;
using namespace edge::quant;

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
    const char* kind;
    int64_t rows, cols;
};

// One decode step's products, in the executor's order; `group` runs with the previous entry's
// input in one matmul_multi region.
struct Product {
    const char* kind;
    int first, count;  // weights [first, first+count) of the store
};

// bits: 16 (FP16), 8 / 4 (INT8 / INT4 g32), or kQ4K / kQ6K (ggml blocks).
constexpr int kQ4K = -4, kQ6K = -6;

Tensor random_weight(const Shape& s, int bits, std::mt19937& rng) {
    Tensor w = Tensor::zeros_f32(s.kind, {s.rows, s.cols});
    std::normal_distribution<float> nd(0.0f, 0.02f);
    for (int64_t i = 0; i < s.rows * s.cols; ++i) w.f32_mut()[i] = nd(rng);
    if (bits == kQ4K || bits == kQ6K) {
        Tensor k = Tensor::alloc(s.kind, bits == kQ4K ? DType::Q4_K : DType::Q6_K, {s.rows, s.cols});
        (bits == kQ4K ? model::quantize_row_q4_k : model::quantize_row_q6_k)(w.f32(), w.numel(), k.data.get());
        return k;
    }
    if (bits == 16) {
        Tensor h = Tensor::alloc(s.kind, DType::F16, {s.rows, s.cols});
        auto* p = reinterpret_cast<uint16_t*>(h.data.get());
        for (int64_t i = 0; i < s.rows * s.cols; ++i) p[i] = f32_to_f16(w.f32()[i]);
        return h;
    }
    auto q = quantize_rtn(w, QuantSpec{bits, true, QGrouping::Group, 32, QMethod::RTN});
    return q.ok() ? std::move(q).value() : Tensor{};
}

// Same values, its own memory.
Tensor copy_of(const Tensor& t) {
    Tensor c = t;
    c.data = std::shared_ptr<uint8_t>(new uint8_t[t.nbytes], std::default_delete<uint8_t[]>());
    std::memcpy(c.data.get(), t.data.get(), t.nbytes);
    return c;
}

// --lead A,B,...: see the top of the file.
template <class Step>
int lead_ab(const BenchArgs& a, int rounds, size_t bytes, Step&& run_step) {
    std::vector<int> leads;
    std::stringstream list(a.lead);
    for (std::string v; std::getline(list, v, ',');)
        if (!v.empty()) leads.push_back(std::atoi(v.c_str()));
    const int threads = std::max(1, a.threads);
    ThreadPool pool(threads);
    std::printf(
        "%d thread(s), prefetch lead A/B (passes ahead; 0 = auto: INT4 %d, INT8 %d), %d rounds\n\n| round | read "
        "bandwidth GB/s |",
        threads, runtime::qkernels::prefetch_lead(4), runtime::qkernels::prefetch_lead(8), rounds);
    for (int l : leads) std::printf(" lead %d GB/s | of bandwidth |", l);
    std::printf("\n|---:|---:|");
    for (size_t i = 0; i < leads.size(); ++i) std::printf("---:|---:|");
    std::printf("\n");
    std::vector<std::vector<double>> frac(leads.size());
    for (int round = 0; round < rounds; ++round) {
        const double bw = read_bandwidth(size_t(1) << 29, threads);
        std::printf("| %d | %.2f |", round + 1, bw / 1e9);
        for (size_t i = 0; i < leads.size(); ++i) {
            runtime::qkernels::force_prefetch_lead(leads[i]);
            run_step(pool, nullptr);
            const double gbs = double(bytes) / std::min(run_step(pool, nullptr), run_step(pool, nullptr)) / 1e6;
            frac[i].push_back(gbs * 1e9 / bw);
            std::printf(" %.2f | %.0f%% |", gbs, 100 * gbs * 1e9 / bw);
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    runtime::qkernels::force_prefetch_lead(0);
    std::printf("| median | |");
    for (const auto& f : frac) std::printf(" | %.1f%% |", 100 * median(f));
    std::printf("\n");
    return 0;
}

}  // namespace

int run_stream_bench(const BenchArgs& a) {
    const int bits = a.only == "f16"    ? 16
                     : a.only == "int8" ? 8
                     : a.only == "q4_k" ? kQ4K
                     : a.only == "q6_k" ? kQ6K
                                        : 4;
    const int blocks = 22;
    const Shape shapes[] = {{"attn_q", 2048, 2048},      {"attn_k", 256, 2048},    {"attn_v", 256, 2048},
                            {"attn_output", 2048, 2048}, {"ffn_gate", 5632, 2048}, {"ffn_up", 5632, 2048},
                            {"ffn_down", 2048, 5632},    {"output", 32000, 2048}};
    std::mt19937 rng(7);
    std::vector<Tensor> proto;
    for (const Shape& s : shapes) {
        proto.push_back(random_weight(s, bits, rng));
        if (!proto.back().data) return std::fprintf(stderr, "quantizing %s failed\n", s.kind), 1;
    }
    // The store: 7 weights per block, then the head.
    std::vector<Tensor> store;
    std::vector<Product> step;
    size_t bytes = 0;
    for (int b = 0; b < blocks; ++b) {
        const int base = int(store.size());
        for (int k = 0; k < 7; ++k) store.push_back(copy_of(proto[size_t(k)]));
        step.push_back({"qkv", base, 3});
        step.push_back({"attn_output", base + 3, 1});
        step.push_back({"gate_up", base + 4, 2});
        step.push_back({"ffn_down", base + 6, 1});
    }
    store.push_back(proto.back());
    step.push_back({"output", int(store.size()) - 1, 1});
    proto.clear();
    for (const Tensor& t : store) bytes += t.nbytes;

    std::vector<float> x(5632), out(32000 * 3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto& v : x) v = nd(rng);

    std::printf("CPU: %s; kernels %s, prefetch %s; %s weights, %zu bytes per step (scales included)\n\n",
                cpu_model().c_str(), runtime::qkernels::kernel_name(),
                runtime::qkernels::row_prefetch_name(runtime::qkernels::row_prefetch()),
                bits == 16     ? "FP16"
                : bits == 8    ? "INT8 g32"
                : bits == kQ4K ? "ggml Q4_K"
                : bits == kQ6K ? "ggml Q6_K"
                               : "INT4 g32",
                bytes);
    const int reps = a.parts > 0 && a.parts < 400 ? a.parts : 5;  // --parts: steps per thread count
    // One decode step's products on `pool`; per product kind's ms into `per` when given.
    auto run_step = [&](ThreadPool& pool, std::map<std::string, double>* per) {
        const auto t0 = Clock::now();
        for (const Product& p : step) {
            const auto s0 = Clock::now();
            runtime::qkernels::MatmulJob jobs[3];
            int64_t off = 0;
            for (int j = 0; j < p.count; ++j) {
                jobs[j] = {out.data() + off, &store[size_t(p.first) + size_t(j)]};
                off += store[size_t(p.first) + size_t(j)].rows();
            }
            runtime::qkernels::matmul_multi(jobs, p.count, x.data(), 1, pool);
            if (per) (*per)[p.kind] += std::chrono::duration<double, std::milli>(Clock::now() - s0).count();
        }
        return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    };
    if (a.lead.find(',') != std::string::npos) return lead_ab(a, reps, bytes, run_step);
    std::printf(
        "| threads | read bandwidth GB/s | step ms (median of %d) | weight GB/s | of bandwidth | best step ms | best "
        "GB/s |\n"
        "|---:|---:|---:|---:|---:|---:|---:|\n",
        reps);
    std::map<std::string, double> kind_ms;
    for (int threads : {1, 2}) {
        const double bw = read_bandwidth(size_t(1) << 30, threads);
        ThreadPool pool(threads);
        std::vector<double> ms;
        for (int rep = 0; rep <= reps; ++rep) {
            std::map<std::string, double> per;
            const double t = run_step(pool, &per);
            if (rep == 0) continue;
            ms.push_back(t);
            if (threads == 2 && rep == (reps + 1) / 2) kind_ms = per;
        }
        const double med = median(ms), best = *std::min_element(ms.begin(), ms.end()), gbs = double(bytes) / med / 1e6;
        std::printf("| %d | %.2f | %.2f | %.2f | %.0f%% | %.2f | %.2f |\n", threads, bw / 1e9, med, gbs,
                    100 * gbs * 1e9 / bw, best, double(bytes) / best / 1e6);
        std::fflush(stdout);
    }
    std::printf("\n2 threads, one step by product kind:\n\n| product | ms | weight GB/s |\n|---|---:|---:|\n");
    for (const auto& [kind, t] : kind_ms) {
        size_t kb = 0;
        for (const Product& p : step)
            if (kind == p.kind)
                for (int j = 0; j < p.count; ++j) kb += store[size_t(p.first) + size_t(j)].nbytes;
        std::printf("| %s | %.2f | %.2f |\n", kind.c_str(), t, double(kb) / t / 1e6);
    }
    return 0;
}
