// Structured pruning: groups, importance, masks, physical pruning (structured.h).
#include "engine/prune/structured.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/core/mapped_file.h"
#include "engine/core/memory_budget.h"
#include "engine/model/weights.h"
#include "engine/prune/structured_detail.h"

using edge::model::count_nodes;
using edge::model::is_cnn;
using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::Op;
using edge::model::OpType;
using edge::model::validate_and_finalize_llama;

namespace edge::prune {

using namespace detail;

namespace {

// ---- LLM groups --------------------------------------------------------------------------------

std::string tname(int b, const char* kind) { return "blk." + std::to_string(b) + "." + kind + ".weight"; }

Result<std::vector<PruneGroup>> llama_groups(const Model& m) {
    const LlamaConfig& c = m.config;
    if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads)
        return err(origin(m), ": ", c.n_heads, " heads do not split into ", c.n_kv_heads, " KV groups");
    if (c.attn_qkv_bias)
        return err(origin(m), ": structured pruning does not yet cut the Q/K/V biases (Qwen2) with their rows; ",
                   "unstructured masks and quantization work on this model");
    const int g = c.n_heads / c.n_kv_heads, hd = c.head_dim;
    std::vector<PruneGroup> out;
    for (int b = 0; b < c.n_layers; ++b) {
        for (const char* k : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
            const Tensor* t = m.find(tname(b, k));
            if (!t) return err(origin(m), ": tensor '", tname(b, k), "' is missing");
            if (t->type != DType::F32)
                return err(origin(m), ": tensor '", t->name, "' is ", dtype_name(t->type),
                           "; pruning needs F32 weights");
        }
        PruneGroup at;
        at.layer = "blk." + std::to_string(b) + ".attn";
        at.kind = UnitKind::AttentionHeads;
        at.block = b;
        at.units = c.n_kv_heads;
        at.query_heads_per_unit = g;
        const std::string p = "blk." + std::to_string(b) + ".";
        at.producers = {p + "attn_q", p + "attn_k", p + "attn_v"};
        at.consumers = {p + "attn_output"};
        for (int h = 0; h < c.n_kv_heads; ++h) {
            std::vector<int64_t> q, kv;
            for (int j = 0; j < g * hd; ++j) q.push_back(int64_t(h) * g * hd + j);
            for (int j = 0; j < hd; ++j) kv.push_back(int64_t(h) * hd + j);
            at.slices.push_back({{tname(b, "attn_q"), 0, q},
                                 {tname(b, "attn_k"), 0, kv},
                                 {tname(b, "attn_v"), 0, kv},
                                 {tname(b, "attn_output"), 1, q}});
        }
        PruneGroup ff;
        ff.layer = "blk." + std::to_string(b) + ".ffn";
        ff.kind = UnitKind::MlpChannels;
        ff.block = b;
        ff.units = c.hidden_dim;
        ff.producers = {p + "ffn_gate", p + "ffn_up"};
        ff.consumers = {p + "ffn_down"};
        for (int64_t j = 0; j < c.hidden_dim; ++j)
            ff.slices.push_back(
                {{tname(b, "ffn_gate"), 0, {j}}, {tname(b, "ffn_up"), 0, {j}}, {tname(b, "ffn_down"), 1, {j}}});
        for (PruneGroup* gr : {&at, &ff})
            for (auto& u : gr->slices)
                for (auto& s : u) gr->params += slice_params(m, s);
        out.push_back(std::move(at));
        out.push_back(std::move(ff));
    }
    return out;
}

// Visits every element of a slice: f(flat index).
template <class F>
void for_each_element(const Tensor& t, const UnitSlice& s, F&& f) {
    if (t.shape.empty()) return;
    if (s.axis == 0) {
        const int64_t per = row_size(t);
        for (int64_t r : s.indices)
            for (int64_t k = 0; k < per; ++k) f(r * per + k);
        return;
    }
    // axis 1: [d0, d1, rest...]
    const int64_t d0 = t.shape[0], d1 = t.shape.size() > 1 ? t.shape[1] : 1;
    const int64_t rest = t.numel() / (d0 * d1);
    for (int64_t o = 0; o < d0; ++o)
        for (int64_t c : s.indices)
            for (int64_t k = 0; k < rest; ++k) f((o * d1 + c) * rest + k);
}

// A weight of a weighted op (not a bias, BatchNorm or constant): ".weight" with rank >= 2.
bool is_matrix(const Tensor& t) { return t.shape.size() >= 2; }

// Copy-on-write: gives `t` owned storage (a mapped or shared buffer is never written).
void own(Tensor& t) {
    auto fresh = alloc_aligned(t.nbytes);
    std::memcpy(fresh.get(), t.data.get(), t.nbytes);
    t.data = fresh;
}

// Keeps `keep` indices along `axis` (0 or 1) of an F32 tensor.
Tensor take(const Tensor& t, int axis, const std::vector<int64_t>& keep, std::vector<int64_t> extra_zero_tail = {}) {
    std::vector<int64_t> shape = t.shape;
    const int64_t pad = extra_zero_tail.empty() ? 0 : extra_zero_tail[0];
    shape[axis == 0 ? row_axis(t) : 1] = int64_t(keep.size()) + pad;
    Tensor out = Tensor::zeros_f32(t.name, shape);
    out.source_type = t.source_type;
    const float* src = t.f32();
    float* dst = out.f32_mut();
    if (axis == 0) {
        const int64_t per = row_size(t);
        for (size_t i = 0; i < keep.size(); ++i)
            std::memcpy(dst + int64_t(i) * per, src + keep[i] * per, size_t(per) * sizeof(float));
    } else {
        const int64_t d0 = t.shape[0], d1 = t.shape[1], rest = t.numel() / (d0 * d1);
        const int64_t nd1 = shape[1];
        for (int64_t o = 0; o < d0; ++o)
            for (size_t i = 0; i < keep.size(); ++i)
                std::memcpy(dst + (o * nd1 + int64_t(i)) * rest, src + (o * d1 + keep[i]) * rest,
                            size_t(rest) * sizeof(float));
    }
    return out;
}

void replace_tensor(Model& m, Tensor t) {
    for (Tensor& old : m.tensors)
        if (old.name == t.name) {
            old = std::move(t);
            return;
        }
}

std::string config_text(const Model& m) {
    if (is_cnn(m)) return {};
    const LlamaConfig& c = m.config;
    return "dim " + std::to_string(c.dim) + ", heads " + std::to_string(c.n_heads) + "/" +
           std::to_string(c.n_kv_heads) + " kv, ffn " + std::to_string(c.hidden_dim);
}

const LayerMask* find_mask(const std::vector<LayerMask>& masks, const std::string& layer) {
    for (const LayerMask& l : masks)
        if (l.layer == layer) return &l;
    return nullptr;
}

Status check_mask(const Model& m, const PruneGroup& g, const LayerMask* mk) {
    if (!mk) return {};
    if (mk->units != g.units || int64_t(mk->keep.size()) != g.units)
        return err(origin(m), ": the mask of '", g.layer, "' has ", mk->keep.size(), " units; the model has ", g.units);
    if (mk->kept() == 0)
        return err(origin(m), ": the mask of '", g.layer, "' removes every unit; a layer cannot be removed");
    if (mk->removed() > 0 && !g.prunable)
        return err(origin(m), ": '", g.layer, "' cannot be pruned (", g.pinned_reason, ")");
    return {};
}

Result<Model> apply_llama(const Model& m, const std::vector<PruneGroup>& groups, const std::vector<LayerMask>& masks) {
    const LlamaConfig& c = m.config;
    const int g = c.n_heads / c.n_kv_heads, hd = c.head_dim;
    // The widest block decides the config; narrower blocks get zero units.
    int64_t kv_max = 0, ffn_max = 0;
    std::vector<std::vector<int64_t>> keep(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) {
        const PruneGroup& gr = groups[i];
        const LayerMask* mk = find_mask(masks, gr.layer);
        EDGE_TRY(check_mask(m, gr, mk));
        if (mk) {
            keep[i] = mk->kept_units();
        } else {
            keep[i].resize(size_t(gr.units));
            std::iota(keep[i].begin(), keep[i].end(), 0);
        }
        int64_t& mx = gr.kind == UnitKind::AttentionHeads ? kv_max : ffn_max;
        mx = std::max(mx, int64_t(keep[i].size()));
    }
    Model out = m;
    for (size_t i = 0; i < groups.size(); ++i) {
        const PruneGroup& gr = groups[i];
        const int b = gr.block;
        if (gr.kind == UnitKind::AttentionHeads) {
            std::vector<int64_t> qrows, kvrows;
            for (int64_t h : keep[i]) {
                for (int64_t j = 0; j < int64_t(g) * hd; ++j) qrows.push_back(h * g * hd + j);
                for (int64_t j = 0; j < hd; ++j) kvrows.push_back(h * hd + j);
            }
            const int64_t pad = kv_max - int64_t(keep[i].size());
            replace_tensor(out, take(*m.find(tname(b, "attn_q")), 0, qrows, {pad * g * hd}));
            replace_tensor(out, take(*m.find(tname(b, "attn_k")), 0, kvrows, {pad * hd}));
            replace_tensor(out, take(*m.find(tname(b, "attn_v")), 0, kvrows, {pad * hd}));
            replace_tensor(out, take(*m.find(tname(b, "attn_output")), 1, qrows, {pad * g * hd}));
        } else {
            const int64_t pad = ffn_max - int64_t(keep[i].size());
            replace_tensor(out, take(*m.find(tname(b, "ffn_gate")), 0, keep[i], {pad}));
            replace_tensor(out, take(*m.find(tname(b, "ffn_up")), 0, keep[i], {pad}));
            replace_tensor(out, take(*m.find(tname(b, "ffn_down")), 1, keep[i], {pad}));
        }
    }
    out.config.n_kv_heads = int(kv_max);
    out.config.n_heads = int(kv_max) * g;
    out.config.hidden_dim = int(ffn_max);
    EDGE_TRY(validate_and_finalize_llama(out));
    return out;
}

Result<Model> apply_cnn(const Model& m, const std::vector<LayerMask>& masks) {
    auto an = analyze_cnn(m);
    if (!an) return an.error();
    CnnAnalysis& a = an.value();
    auto cg = cnn_groups(m, a);
    if (!cg) return cg.error();
    std::set<int> removed_roots;
    for (size_t i = 0; i < cg->groups.size(); ++i) {
        const PruneGroup& g = cg->groups[i];
        const LayerMask* mk = find_mask(masks, g.layer);
        EDGE_TRY(check_mask(m, g, mk));
        if (!mk) continue;
        for (int64_t u = 0; u < g.units; ++u)
            if (!mk->keep[size_t(u)]) removed_roots.insert(cg->roots[i][size_t(u)]);
    }
    for (const LayerMask& mk : masks) {
        bool known = false;
        for (const PruneGroup& g : cg->groups) known = known || g.layer == mk.layer;
        if (!known) return err(origin(m), ": no prunable layer '", mk.layer, "' in the model");
    }
    auto kept = [&](int base, int64_t channels) {
        std::vector<int64_t> k;
        for (int64_t c = 0; c < channels; ++c)
            if (!removed_roots.count(a.uf.find(base + int(c)))) k.push_back(c);
        return k;
    };
    Model out = m;
    // Rows (producers, followers) and columns (consumers) per tensor.
    std::map<std::string, std::vector<int64_t>> rows;
    std::map<std::string, std::vector<int64_t>> cols;
    for (const Record& r : a.records) {
        const Op& op = m.graph.ops[size_t(r.op)];
        const std::vector<int64_t> k = kept(r.base, r.channels);
        if (int64_t(k.size()) == r.channels) continue;
        if (r.kind == RecKind::Consumer) {
            std::vector<int64_t> c;
            for (int64_t ch : k)
                for (int64_t j = 0; j < r.hw; ++j) c.push_back(ch * r.hw + j);
            cols[op.weights[0]] = c;
        } else {
            for (const std::string& w : op.weights) rows[w] = k;
            if (r.kind == RecKind::Follower && op.type == OpType::Conv2d)  // depthwise
                out.graph.ops[size_t(r.op)].attrs["group"] = {double(k.size())};
        }
    }
    for (Tensor& t : out.tensors) {
        auto rr = rows.find(t.name);
        auto cc = cols.find(t.name);
        if (rr == rows.end() && cc == cols.end()) continue;
        Tensor cur = t;
        if (rr != rows.end()) cur = take(cur, 0, rr->second);
        if (cc != cols.end()) cur = take(cur, 1, cc->second);
        t = std::move(cur);
    }
    for (const auto& p : a.pads) {
        const std::vector<int64_t> k = kept(p.out_base, p.in_c + p.before + p.after);
        int64_t before = 0, after = 0;
        for (int64_t c : k) {
            if (c < p.before) ++before;
            if (c >= p.before + p.in_c) ++after;
        }
        auto& pads = out.graph.ops[size_t(p.op)].attrs["pads"];
        const size_t r = pads.size() / 2;
        pads[1] = double(before);
        pads[1 + r] = double(after);
    }
    for (const auto& rs : a.reshapes) {
        auto& shape = out.graph.ops[size_t(rs.op)].attrs["shape"];
        if (shape.size() == 2 && shape[1] > 0) {
            const ValueChannels& v = a.values[m.graph.ops[size_t(rs.op)].outputs[0]];
            shape[1] = double(int64_t(kept(v.base, v.channels).size()) * v.hw);
        }
    }
    return out;
}

}  // namespace

