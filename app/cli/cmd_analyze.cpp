// `analyze MODEL --calib TEXT` (per-layer Hessian spectrum, gradient-norm spread, fused importance,
// empirical INT4 cost: docs/analysis.md) and `autoplan MODEL --calib TEXT --budget B --out P`
// (per-layer FP16/INT8/INT4 under a size budget; --frontier N measures a frontier of plans).
// Built only with LibTorch (engine/analysis).
#include <CLI/CLI.hpp>

#include <optional>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "app/cli/common.h"
#include "engine/analysis/cnn_sensitivity.h"
#include "engine/analysis/sensitivity.h"
#include "engine/analysis/torchscript_cnn.h"
#include "engine/core/mapped_file.h"
#include "engine/quant/apply.h"
#include "engine/quant/autoplan.h"
#include "engine/quant/calib.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/validate/perplexity.h"

using edge::analysis::load_torchscript_cnn;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::Tokenizer;
using edge::validate::evaluate_perplexity;
using edge::validate::PplOptions;
using edge::validate::PplProtocol;

namespace edge::cli {

namespace {

struct AnalyzeArgs {
    std::string model, tokenizer, calib, out;
    std::string images, labels;  // CNNs: the labelled images (instead of --calib)
    double scale = 1.0 / 255.0;
    analysis::AnalysisOptions o;
    int calib_sequences = 32;
    bool no_quant = false;
    bool json = false;
};

void add_analysis_options(CLI::App* sub, AnalyzeArgs& a) {
    sub->add_option("model", a.model, "Model file or folder")->required();
    sub->add_option("--tokenizer", a.tokenizer, "Tokenizer file for formats without one (llama2.c)");
    sub->add_option("--batches", a.o.batches, "T: batches for the gradient-norm statistics")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--topk", a.o.topk, "Hessian eigenvalues per layer")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--alpha", a.o.alpha, "Weight of the Hessian term in the fused importance")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    sub->add_option("--batch-size", a.o.batch_size, "Windows per gradient batch")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--seq-len", a.o.seq_len, "Tokens per window")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_option("--hessian-sequences", a.o.hessian_sequences, "Sequences in the Hessian batch")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--lanczos-steps", a.o.lanczos_steps, "Lanczos iterations per layer")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--calib-sequences", a.calib_sequences, "Calibration windows cut from --calib")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--quant-sequences", a.o.quant_sequences, "Windows for the empirical INT4 pass")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--seed", a.o.seed, "Batch sampling and Lanczos start vectors")->capture_default_str();
    sub->add_option("--threads,-t", a.o.threads, "Threads (0 = default)")->check(CLI::NonNegativeNumber);
    sub->add_flag("--json", a.json, "Print JSON");
}

