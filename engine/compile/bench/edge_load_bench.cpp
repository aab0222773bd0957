// edge-load-bench X.edge [threads]: load time (median of 5 loads, checksums verified each time)
// and resident memory of a compiled engine, for docs/benchmarks.md. Prints one JSON object.
// RSS figures are from /proc/self/status: VmRSS before loading, after the loads, and VmHWM
// (peak, reset after the loads) after a 16-token prefill and 16 decode steps run by the CPU
// backend (the plan interpreter: one arena, weights read in place from the mapping), and the
// acceptance bound peak RSS <= file + KV cache + arena + 64 MiB ("rss_bound_ok"). Then the same
// tokens through LlamaCpu on the same (mapped) weights: "backend_vs_llamacpu" is
// max|a-b| / max|b| over every logit of the 16 prefill positions and the 16 decode steps.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "engine/compile/compile.h"
#include "engine/runtime/cpu/cpu_backend.h"
#include "engine/runtime/cpu/llama_cpu.h"

namespace {

long status_kib(const char* key) {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::string(key).size()));
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: edge-load-bench X.edge [threads]\n");
        return 2;
    }
    const std::string path = argv[1];
    const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
    const long rss0 = status_kib("VmRSS:");
    std::vector<double> ms;
    edge::Result<edge::compile::Engine> eng = edge::err("not loaded");
    for (int i = 0; i < 5; ++i) {
        eng = edge::err("not loaded");  // unmap the previous load first: one mapping at a time
        const auto t0 = std::chrono::steady_clock::now();
        eng = edge::compile::load_engine(path);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        if (!eng.ok()) {
            std::fprintf(stderr, "edge-load-bench: %s\n", eng.message().c_str());
            return 1;
        }
    }
    const double first = ms.front();
    std::sort(ms.begin(), ms.end());
    const long rss_loaded = status_kib("VmRSS:");
    {  // reset VmHWM so the peak below is of the loaded engine running, not of the load loop
        std::ofstream clear("/proc/self/clear_refs");
        clear << "5";
    }
    auto model = std::make_shared<edge::model::Model>(std::move(eng.value().file.model));
    const auto plan = eng.value().program;
    const int max_seq = 64;
    edge::runtime::CpuBackend be;
    if (auto st = be.load(model, plan, edge::runtime::BackendOptions{threads, max_seq}); !st.ok()) {
        std::fprintf(stderr, "edge-load-bench: %s\n", st.message().c_str());
        return 1;
    }
    std::vector<int32_t> prompt(16);
    for (int i = 0; i < 16; ++i) prompt[size_t(i)] = (i * 37 + 1) % model->config.vocab_size;
    const int V = model->config.vocab_size;
    std::vector<float> got(size_t(16) * V), want(size_t(16) * V);
    std::vector<int32_t> chosen;
    auto l = be.run(prompt.data(), 16, 0, got.data());
    for (int i = 0; i < 16 && l.ok(); ++i) {
        const int32_t t = edge::runtime::argmax(*l, V);
        chosen.push_back(t);
        l = be.run(&t, 1, 16 + i);
        if (l.ok()) got.insert(got.end(), *l, *l + V);
    }
    if (!l.ok()) {
        std::fprintf(stderr, "edge-load-bench: %s\n", l.message().c_str());
        return 1;
    }
    const edge::runtime::BackendMemory mem = be.memory();
    const long peak = status_kib("VmHWM:");
    const long anon = status_kib("RssAnon:"), file = status_kib("RssFile:");
    double num = 0, den = 0;
    {
        auto rt = edge::runtime::LlamaCpu::create(model, edge::runtime::RuntimeOptions{threads, max_seq});
        if (!rt.ok()) {
            std::fprintf(stderr, "edge-load-bench: %s\n", rt.message().c_str());
            return 1;
        }
        const float* r = (*rt)->prefill(prompt.data(), 16, 0, want.data());
        for (size_t i = 0; i < chosen.size(); ++i) {
            r = (*rt)->forward(chosen[i], 16 + int(i));
            want.insert(want.end(), r, r + V);
        }
        for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
            num = std::max(num, double(std::fabs(got[i] - want[i])));
            den = std::max(den, double(std::fabs(want[i])));
        }
    }
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    const long long file_bytes = (long long)f.tellg();
    const long bound_kib = long((file_bytes + (long long)(mem.kv_bytes + mem.arena_bytes) + (64ll << 20)) / 1024);
    std::printf(
        "{\"file\": \"%s\", \"file_bytes\": %lld, \"load_ms_first\": %.3f, \"load_ms_median\": %.3f, "
        "\"rss_before_kib\": %ld, \"rss_loaded_kib\": %ld, \"peak_rss_kib\": %ld, \"rss_anon_kib\": %ld, "
        "\"rss_file_kib\": %ld, \"kv_cache_bytes\": %zu, "
        "\"max_seq\": %d, \"arena_decode\": %zu, \"arena_prefill\": %zu, \"naive_decode\": %zu, "
        "\"naive_prefill\": %zu, \"peak_live_decode\": %zu, \"peak_live_prefill\": %zu, \"prefill_batch\": %d, "
        "\"backend_arena\": %zu, \"backend_scratch\": %zu, \"rss_bound_kib\": %ld, \"rss_bound_ok\": %s, "
        "\"backend_vs_llamacpu\": %.3g}\n",
        path.c_str(), file_bytes, first, ms[2], rss0, rss_loaded, peak, anon, file, mem.kv_bytes, max_seq,
        plan.decode.arena_bytes, plan.prefill.arena_bytes, plan.decode.naive_bytes, plan.prefill.naive_bytes,
        plan.decode.peak_live_bytes, plan.prefill.peak_live_bytes, plan.prefill.batch, mem.arena_bytes,
        mem.scratch_bytes, bound_kib, peak <= bound_kib ? "true" : "false", den > 0 ? num / den : num);
    return 0;
}