// ---- public ------------------------------------------------------------------------------------

Result<Importance> parse_importance(std::string_view name) {
    if (name == "magnitude") return Importance::Magnitude;
    if (name == "taylor") return Importance::Taylor;
    if (name == "hessian") return Importance::Hessian;
    return err("unknown importance '", name, "' (magnitude, taylor or hessian)");
}

const char* importance_name(Importance i) {
    switch (i) {
        case Importance::Magnitude: return "magnitude";
        case Importance::Taylor: return "taylor";
        case Importance::Hessian: return "hessian";
    }
    return "?";
}

const char* unit_kind_name(UnitKind k) {
    switch (k) {
        case UnitKind::AttentionHeads: return "heads";
        case UnitKind::MlpChannels: return "mlp";
        case UnitKind::ConvChannels: return "conv";
    }
    return "?";
}

int64_t LayerMask::kept() const { return std::count(keep.begin(), keep.end(), uint8_t(1)); }

std::vector<int64_t> LayerMask::kept_units() const {
    std::vector<int64_t> v;
    for (size_t i = 0; i < keep.size(); ++i)
        if (keep[i]) v.push_back(int64_t(i));
    return v;
}

std::vector<int64_t> LayerMask::removed_units() const {
    std::vector<int64_t> v;
    for (size_t i = 0; i < keep.size(); ++i)
        if (!keep[i]) v.push_back(int64_t(i));
    return v;
}

