// edge-quant-bench --mode decode: decode tokens/s of a synthesized TinyLlama-1.1B-shape model
// (written to --file, default /tmp/edge-tinyllama-1.1b-f16.gguf, never into the repository) at
// 1 and 2 threads, FP16 / INT8 / INT4 (RTN group 32, every matrix including the output head),
// beside the memory-bandwidth ceiling measured in the same run, before and after each of the 5 runs
// (acceptance 4); prefill tokens/s of a 64-token prompt at 2 threads. The precisions take turns
// run by run, so "vs FP16" compares runs minutes apart at most, not a whole table apart.
// Quantization streams one tensor at a time (F16 -> F32 -> RTN); the three stored models are held
// together so they can take turns (peak RSS measured 10.5 GB with the F32 model they come from).
#include <immintrin.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "bench_common.h"
#include "engine/core/half.h"
#include "engine/model/synth.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/one_sequence.h"

using edge::model::finalize_llama;
using edge::model::LayerInfo;
using edge::model::list_layers;
using edge::model::load_model;
using edge::model::Model;
using edge::model::SynthOptions;
using edge::model::write_synth_model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;
using namespace edge::quant;

namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// A model whose matrices (every linear and the output head) are RTN `spec`; the token embedding
// stays as loaded (one row read per token). One F32 tensor at a time.
// bits 16: IEEE half storage.
Result<Model> quantize_streaming(const Model& m, const QuantSpec& spec) {
    Model out = m;
    for (const LayerInfo& L : list_layers(m)) {
        const Tensor* t = m.find(L.tensor);
        std::vector<float> f(size_t(t->numel()));
        for (int64_t r = 0; r < t->rows(); ++r) runtime::qkernels::dequantize_row(*t, r, f.data() + r * t->cols());
        if (spec.bits == 16) {
            Tensor h = Tensor::alloc(t->name, DType::F16, t->shape);
            auto* p = reinterpret_cast<uint16_t*>(h.data.get());
            for (size_t i = 0; i < f.size(); ++i) p[i] = f32_to_f16(f[i]);
            *out.find_mut(L.tensor) = std::move(h);
            continue;
        }
        auto q = quantize_rtn(t->name, f.data(), t->shape, spec);
        if (!q.ok()) return q.error();
        *out.find_mut(L.tensor) = std::move(q).value();
    }
    finalize_llama(out);
    return out;
}

size_t matrix_bytes(const Model& m) {
    size_t b = 0;
    for (const LayerInfo& L : list_layers(m)) b += m.find(L.tensor)->nbytes;
    return b;
}

// One precision's decode runs at one thread count: tokens/s, the ceiling measured around each run,
// and their ratio, run by run.
struct DecodeRuns {
    std::vector<double> tps, ceiling, ratio;
};

// `tokens` greedy steps from BOS; tokens/s.
// One sequence through the executor's batch step, as generate runs it; 0 if a step fails.
double decode_once(LlamaCpu& rt, int vocab, int tokens) {
    auto seq = runtime::OneSequence::create(rt, tokens);
    if (!seq) return 0.0;
    int32_t tok = 1;
    const auto t0 = Clock::now();
    for (int p = 0; p < tokens; ++p) {
        auto l = seq->next(std::span(&tok, 1));
        if (!l) return 0.0;
        tok = int32_t(std::max_element(*l, *l + vocab) - *l);
    }
    return tokens / secs(t0);
}

