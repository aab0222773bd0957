// `quantize MODEL --plan P [--calib FILE] --out M.edgeq`, `sensitivity MODEL --calib FILE` and
// `validate REF TEST --text FILE`: the quantization engine (engine/quant) and the
// post-quantization validation suite (engine/validate) from the command line. validate's exit
// code says pass (0) or fail (1), so it can gate a CI pipeline.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/cli/common.h"
#include "engine/core/mapped_file.h"
#include "engine/model/edgeq.h"
#include "engine/quant/apply.h"
#include "engine/quant/calib.h"
#include "engine/quant/plan.h"
#include "engine/quant/sensitivity.h"
#include "engine/validate/consistency.h"

using edge::model::EdgeqWriter;
using edge::model::Model;
using edge::validate::parse_ppl_protocol;
using edge::validate::Thresholds;
using edge::validate::validate_quantized;
using edge::validate::ValidateOptions;

namespace edge::cli {

namespace {

struct QuantizeArgs {
    std::string model, tokenizer, plan, out;
    CalibTextArgs calib;
    bool json = false;
};

int run_quantize(const QuantizeArgs& a) {
    auto plan = quant::load_plan(a.plan);
    if (!plan.ok()) return fail(plan.error());
    // Lazily opened: RTN and FP16 convert one tensor at a time, AWQ and GPTQ one block at a time.
    auto loaded = load(a.model, a.tokenizer, !a.calib.calib.empty(), Weights::Lazy);
    if (!loaded.ok()) return fail(loaded.error());
    auto calib = a.calib.read(loaded->tokenizer.get());
    if (!calib.ok()) return fail(calib.error());
    auto pruned = prune_for_plan(*loaded->model, a.plan, !a.json);
    if (!pruned.ok()) return fail(pruned.error());
    const Model& model = *pruned ? (*pruned)->model : *loaded->model;
    // Converted block by block straight into the file: one block's tensors in memory at a time.
    auto writer = EdgeqWriter::create(a.out);
    if (!writer.ok()) return fail(writer.error());
    quant::ApplyOptions ao;
    ao.sink = [w = writer->get()](const Tensor& t) { return w->add(t); };
    ProgressBar bar(!a.json);
    auto q = quant::apply_plan(model, *plan, calib->get(), bar.progress(), ao);
    bar.finish();
    if (!q.ok()) return fail(q.error());
    if (auto s = (*writer)->finish(q->model); !s.ok()) return fail(s.error());
    size_t before = 0, after = 0;
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : q->layers) {
        before += l.bytes_before;
        after += l.bytes_after;
        layers.push_back({{"layer", l.layer},
                          {"format", l.format},
                          {"bytes_before", l.bytes_before},
                          {"bytes_after", l.bytes_after},
                          {"frobenius_error", l.error.frobenius},
                          {"bound", l.error.bound},
                          {"within_bound", l.error.within_bound}});
    }
    if (a.json) {
        print_json({{"out", a.out},
                    {"bytes_before", before},
                    {"bytes_after", after},
                    {"layers", layers},
                    {"warnings", q->warnings}});
        return kOk;
    }
    std::printf("%s: %zu layers, %s -> %s\n", a.out.c_str(), q->layers.size(), human_bytes(double(before)).c_str(),
                human_bytes(double(after)).c_str());
    for (const auto& l : q->layers)
        std::printf("  %-22s %-26s %10s  |W-Q|_F %.4g%s\n", l.layer.c_str(), l.format.c_str(),
                    human_bytes(double(l.bytes_after)).c_str(), l.error.frobenius,
                    l.error.within_bound ? "" : "  (above the RTN bound)");
    for (const auto& w : q->warnings) std::fprintf(stderr, "edgestudio-cli: warning: %s\n", w.c_str());
    return kOk;
}

struct SensitivityArgs {
    std::string model, tokenizer, out, spec = "int4";
    CalibTextArgs calib;
    int group = 32;
    int threads = 0;
    bool json = false;
};

// The empirical pass of the studio's Sensitivity page: each layer alone quantized (RTN), the KL
// it costs on the calibration windows. Block-streamed: one block of the model read at a time.
int run_sensitivity(const SensitivityArgs& a) {
    if (a.calib.calib.empty()) return fail(err(a.model, ": sensitivity needs --calib TEXT"));
    if (a.spec != "int4" && a.spec != "int8")
        return fail(err("--precision ", a.spec, ": sensitivity quantizes one layer at a time to int4 or int8"));
    auto loaded = load(a.model, a.tokenizer, true, Weights::Lazy);
    if (!loaded.ok()) return fail(loaded.error());
    auto calib = a.calib.read(loaded->tokenizer.get());
    if (!calib.ok()) return fail(calib.error());
    quant::SensitivityOptions so;
    so.spec = quant::QuantSpec{a.spec == "int8" ? 8 : 4, true, QGrouping::Group, a.group, QMethod::RTN};
    so.threads = a.threads;
    ProgressBar bar(!a.json);
    auto r = quant::layer_sensitivity(*loaded->model, (*calib)->sequences, so, bar.progress());
    bar.finish();
    if (!r.ok()) return fail(r.error());
    const std::string json = quant::sensitivity_to_json(*r);
    if (!a.out.empty())
        if (auto st = write_text_file(a.out, json); !st.ok()) return fail(st.error());
    if (a.json) {
        std::puts(json.c_str());
        return kOk;
    }
    std::printf("%-22s %12s %12s %12s %10s\n", "layer", "KL mean", "KL max", "NLL delta", "bytes");
    for (const auto& l : *r)
        std::printf("%-22s %12.4g %12.4g %+12.4g %10s\n", l.layer.c_str(), l.kl_mean, l.kl_max, l.nll_delta,
                    human_bytes(double(l.bytes)).c_str());
    std::printf("%zu layers, %s g%d RTN, %zu calibration windows%s%s\n", r->size(), a.spec.c_str(), a.group,
                (*calib)->sequences.size(), a.out.empty() ? "" : "; written to ", a.out.c_str());
    return kOk;
}

struct ValidateArgs {
    std::string ref, test, text, tokenizer, protocol = "para";
    int max_parts = 50;
    double jitter_ms_max = Thresholds{}.jitter_ms_max;
    bool json = false, no_bitflip = false;
};

int run_validate(const ValidateArgs& a) {
    auto proto = parse_ppl_protocol(a.protocol);
    if (!proto.ok()) return fail(proto.error());
    // Both run on the CPU executor over their weights as stored (no FP32 copy of either).
    auto ref = load(a.ref, a.tokenizer, false, Weights::AsStored);
    if (!ref.ok()) return fail(ref.error());
    auto test = load(a.test, a.tokenizer, false, Weights::AsStored);
    if (!test.ok()) return fail(test.error());
    auto text = read_text_file(a.text);
    if (!text.ok()) return fail(text.error());
    ValidateOptions o;
    o.ppl.protocol = *proto;
    o.ppl.max_parts = a.max_parts;
    o.run_bitflip = !a.no_bitflip;
    o.thresholds.jitter_ms_max = a.jitter_ms_max;
    ProgressBar bar(!a.json);
    auto r = validate_quantized(ref->model, test->model, *text, o, bar.progress());
    bar.finish();
    if (!r.ok()) return fail(r.error());
    if (a.json)
        std::printf("%s\n", r->to_json().c_str());
    else
        std::printf("%s", r->to_table().c_str());
    return r->passed() ? kOk : kFailed;
}

}  // namespace