std::vector<int64_t> LayerMask::kept_heads() const {
    std::vector<int64_t> v;
    for (int64_t u : kept_units())
        for (int j = 0; j < query_heads_per_unit; ++j) v.push_back(u * query_heads_per_unit + j);
    return v;
}

std::vector<int64_t> LayerMask::removed_heads() const {
    std::vector<int64_t> v;
    for (int64_t u : removed_units())
        for (int j = 0; j < query_heads_per_unit; ++j) v.push_back(u * query_heads_per_unit + j);
    return v;
}

bool glob_match(std::string_view p, std::string_view s) {
    size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
    while (si < s.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
            ++pi, ++si;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

Result<std::vector<PruneGroup>> find_groups(const Model& m) {
    if (is_cnn(m)) {
        auto a = analyze_cnn(m);
        if (!a) return a.error();
        auto g = cnn_groups(m, a.value());
        if (!g) return g.error();
        return std::move(g->groups);
    }
    if (m.architecture != "llama")
        return err(origin(m), ": pruning supports llama and CNN models, not '", m.architecture, "'");
    return llama_groups(m);
}

Result<std::map<std::string, std::vector<double>>> unit_importance(const Model& m,
                                                                   const std::vector<PruneGroup>& groups,
                                                                   const PruneSpec& spec) {
    std::map<std::string, std::vector<double>> out;
    // Folded BatchNorm scales of CNN producers (magnitude).
    std::map<std::string, std::vector<double>> bn_by_group;
    if (is_cnn(m) && spec.importance != Importance::Taylor) {
        auto a = analyze_cnn(m);
        if (!a) return a.error();
        auto cg = cnn_groups(m, a.value());
        if (!cg) return cg.error();
        for (size_t i = 0; i < cg->groups.size(); ++i) bn_by_group[cg->groups[i].layer] = cg->bn[i];
    }
    for (const PruneGroup& g : groups) {
        std::vector<double>& sc = out[g.layer];
        if (!g.prunable) continue;
        sc.assign(size_t(g.units), 0.0);
        const auto bn = bn_by_group.find(g.layer);
        for (int64_t u = 0; u < g.units; ++u) {
            double acc = 0.0;
            for (size_t si = 0; si < g.slices[size_t(u)].size(); ++si) {
                const UnitSlice& s = g.slices[size_t(u)][si];
                const Tensor* t = m.find(s.tensor);
                if (!t || !is_matrix(*t)) continue;
                if (spec.importance == Importance::Taylor) {
                    if (!spec.gradients) return err("taylor importance needs gradients; none were supplied");
                    auto gi = spec.gradients->find(s.tensor);
                    if (gi == spec.gradients->end())
                        return err("taylor importance: no gradient for tensor '", s.tensor, "' (layer '", g.layer,
                                   "')");
                    if (int64_t(gi->second.size()) != t->numel())
                        return err("taylor importance: the gradient of '", s.tensor, "' has ", gi->second.size(),
                                   " values; the tensor has ", t->numel());
                    const float* w = t->f32();
                    const float* gr = gi->second.data();
                    for_each_element(*t, s, [&](int64_t k) { acc += std::fabs(double(w[k]) * double(gr[k])); });
                } else {
                    // The first producer's rows carry the folded BatchNorm scale.
                    const double a = (si == 0 && bn != bn_by_group.end() && s.axis == 0) ? bn->second[size_t(u)] : 1.0;
                    const float* w = t->f32();
                    for_each_element(*t, s, [&](int64_t k) { acc += a * a * double(w[k]) * double(w[k]); });
                }
            }
            sc[size_t(u)] = spec.importance == Importance::Taylor ? acc : std::sqrt(acc);
        }
        if (spec.importance == Importance::Hessian) {
            if (!spec.layer_importance) return err("hessian importance needs a sensitivity report; none was supplied");
            double li = 0.0;
            int n = 0;
            std::vector<std::string> members = g.producers;
            members.insert(members.end(), g.consumers.begin(), g.consumers.end());
            for (const std::string& l : members) {
                auto it = spec.layer_importance->find(l);
                if (it != spec.layer_importance->end()) li += it->second, ++n;
            }
            if (n == 0)
                return err("hessian importance: the sensitivity report has no entry for any layer of '", g.layer, "' (",
                           members.front(), ", ...)");
            li /= n;
            const double mean = std::accumulate(sc.begin(), sc.end(), 0.0) / double(sc.size());
            for (double& v : sc) v = mean > 0 ? li * v / mean : li;
        }
    }
    return out;
}

Result<PruneReport> plan_pruning(const Model& m, const PruneSpec& spec) {
    auto groups = find_groups(m);
    if (!groups) return groups.error();
    if (spec.ratio < 0.0 || spec.ratio >= 1.0)
        return err("pruning ratio ", spec.ratio, " is outside [0, 1): a ratio of 1 would remove whole layers");
    // Target ratio per group; every rule must name at least one group.
    std::vector<double> target(groups->size(), -1.0);
    for (size_t i = 0; i < groups->size(); ++i) {
        const PruneGroup& g = (*groups)[i];
        const bool kind_on = (g.kind == UnitKind::AttentionHeads && spec.heads) ||
                             (g.kind == UnitKind::MlpChannels && spec.mlp) ||
                             (g.kind == UnitKind::ConvChannels && spec.conv);
        if (kind_on && spec.ratio > 0 && g.prunable) target[i] = spec.ratio;
    }
    for (const auto& [pattern, ratio] : spec.rules) {
        if (ratio < 0.0 || ratio > 1.0) return err("pruning ratio ", ratio, " for '", pattern, "' is outside [0, 1]");
        bool any = false;
        for (size_t i = 0; i < groups->size(); ++i) {
            const PruneGroup& g = (*groups)[i];
            if (!glob_match(pattern, g.layer)) continue;
            any = true;
            if (!g.prunable && ratio > 0) return err("layer '", g.layer, "' cannot be pruned: ", g.pinned_reason);
            target[i] = ratio;
        }
        if (!any) {
            std::string names;
            for (size_t i = 0; i < groups->size() && i < 6; ++i) names += (i ? ", " : "") + (*groups)[i].layer;
            return err(origin(m), ": no prunable layer matches '", pattern, "' (layers are named like ", names,
                       groups->size() > 6 ? ", ..." : "", ")");
        }
    }
    for (const auto& [layer, units] : spec.already_removed) {
        bool known = false;
        for (const PruneGroup& g : groups.value()) known = known || g.layer == layer;
        if (!known) return err(origin(m), ": no prunable layer '", layer, "' in the model");
    }
    // Only the groups the spec touches are scored (Taylor and Hessian need data only for those).
    std::vector<PruneGroup> touched;
    for (size_t i = 0; i < groups->size(); ++i)
        if (target[i] >= 0 || spec.already_removed.count((*groups)[i].layer)) touched.push_back((*groups)[i]);
    auto scores = unit_importance(m, touched, spec);
    if (!scores) return scores.error();

    PruneReport r;
    r.importance = spec.importance;
    r.nodes_before = count_nodes(m.graph);
    r.params_before = m.parameter_count();
    r.config_before = config_text(m);
    // Units to remove per group.
    std::vector<int64_t> remove_n(groups->size(), 0);
    for (size_t i = 0; i < groups->size(); ++i) {
        const PruneGroup& g = (*groups)[i];
        if (target[i] < 0) continue;
        remove_n[i] = std::llround(target[i] * double(g.units));
        if (remove_n[i] >= g.units)
            return err(origin(m), ": pruning ratio ", target[i], " would remove all ", g.units, " ",
                       g.kind == UnitKind::AttentionHeads ? "KV heads" : "channels", " of layer '", g.layer,
                       "'; a layer cannot be removed");
    }
    for (size_t i = 0; i < groups->size(); ++i) {
        const PruneGroup& g = (*groups)[i];
        LayerMask mk;
        mk.layer = g.layer;
        mk.kind = g.kind;
        mk.units = g.units;
        mk.query_heads_per_unit = g.query_heads_per_unit;
        mk.keep.assign(size_t(g.units), 1);
        mk.prunable = g.prunable;
        mk.pinned_reason = g.pinned_reason;
        if (scores->count(g.layer)) mk.scores = (*scores)[g.layer];
        mk.params_before = g.params;
        auto ar = spec.already_removed.find(g.layer);
        if (ar != spec.already_removed.end())
            for (int64_t u : ar->second) {
                if (u < 0 || u >= g.units) return err("layer '", g.layer, "' has no unit ", u);
                mk.keep[size_t(u)] = 0;
            }
        r.layers.push_back(std::move(mk));
    }
    // Hessian with a single global ratio: rank across the groups of each kind.
    const bool global = spec.importance == Importance::Hessian && spec.rules.empty();
    if (global) {
        // CNN layers only: LLM blocks share one config, so an uneven split would only add zero
        // padding to the narrower blocks (LLM groups keep the per-layer count, below).
        for (UnitKind kind : {UnitKind::ConvChannels}) {
            int64_t total = 0;
            std::vector<std::tuple<double, size_t, int64_t>> cand;
            for (size_t i = 0; i < groups->size(); ++i) {
                if ((*groups)[i].kind != kind || target[i] < 0) continue;
                total += remove_n[i] - r.layers[i].removed();
                for (int64_t u = 0; u < (*groups)[i].units; ++u)
                    if (r.layers[i].keep[size_t(u)]) cand.emplace_back(r.layers[i].scores[size_t(u)], i, u);
            }
            std::sort(cand.begin(), cand.end());
            for (auto& [s, i, u] : cand) {
                if (total <= 0) break;
                // Each layer keeps one unit and loses at most twice the target ratio.
                const int64_t cap = std::min<int64_t>((*groups)[i].units - 1,
                                                      std::llround(2.0 * target[i] * double((*groups)[i].units)));
                if (r.layers[i].kept() <= 1 || r.layers[i].removed() >= cap) continue;
                r.layers[i].keep[size_t(u)] = 0;
                --total;
            }
        }
    }
    {
        for (size_t i = 0; i < groups->size(); ++i) {
            if (global && (*groups)[i].kind == UnitKind::ConvChannels) continue;
            LayerMask& mk = r.layers[i];
            int64_t more = remove_n[i] - mk.removed();
            if (more <= 0) continue;
            std::vector<int64_t> order;
            for (int64_t u = 0; u < mk.units; ++u)
                if (mk.keep[size_t(u)]) order.push_back(u);
            std::stable_sort(order.begin(), order.end(),
                             [&](int64_t a, int64_t b) { return mk.scores[size_t(a)] < mk.scores[size_t(b)]; });
            for (int64_t k = 0; k < more && k < int64_t(order.size()); ++k) mk.keep[size_t(order[size_t(k)])] = 0;
        }
    }
    for (size_t i = 0; i < groups->size(); ++i) {
        LayerMask& mk = r.layers[i];
        int64_t removed = 0;
        for (int64_t u = 0; u < mk.units; ++u)
            if (!mk.keep[size_t(u)])
                for (const UnitSlice& s : (*groups)[i].slices[size_t(u)]) removed += slice_params(m, s);
        mk.params_after = mk.params_before - removed;
    }
    auto pruned = apply_masks(m, r.layers);
    if (!pruned) return pruned.error();
    r.nodes_after = count_nodes(pruned->graph);
    r.params_after = pruned->parameter_count();
    r.config_after = config_text(pruned.value());
    return r;
}

Result<Model> apply_masks(const Model& m, const std::vector<LayerMask>& masks) {
    if (is_cnn(m)) return apply_cnn(m, masks);
    auto groups = find_groups(m);
    if (!groups) return groups.error();
    for (const LayerMask& mk : masks) {
        bool known = false;
        for (const PruneGroup& g : groups.value()) known = known || g.layer == mk.layer;
        if (!known) return err(origin(m), ": no prunable layer '", mk.layer, "' in the model");
    }
    return apply_llama(m, groups.value(), masks);
}

Status mask_model(Model& m, const std::vector<LayerMask>& masks) {
    auto groups = find_groups(m);
    if (!groups) return groups.error();
    std::set<std::string> owned;
    for (const LayerMask& mk : masks) {
        const PruneGroup* g = nullptr;
        for (const PruneGroup& x : groups.value())
            if (x.layer == mk.layer) g = &x;
        if (!g) return err(origin(m), ": no prunable layer '", mk.layer, "' in the model");
        EDGE_TRY(check_mask(m, *g, &mk));
        for (int64_t u = 0; u < g->units; ++u) {
            if (mk.keep[size_t(u)]) continue;
            for (const UnitSlice& s : g->slices[size_t(u)]) {
                Tensor* t = m.find_mut(s.tensor);
                if (!t) continue;
                if (owned.insert(t->name).second) own(*t);  // never write a shared or mapped buffer
                float* w = t->f32_mut();
                // A BatchNorm variance stays positive (its channel's consumers are zeroed anyway).
                const bool is_var = t->name.size() > 4 && t->name.substr(t->name.size() - 4) == ".var";
                for_each_element(*t, s, [&](int64_t k) { w[k] = is_var ? 1.0f : 0.0f; });
            }
        }
    }
    return {};
}

Status read_prune_plan(const std::string& path, PruneSpec& spec) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return err(path, ": cannot open the plan file");
    std::stringstream ss;
    ss << f.rdbuf();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(ss.str());
    } catch (const std::exception& e) {
        return err(path, ": not valid JSON: ", e.what());
    }
    if (!j.is_object() || !j.contains("prune") || !j["prune"].is_object())
        return err(path, ": the plan has no \"prune\" object ({\"prune\": {\"layers\": {\"blk.*.ffn\": 0.25}}})");
    const auto& p = j["prune"];
    for (auto it = p.begin(); it != p.end(); ++it) {
        const std::string& k = it.key();
        if (k == "importance") {
            if (!it->is_string()) return err(path, ": prune.importance must be a string");
            auto imp = parse_importance(it->get<std::string>());
            if (!imp) return err(path, ": prune.importance: ", imp.message());
            spec.importance = imp.value();
        } else if (k == "ratio") {
            if (!it->is_number()) return err(path, ": prune.ratio must be a number");
            spec.ratio = it->get<double>();
        } else if (k == "layers") {
            if (!it->is_object()) return err(path, ": prune.layers must be an object of pattern -> ratio");
            for (auto l = it->begin(); l != it->end(); ++l) {
                if (!l->is_number())
                    return err(path, ": prune.layers.", l.key(), " must be a number (a ratio in [0, 1))");
                spec.rules.emplace_back(l.key(), l->get<double>());
            }
        } else {
            return err(path, ": unknown key prune.", k, " (importance, ratio, layers)");
        }
    }
    return {};
}

