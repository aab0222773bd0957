// edge-roundtrip-check MODEL OUT_DIR [threads]: issue 5 acceptance 1 on a model too large for a
// unit test (the synthesized TinyLlama-1.1B shape). For each of FP32, INT8 and INT4 (uniform RTN,
// group 32, symmetric, every linear including the output head): compile MODEL to
// OUT_DIR/roundtrip-PREC.edge, load it (mapped, checksums verified), run it on the CPU backend
// (the compiled, fused plan), and compare with LlamaCpu running the uncompiled model (FP32: the
// model as loaded; INT8/INT4: apply_plan's quantized weights, the same weights the engine holds).
// Logits of a 5-token prefill (every position) then 4 greedy decode steps (the reference's
// tokens, fed to both); error = max|a-b| / max|b| over all of them. Limits: 1e-4 (FP32), 1e-3
// (quantized). Each .edge file is deleted after its check (they are GBs). Exit code 0 when every
// precision is within its limit.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/compile/compile.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/runtime/cpu/cpu_backend.h"
#include "engine/runtime/cpu/llama_cpu.h"

using edge::model::load_model;
using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::BackendOptions;
using edge::runtime::CpuBackend;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

long status_mib(const char* key) {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::string(key).size())) / 1024;
    return -1;
}

constexpr int kSteps = 4;

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: edge-roundtrip-check MODEL OUT_DIR [threads] [plans: fp32,int8,int4 (default all)]\n");
        return 2;
    }
    const std::string model_path = argv[1], out_dir = argv[2];
    const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
    const std::string plans = argc > 4 ? std::string(",") + argv[4] + "," : std::string(",fp32,int8,int4,");
    auto t0 = Clock::now();
    auto loaded = load_model(model_path);
    if (!loaded.ok()) return std::fprintf(stderr, "edge-roundtrip-check: %s\n", loaded.message().c_str()), 1;
    const Model src = std::move(loaded).value();
    std::printf("model %s: dim %d, %d layers, vocab %d; loaded in %.1f s\n", model_path.c_str(), src.config.dim,
                src.config.n_layers, src.config.vocab_size, since(t0));
    const std::vector<int32_t> prompt{1, 403, 407, 261, 378};
    const int V = src.config.vocab_size, max_seq = 64;
    struct Case {
        const char* name;
        std::optional<quant::Precision> p;
        double limit;
    };
    bool all_ok = true;
    std::printf(
        "\n| plan | .edge bytes | compile s | load ms | reference s | engine s | max rel. error | limit | ok |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    std::fflush(stdout);
    for (const Case& c : {Case{"fp32", std::nullopt, 1e-4}, Case{"int8", quant::Precision::INT8, 1e-3},
                          Case{"int4", quant::Precision::INT4, 1e-3}}) {
        if (plans.find(std::string(",") + c.name + ",") == std::string::npos) continue;
        compile::CompileOptions opts;
        opts.threads = threads;
        opts.max_seq = max_seq;
        opts.out_path = (std::filesystem::path(out_dir) / (std::string("roundtrip-") + c.name + ".edge")).string();
        // The reference: the uncompiled model with the plan's weights.
        std::vector<float> want;
        std::vector<int32_t> steps;
        double ref_s = 0;
        {
            std::shared_ptr<const Model> ref = std::make_shared<Model>(src);
            if (c.p) {
                opts.plan = quant::uniform_plan(*c.p);
                auto q = quant::apply_plan(src, *opts.plan, nullptr);
                if (!q.ok()) return std::fprintf(stderr, "edge-roundtrip-check: %s\n", q.message().c_str()), 1;
                ref = std::make_shared<Model>(std::move(q.value().model));
            }
            auto rt = LlamaCpu::create(ref, RuntimeOptions{threads, max_seq});
            if (!rt.ok()) return std::fprintf(stderr, "edge-roundtrip-check: %s\n", rt.message().c_str()), 1;
            const auto tr = Clock::now();
            want.resize(prompt.size() * size_t(V));
            const float* l = (*rt)->prefill(prompt.data(), int(prompt.size()), 0, want.data());
            for (int i = 0; i < kSteps; ++i) {
                steps.push_back(argmax(l, V));
                l = (*rt)->forward(steps.back(), int(prompt.size()) + i);
                want.insert(want.end(), l, l + V);
            }
            ref_s = since(tr);
        }
        const auto tc = Clock::now();
        auto rep = compile::compile(src, opts);
        if (!rep.ok()) return std::fprintf(stderr, "edge-roundtrip-check: %s\n", rep.message().c_str()), 1;
        const double compile_s = since(tc);
        const auto tl = Clock::now();
        auto eng = compile::load_engine(opts.out_path);
        if (!eng.ok()) return std::fprintf(stderr, "edge-roundtrip-check: %s\n", eng.message().c_str()), 1;
        const double load_ms = since(tl) * 1e3;
        std::vector<float> got;
        double eng_s = 0;
        {
            auto model = std::make_shared<Model>(std::move(eng.value().file.model));
            CpuBackend be;
            if (auto st = be.load(model, eng.value().program, BackendOptions{threads, max_seq}); !st.ok())
                return std::fprintf(stderr, "edge-roundtrip-check: %s\n", st.message().c_str()), 1;
            const auto te = Clock::now();
            got.resize(prompt.size() * size_t(V));
            auto l = be.run(prompt.data(), int(prompt.size()), 0, got.data());
            for (int i = 0; i < kSteps && l.ok(); ++i) {
                l = be.run(&steps[size_t(i)], 1, int(prompt.size()) + i);
                if (l.ok()) got.insert(got.end(), *l, *l + V);
            }
            if (!l.ok()) return std::fprintf(stderr, "edge-roundtrip-check: %s\n", l.message().c_str()), 1;
            eng_s = since(te);
        }
        double num = 0, den = 0;
        for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
            num = std::max(num, double(std::fabs(got[i] - want[i])));
            den = std::max(den, double(std::fabs(want[i])));
        }
        const double e = got.size() == want.size() && den > 0 ? num / den : 1e30;
        const bool ok = std::isfinite(e) && e <= c.limit;
        all_ok = all_ok && ok;
        std::printf("| %s | %zu | %.1f | %.0f | %.1f | %.1f | %.2e | %.0e | %s |\n", c.name, rep->file_bytes, compile_s,
                    load_ms, ref_s, eng_s, e, c.limit, ok ? "yes" : "NO");
        std::fflush(stdout);
        std::error_code ec;
        std::filesystem::remove(opts.out_path, ec);
    }
    std::printf("\npeak RSS (VmHWM) %ld MiB; %s\n", status_mib("VmHWM:"),
                all_ok ? "all within limits" : "LIMIT EXCEEDED");
    return all_ok ? 0 : 1;
}
