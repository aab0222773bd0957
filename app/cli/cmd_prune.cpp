// `prune MODEL (--ratio R | --plan P) [--importance magnitude|taylor|hessian]
//        [--mode oneshot|iterative|dst] [--out FILE]`: structured pruning (docs/pruning.md) with a
// table (or --json) of the per-layer masks, parameter and node counts before and after.
// `prune-bench`: the acceptance-3 table (digits CNN 50% channels: one-shot / iterative / DST;
// stories260K 25% of MLP channels: perplexity before/after fine-tuning).
//
// Magnitude one-shot pruning without fine-tuning needs no LibTorch; Taylor gradients, Hessian
// scores from an `analyze` JSON, fine-tuning, iterative and DST modes need the LibTorch build.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "app/cli/common.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/edgeq.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "engine/prune/structured.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/validate/perplexity.h"
#ifdef EDGE_CLI_ANALYSIS
#include "engine/analysis/cnn_digits.h"
#include "engine/analysis/prune_finetune.h"
#include "engine/analysis/sensitivity.h"
#include "engine/analysis/torch_llama.h"
#include "engine/analysis/torchscript_cnn.h"

using edge::analysis::build_digits_cnn;
using edge::analysis::CnnTrainOptions;
using edge::analysis::save_torchscript_cnn;
using edge::analysis::torch_cnn_classify;
using edge::analysis::train_cnn;
#endif
using edge::model::build_resnet20_cifar;
using edge::model::count_nodes;
using edge::model::is_cnn;
using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;
using edge::model::NodeCounts;
using edge::model::save_edgeq;
using edge::model::write_gguf_model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;
using edge::validate::evaluate_perplexity;
using edge::validate::ppl_sequences;
using edge::validate::PplOptions;
using edge::validate::PplProtocol;
using edge::validate::PplResult;