// Decode: 5 runs of `tokens` greedy steps from BOS per model (after one warm-up run), the models
// taking turns. The machine's bandwidth drifts with what else runs on the host, so the read
// bandwidth (2 threads, 1 GiB, best of 5 x 3 readers) is measured between every two runs, and
// each run is set against its own ceiling: the mean of the readings right before and right after
// it, so a run during which the host changes state (its bandwidth jumps between ~45 and ~70 GB/s
// within seconds) is not set against one side of the change only.
std::vector<DecodeRuns> decode_runs(const std::vector<std::shared_ptr<const Model>>& models, int threads, int tokens,
                                    const std::vector<size_t>& weight_bytes) {
    std::vector<std::unique_ptr<LlamaCpu>> rts;
    for (const auto& m : models) {
        auto rt = LlamaCpu::create(m, RuntimeOptions{threads, tokens + 8});
        if (!rt.ok()) return std::fprintf(stderr, "%s\n", rt.message().c_str()), std::vector<DecodeRuns>{};
        rts.push_back(std::move(rt).value());
    }
    std::vector<DecodeRuns> out(models.size());
    // The last timed run, waiting for the reading after it.
    size_t last = 0;
    double last_tps = 0, last_before = 0;
    auto settle = [&](double after) {
        const double c = (last_before + after) / 2 / double(weight_bytes[last]);
        out[last].tps.push_back(last_tps);
        out[last].ceiling.push_back(c);
        out[last].ratio.push_back(last_tps / c);
    };
    for (int run = 0; run < 6; ++run)
        for (size_t i = 0; i < models.size(); ++i) {
            const double bw = run > 0 ? read_bandwidth(size_t(1) << 30, 2) : 0.0;
            if (last_before > 0) settle(bw);
            const double tps = decode_once(*rts[i], models[i]->config.vocab_size, tokens);
            if (run == 0) continue;
            last = i;
            last_tps = tps;
            last_before = bw;
        }
    settle(read_bandwidth(size_t(1) << 30, 2));
    return out;
}

// Median over the runs of a[k] / b[k] (paired runs).
double paired_ratio(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> r;
    for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) r.push_back(a[k] / b[k]);
    return median(r);
}

// Prefill tokens/s: one 64-token prompt, median of 5 (after a warm-up).
double prefill_tps(const std::shared_ptr<const Model>& m, int threads) {
    constexpr int kPrompt = 64;
    auto rt = LlamaCpu::create(m, RuntimeOptions{threads, kPrompt + 8});
    if (!rt.ok()) return 0.0;
    std::vector<int32_t> ids(kPrompt);
    for (int i = 0; i < kPrompt; ++i) ids[size_t(i)] = 1 + (i * 7919) % (m->config.vocab_size - 1);
    auto seq = runtime::OneSequence::create(**rt, kPrompt);
    if (!seq) return 0.0;
    std::vector<double> tps;
    for (int run = 0; run < 6; ++run) {
        seq->reset();
        const auto t0 = Clock::now();
        if (!seq->next(ids)) return 0.0;
        if (run > 0) tps.push_back(kPrompt / secs(t0));
    }
    return median(tps);
}

}  // namespace

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

