// edge-quant-bench: the docs/quant.md tables.
//   edge-quant-bench [--model M] [--text T] [--parts 400] [--calib-seqs 32] [--calib-len 128]
//                    [--threads 1] [--only NAME]
//                    [--mode table|compare|sens|decode|kernels|gemm|attention|stream|layerwise]
//                    [--file F] [--kernels auto|avx2|portable] [--prefetch auto|rows-l2|sequential-l1] [--lead N[,N...]]
//   table   : FP32 / FP16 / INT8 / INT4 RTN-AWQ-GPTQ rows (acceptance 2), plus asymmetric and
//             diagnostic rows (head kept FP32, act-order).
//   compare : another model file (e.g. llama.cpp's stories260K-Q4_0.gguf, --file) against FP32.
//   sens    : per-layer INT4 sensitivity and the k most / least sensitive at INT8 (acceptance 3).
//   decode  : decode tokens/s on a synthesized TinyLlama-1.1B shape vs bandwidth (acceptance 4).
//   gemm    : the batched products of prefill per weight shape, against measured peaks (bench_gemm.cpp).
//   attention: prefill's causal attention of the 1B shape, G multiply-adds/s (bench_attention.cpp).
//   stream  : only the matrix-vector products of one such decode step (--only f16|int8, default
//             INT4), as weight GB/s against the read bandwidth (bench_stream.cpp).
// Evaluation: the para protocol over the first --parts paragraphs. Calibration: sequences cut
// from the second half of the same file (disjoint from what is scored).
#include "bench_common.h"

#include <cstdio>
#include <cstdlib>

#include "engine/runtime/cpu/qkernels.h"
#include "engine/telemetry/stopwatch.h"

using edge::model::load_model;
using edge::model::Model;
using edge::telemetry::Stopwatch;

using namespace edge;
using namespace edge::quant;

