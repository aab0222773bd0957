// edge-quant-bench: the docs/quant.md table for a model on an evaluation text.
//   edge-quant-bench [--model M] [--text T] [--parts 400] [--calib-seqs 32] [--calib-len 128]
//                    [--threads 1] [--only NAME]
// Evaluation: the para protocol over the first --parts paragraphs. Calibration: sequences cut
// from the second half of the same file (disjoint from what is scored).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/runtime/qkernels.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/validate/consistency.h"

using namespace edge;
using namespace edge::quant;

int main(int argc, char** argv) {
    std::string model_path = EDGE_SHARED_DIR "/models/stories260K/stories260K.gguf";
    std::string text_path = EDGE_SHARED_DIR "/data/tinystories_val.txt";
    int parts = 400, calib_seqs = 32, calib_len = 128, threads = 1;
    std::string only;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--model") model_path = v;
        else if (a == "--text") text_path = v;
        else if (a == "--parts") parts = std::atoi(v.c_str());
        else if (a == "--calib-seqs") calib_seqs = std::atoi(v.c_str());
        else if (a == "--calib-len") calib_len = std::atoi(v.c_str());
        else if (a == "--threads") threads = std::atoi(v.c_str());
        else if (a == "--only") only = v;
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    auto m = load_model(model_path);
    if (!m.ok()) return std::fprintf(stderr, "%s\n", m.message().c_str()), 1;
    auto text = read_text_file(text_path);
    if (!text.ok()) return std::fprintf(stderr, "%s\n", text.message().c_str()), 1;
    auto tok = make_tokenizer(m->tokenizer);
    if (!tok.ok()) return std::fprintf(stderr, "%s\n", tok.message().c_str()), 1;
    const std::string& all = *text;
    size_t half = all.find("\n\n", all.size() / 2);
    if (half == std::string::npos) half = all.size() / 2;
    auto calib = calib_from_text(**tok, std::string_view(all).substr(half), calib_seqs, calib_len);
    if (!calib.ok()) return std::fprintf(stderr, "calibration: %s\n", calib.message().c_str()), 1;

    auto ref_model = std::make_shared<const Model>(*m);
    PplOptions ppl;
    ppl.protocol = PplProtocol::Para;
    ppl.max_parts = parts;
    RuntimeOptions ro{threads, 512};
    auto ref = LlamaCpu::create(ref_model, ro);
    if (!ref.ok()) return std::fprintf(stderr, "%s\n", ref.message().c_str()), 1;

    struct Config {
        std::string name;
        Plan plan;
    };
    std::vector<Config> configs = {{"FP32", uniform_plan(Precision::FP32)}, {"FP16", uniform_plan(Precision::FP16)},
                                   {"INT8-RTN g32", uniform_plan(Precision::INT8, QMethod::RTN, 32)}};
    for (int g : {32, 64})
        for (auto [mname, meth] : {std::pair{"RTN", QMethod::RTN}, std::pair{"AWQ", QMethod::AWQ}, std::pair{"GPTQ", QMethod::GPTQ}})
            configs.push_back({std::string("INT4-") + mname + " g" + std::to_string(g), uniform_plan(Precision::INT4, meth, g)});

    std::printf("model %s, %s: para protocol, first %d paragraphs; calibration %zu x %d tokens from the second half; "
                "kernels %s; %d thread(s)\n\n",
                model_path.c_str(), text_path.c_str(), parts, calib->sequences.size(), calib_len,
                qkernels::kernel_name(), threads);
    std::printf("| config | weight bytes | perplexity | KL vs FP32 (mean) | KL p99 | top-1 agreement | decode tok/s | quantize s |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const Config& c : configs) {
        if (!only.empty() && c.name.find(only) == std::string::npos) continue;
        Stopwatch sw;
        auto q = apply_plan(*m, c.plan, &*calib, nullptr, ApplyOptions{threads});
        if (!q.ok()) {
            std::printf("| %s | error: %s |\n", c.name.c_str(), q.message().c_str());
            continue;
        }
        const double qs = sw.seconds();
        auto qm = std::make_shared<const Model>(std::move(q->model));
        auto rt = LlamaCpu::create(qm, ro);
        if (!rt.ok()) return std::fprintf(stderr, "%s\n", rt.message().c_str()), 1;
        auto cmp = compare_models(**ref, **rt, **tok, *text, ppl);
        if (!cmp.ok()) return std::fprintf(stderr, "%s\n", cmp.message().c_str()), 1;
        const JitterResult j = measure_jitter(**rt, 256, 5);
        std::printf("| %s | %zu | %.4f | %.4f | %.4f | %.2f%% | %.0f | %.2f |\n", c.name.c_str(), qm->weight_bytes(),
                    cmp->ppl_test, cmp->kl_mean, cmp->kl_p99, 100 * cmp->top1_agreement, j.tokens_per_s, qs);
        std::fflush(stdout);
    }
    return 0;
}