void add_quant_commands(CLI::App& app, int& rc) {
    auto q = std::make_shared<QuantizeArgs>();
    CLI::App* qs = app.add_subcommand("quantize", "Quantize a model with a plan (RTN, AWQ, GPTQ) into a .edgeq file");
    qs->add_option("model", q->model, "Model file or folder")->required();
    qs->add_option("--plan", q->plan, "Quantization plan (*.plan.json)")->required();
    q->calib.add_options(qs);
    qs->add_option("--tokenizer", q->tokenizer, "Tokenizer file when the model has none");
    qs->add_option("--out", q->out, "The quantized model to write (M.edgeq)")->required();
    qs->add_flag("--json", q->json, "Print JSON");
    qs->callback([q, &rc] { rc = run_quantize(*q); });

    auto se = std::make_shared<SensitivityArgs>();
    CLI::App* ss = app.add_subcommand(
        "sensitivity", "Per-layer sensitivity: the KL each layer costs when it alone is quantized (RTN)");
    ss->add_option("model", se->model, "Model file or folder")->required();
    se->calib.add_options(ss);
    ss->add_option("--precision", se->spec, "int4 or int8")->capture_default_str();
    ss->add_option("--group", se->group, "Group size")->capture_default_str()->check(CLI::PositiveNumber);
    ss->add_option("--tokenizer", se->tokenizer, "Tokenizer file when the model has none");
    ss->add_option("--out", se->out, "Write the figures as JSON (what the studio's Sensitivity page reads)");
    ss->add_option("--threads,-t", se->threads, "Threads (0 = default)")->check(CLI::NonNegativeNumber);
    ss->add_flag("--json", se->json, "Print JSON");
    ss->callback([se, &rc] { rc = run_sensitivity(*se); });

    auto v = std::make_shared<ValidateArgs>();
    CLI::App* vs = app.add_subcommand("validate", "Validate a quantized model against its FP32 reference");
    vs->add_option("reference", v->ref, "FP32 reference model")->required();
    vs->add_option("model", v->test, "Quantized model (.edgeq, .edge, ...)")->required();
    vs->add_option("--text", v->text, "Evaluation text")->required();
    vs->add_option("--protocol", v->protocol, "story, para or stream")->capture_default_str();
    vs->add_option("--max-parts", v->max_parts, "Score only the first N parts")->capture_default_str();
    vs->add_option("--jitter-ms-max", v->jitter_ms_max,
                   "Fail when decode jitter (p99 - p50 per-token latency, ms) reaches this")
        ->capture_default_str();
    vs->add_option("--tokenizer", v->tokenizer, "Tokenizer file when the models have none");
    vs->add_flag("--no-bitflip", v->no_bitflip, "Skip the bit-flip fault-injection check");
    vs->add_flag("--json", v->json, "Print JSON");
    vs->callback([v, &rc] { rc = run_validate(*v); });
}

}  // namespace edge::cli
