#include "engine/quant/autoplan.h"

#include "engine/model/weights.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/core/half.h"
#include "engine/quant/rtn.h"

using edge::model::LayerInfo;
using edge::model::list_layers;
using edge::model::Model;

namespace edge::quant {

Result<Predictor> parse_predictor(std::string_view name) {
    if (name == "kl") return Predictor::KL;
    if (name == "hessian") return Predictor::Hessian;
    return err("unknown predictor '", name, "' (known: kl, hessian)");
}

const char* predictor_name(Predictor p) { return p == Predictor::KL ? "kl" : "hessian"; }

namespace {

QuantSpec spec_for(int bits, int64_t group) {
    QuantSpec s;
    s.bits = bits;
    s.symmetric = true;
    s.grouping = QGrouping::Group;
    s.group_size = group;
    s.method = QMethod::RTN;
    return s;
}

LayerRule rule_for(const std::string& layer, Precision p, int64_t group) {
    LayerRule r;
    r.pattern = layer;
    r.precision = p;
    if (p == Precision::INT8 || p == Precision::INT4) {
        r.method = QMethod::RTN;
        r.grouping = QGrouping::Group;
        r.group_size = group;
        r.symmetric = true;
    }
    return r;
}

AutoplanResult make_plan(const std::vector<LayerCandidates>& cands, const std::vector<size_t>& pick, int64_t group) {
    AutoplanResult a;
    int64_t params = 0;
    for (size_t i = 0; i < cands.size(); ++i) {
        const Candidate& c = cands[i].options[pick[i]];
        a.choice.push_back(c.precision);
        a.bytes += c.bytes;
        a.predicted += c.cost;
        params += cands[i].params;
        a.plan.rules.push_back(rule_for(cands[i].layer, c.precision, group));
    }
    a.bits_per_weight = params > 0 ? 8.0 * double(a.bytes) / double(params) : 0.0;
    a.plan.source = "autoplan";
    return a;
}

}  // namespace

Result<std::vector<LayerCandidates>> plan_candidates(const Model& m, const std::vector<LayerScore>& scores,
                                                     const AutoplanOptions& opts) {
    std::vector<LayerCandidates> out;
    const std::vector<LayerInfo> infos = list_layers(m);
    for (const LayerScore& L : scores) {
        auto it = std::find_if(infos.begin(), infos.end(), [&](const LayerInfo& li) { return li.name == L.layer; });
        if (it == infos.end())
            return err(m.source_path, ": the sensitivity report names layer '", L.layer, "', which the model lacks");
        const Tensor* wt = m.find(it->tensor);
        if (!wt || wt->type != DType::F32)
            return err(m.source_path, ": layer '", L.layer, "' is not F32; autoplan starts from an FP32 model");
        LayerCandidates lc;
        lc.layer = L.layer;
        lc.params = wt->numel();
        // One layer's weights as F32 at a time (read from the file when the model is opened lazily).
        EDGE_TRY(model::use_weight(m, *wt, [&](const Tensor& w) -> Status {
            const float* x = w.f32();
            Candidate fp16{Precision::FP16, size_t(w.numel()) * 2, 0.0, 0.0};
            for (int64_t i = 0; i < w.numel(); ++i) {
                const double d = double(x[i]) - double(f16_to_f32(f32_to_f16(x[i])));
                fp16.sq_error += d * d;
            }
            lc.options.push_back(fp16);
            for (int bits : {8, 4}) {
                auto q = quantize_rtn(w, spec_for(bits, opts.group_size));
                if (!q.ok()) return err(L.layer, ": ", q.message());
                const ErrorReport e = error_report(w, *q);
                lc.options.push_back(
                    {bits == 8 ? Precision::INT8 : Precision::INT4, q->nbytes, e.frobenius * e.frobenius, 0.0});
            }
            return {};
        }));
        double s = 0.0;
        if (opts.predictor == Predictor::KL) {
            if (!L.int4_kl)
                return err("layer '", L.layer,
                           "' has no int4_kl in the sensitivity report (run analyze without --no-quant, or use the "
                           "hessian predictor)");
            const double e4 = lc.options[2].sq_error;
            s = e4 > 0 ? *L.int4_kl / e4 : 0.0;
        } else {
            s = 0.5 * L.eig_mean_abs;
        }
        for (Candidate& c : lc.options) c.cost = s * c.sq_error;
        out.push_back(std::move(lc));
    }
    if (out.empty()) return err("the sensitivity report has no layer");
    return out;
}

namespace {
// The smallest plan's bytes (or rounded time units): each layer's smallest option, summed.
size_t smallest_plan(const std::vector<LayerCandidates>& cands) {
    size_t total = 0;
    for (const LayerCandidates& lc : cands) {
        size_t mn = std::numeric_limits<size_t>::max();
        for (const Candidate& c : lc.options) mn = std::min(mn, c.bytes);
        total += mn;
    }
    return total;
}
}  // namespace

Result<AutoplanResult> autoplan(const std::vector<LayerCandidates>& cands, size_t budget, const AutoplanOptions& opts) {
    if (cands.empty()) return err("autoplan: no layer to plan");
    const size_t min_bytes = smallest_plan(cands);
    size_t g = 0;
    for (const LayerCandidates& lc : cands)
        for (const Candidate& c : lc.options) g = std::gcd(g, c.bytes);
    if (budget < min_bytes)
        return err("budget of ", budget, " bytes is below the smallest plan (every layer INT4: ", min_bytes, " bytes)");
    size_t unit = std::max<size_t>(1, g);
    const size_t cap = size_t(std::max<int64_t>(16, opts.max_columns));
    if (budget / unit > cap) unit = (budget + cap - 1) / cap;
    const size_t W = budget / unit;
    const size_t n = cands.size();
    const double inf = std::numeric_limits<double>::infinity();
    // dp[w] = least cost of the layers so far within w units; choice[i][w] = option of layer i
    std::vector<double> dp(W + 1, 0.0), next(W + 1);
    std::vector<std::vector<uint8_t>> choice(n, std::vector<uint8_t>(W + 1, 0));
    for (size_t i = 0; i < n; ++i) {
        const auto& opt = cands[i].options;
        for (size_t w = 0; w <= W; ++w) {
            double best = inf;
            uint8_t arg = 0;
            for (size_t o = 0; o < opt.size(); ++o) {
                const size_t u = (opt[o].bytes + unit - 1) / unit;  // rounded up: the plan always fits
                if (u > w || dp[w - u] == inf) continue;
                const double c = dp[w - u] + opt[o].cost;
                if (c < best) {
                    best = c;
                    arg = uint8_t(o);
                }
            }
            next[w] = best;
            choice[i][w] = arg;
        }
        std::swap(dp, next);
    }
    if (dp[W] == inf)  // only possible when rounding up to the unit pushed the INT4 plan over
        return err("budget of ", budget, " bytes is too tight for the knapsack unit of ", unit,
                   " bytes; raise it slightly");
    std::vector<size_t> pick(n);
    size_t w = W;
    for (size_t i = n; i-- > 0;) {
        pick[i] = choice[i][w];
        w -= (cands[i].options[pick[i]].bytes + unit - 1) / unit;
    }
    AutoplanResult a = make_plan(cands, pick, opts.group_size);
    a.unit = unit;
    a.slack = unit == g ? 0 : n * unit;
    return a;
}

namespace {

const char* cost_precision(Precision p) {
    switch (p) {
        case Precision::FP16: return "fp16";
        case Precision::INT8: return "int8";
        case Precision::INT4: return "int4";
        default: return "fp32";
    }
}

Result<std::vector<int64_t>> layer_shape(const std::vector<LayerInfo>& infos, const std::string& layer,
                                         const Model& m) {
    for (const LayerInfo& li : infos)
        if (li.name == layer) {
            if (li.shape.size() != 2) return err(m.source_path, ": layer '", layer, "' is not a matrix");
            return li.shape;
        }
    return err(m.source_path, ": no layer named '", layer, "'");
}

}  // namespace

Result<double> predict_tpot_ms(const Model& m, const QuantPlan& plan, const runtime::BoardCostModel& cm) {
    auto choices = resolve_plan(m, plan);
    if (!choices.ok()) return choices.error();
    const std::vector<LayerInfo> infos = list_layers(m);
    double ms = cm.rest_ms;
    for (const LayerChoice& c : *choices) {
        auto shape = layer_shape(infos, c.layer, m);
        if (!shape.ok()) return shape.error();
        auto us = runtime::linear_us(cm, (*shape)[0], (*shape)[1], cost_precision(c.precision));
        if (!us.ok()) return err(c.layer, ": ", us.message());
        ms += *us / 1000.0;
    }
    return ms;
}

namespace {

// Each candidate option's product time on the board, ms: [layer][option].
Result<std::vector<std::vector<double>>> option_ms(const std::vector<LayerCandidates>& cands, const Model& m,
                                                   const runtime::BoardCostModel& cm) {
    const std::vector<LayerInfo> infos = list_layers(m);
    std::vector<std::vector<double>> out;
    out.reserve(cands.size());
    for (const LayerCandidates& lc : cands) {
        auto shape = layer_shape(infos, lc.layer, m);
        if (!shape.ok()) return shape.error();
        std::vector<double> ms;
        ms.reserve(lc.options.size());
        for (const Candidate& c : lc.options) {
            auto us = runtime::linear_us(cm, (*shape)[0], (*shape)[1], cost_precision(c.precision));
            if (!us.ok()) return err(lc.layer, ": ", us.message());
            ms.push_back(*us / 1000.0);
        }
        out.push_back(std::move(ms));
    }
    return out;
}

double fastest_of(const std::vector<std::vector<double>>& ms, const runtime::BoardCostModel& cm) {
    double fastest = cm.rest_ms;
    for (const auto& layer : ms) fastest += *std::min_element(layer.begin(), layer.end());
    return fastest;
}

}  // namespace

Result<double> fastest_tpot_ms(const std::vector<LayerCandidates>& cands, const Model& m,
                               const runtime::BoardCostModel& cm) {
    auto ms = option_ms(cands, m, cm);
    if (!ms.ok()) return ms.error();
    return fastest_of(*ms, cm);
}

Result<AutoplanResult> autoplan_for_board(const std::vector<LayerCandidates>& cands, const Model& m,
                                          const runtime::BoardCostModel& cm, double budget_ms,
                                          const AutoplanOptions& opts) {
    if (cands.empty()) return err("autoplan: no layer to plan");
    // The same knapsack with each option's "bytes" replaced by its product time in 10 ns units,
    // rounded up, so a plan the knapsack keeps within budget units is within the budget.
    constexpr double kUnitsPerMs = 1e5;
    auto ms = option_ms(cands, m, cm);
    if (!ms.ok()) return ms.error();
    std::vector<LayerCandidates> timed = cands;
    for (size_t l = 0; l < timed.size(); ++l)
        for (size_t o = 0; o < timed[l].options.size(); ++o)
            timed[l].options[o].bytes = size_t(std::ceil((*ms)[l][o] * kUnitsPerMs));
    const double fastest = fastest_of(*ms, cm);
    if (!(budget_ms >= fastest))
        return err("a budget of ", budget_ms, " ms per token is below the fastest plan's predicted ", fastest,
                   " ms on this board (", cm.rest_ms, " ms of it outside the layers' products)");
    size_t units = size_t((budget_ms - cm.rest_ms) * kUnitsPerMs);
    const size_t fastest_units = smallest_plan(timed);
    if (units < fastest_units) {
        // Within the rounding (up to 10 ns per layer) of the fastest plan, which fits the budget in
        // ms but not in rounded units: that plan alone, each layer at its fastest option. (A budget
        // halfway between two plans a few units apart, as a tiny model's measured costs give, was
        // refused as "below the smallest plan".)
        for (size_t l = 0; l < timed.size(); ++l) {
            const auto& t = (*ms)[l];
            const size_t best = size_t(std::min_element(t.begin(), t.end()) - t.begin());
            timed[l].options = {timed[l].options[best]};
        }
        units = fastest_units;
    }
    auto r = autoplan(timed, units, opts);
    if (!r.ok()) return r.error();
    // Bytes and bits per weight as the plan really stores them.
    AutoplanResult out = uniform_autoplan(cands, Precision::INT4, opts);
    size_t bytes = 0;
    int64_t params = 0;
    for (size_t i = 0; i < cands.size(); ++i) {
        for (const Candidate& c : cands[i].options)
            if (c.precision == r->choice[i]) bytes += c.bytes;
        params += cands[i].params;
    }
    out.plan = r->plan;
    out.choice = r->choice;
    out.predicted = r->predicted;
    out.bytes = bytes;
    out.bits_per_weight = params > 0 ? 8.0 * double(bytes) / double(params) : 0.0;
    out.unit = r->unit;
    out.slack = r->slack;
    auto t = predict_tpot_ms(m, out.plan, cm);
    if (!t.ok()) return t.error();
    out.predicted_tpot_ms = *t;
    return out;
}

AutoplanResult uniform_autoplan(const std::vector<LayerCandidates>& cands, Precision p, const AutoplanOptions& opts) {
    std::vector<size_t> pick(cands.size(), 0);
    for (size_t i = 0; i < cands.size(); ++i)
        for (size_t o = 0; o < cands[i].options.size(); ++o)
            if (cands[i].options[o].precision == p) pick[i] = o;
    return make_plan(cands, pick, opts.group_size);
}

Result<size_t> parse_budget(std::string_view text, int64_t params) {
    std::string s(text);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return err("budget '", text, "' does not start with a number");
    double v = 0;
    try {
        v = std::stod(s.substr(0, i));
    } catch (...) {
        return err("budget '", text, "' is not a number");
    }
    std::string unit = s.substr(i);
    for (char& c : unit) c = char(std::tolower(static_cast<unsigned char>(c)));
    double bytes = 0;
    if (unit == "bpw" || unit == "bits") {
        if (v <= 0 || v > 32) return err("budget '", text, "': bits per weight must be in (0, 32]");
        bytes = v * double(params) / 8.0;
    } else if (unit.empty() || unit == "b") {
        bytes = v;
    } else if (unit == "kb") {
        bytes = v * 1e3;
    } else if (unit == "mb") {
        bytes = v * 1e6;
    } else if (unit == "gb") {
        bytes = v * 1e9;
    } else if (unit == "kib") {
        bytes = v * 1024.0;
    } else if (unit == "mib") {
        bytes = v * 1024.0 * 1024.0;
    } else if (unit == "gib") {
        bytes = v * 1024.0 * 1024.0 * 1024.0;
    } else {
        return err("budget '", text, "': unknown unit '", unit, "' (bpw, B, KB, MB, GB, KiB, MiB, GiB)");
    }
    if (!(bytes > 0)) return err("budget '", text, "' must be positive");
    return size_t(std::floor(bytes));
}

namespace {
std::vector<double> ranks(const std::vector<double>& x) {
    std::vector<size_t> idx(x.size());
    std::iota(idx.begin(), idx.end(), size_t(0));
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
    std::vector<double> r(x.size());
    for (size_t i = 0; i < idx.size();) {
        size_t j = i;
        while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
        for (size_t k = i; k <= j; ++k) r[idx[k]] = 0.5 * double(i + j) + 1.0;
        i = j + 1;
    }
    return r;
}
}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size() || a.size() < 2) return 0.0;
    const std::vector<double> ra = ranks(a), rb = ranks(b);
    const double n = double(a.size());
    double ma = 0, mb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        ma += ra[i] / n;
        mb += rb[i] / n;
    }
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    if (saa == 0 || sbb == 0) return 0.0;
    return sab / std::sqrt(saa * sbb);
}

}  // namespace edge::quant
