#include "engine/analysis/sensitivity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

#include "engine/analysis/torch_llama.h"
#include "engine/quant/sensitivity.h"

using edge::model::LayerInfo;
using edge::model::list_layers;
using edge::model::Model;

namespace edge::analysis {

void fuse_importance(std::vector<LayerAnalysis>& layers, double alpha) {
    double hmax = 0, gmax = 0;
    for (LayerAnalysis& L : layers) {
        double s = 0;
        for (double e : L.eigenvalues) s += std::abs(e);
        L.eig_mean_abs = L.eigenvalues.empty() ? 0.0 : s / double(L.eigenvalues.size());
        hmax = std::max(hmax, L.eig_mean_abs);
        gmax = std::max(gmax, L.grad_norm_std);
    }
    for (LayerAnalysis& L : layers) {
        L.hessian_term = hmax > 0 ? L.eig_mean_abs / hmax : 0.0;
        L.gradient_term = gmax > 0 ? L.grad_norm_std / gmax : 0.0;
        L.importance = alpha * L.hessian_term + (1.0 - alpha) * L.gradient_term;
    }
    std::vector<size_t> order(layers.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return layers[a].importance > layers[b].importance; });
    for (size_t r = 0; r < order.size(); ++r) layers[order[r]].rank = int(r) + 1;
}