Result<bool> plan_prunes(const std::string& path) {
    auto text = read_text_file(path);
    if (!text.ok()) return text.error();
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return err(path, ": not valid JSON");
    return j.is_object() && j.contains("prune");
}

bool prunes_anything(const PruneSpec& spec) {
    if (spec.ratio > 0.0) return true;
    for (const auto& [pattern, ratio] : spec.rules)
        if (ratio > 0.0) return true;
    return false;
}

Result<PrunedModel> prune_with_plan(const Model& m, const std::string& plan_path) {
    PruneSpec spec;
    EDGE_TRY(read_prune_plan(plan_path, spec));
    if (spec.importance != Importance::Magnitude)
        return err(plan_path, ": prune.importance ", importance_name(spec.importance),
                   " needs gradients or an analysis: prune with `edgestudio-cli prune --plan ", plan_path,
                   " --data TEXT --out M.gguf` first, then quantize or compile M.gguf");
    if (!prunes_anything(spec)) return err(plan_path, ": the \"prune\" section removes nothing (no ratio above 0)");
    return prune_with_spec(m, spec, plan_path);
}

Result<PrunedModel> prune_with_spec(const Model& m, const PruneSpec& spec, const std::string& what) {
    // The F32 weights (read where the model was opened lazily) and the pruned copy.
    size_t f32 = 0;
    for (const Tensor& t : m.tensors)
        if (model::is_unread(t) || t.type != DType::F32) f32 += size_t(t.numel()) * sizeof(float);
    EDGE_TRY(check_memory(m.source_path + ": pruning with " + what,
                          {{"the weights as F32", f32}, {"the pruned copy", m.weight_bytes() + f32}}, memory_budget(),
                          "prune on a machine with more memory, or prune once with `edgestudio-cli prune` and "
                          "quantize its output"));
    Model full = m;
    EDGE_TRY(model::load_weights(full));
    auto report = plan_pruning(full, spec);
    if (!report.ok()) return err(what, ": ", report.message());
    auto pruned = apply_masks(full, report->layers);
    if (!pruned.ok()) return err(what, ": ", pruned.message());
    return PrunedModel{std::move(pruned).value(), std::move(report).value()};
}