std::string base_name(const std::string& p) {
    const auto s = p.find_last_of('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

Status write_file(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return err(path, ": cannot open for writing");
        f << text;
        if (!f.flush()) return err(path, ": write failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) return err(path, ": cannot replace the file");
    return {};
}

// The model (with tokenizer) and the calibration windows. The analysis reads the weights a block at
// a time (Weights::Lazy); what runs the whole model (autoplan's measured frontier) asks for F32.
Result<std::pair<LoadedModel, std::vector<std::vector<int32_t>>>> load_with_calib(const AnalyzeArgs& a,
                                                                                  Weights weights) {
    auto text = read_text_file(a.calib);
    if (!text.ok()) return text.error();
    auto loaded = load(a.model, a.tokenizer, true, weights);
    if (!loaded.ok()) return loaded.error();
    auto set = quant::calib_from_text(*loaded->tokenizer, *text, a.calib_sequences, a.o.seq_len + 1);
    if (!set.ok()) return err(a.calib, ": ", set.message());
    if (!set->warning.empty()) std::fprintf(stderr, "edgestudio-cli: warning: %s\n", set->warning.c_str());
    return std::make_pair(std::move(loaded).value(), std::move(set->sequences));
}

Result<analysis::AnalysisReport> run_analysis(const AnalyzeArgs& a, const LoadedModel& lm,
                                              const std::vector<std::vector<int32_t>>& seqs) {
    analysis::AnalysisOptions o = a.o;
    o.quant = !a.no_quant;
    ProgressBar bar(!a.json);
    auto r = analysis::analyze_sensitivity(*lm.model, seqs, o, bar.progress());
    bar.finish();
    if (!r.ok()) return r.error();
    r->model = base_name(a.model);
    r->calib = base_name(a.calib);
    return r;
}

bool is_cnn_path(const std::string& p) {
    for (const char* suf : {".onnx", ".pt", ".safetensors"}) {
        const std::string s(suf);
        if (p.size() >= s.size() && p.compare(p.size() - s.size(), s.size(), s) == 0) return true;
    }
    return false;
}

// A CNN: curvature and gradients on labelled images, the empirical INT4 pass on the first
// --quant-sequences of them (engine/analysis/cnn_sensitivity.h).
int run_analyze_cnn(const AnalyzeArgs& a) {
    if (a.images.empty())
        return fail(err(a.model, ": a CNN is analysed on labelled images: give --images (and --labels)"));
    const bool pt = a.model.size() > 3 && a.model.compare(a.model.size() - 3, 3, ".pt") == 0;
    auto m = pt ? load_torchscript_cnn(a.model) : load_cnn_model(a.model);
    if (!m.ok()) return fail(m.error());
    auto data = load_labelled_images(a.images, a.labels, a.scale);
    if (!data.ok()) return fail(data.error());
    analysis::AnalysisOptions o = a.o;
    o.quant = !a.no_quant;
    ProgressBar bar(!a.json);
    auto r = analysis::analyze_cnn_sensitivity(*m, *data, o, bar.progress());
    bar.finish();
    if (!r.ok()) return fail(r.error());
    r->model = base_name(a.model);
    r->calib = base_name(a.images);
    const std::string text = analysis::analysis_to_json(*r);
    if (!a.out.empty()) {
        auto s = write_file(a.out, text);
        if (!s.ok()) return fail(s.error());
    }
    if (a.json) {
        std::fputs(text.c_str(), stdout);
        return kOk;
    }
    std::printf("%s on %s: %zu layers, %.1f s\n", r->model.c_str(), r->calib.c_str(), r->layers.size(), r->seconds);
    std::printf("  %-16s %8s %12s %10s %10s %5s %10s %10s\n", "layer", "params", "top |eig|", "grad std", "importance",
                "rank", "int4 KL", "int4 top1");
    for (const auto& L : r->layers)
        std::printf("  %-16s %8lld %12.4g %10.4g %10.3f %5d %10.3g %+10.4f\n", L.layer.c_str(), (long long)L.params,
                    L.eigenvalues.empty() ? 0.0 : std::abs(L.eigenvalues[0]), L.grad_norm_std, L.importance, L.rank,
                    L.int4_kl.value_or(0.0), L.int4_top1_delta.value_or(0.0));
    if (!a.out.empty()) std::printf("  wrote %s\n", a.out.c_str());
    return kOk;
}

int run_analyze(const AnalyzeArgs& a) {
    if (is_cnn_path(a.model)) return run_analyze_cnn(a);
    if (a.calib.empty()) return fail(err(a.model, ": --calib is required for language models"));
    auto lc = load_with_calib(a, Weights::Lazy);
    if (!lc.ok()) return fail(lc.error());
    auto r = run_analysis(a, lc->first, lc->second);
    if (!r.ok()) return fail(r.error());
    const std::string json = analysis::analysis_to_json(*r);
    if (!a.out.empty())
        if (auto s = write_file(a.out, json); !s.ok()) return fail(s.error());
    if (a.json) {
        std::fputs(json.c_str(), stdout);
        return kOk;
    }
    std::printf("%-16s %8s %10s %10s %10s %10s %5s %10s\n", "layer", "params", "lambda1", "mean|l|", "sd|g|",
                "importance", "rank", "int4 KL");
    for (const auto& L : r->layers)
        std::printf("%-16s %8lld %10.4g %10.4g %10.4g %10.3f %5d %10.4g\n", L.layer.c_str(), (long long)L.params,
                    L.eigenvalues.empty() ? 0.0 : L.eigenvalues[0], L.eig_mean_abs, L.grad_norm_std, L.importance,
                    L.rank, L.int4_kl.value_or(0.0));
    std::printf("%zu layers in %.1f s (alpha %.2f, top-%d eigenvalues, %d gradient batches)%s%s\n", r->layers.size(),
                r->seconds, a.o.alpha, a.o.topk, a.o.batches, a.out.empty() ? "" : "; written to ", a.out.c_str());
    return kOk;
}

struct AutoplanArgs {
    AnalyzeArgs an;
    std::string sensitivity, budget, predictor = "kl", eval;
    std::string cost_models, board;  // --budget-ms-per-token: the board's cost model
    double budget_ms = 0.0;
    int frontier = 0;
    int eval_parts = 200;
};

Result<double> measure_ppl(const Model& m, const Tokenizer& tok, const std::string& text, const quant::QuantPlan& plan,
                           int eval_parts, int threads) {
    auto q = quant::apply_plan(m, plan, nullptr, nullptr, quant::ApplyOptions{threads});
    if (!q.ok()) return q.error();
    PplOptions po;
    po.protocol = PplProtocol::Para;
    po.max_parts = eval_parts;
    RuntimeOptions ro;
    ro.threads = threads;
    ro.max_seq = po.max_tokens;
    auto rt = LlamaCpu::create(std::make_shared<const Model>(std::move(q->model)), ro);
    if (!rt.ok()) return rt.error();
    auto r = evaluate_perplexity(**rt, tok, text, po);
    if (!r.ok()) return r.error();
    return r->perplexity;
}

const char* short_name(quant::Precision p) {
    switch (p) {
        case quant::Precision::FP16: return "F";
        case quant::Precision::INT8: return "8";
        case quant::Precision::INT4: return "4";
        default: return "?";
    }
}

std::string choice_string(const quant::AutoplanResult& p) {
    std::string s;
    for (auto c : p.choice) s += short_name(c);
    return s;
}

// --cost-models FILE --board NAME: the board's measured cost model (deploy --cost-models writes it).
Result<runtime::BoardCostModel> read_board_cost_model(const std::string& file, const std::string& board) {
    if (file.empty() || board.empty())
        return err("a board's time budget needs --cost-models FILE (from deploy --cost-models) and --board NAME");
    auto text = read_text_file(file);
    if (!text.ok()) return text.error();
    return runtime::board_cost_model(*text, file, board);
}

int run_autoplan(const AutoplanArgs& a) {
    auto pred = quant::parse_predictor(a.predictor);
    if (!pred.ok()) return fail(pred.error());
    if (a.budget.empty() && a.frontier <= 0 && a.budget_ms <= 0)
        return fail("autoplan needs --budget, --budget-ms-per-token (with --board) or --frontier N");
    if ((!a.budget.empty() || a.budget_ms > 0) && a.an.out.empty())
        return fail("autoplan --budget / --budget-ms-per-token needs --out PLAN.json");
    if (!a.budget.empty() && a.budget_ms > 0) return fail("autoplan: give --budget or --budget-ms-per-token, not both");
    std::optional<runtime::BoardCostModel> board;
    if (a.budget_ms > 0) {
        auto cm = read_board_cost_model(a.cost_models, a.board);
        if (!cm.ok()) return fail(cm.error());
        board = std::move(cm).value();
    }
    if (a.frontier > 0 && a.eval.empty()) return fail("--frontier needs --eval TEXT to measure perplexity");
    auto lc = load_with_calib(a.an, a.frontier > 0 ? Weights::F32 : Weights::Lazy);
    if (!lc.ok()) return fail(lc.error());
    const Model& model = *lc->first.model;
    analysis::AnalysisReport report;
    if (!a.sensitivity.empty()) {
        auto text = read_text_file(a.sensitivity);
        if (!text.ok()) return fail(text.error());
        auto r = analysis::analysis_from_json(*text, a.sensitivity);
        if (!r.ok()) return fail(r.error());
        report = std::move(r).value();
    } else {
        auto r = run_analysis(a.an, lc->first, lc->second);
        if (!r.ok()) return fail(r.error());
        report = std::move(r).value();
    }
    quant::AutoplanOptions ao;
    ao.predictor = *pred;
    auto cands = quant::plan_candidates(model, analysis::autoplan_scores(report), ao);
    if (!cands.ok()) return fail(cands.error());
    int64_t params = 0;
    for (const auto& c : *cands) params += c.params;

    nlohmann::json out;
    out["predictor"] = quant::predictor_name(*pred);
    out["layers"] = cands->size();
    out["params"] = params;
    if (board) {
        auto p = quant::autoplan_for_board(*cands, model, *board, a.budget_ms, ao);
        if (!p.ok()) return fail(p.error());
        if (auto s = write_file(a.an.out, quant::plan_to_json(p->plan)); !s.ok()) return fail(s.error());
        nlohmann::json layers = nlohmann::json::object();
        for (size_t i = 0; i < cands->size(); ++i) layers[(*cands)[i].layer] = quant::precision_name(p->choice[i]);
        out["plan"] = {{"out", a.an.out},
                       {"board", a.board},
                       {"budget_ms_per_token", a.budget_ms},
                       {"predicted_tpot_ms", p->predicted_tpot_ms},
                       {"bytes", p->bytes},
                       {"bits_per_weight", p->bits_per_weight},
                       {"predicted", p->predicted},
                       {"layers", layers}};
        if (!a.an.json)
            std::printf(
                "%s: %zu layers, predicted %.3f ms per token on %s (budget %.3f), %zu bytes (%.3f bits/weight); "
                "predicted loss increase %.5g nats/token; precisions %s (F = fp16, 8 = int8, 4 = int4, execution "
                "order)\n",
                a.an.out.c_str(), cands->size(), p->predicted_tpot_ms, a.board.c_str(), a.budget_ms, p->bytes,
                p->bits_per_weight, p->predicted, choice_string(*p).c_str());
    }
    if (!a.budget.empty()) {
        auto b = quant::parse_budget(a.budget, params);
        if (!b.ok()) return fail(b.error());
        auto p = quant::autoplan(*cands, *b, ao);
        if (!p.ok()) return fail(p.error());
        if (auto s = write_file(a.an.out, quant::plan_to_json(p->plan)); !s.ok()) return fail(s.error());
        nlohmann::json layers = nlohmann::json::object();
        for (size_t i = 0; i < cands->size(); ++i) layers[(*cands)[i].layer] = quant::precision_name(p->choice[i]);
        out["plan"] = {{"out", a.an.out},           {"budget_bytes", *b},
                       {"bytes", p->bytes},         {"bits_per_weight", p->bits_per_weight},
                       {"predicted", p->predicted}, {"unit", p->unit},
                       {"slack", p->slack},         {"layers", layers}};
        if (!a.an.json)
            std::printf(
                "%s: %zu layers, %zu bytes (%.3f bits/weight) within %zu; predicted loss increase %.5g "
                "nats/token; precisions %s (F = fp16, 8 = int8, 4 = int4, execution order)\n",
                a.an.out.c_str(), cands->size(), p->bytes, p->bits_per_weight, *b, p->predicted,
                choice_string(*p).c_str());
    }
    if (a.frontier > 0) {
        auto text = read_text_file(a.eval);
        if (!text.ok()) return fail(text.error());
        const Tokenizer& tok = *lc->first.tokenizer;
        using quant::Precision;
        const Precision uni[] = {Precision::INT4, Precision::INT8, Precision::FP16};
        std::vector<quant::AutoplanResult> uniform;
        std::vector<double> uniform_ppl;
        nlohmann::json uj = nlohmann::json::array();
        for (Precision p : uni) {
            uniform.push_back(quant::uniform_autoplan(*cands, p, ao));
            auto ppl = measure_ppl(model, tok, *text, uniform.back().plan, a.eval_parts, a.an.o.threads);
            if (!ppl.ok()) return fail(ppl.error());
            uniform_ppl.push_back(*ppl);
            uj.push_back({{"precision", quant::precision_name(p)},
                          {"bytes", uniform.back().bytes},
                          {"bits_per_weight", uniform.back().bits_per_weight},
                          {"predicted", uniform.back().predicted},
                          {"perplexity", *ppl}});
        }
        auto fp32 = measure_ppl(model, tok, *text, quant::QuantPlan{}, a.eval_parts, a.an.o.threads);
        if (!fp32.ok()) return fail(fp32.error());
        // budgets: evenly spaced from all-INT4 to all-INT8 (where the trade-off is), plus all-FP16
        std::vector<size_t> budgets;
        budgets.reserve(size_t(std::max(0, a.frontier)) + 1);
        const size_t lo = uniform[0].bytes, hi = uniform[1].bytes;
        for (int i = 0; i < a.frontier; ++i)
            budgets.push_back(lo + size_t(double(hi - lo) * double(i) / double(std::max(1, a.frontier - 1))));
        budgets.push_back(uniform[2].bytes);
        std::sort(budgets.begin(), budgets.end());
        budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
        std::vector<double> predicted, measured;
        nlohmann::json fj = nlohmann::json::array();
        bool all_ok = true;
        if (!a.an.json)
            std::printf("%10s %8s %12s %10s %10s %10s  %s\n", "bytes", "bits/w", "predicted", "ppl", "uniform",
                        "uni ppl", "precisions (F fp16, 8 int8, 4 int4)");
        for (size_t bud : budgets) {
            auto p = quant::autoplan(*cands, bud, ao);
            if (!p.ok()) return fail(p.error());
            auto ppl = measure_ppl(model, tok, *text, p->plan, a.eval_parts, a.an.o.threads);
            if (!ppl.ok()) return fail(ppl.error());
            predicted.push_back(p->predicted);
            measured.push_back(*ppl);
            // the largest uniform plan that fits the same budget
            int u = -1;
            for (int k = 0; k < 3; ++k)
                if (uniform[size_t(k)].bytes <= bud) u = k;
            const bool ok = u < 0 || *ppl <= uniform_ppl[size_t(u)] * (1.0 + 1e-9);
            all_ok = all_ok && ok;
            fj.push_back({{"budget_bytes", bud},
                          {"bytes", p->bytes},
                          {"bits_per_weight", p->bits_per_weight},
                          {"predicted", p->predicted},
                          {"perplexity", *ppl},
                          {"uniform", u < 0 ? "" : quant::precision_name(uni[u])},
                          {"uniform_perplexity", u < 0 ? 0.0 : uniform_ppl[size_t(u)]},
                          {"at_least_as_good", ok},
                          {"precisions", choice_string(*p)}});
            if (!a.an.json)
                std::printf("%10zu %8.3f %12.5g %10.4f %10s %10.4f  %s%s\n", p->bytes, p->bits_per_weight, p->predicted,
                            *ppl, u < 0 ? "-" : quant::precision_name(uni[u]), u < 0 ? 0.0 : uniform_ppl[size_t(u)],
                            choice_string(*p).c_str(), ok ? "" : "  WORSE than uniform");
        }
        const double rho = quant::spearman(predicted, measured);
        out["fp32_perplexity"] = *fp32;
        out["uniform"] = uj;
        out["frontier"] = fj;
        out["spearman"] = rho;
        out["all_at_least_as_good"] = all_ok;
        out["eval"] = {{"text", base_name(a.eval)}, {"protocol", "para"}, {"parts", a.eval_parts}};
        if (!a.an.json) {
            std::printf("uniform:");
            for (size_t k = 0; k < 3; ++k)
                std::printf("  %s %zu B ppl %.4f", quant::precision_name(uni[k]), uniform[k].bytes, uniform_ppl[k]);
            std::printf(
                "  (fp32 %.4f)\nSpearman(predicted, measured perplexity) = %.3f over %zu plans; every plan at "
                "least as good as the uniform plan of its size: %s\n",
                *fp32, rho, predicted.size(), all_ok ? "yes" : "NO");
        }
    }
    if (a.an.json) print_json(out);
    return kOk;
}

struct PredictArgs {
    std::string model, tokenizer, cost_models, board;
    std::vector<std::string> plans;
    bool json = false;
};

// `predict-tpot MODEL --plan P... --cost-models F --board B`: each plan's predicted time per token.
int run_predict(const PredictArgs& a) {
    auto cm = read_board_cost_model(a.cost_models, a.board);
    if (!cm.ok()) return fail(cm.error());
    auto loaded = load(a.model, a.tokenizer, false, Weights::Lazy);
    if (!loaded.ok()) return fail(loaded.error());
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& path : a.plans) {
        auto plan = quant::load_plan(path);
        if (!plan.ok()) return fail(plan.error());
        auto t = quant::predict_tpot_ms(*loaded->model, *plan, *cm);
        if (!t.ok()) return fail(err(path, ": ", t.message()));
        out.push_back({{"plan", path}, {"predicted_tpot_ms", *t}});
        if (!a.json) std::printf("%-40s %8.3f ms per token on %s\n", path.c_str(), *t, a.board.c_str());
    }
    if (a.json) print_json(out);
    return kOk;
}

}  // namespace

void add_analysis_commands(CLI::App& app, int& rc) {
    auto a = std::make_shared<AnalyzeArgs>();
    CLI::App* sub = app.add_subcommand(
        "analyze", "Per-layer sensitivity: Hessian spectrum, gradient spread, importance, INT4 cost");
    add_analysis_options(sub, *a);
    sub->add_option("--calib", a->calib, "Calibration text (paragraphs); language models");
    sub->add_option("--images", a->images,
                    "CNNs (.onnx, .pt, ResNet-20 .safetensors): IDX images or a digits .csv(.gz)");
    sub->add_option("--labels", a->labels, "CNNs: IDX labels");
    sub->add_option("--scale", a->scale, "CNNs: pixel scale for IDX images (default 1/255)");
    sub->add_option("--out", a->out, "Write the sensitivity JSON here (docs/analysis.md)");
    sub->add_flag("--no-quant", a->no_quant, "Skip the empirical INT4 pass");
    sub->callback([a, &rc] { rc = run_analyze(*a); });

    auto p = std::make_shared<AutoplanArgs>();
    CLI::App* ap = app.add_subcommand("autoplan", "Per-layer FP16/INT8/INT4 under a size budget (writes a plan)");
    add_analysis_options(ap, p->an);
    ap->add_option("--calib", p->an.calib, "Calibration text (paragraphs)")->required();
    ap->add_option("--budget", p->budget, "Size of the layers: 4.5bpw (bits per weight), 300000, 300KB, 1.5MiB");
    ap->add_option("--out", p->an.out, "Plan file to write (*.plan.json)");
    ap->add_option("--sensitivity", p->sensitivity, "Sensitivity JSON from `analyze` (else it is computed)");
    ap->add_option("--predictor", p->predictor, "kl (empirical INT4 KL scaled by squared error) or hessian")
        ->capture_default_str()
        ->check(CLI::IsMember({"kl", "hessian"}));
    ap->add_option("--frontier", p->frontier,
                   "Also measure N plans from the all-INT4 to the all-INT8 size, and all-FP16 (needs --eval)")
        ->check(CLI::PositiveNumber);
    ap->add_option("--eval", p->eval, "Text for the frontier perplexities (para protocol)");
    ap->add_option("--eval-parts", p->eval_parts, "Paragraphs scored per plan")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    ap->add_option("--budget-ms-per-token", p->budget_ms,
                   "Predicted time per token on --board (its cost model from deploy --cost-models)")
        ->check(CLI::PositiveNumber);
    ap->add_option("--cost-models", p->cost_models, "Boards' cost models (deploy --cost-models FILE writes them)");
    ap->add_option("--board", p->board, "The board of --budget-ms-per-token");
    ap->callback([p, &rc] { rc = run_autoplan(*p); });

    auto q = std::make_shared<PredictArgs>();
    CLI::App* pt = app.add_subcommand("predict-tpot", "Predicted time per token of plans on a board (its cost model)");
    pt->add_option("model", q->model, "Model file or folder")->required();
    pt->add_option("--tokenizer", q->tokenizer, "Tokenizer file for formats without one (llama2.c)");
    pt->add_option("--plan", q->plans, "Plan file(s)")->required();
    pt->add_option("--cost-models", q->cost_models, "Boards' cost models (deploy --cost-models FILE)")->required();
    pt->add_option("--board", q->board, "Which board")->required();
    pt->add_flag("--json", q->json, "Print JSON");
    pt->callback([q, &rc] { rc = run_predict(*q); });
}

}  // namespace edge::cli