Result<AnalysisReport> analyze_sensitivity(const Model& m, const std::vector<std::vector<int32_t>>& seqs,
                                           const AnalysisOptions& opts, Progress* progress) {
    if (!(opts.alpha >= 0.0 && opts.alpha <= 1.0)) return err("alpha must be in [0, 1] (got ", opts.alpha, ")");
    if (seqs.empty()) return err("sensitivity analysis needs at least one calibration sequence");
    const auto t0 = std::chrono::steady_clock::now();
    const double torch_share = opts.quant ? 0.5 : 1.0;
    CurvatureOptions co;
    co.topk = opts.topk;
    co.lanczos_steps = opts.lanczos_steps;
    co.hessian_sequences = opts.hessian_sequences;
    co.batches = opts.batches;
    co.batch_size = opts.batch_size;
    co.seq_len = opts.seq_len;
    co.seed = opts.seed;
    co.threads = opts.threads;
    // Each pass gets its own Progress: it reports into a share of ours, and sees our cancellation
    // at its next report.
    auto relay = [progress](double from, double share, Progress*& self) {
        return Progress([progress, from, share, &self](double f, const std::string& stage) {
            edge::report(progress, from + share * f, stage);
            if (is_cancelled(progress) && self) self->cancel();
        });
    };
    Progress* tp_self = nullptr;
    Progress tp = relay(0.0, torch_share, tp_self);
    tp_self = &tp;
    if (is_cancelled(progress)) tp.cancel();
    auto curv = torch_layer_curvature(m, seqs, co, &tp);
    if (!curv.ok()) return curv.error();

    AnalysisReport rep;
    rep.options = opts;
    const std::vector<LayerInfo> infos = list_layers(m);
    for (const LayerCurvature& c : *curv) {
        LayerAnalysis L;
        L.layer = c.layer;
        for (const LayerInfo& li : infos)
            if (li.name == c.layer) {
                L.kind = li.kind;
                L.block = li.block;
                L.shape = li.shape;
            }
        L.params = c.params;
        L.eigenvalues = c.eigenvalues;
        const double n = double(c.grad_norms.size());
        for (double g : c.grad_norms) L.grad_norm_mean += g / n;
        double var = 0;
        for (double g : c.grad_norms) var += (g - L.grad_norm_mean) * (g - L.grad_norm_mean);
        L.grad_norm_std = c.grad_norms.size() > 1 ? std::sqrt(var / (n - 1.0)) : 0.0;
        rep.layers.push_back(std::move(L));
    }
    fuse_importance(rep.layers, opts.alpha);

    if (opts.quant) {
        quant::SensitivityOptions so;
        so.threads = opts.threads;
        rep.quant_spec = quant::spec_name(so.spec);
        std::vector<std::vector<int32_t>> qs(
            seqs.begin(), seqs.begin() + std::min<size_t>(seqs.size(), size_t(std::max(1, opts.quant_sequences))));
        Progress* qp_self = nullptr;
        Progress qp = relay(torch_share, 1.0 - torch_share, qp_self);
        qp_self = &qp;
        if (is_cancelled(progress)) return err("sensitivity analysis cancelled");
        auto s = quant::layer_sensitivity(m, qs, so, &qp);
        if (!s.ok()) return err("empirical INT4 pass: ", s.message());
        for (const quant::LayerSensitivity& q : *s)
            for (LayerAnalysis& L : rep.layers)
                if (L.layer == q.layer) {
                    L.int4_kl = q.kl_mean;
                    L.int4_kl_max = q.kl_max;
                    L.int4_nll_delta = q.nll_delta;
                    L.int4_bytes = int64_t(q.bytes);
                }
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    edge::report(progress, 1.0, "done");
    return rep;
}

std::string analysis_to_json(const AnalysisReport& r) {
    using nlohmann::json;
    json j;
    j["version"] = 1;
    j["model"] = r.model;
    j["calib"] = r.calib;
    const AnalysisOptions& o = r.options;
    j["options"] = {{"topk", o.topk},
                    {"alpha", o.alpha},
                    {"batches", o.batches},
                    {"batch_size", o.batch_size},
                    {"seq_len", o.seq_len},
                    {"hessian_sequences", o.hessian_sequences},
                    {"lanczos_steps", o.lanczos_steps},
                    {"seed", o.seed},
                    {"quant_sequences", o.quant_sequences},
                    {"quant_spec", r.quant_spec}};
    j["seconds"] = r.seconds;
    json layers = json::array();
    for (const LayerAnalysis& L : r.layers) {
        json l;
        l["layer"] = L.layer;
        l["kind"] = L.kind;
        l["block"] = L.block;
        l["shape"] = L.shape;
        l["params"] = L.params;
        l["eigenvalues"] = L.eigenvalues;
        l["eig_mean_abs"] = L.eig_mean_abs;
        l["grad_norm_mean"] = L.grad_norm_mean;
        l["grad_norm_std"] = L.grad_norm_std;
        l["hessian_term"] = L.hessian_term;
        l["gradient_term"] = L.gradient_term;
        l["importance"] = L.importance;
        l["rank"] = L.rank;
        if (L.int4_kl) l["int4_kl"] = *L.int4_kl;
        if (L.int4_kl_max) l["int4_kl_max"] = *L.int4_kl_max;
        if (L.int4_nll_delta) l["int4_nll_delta"] = *L.int4_nll_delta;
        if (L.int4_bytes) l["int4_bytes"] = *L.int4_bytes;
        if (L.int4_top1_delta) l["int4_top1_delta"] = *L.int4_top1_delta;
        layers.push_back(std::move(l));
    }
    j["layers"] = std::move(layers);
    return j.dump(2) + "\n";
}

Result<AnalysisReport> analysis_from_json(std::string_view text, const std::string& source) {
    using nlohmann::json;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return err(source, ": not a JSON object");
    if (j.value("version", 0) != 1) return err(source, ": unsupported sensitivity version (expected 1)");
    if (!j.contains("layers") || !j["layers"].is_array()) return err(source, ": no \"layers\" array");
    AnalysisReport r;
    try {
        r.model = j.value("model", "");
        r.calib = j.value("calib", "");
        r.seconds = j.value("seconds", 0.0);
        if (j.contains("options") && j["options"].is_object()) {
            const json& o = j["options"];
            r.options.topk = o.value("topk", r.options.topk);
            r.options.alpha = o.value("alpha", r.options.alpha);
            r.options.batches = o.value("batches", r.options.batches);
            r.options.batch_size = o.value("batch_size", r.options.batch_size);
            r.options.seq_len = o.value("seq_len", r.options.seq_len);
            r.options.hessian_sequences = o.value("hessian_sequences", r.options.hessian_sequences);
            r.options.lanczos_steps = o.value("lanczos_steps", r.options.lanczos_steps);
            r.options.seed = o.value("seed", r.options.seed);
            r.options.quant_sequences = o.value("quant_sequences", r.options.quant_sequences);
            r.quant_spec = o.value("quant_spec", r.quant_spec);
        }
        size_t i = 0;
        for (const json& l : j["layers"]) {
            if (!l.is_object() || !l.contains("layer") || !l["layer"].is_string())
                return err(source, ": layers[", i, "] has no \"layer\" name");
            LayerAnalysis L;
            L.layer = l["layer"].get<std::string>();
            L.kind = l.value("kind", "");
            L.block = l.value("block", -1);
            if (l.contains("shape")) L.shape = l["shape"].get<std::vector<int64_t>>();
            L.params = l.value("params", int64_t(0));
            if (l.contains("eigenvalues")) L.eigenvalues = l["eigenvalues"].get<std::vector<double>>();
            L.eig_mean_abs = l.value("eig_mean_abs", 0.0);
            L.grad_norm_mean = l.value("grad_norm_mean", 0.0);
            L.grad_norm_std = l.value("grad_norm_std", 0.0);
            L.hessian_term = l.value("hessian_term", 0.0);
            L.gradient_term = l.value("gradient_term", 0.0);
            L.importance = l.value("importance", 0.0);
            L.rank = l.value("rank", 0);
            if (l.contains("int4_kl")) L.int4_kl = l["int4_kl"].get<double>();
            if (l.contains("int4_kl_max")) L.int4_kl_max = l["int4_kl_max"].get<double>();
            if (l.contains("int4_nll_delta")) L.int4_nll_delta = l["int4_nll_delta"].get<double>();
            if (l.contains("int4_bytes")) L.int4_bytes = l["int4_bytes"].get<int64_t>();
            if (l.contains("int4_top1_delta")) L.int4_top1_delta = l["int4_top1_delta"].get<double>();
            r.layers.push_back(std::move(L));
            ++i;
        }
    } catch (const std::exception& e) {
        return err(source, ": ", e.what());
    }
    return r;
}

std::vector<quant::LayerScore> autoplan_scores(const AnalysisReport& report) {
    std::vector<quant::LayerScore> out;
    for (const LayerAnalysis& l : report.layers) out.push_back({l.layer, l.int4_kl, l.eig_mean_abs});
    return out;
}

}  // namespace edge::analysis