namespace edge::cli {

namespace {

struct PruneArgs {
    std::string model, tokenizer, plan, out, data, sensitivity, importance = "magnitude", mode = "oneshot";
    std::string kinds = "heads,mlp,conv";
    double ratio = 0.0, step = 0.01;
    int finetune_steps = -1, round_steps = 20, dst_steps = 400, dst_every = 50, threads = 0;
    int sequences = 0;  // LLM: training windows cut from --data (0: all)
    uint64_t seed = 1;
    bool json = false;
};

[[maybe_unused]] Result<std::string> read_text(const std::string& path) {  // only the LibTorch paths read text
    std::ifstream f(path, std::ios::binary);
    if (!f) return err(path, ": cannot open");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

bool ends_with(const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

Result<Model> load_any(const PruneArgs& a) {
    const bool st = ends_with(a.model, ".safetensors");
    if (st) return build_resnet20_cifar(a.model);
    LoadOptions lo;
    lo.tokenizer_path = a.tokenizer;
    ProgressBar bar(!a.json);
    return load_model(a.model, lo, bar.progress());
}

void print_table(const prune::PruneReport& r) {
    std::printf("%-22s %-5s %6s %6s %7s %6s  %s\n", "layer", "kind", "units", "kept", "removed", "ratio",
                "params before -> after");
    for (const auto& l : r.layers) {
        if (!l.prunable) {
            std::printf("%-22s %-5s %6lld %6s %7s %6s  pinned: %s\n", l.layer.c_str(), prune::unit_kind_name(l.kind),
                        (long long)l.units, "-", "-", "-", l.pinned_reason.c_str());
            continue;
        }
        std::printf("%-22s %-5s %6lld %6lld %7lld %5.1f%%  %s -> %s\n", l.layer.c_str(), prune::unit_kind_name(l.kind),
                    (long long)l.units, (long long)l.kept(), (long long)l.removed(), 100.0 * l.ratio(),
                    group_digits(l.params_before).c_str(), group_digits(l.params_after).c_str());
        if (l.kind == prune::UnitKind::AttentionHeads && l.removed() > 0) {
            std::string h;
            for (int64_t x : l.removed_heads()) h += (h.empty() ? "" : ",") + std::to_string(x);
            std::printf("%-22s        removed query heads %s (KV heads", "", h.c_str());
            for (int64_t x : l.removed_units()) std::printf(" %lld", (long long)x);
            std::printf(")\n");
        }
    }
    std::printf("parameters: %s -> %s (%.1f%% removed)\n", group_digits(r.params_before).c_str(),
                group_digits(r.params_after).c_str(),
                r.params_before ? 100.0 * double(r.params_before - r.params_after) / double(r.params_before) : 0.0);
    std::printf("nodes: %s -> %s\n", r.nodes_before.text().c_str(), r.nodes_after.text().c_str());
    if (!r.config_before.empty()) std::printf("config: %s -> %s\n", r.config_before.c_str(), r.config_after.c_str());
}

Status write_out(const Model& m, const std::string& path) {
    if (path.empty()) return {};
    if (is_cnn(m)) {
#ifdef EDGE_CLI_ANALYSIS
        // A CNN leaves as a TorchScript module (the narrower convs and the graph), which `analyze`
        // and load_torchscript_cnn read back.
        if (ends_with(path, ".pt")) return save_torchscript_cnn(m, path);
        return err(path, ": a pruned CNN is written as TorchScript (.pt); .gguf and .edgeq hold LLMs only");
#else
        return err(path, ": writing a CNN needs the LibTorch build (TorchScript .pt)");
#endif
    }
    if (ends_with(path, ".gguf")) return write_gguf_model(m, path);
    if (ends_with(path, ".edgeq")) return save_edgeq(m, path);
    return err(path, ": unknown output format (use .gguf or .edgeq)");
}

int run_prune(const PruneArgs& a) {
    auto m = load_any(a);
    if (!m) return fail(m.error());
    prune::PruneSpec spec;
    if (!a.plan.empty())
        if (auto s = prune::read_prune_plan(a.plan, spec); !s) return fail(s.error());
    if (a.ratio > 0) spec.ratio = a.ratio;
    if (spec.ratio == 0 && spec.rules.empty()) return fail("nothing to prune: pass --ratio R or --plan P");
    {
        auto imp = prune::parse_importance(a.importance);
        if (!imp) return fail(imp.error());
        if (a.importance != "magnitude" || a.plan.empty()) spec.importance = imp.value();
    }
    spec.heads = a.kinds.find("heads") != std::string::npos;
    spec.mlp = a.kinds.find("mlp") != std::string::npos;
    spec.conv = a.kinds.find("conv") != std::string::npos;
    const bool needs_torch =
        spec.importance == prune::Importance::Taylor || a.mode != "oneshot" || a.finetune_steps > 0;
    std::map<std::string, double> layer_imp;
    if (spec.importance == prune::Importance::Hessian) {
#ifdef EDGE_CLI_ANALYSIS
        if (a.sensitivity.empty())
            return fail("hessian importance needs --sensitivity FILE (the JSON of `edgestudio-cli analyze`)");
        auto text = read_text(a.sensitivity);
        if (!text) return fail(text.error());
        auto rep = analysis::analysis_from_json(text.value(), a.sensitivity);
        if (!rep) return fail(rep.error());
        for (const auto& l : rep->layers) layer_imp[l.layer] = l.importance;
        spec.layer_importance = &layer_imp;
#else
        return fail("hessian importance needs the LibTorch build (engine/analysis)");
#endif
    }
    const auto t0 = std::chrono::steady_clock::now();
    prune::PruneReport report;
    Model pruned;
    nlohmann::json extra;
    if (!needs_torch) {
        auto r = prune::plan_pruning(m.value(), spec);
        if (!r) return fail(r.error());
        auto p = prune::apply_masks(m.value(), r->layers);
        if (!p) return fail(p.error());
        report = std::move(r.value());
        pruned = std::move(p.value());
    } else {
#ifdef EDGE_CLI_ANALYSIS
        if (a.data.empty())
            return fail(a.mode != "oneshot" || a.finetune_steps > 0
                            ? "fine-tuning needs --data (a text file for LLMs, digits.csv.gz for CNNs)"
                            : "taylor importance needs --data for its gradients");
        auto mode = analysis::parse_prune_mode(a.mode);
        if (!mode) return fail(mode.error());
        analysis::PruneRunOptions o;
        o.mode = mode.value();
        o.spec = spec;
        o.step = a.step;
        o.round_steps = a.round_steps;
        o.final_steps = a.finetune_steps >= 0 ? a.finetune_steps : 200;
        o.dst_steps = a.dst_steps;
        o.dst_every = a.dst_every;
        o.seed = a.seed;
        o.threads = a.threads;
        o.cnn.threads = a.threads;
        ProgressBar bar(!a.json);
        Result<analysis::PruneRun> run = err("unreachable");
        if (is_cnn(m.value())) {
            auto all = calib::read_digits_csv(a.data);
            if (!all) return fail(all.error());
            const calib::ImageSplit d = calib::split_every_fifth(all.value());
            run = analysis::prune_cnn(m.value(), d.train, o, bar.progress());
            if (run) {
                auto acc = torch_cnn_classify(run->model, d.test);
                if (!acc) return fail(acc.error());
                extra["test_top1"] = acc->top1();
            }
        } else {
            if (m->tokenizer.empty())
                return fail(err(a.model, ": the model carries no tokenizer; pass --tokenizer FILE"));
            auto tok = make_tokenizer(m->tokenizer);
            if (!tok) return fail(tok.error());
            auto text = read_text(a.data);
            if (!text) return fail(text.error());
            PplOptions po;
            po.protocol = PplProtocol::Para;
            po.max_parts = a.sequences > 0 ? a.sequences : -1;
            po.max_tokens = o.llm_seq_len + 1;
            auto seqs = ppl_sequences(*tok.value(), text.value(), po);
            if (!seqs) return fail(seqs.error());
            run = analysis::prune_llama(m.value(), seqs.value(), o, bar.progress());
        }
        bar.finish();
        if (!run) return fail(run.error());
        extra["mode"] = a.mode;
        extra["rounds"] = run->rounds;
        extra["train_steps"] = run->train_steps;
        extra["units_swapped"] = run->units_swapped;
        report = std::move(run->report);
        pruned = std::move(run->model);
#else
        return fail(
            "taylor importance, fine-tuning and the iterative/dst modes need the LibTorch build (engine/analysis)");
#endif
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (auto s = write_out(pruned, a.out); !s) return fail(s.error());
    if (a.json) {
        nlohmann::json j = nlohmann::json::parse(prune::report_to_json(report));
        j["model"] = a.model;
        j["seconds"] = secs;
        if (!a.out.empty()) j["out"] = a.out;
        for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
        print_json(j);
        return kOk;
    }
    print_table(report);
    if (extra.contains("test_top1"))
        std::printf("test top-1 after pruning: %.2f%%\n", 100.0 * extra["test_top1"].get<double>());
    if (extra.contains("rounds"))
        std::printf("mode %s: %d rounds/updates, %d training steps\n", a.mode.c_str(), extra["rounds"].get<int>(),
                    extra["train_steps"].get<int>());
    if (!a.out.empty()) std::printf("wrote %s\n", a.out.c_str());
    return kOk;
}

#ifdef EDGE_CLI_ANALYSIS
// ---- prune-bench (acceptance 3) -----------------------------------------------------------------

struct BenchArgs {
    std::string shared = "../shared";
    int base_steps = 1500, final_steps = 300, round_steps = 30, dst_steps = 600, dst_every = 50;
    double step = 0.01;
    int llm_steps = 150, llm_eval_paras = 400, threads = 0;
    bool skip_cnn = false, skip_llm = false, llm_iterative = false;
};

struct CnnRow {
    std::string name;
    double acc = 0;
    int64_t params = 0;
    NodeCounts nodes;
    int rounds = 0, steps = 0;
    double secs = 0;
};

int run_bench(const BenchArgs& b) {
    if (!b.skip_cnn) {
        auto all = calib::read_digits_csv(b.shared + "/data/digits.csv.gz");
        if (!all) return fail(all.error());
        const calib::ImageSplit d = calib::split_every_fifth(all.value());
        Model base = build_digits_cnn(1);
        CnnTrainOptions t = analysis::prune_cnn_train_defaults();
        t.steps = b.base_steps;
        t.seed = 1;
        t.threads = b.threads;
        const auto t0 = std::chrono::steady_clock::now();
        if (auto s = train_cnn(base, d.train, t); !s) return fail(s.error());
        const double base_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        auto base_acc = torch_cnn_classify(base, d.test);
        if (!base_acc) return fail(base_acc.error());
        std::vector<CnnRow> rows;
        rows.push_back({"unpruned (" + std::to_string(b.base_steps) + " steps)", base_acc->top1(),
                        base.parameter_count(), count_nodes(base.graph), 0, b.base_steps, base_secs});
        struct ModeRow {
            std::string name;
            analysis::PruneMode mode;
            int final_steps;
        };
        for (const ModeRow& mr :
             {ModeRow{"one-shot, no fine-tuning", analysis::PruneMode::OneShot, 0},
              ModeRow{"one-shot + fine-tuning", analysis::PruneMode::OneShot, b.final_steps},
              ModeRow{"iterative (1%/round) + fine-tuning", analysis::PruneMode::Iterative, b.final_steps},
              ModeRow{"dynamic sparse training", analysis::PruneMode::Dst, b.final_steps}}) {
            analysis::PruneRunOptions o;
            o.mode = mr.mode;
            o.spec.ratio = 0.5;
            o.final_steps = mr.final_steps;
            o.round_steps = b.round_steps;
            o.step = b.step;
            o.dst_steps = b.dst_steps;
            o.dst_every = b.dst_every;
            o.cnn.threads = b.threads;
            auto run = analysis::prune_cnn(base, d.train, o);
            if (!run) return fail(run.error());
            auto acc = torch_cnn_classify(run->model, d.test);
            if (!acc) return fail(acc.error());
            rows.push_back({mr.name, acc->top1(), run->model.parameter_count(), count_nodes(run->model.graph),
                            run->rounds, run->train_steps, run->seconds});
        }
        std::printf(
            "digits CNN (%lld train / %lld test images), 50%% of every conv's output channels, magnitude "
            "importance\n\n",
            (long long)d.train.count, (long long)d.test.count);
        std::printf("| model | test top-1 | vs unpruned | params | nodes | rounds | train steps | seconds |\n");
        std::printf("|---|---|---|---|---|---|---|---|\n");
        for (const CnnRow& r : rows)
            std::printf("| %s | %.2f%% | %+.2f | %s | %d | %d | %d | %.1f |\n", r.name.c_str(), 100 * r.acc,
                        100 * (r.acc - rows[0].acc), group_digits(r.params).c_str(), r.nodes.total, r.rounds, r.steps,
                        r.secs);
        std::printf("\n");
        std::fflush(stdout);
    }
    if (!b.skip_llm) {
        const std::string mp = b.shared + "/models/stories260K/stories260K.gguf";
        auto m = load_model(mp);
        if (!m) return fail(m.error());
        auto tok = make_tokenizer(m->tokenizer);
        if (!tok) return fail(tok.error());
        auto text = read_text(b.shared + "/data/tinystories_val.txt");
        if (!text) return fail(text.error());
        // Disjoint parts: the first N paragraphs evaluate, the rest fine-tunes.
        size_t cut = 0;
        for (int k = 0; k < b.llm_eval_paras && cut != std::string::npos; ++k) {
            cut = text->find("\n\n", cut);
            if (cut != std::string::npos) cut += 2;
        }
        if (cut == std::string::npos) return fail("tinystories_val.txt has too few paragraphs");
        const std::string eval_text = text->substr(0, cut), train_text = text->substr(cut);
        PplOptions ev;
        ev.protocol = PplProtocol::Para;
        auto ppl = [&](const Model& x) -> Result<PplResult> {
            auto rt = LlamaCpu::create(std::make_shared<const Model>(x), RuntimeOptions{b.threads, 512});
            if (!rt) return rt.error();
            return evaluate_perplexity(*rt.value(), *tok.value(), eval_text, ev);
        };
        PplOptions tr;
        tr.protocol = PplProtocol::Para;
        tr.max_tokens = 129;
        auto seqs = ppl_sequences(*tok.value(), train_text, tr);
        if (!seqs) return fail(seqs.error());
        auto p0 = ppl(m.value());
        if (!p0) return fail(p0.error());
        std::printf(
            "stories260K, 25%% of MLP channels (ffn 172 -> 129 per block), magnitude importance; perplexity on the\n"
            "first %d paragraphs of tinystories_val.txt (para protocol, %lld tokens); fine-tuning on the other %zu "
            "paragraphs\n\n",
            b.llm_eval_paras, (long long)p0->tokens, seqs->size());
        std::printf("| model | params | perplexity | train steps | seconds |\n|---|---|---|---|---|\n");
        std::printf("| unpruned | %s | %.4f | 0 | - |\n", group_digits(m->parameter_count()).c_str(), p0->perplexity);
        // The unpruned model fine-tuned the same way: what fine-tuning alone gives.
        struct LRow {
            std::string name;
            analysis::PruneMode mode;
            int final_steps;
            bool prune;
        };
        for (const LRow& lr :
             {LRow{"25% MLP pruned, no fine-tuning", analysis::PruneMode::OneShot, 0, true},
              LRow{"25% MLP pruned + fine-tuning", analysis::PruneMode::OneShot, b.llm_steps, true},
              LRow{"iterative (1%/round) + fine-tuning", analysis::PruneMode::Iterative, b.llm_steps, true},
              LRow{"unpruned + the same fine-tuning", analysis::PruneMode::OneShot, b.llm_steps, false}}) {
            if (lr.mode == analysis::PruneMode::Iterative && !b.llm_iterative) continue;
            analysis::PruneRunOptions o;
            o.mode = lr.mode;
            o.spec.ratio = lr.prune ? 0.25 : 0.0;
            o.spec.rules = lr.prune ? std::vector<std::pair<std::string, double>>{}
                                    : std::vector<std::pair<std::string, double>>{{"blk.*.ffn", 0.0}};
            o.spec.heads = false;
            o.final_steps = lr.final_steps;
            o.round_steps = 2;
            o.step = 0.01;
            o.threads = b.threads;
            o.llm_seq_len = 128;
            auto run = analysis::prune_llama(m.value(), seqs.value(), o);
            if (!run) return fail(run.error());
            auto p = ppl(run->model);
            if (!p) return fail(p.error());
            std::printf("| %s | %s | %.4f | %d | %.1f |\n", lr.name.c_str(),
                        group_digits(run->model.parameter_count()).c_str(), p->perplexity, run->train_steps,
                        run->seconds);
            std::fflush(stdout);
        }
    }
    return kOk;
}
#endif

}  // namespace

void add_prune_commands(CLI::App& app, int& rc) {
    auto a = std::make_shared<PruneArgs>();
    CLI::App* sub =
        app.add_subcommand("prune", "Structured pruning: attention heads (GQA groups), MLP channels, conv channels");
    sub->add_option("model", a->model, "Model: GGUF / llama2.c / HF (LLM), .onnx or ResNet-20 .safetensors (CNN)")
        ->required();
    sub->add_option("--tokenizer", a->tokenizer, "Tokenizer file for formats without one (llama2.c)");
    sub->add_option("--ratio", a->ratio, "Fraction of units removed from every prunable layer")
        ->check(CLI::Range(0.0, 1.0));
    sub->add_option("--plan", a->plan, "Plan file with a \"prune\" object (pattern -> ratio)");
    sub->add_option("--importance", a->importance, "magnitude | taylor | hessian")->capture_default_str();
    sub->add_option("--mode", a->mode, "oneshot | iterative | dst")->capture_default_str();
    sub->add_option("--kinds", a->kinds, "What --ratio applies to: heads, mlp, conv (comma-separated)")
        ->capture_default_str();
    sub->add_option("--sensitivity", a->sensitivity, "Sensitivity JSON of `analyze` (hessian importance)");
    sub->add_option("--data", a->data, "Training data: text (LLM) or digits.csv.gz (CNN)");
    sub->add_option("--step", a->step, "Iterative: fraction of each layer's units per round")->capture_default_str();
    sub->add_option("--finetune-steps", a->finetune_steps, "Fine-tuning steps at the end (default 200 with --data)");
    sub->add_option("--round-steps", a->round_steps, "Iterative: fine-tuning steps between rounds")
        ->capture_default_str();
    sub->add_option("--dst-steps", a->dst_steps, "DST: training steps with mask updates")->capture_default_str();
    sub->add_option("--dst-every", a->dst_every, "DST: steps between mask updates")->capture_default_str();
    sub->add_option("--sequences", a->sequences, "LLM: training paragraphs taken from --data (0: all)");
    sub->add_option("--seed", a->seed, "Training seed")->capture_default_str();
    sub->add_option("--threads,-t", a->threads, "Threads (0 = default)");
    sub->add_option("--out,-o", a->out, "Write the pruned model (.gguf or .edgeq for LLMs, TorchScript .pt for CNNs)");
    sub->add_flag("--json", a->json, "Print JSON");
    sub->callback([a, &rc] { rc = run_prune(*a); });
#ifdef EDGE_CLI_ANALYSIS
    auto b = std::make_shared<BenchArgs>();
    CLI::App* bench = app.add_subcommand("prune-bench", "Pruning table of docs/pruning.md (digits CNN, stories260K)");
    bench->add_option("--shared", b->shared, "The shared assets folder")->capture_default_str();
    bench->add_option("--base-steps", b->base_steps, "Digits CNN training steps")->capture_default_str();
    bench->add_option("--final-steps", b->final_steps, "CNN fine-tuning steps after pruning")->capture_default_str();
    bench->add_option("--round-steps", b->round_steps, "CNN iterative: steps between rounds")->capture_default_str();
    bench->add_option("--dst-steps", b->dst_steps, "CNN DST steps")->capture_default_str();
    bench->add_option("--step", b->step, "CNN iterative: fraction per round")->capture_default_str();
    bench->add_option("--llm-steps", b->llm_steps, "stories260K fine-tuning steps")->capture_default_str();
    bench->add_option("--threads,-t", b->threads, "Threads (0 = default)");
    bench->add_flag("--skip-cnn", b->skip_cnn, "Only the LLM table");
    bench->add_flag("--skip-llm", b->skip_llm, "Only the CNN table");
    bench->add_flag("--llm-iterative", b->llm_iterative, "Also the iterative row for stories260K (25 rounds)");
    bench->callback([b, &rc] { rc = run_bench(*b); });
#endif
}

}  // namespace edge::cli