std::string report_to_json(const PruneReport& r) {
    nlohmann::json j;
    j["importance"] = importance_name(r.importance);
    j["params_before"] = r.params_before;
    j["params_after"] = r.params_after;
    j["nodes_before"] = r.nodes_before.total;
    j["nodes_after"] = r.nodes_after.total;
    j["nodes_before_text"] = r.nodes_before.text();
    j["nodes_after_text"] = r.nodes_after.text();
    if (!r.config_before.empty()) {
        j["config_before"] = r.config_before;
        j["config_after"] = r.config_after;
    }
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerMask& l : r.layers) {
        nlohmann::json e{{"layer", l.layer},
                         {"kind", unit_kind_name(l.kind)},
                         {"units", l.units},
                         {"kept", l.kept()},
                         {"removed", l.removed()},
                         {"ratio", l.ratio()},
                         {"prunable", l.prunable},
                         {"params_before", l.params_before},
                         {"params_after", l.params_after},
                         {"removed_units", l.removed_units()}};
        if (l.kind == UnitKind::AttentionHeads) {
            e["query_heads_per_kv_head"] = l.query_heads_per_unit;
            e["removed_heads"] = l.removed_heads();
            e["kept_heads"] = l.kept_heads();
        }
        if (!l.prunable) e["pinned"] = l.pinned_reason;
        if (!l.scores.empty()) e["scores"] = l.scores;
        layers.push_back(std::move(e));
    }
    j["layers"] = std::move(layers);
    return j.dump(2);
}

}  // namespace edge::prune
