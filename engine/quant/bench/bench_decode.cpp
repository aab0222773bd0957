// edge-quant-bench --mode decode: decode tokens/s of a synthesized TinyLlama-1.1B-shape model
// (written to --file, default /tmp/edge-tinyllama-1.1b-f16.gguf, never into the repository) at
// 1 and 2 threads, FP16 / INT8 / INT4 (RTN group 32, every matrix including the output head),
// beside the memory-bandwidth ceiling measured in the same run (acceptance 4).
// Quantization streams one tensor at a time (F16 -> F32 -> RTN), so peak memory is the quantized
// model plus one F32 tensor.
#include <immintrin.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "bench_common.h"
#include "engine/core/half.h"
#include "engine/model/synth.h"
#include "engine/runtime/qkernels.h"

using namespace edge;
using namespace edge::quant;

namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

__attribute__((target("avx2"))) long long sum_range(const uint8_t* p, size_t a, size_t b) {
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0;
    for (size_t i = a; i + 64 <= b; i += 64) {
        acc0 = _mm256_add_epi64(acc0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
        acc1 = _mm256_add_epi64(acc1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    }
    acc0 = _mm256_add_epi64(acc0, acc1);
    alignas(32) long long v[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), acc0);
    return v[0] + v[1] + v[2] + v[3];
}

// Read bandwidth, bytes/s: `threads` threads each summing its half of a `bytes` buffer; best of 5.
double read_bandwidth(size_t bytes, int threads) {
    const size_t n = bytes / 32 * 32;
    auto buf = alloc_aligned(n);
    for (size_t i = 0; i < n; i += 4096) buf.get()[i] = uint8_t(i);  // fault every page in
    std::memset(buf.get(), 1, n);
    double best = 0;
    std::vector<long long> sink(static_cast<size_t>(threads));
    for (int rep = 0; rep < 5; ++rep) {
        std::vector<std::thread> th;
        const auto t0 = Clock::now();
        for (int t = 0; t < threads; ++t)
            th.emplace_back([&, t] {
                const size_t a = n / size_t(threads) * size_t(t) / 32 * 32, b = n / size_t(threads) * size_t(t + 1) / 32 * 32;
                sink[size_t(t)] = sum_range(buf.get(), a, b);
            });
        for (auto& x : th) x.join();
        best = std::max(best, double(n) / secs(t0));
    }
    volatile long long keep = sink[0];
    (void)keep;
    return best;
}

// A model whose matrices (every linear and the output head) are RTN `spec`; the token embedding
// stays as loaded (one row read per token). One F32 tensor at a time.
// bits 16: IEEE half storage.
Result<Model> quantize_streaming(const Model& m, const QuantSpec& spec) {
    Model out = m;
    for (const LayerInfo& L : list_layers(m)) {
        const Tensor* t = m.find(L.tensor);
        std::vector<float> f(size_t(t->numel()));
        for (int64_t r = 0; r < t->rows(); ++r) qkernels::dequantize_row(*t, r, f.data() + r * t->cols());
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

// Median decode tokens/s over 5 runs of `tokens` steps (after one warm-up run).
double decode_tps(std::shared_ptr<const Model> m, int threads, int tokens) {
    auto rt = LlamaCpu::create(m, RuntimeOptions{threads, tokens + 8});
    if (!rt.ok()) return std::fprintf(stderr, "%s\n", rt.message().c_str()), 0.0;
    std::vector<double> tps;
    for (int run = 0; run < 6; ++run) {
        int32_t tok = 1;
        const auto t0 = Clock::now();
        for (int p = 0; p < tokens; ++p) {
            const float* l = (*rt)->forward(tok, p);
            tok = int32_t(std::max_element(l, l + m->config.vocab_size) - l);
        }
        if (run > 0) tps.push_back(tokens / secs(t0));
    }
    std::sort(tps.begin(), tps.end());
    return tps[tps.size() / 2];
}

}  // namespace

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
    // The loader widens F16 to F32; every matrix is re-stored below (F16 or RTN) one at a time.
    auto loaded = load_model(path);
    if (!loaded.ok()) return std::fprintf(stderr, "%s\n", loaded.message().c_str()), 1;
    const Model& f16 = *loaded;  // F32 as loaded
    const int tokens = a.parts > 0 && a.parts < 400 ? a.parts : 16;  // --parts doubles as the step count
    const double bw = read_bandwidth(size_t(1) << 30, 2);
    std::printf("CPU: %s; kernels %s; read bandwidth (2 threads, 1 GiB, best of 5): %.2f GB/s\n"
                "decode: %d greedy steps from BOS, median of 5 runs after a warm-up\n\n",
                cpu_model().c_str(), qkernels::kernel_name(), bw / 1e9, tokens);
    std::printf("| precision | weight bytes read / token | ceiling tok/s | 1 thread tok/s | 2 threads tok/s | "
                "2 threads / ceiling | vs FP16 (2 threads) | quantize s |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    double fp16_tps = 0;
    for (int bits : {16, 8, 4}) {
        std::shared_ptr<const Model> m;
        double qs = 0;
        {
            const auto t0 = Clock::now();
            auto q = quantize_streaming(f16, QuantSpec{bits, true, QGrouping::Group, 32, QMethod::RTN});
            if (!q.ok()) return std::fprintf(stderr, "%s\n", q.message().c_str()), 1;
            qs = secs(t0);
            m = std::make_shared<const Model>(std::move(q).value());
        }
        const size_t bytes = matrix_bytes(*m);
        const double ceiling = bw / double(bytes);
        const double t1 = decode_tps(m, 1, tokens), t2 = decode_tps(m, 2, tokens);
        if (bits == 16) fp16_tps = t2;
        std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.0f%% | %.2fx | %.1f |\n",
                    bits == 16 ? "FP16" : bits == 8 ? "INT8 g32" : "INT4 g32", bytes, ceiling, t1, t2,
                    100 * t2 / ceiling, t2 / fp16_tps, qs);
        std::fflush(stdout);
    }
    return 0;
}
