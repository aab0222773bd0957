// `compile MODEL [--plan P [--calib FILE]] [--target cpu|cuda-sm87|cuda-sm90] --out X.edge`:
// fusion, memory planning and the .edge engine file (engine/compile), the plan applied block by
// block as the file is written (AWQ and GPTQ layers calibrate on --calib). Without a plan the
// weights keep their stored precision. generate, perplexity and bench read the .edge file like any model.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/cli/common.h"
#include "engine/compile/compile.h"
#include "engine/quant/plan.h"

namespace edge::cli {

namespace {

struct CompileArgs {
    std::string model, plan, target = "cpu", out, tokenizer;
    CalibTextArgs calib;
    int prefill_batch = compile::CompileOptions{}.prefill_batch;
    bool json = false;
};

nlohmann::json memory_json(const runtime::MemoryLayout& m) {
    return {{"batch", m.batch},
            {"wide_rows", m.wide_rows},
            {"arena_bytes", m.arena_bytes},
            {"naive_bytes", m.naive_bytes},
            {"peak_live_bytes", m.peak_live_bytes}};
}

int run_compile(const CompileArgs& a) {
    auto target = compile::parse_target(a.target);
    if (!target.ok()) return fail(target.error());
    compile::CompileOptions o;
    o.target = *target;
    o.out_path = a.out;
    o.prefill_batch = a.prefill_batch;
    Result<compile::CompileReport> r = Error{};
    if (a.calib.calib.empty()) {
        ProgressBar bar(!a.json);
        r = compile::compile_file(a.model, a.plan, o, bar.progress());
        bar.finish();
    } else {
        // Calibrated: the model's tokenizer makes the calibration set first.
        if (a.plan.empty()) return fail(err("--calib calibrates the layers of a --plan; none was given"));
        auto loaded = load(a.model, a.tokenizer, true, Weights::Lazy);
        if (!loaded.ok()) return fail(loaded.error());
        auto plan = quant::load_plan(a.plan);
        if (!plan.ok()) return fail(plan.error());
        auto calib = a.calib.read(loaded->tokenizer.get());
        if (!calib.ok()) return fail(calib.error());
        o.plan = std::move(plan).value();
        o.calib = calib->get();
        auto pruned = prune_for_plan(*loaded->model, a.plan, !a.json);
        if (!pruned.ok()) return fail(pruned.error());
        ProgressBar bar(!a.json);
        r = compile::compile(*pruned ? (*pruned)->model : *loaded->model, o, bar.progress());
        bar.finish();
    }
    if (!r.ok()) return fail(r.error());
    if (a.json) {
        print_json({{"out", r->out_path},
                    {"target", a.target},
                    {"file_bytes", r->file_bytes},
                    {"weight_bytes", r->weight_bytes},
                    {"nodes_before", r->nodes_before},
                    {"nodes_after", r->nodes_after},
                    {"plan", r->plan_summary},
                    {"decode", memory_json(r->decode)},
                    {"prefill", memory_json(r->prefill)}});
        return kOk;
    }
    std::printf("%s (%s, %s)\n", r->out_path.c_str(), a.target.c_str(), human_bytes(double(r->file_bytes)).c_str());
    if (!r->plan_summary.empty()) std::printf("  plan      %s\n", r->plan_summary.c_str());
    std::printf("  graph     %d ops -> %d fused nodes\n", r->nodes_before, r->nodes_after);
    for (const runtime::MemoryLayout* m : {&r->decode, &r->prefill})
        std::printf("  arena     batch %-4d %s (naive %s, peak live %s)\n", m->batch,
                    human_bytes(double(m->arena_bytes)).c_str(), human_bytes(double(m->naive_bytes)).c_str(),
                    human_bytes(double(m->peak_live_bytes)).c_str());
    return kOk;
}

}  // namespace

void add_compile_command(CLI::App& app, int& rc) {
    auto a = std::make_shared<CompileArgs>();
    CLI::App* sub = app.add_subcommand("compile", "Compile a model (and a quantization plan) into a .edge engine file");
    sub->add_option("model", a->model, "Model file or folder (.gguf, .bin, HF folder, .edgeq, ...)")->required();
    sub->add_option("--plan", a->plan, "Quantization plan (*.plan.json); without one weights keep their precision");
    sub->add_option("--target", a->target, "cpu, cuda-sm87 or cuda-sm90")->capture_default_str();
    sub->add_option("--out", a->out, "The engine file to write (X.edge)")->required();
    sub->add_option(
           "--prefill-batch", a->prefill_batch,
           "Rows of the prefill program: the most prompt tokens one pass runs (the weights are read once a pass)")
        ->capture_default_str();
    a->calib.add_options(sub);
    sub->add_option("--tokenizer", a->tokenizer, "Tokenizer file when the model has none (for --calib)");
    sub->add_flag("--json", a->json, "Print JSON");
    sub->callback([a, &rc] { rc = run_compile(*a); });
}

}  // namespace edge::cli