namespace {

// Sums [a, b) of p with 256-bit loads, two cache lines per iteration; with prefetch_ahead > 0 it
// also prefetches that many bytes ahead (a streaming reader with software prefetch, as the
// quantized kernels are, can beat the hardware prefetcher alone).
__attribute__((target("avx2"))) long long sum_range(const uint8_t* p, size_t a, size_t b, size_t prefetch_ahead) {
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    for (size_t i = a; i + 128 <= b; i += 128) {
        if (prefetch_ahead) {
            _mm_prefetch(reinterpret_cast<const char*>(p + i + prefetch_ahead), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(p + i + prefetch_ahead + 64), _MM_HINT_T0);
        }
        acc0 = _mm256_add_epi64(acc0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
        acc1 = _mm256_add_epi64(acc1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
        acc2 = _mm256_add_epi64(acc2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
        acc3 = _mm256_add_epi64(acc3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
    }
    acc0 = _mm256_add_epi64(_mm256_add_epi64(acc0, acc1), _mm256_add_epi64(acc2, acc3));
    alignas(32) long long v[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), acc0);
    return v[0] + v[1] + v[2] + v[3];
}

}  // namespace

// Read bandwidth, bytes/s: `threads` threads each summing its share of a `bytes` buffer; the best
// of 5 runs of each of three readers (hardware prefetch only; software prefetch 1 KiB and 4 KiB
// ahead), so the ceiling is what a good streaming reader gets, not a weak one.
double read_bandwidth(size_t bytes, int threads) {
    const size_t n = bytes / 128 * 128;
    auto buf = alloc_aligned(n);
    for (size_t i = 0; i < n; i += 4096) buf.get()[i] = uint8_t(i);  // fault every page in
    std::memset(buf.get(), 1, n);
    double best = 0;
    std::vector<long long> sink(static_cast<size_t>(threads));
    for (size_t ahead : {size_t(0), size_t(1024), size_t(4096)})
        for (int rep = 0; rep < 5; ++rep) {
            std::vector<std::thread> th;
            th.reserve(size_t(threads));
            const auto t0 = Clock::now();
            for (int t = 0; t < threads; ++t)
                th.emplace_back([&, t] {
                    const size_t a = n / size_t(threads) * size_t(t) / 128 * 128;
                    const size_t b = n / size_t(threads) * size_t(t + 1) / 128 * 128;
                    sink[size_t(t)] = sum_range(buf.get(), a, b, ahead);
                });
            for (auto& x : th) x.join();
            best = std::max(best, double(n) / secs(t0));
        }
    volatile long long keep = sink[0];
    (void)keep;
    return best;
}

int run_decode_bench(const BenchArgs& a) {
    const std::string path = a.file.empty() ? "/tmp/edge-tinyllama-1.1b-f16.gguf" : a.file;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        std::fprintf(stderr, "writing %s ...\n", path.c_str());
        SynthOptions so;
        so.shape = "tinyllama-1.1b";
        so.path = path;
        so.type = DType::F16;
        so.threads = 2;
        if (auto s = write_synth_model(so); !s.ok()) return std::fprintf(stderr, "%s\n", s.message().c_str()), 1;
    }
    // --only f16|int8|int4: one precision (the FP16 ratio column then needs the FP16 row).
    std::vector<int> bits_list;
    std::vector<std::shared_ptr<const Model>> models;
    std::vector<size_t> bytes;
    std::vector<double> quantize_s;
    {
        // The loader widens F16 to F32; every matrix is re-stored (F16 or RTN) one at a time. The
        // F32 model (4.4 GB) is freed at the end of this block.
        auto loaded = load_model(path);
        if (!loaded.ok()) return std::fprintf(stderr, "%s\n", loaded.message().c_str()), 1;
        for (int bits : {16, 8, 4}) {
            if (!a.only.empty() && a.only != (bits == 16 ? "f16" : bits == 8 ? "int8" : "int4")) continue;
            const auto t0 = Clock::now();
            auto q = quantize_streaming(*loaded, QuantSpec{bits, true, QGrouping::Group, 32, QMethod::RTN});
            if (!q.ok()) return std::fprintf(stderr, "%s\n", q.message().c_str()), 1;
            quantize_s.push_back(secs(t0));
            bits_list.push_back(bits);
            models.push_back(std::make_shared<const Model>(std::move(q).value()));
            bytes.push_back(matrix_bytes(*models.back()));
        }
    }
    const int tokens = a.parts > 0 && a.parts < 400 ? a.parts : 16;  // --parts doubles as the step count
    const double bw = read_bandwidth(size_t(1) << 30, 2);
    std::printf(
        "CPU: %s; kernels %s, prefetch %s; read bandwidth at start (2 threads, 1 GiB, best of 5 runs x 3 readers): "
        "%.2f GB/s\n"
        "decode: %d greedy steps from BOS, 5 runs after a warm-up, each against the mean of the bandwidth "
        "measured just before and just after it; medians\n\n",
        cpu_model().c_str(), runtime::qkernels::kernel_name(),
        runtime::qkernels::row_prefetch_name(runtime::qkernels::row_prefetch()), bw / 1e9, tokens);
    std::printf(
        "| precision | weight bytes read / token | ceiling tok/s | 1 thread tok/s | 1 thread / ceiling | "
        "2 threads tok/s | 2 threads / ceiling | vs FP16 (2 threads) | prefill tok/s (2 threads, 64) | quantize s |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    const auto r1 = decode_runs(models, 1, tokens, bytes), r2 = decode_runs(models, 2, tokens, bytes);
    if (r1.size() != models.size() || r2.size() != models.size()) return 1;
    for (size_t i = 0; i < models.size(); ++i) {
        const int bits = bits_list[i];
        // vs FP16: the median of run-by-run ratios against the FP16 run of the same round.
        const double vs16 = bits_list[0] == 16 ? paired_ratio(r2[i].tps, r2[0].tps) : 0.0;
        std::printf("| %s | %zu | %.2f | %.2f | %.0f%% | %.2f | %.0f%% | %.2fx | %.1f | %.1f |\n",
                    bits == 16  ? "FP16"
                    : bits == 8 ? "INT8 g32"
                                : "INT4 g32",
                    bytes[i], median(r2[i].ceiling), median(r1[i].tps), 100 * median(r1[i].ratio), median(r2[i].tps),
                    100 * median(r2[i].ratio), vs16, prefill_tps(models[i], 2), quantize_s[i]);
        std::fflush(stdout);
    }
    return 0;
}