namespace {

QuantPlan asym(QuantPlan p) {
    if (p.defaults) p.defaults->symmetric = false;
    return p;
}
QuantPlan clip(QuantPlan p) {
    if (p.defaults) p.defaults->clip = true;
    return p;
}
QuantPlan head_fp32(QuantPlan p) {
    p.keep.push_back("output");
    return p;
}
QuantPlan act_order(QuantPlan p) {
    p.gptq.act_order = true;
    return p;
}

int run_table(BenchSetup& s) {
    struct Config {
        std::string name;
        QuantPlan plan;
    };
    std::vector<Config> configs = {{"FP32", uniform_plan(Precision::FP32)},
                                   {"FP16", uniform_plan(Precision::FP16)},
                                   {"INT8-RTN g32", uniform_plan(Precision::INT8, QMethod::RTN, 32)}};
    const std::pair<const char*, QMethod> methods[] = {
        {"RTN", QMethod::RTN}, {"AWQ", QMethod::AWQ}, {"GPTQ", QMethod::GPTQ}};
    for (int g : {32, 64})
        for (auto [mname, meth] : methods)
            configs.push_back(
                {std::string("INT4-") + mname + " g" + std::to_string(g), uniform_plan(Precision::INT4, meth, g)});
    for (int g : {32, 64})
        for (auto [mname, meth] : methods)
            configs.push_back({std::string("INT4-") + mname + " g" + std::to_string(g) + " asym",
                               asym(uniform_plan(Precision::INT4, meth, g))});
    for (int g : {32, 64})
        for (bool sym : {true, false})
            for (auto [mname, meth] : methods) {
                QuantPlan p = clip(uniform_plan(Precision::INT4, meth, g, sym));
                configs.push_back(
                    {std::string("INT4-") + mname + " g" + std::to_string(g) + (sym ? "" : " asym") + " clip", p});
            }
    configs.push_back(
        {"INT4-GPTQ g32 clip act-order", act_order(clip(uniform_plan(Precision::INT4, QMethod::GPTQ, 32)))});
    configs.push_back(
        {"INT4-GPTQ g32 asym clip act-order", act_order(clip(asym(uniform_plan(Precision::INT4, QMethod::GPTQ, 32))))});
    configs.push_back(
        {"INT4-GPTQ g32 asym act-order", act_order(asym(uniform_plan(Precision::INT4, QMethod::GPTQ, 32)))});
    configs.push_back({"INT4-RTN g32 (head FP32)", head_fp32(uniform_plan(Precision::INT4, QMethod::RTN, 32))});
    configs.push_back({"INT4-GPTQ g32 (head FP32)", head_fp32(uniform_plan(Precision::INT4, QMethod::GPTQ, 32))});
    configs.push_back(
        {"INT4-GPTQ g32 asym (head FP32)", head_fp32(asym(uniform_plan(Precision::INT4, QMethod::GPTQ, 32)))});

    std::printf(
        "| config | weight bytes | perplexity | KL vs FP32 (mean) | KL p99 | top-1 agreement | decode tok/s | quantize "
        "s |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const Config& c : configs) {
        if (!s.only.empty() && c.name.find(s.only) == std::string::npos) continue;
        Stopwatch sw;
        auto q = apply_plan(*s.model, c.plan, &s.calib, nullptr, ApplyOptions{s.threads});
        if (!q.ok()) {
            std::printf("| %s | error: %s |\n", c.name.c_str(), q.message().c_str());
            continue;
        }
        const double qs = sw.seconds();
        auto qm = std::make_shared<const Model>(std::move(q->model));
        auto row = s.evaluate(qm, true);
        if (!row.ok()) return std::fprintf(stderr, "%s\n", row.message().c_str()), 1;
        std::printf("| %s | %zu | %.4f | %.4f | %.4f | %.2f%% | %.0f | %.2f |\n", c.name.c_str(), qm->weight_bytes(),
                    row->cmp.ppl_test, row->cmp.kl_mean, row->cmp.kl_p99, 100 * row->cmp.top1_agreement,
                    row->tokens_per_s, qs);
        std::fflush(stdout);
    }
    return 0;
}

int run_compare(BenchSetup& s, const std::string& file) {
    auto other = load_model(file);
    if (!other.ok()) return std::fprintf(stderr, "%s\n", other.message().c_str()), 1;
    auto om = std::make_shared<const Model>(std::move(other).value());
    auto row = s.evaluate(om, false);
    if (!row.ok()) return std::fprintf(stderr, "%s\n", row.message().c_str()), 1;
    std::printf("| %s | %zu | %.4f | %.4f | %.4f | %.2f%% |\n", file.c_str(), om->weight_bytes(), row->cmp.ppl_test,
                row->cmp.kl_mean, row->cmp.kl_p99, 100 * row->cmp.top1_agreement);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    BenchArgs a;
    for (int i = 1; i < argc; i += 2) {
        const std::string k = argv[i];
        if (k == "--help" || k == "-h") {
            std::printf(
                "edge-quant-bench [--mode table|compare|sens|decode|kernels|gemm|attention|stream|layerwise]\n"
                "  [--model M] [--text T] [--parts 400] [--calib-seqs 32] [--calib-len 128] [--threads 1] [--only "
                "NAME]\n"
                "  [--tokens 1,16,128,512] [--file F] [--kernels auto|avx2|portable]\n"
                "  [--prefetch auto|rows-l2|sequential-l1] [--lead N[,N...]]\n"
                "The modes and their tables: docs/quant.md and docs/benchmarks.md.\n");
            return 0;
        }
        if (i + 1 == argc) {  // (an option without its value used to be dropped and the table run)
            std::fprintf(stderr, "edge-quant-bench: option %s needs a value (--help lists them)\n", k.c_str());
            return 2;
        }
        const std::string v = argv[i + 1];
        if (k == "--model")
            a.model_path = v;
        else if (k == "--text")
            a.text_path = v;
        else if (k == "--parts")
            a.parts = std::atoi(v.c_str());
        else if (k == "--calib-seqs")
            a.calib_seqs = std::atoi(v.c_str());
        else if (k == "--calib-len")
            a.calib_len = std::atoi(v.c_str());
        else if (k == "--threads")
            a.threads = std::atoi(v.c_str());
        else if (k == "--only")
            a.only = v;
        else if (k == "--mode")
            a.mode = v;
        else if (k == "--file")
            a.file = v;
        else if (k == "--kernels")
            a.kernels = v;
        else if (k == "--prefetch")
            a.prefetch = v;
        else if (k == "--lead")
            a.lead = v;
        else if (k == "--tokens")
            a.tokens = v;
        else {
            std::fprintf(stderr, "unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if (a.kernels == "portable")
        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
    else if (a.kernels == "avx2")
        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Avx2);
    else if (a.kernels != "auto")
        return std::fprintf(stderr, "--kernels: auto, avx2 or portable\n"), 2;
    if (a.prefetch == "rows-l2")
        runtime::qkernels::force_row_prefetch(runtime::qkernels::RowPrefetch::RowsL2);
    else if (a.prefetch == "sequential-l1")
        runtime::qkernels::force_row_prefetch(runtime::qkernels::RowPrefetch::SequentialL1);
    else if (a.prefetch != "auto")
        return std::fprintf(stderr, "--prefetch: auto, rows-l2 or sequential-l1\n"), 2;
    if (!a.lead.empty() && a.lead.find_first_not_of("0123456789,") != std::string::npos)
        return std::fprintf(stderr, "--lead: passes, e.g. 2 or 1,2,3 (0: auto), got '%s'\n", a.lead.c_str()), 2;
    if (!a.lead.empty() && a.lead.find(',') == std::string::npos)
        runtime::qkernels::force_prefetch_lead(std::atoi(a.lead.c_str()));
    if (a.mode == "decode") return run_decode_bench(a);
    if (a.mode == "kernels") return run_kernel_bench(a);
    if (a.mode == "gemm") return run_gemm_bench(a);
    if (a.mode == "attention") return run_attention_bench(a);
    if (a.mode == "stream") return run_stream_bench(a);
    if (a.mode == "layerwise") return run_layerwise_bench(a);
    auto s = BenchSetup::create(a);
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.message().c_str()), 1;
    std::printf(
        "model %s, %s: para protocol, first %d paragraphs; calibration %zu x %d tokens from the second half; "
        "kernels %s; %d thread(s)\n\n",
        a.model_path.c_str(), a.text_path.c_str(), a.parts, s->calib.sequences.size(), a.calib_len,
        runtime::qkernels::kernel_name(), a.threads);
    if (a.mode == "table") return run_table(*s);
    if (a.mode == "compare") return run_compare(*s, a.file);
    if (a.mode == "sens") return run_sensitivity_bench(*s);
    std::fprintf(stderr, "unknown mode %s\n", a.mode.c_str());
    return 2;
}
