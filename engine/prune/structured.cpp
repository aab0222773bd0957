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

namespace edge::prune {

namespace {

std::string origin(const Model& m) { return m.source_path.empty() ? m.name : m.source_path; }

// ---- CNN channel analysis ---------------------------------------------------------------------

struct UnionFind {
    std::vector<int> parent;
    int add() {
        parent.push_back(int(parent.size()));
        return parent.back();
    }
    int find(int x) {
        while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
        return x;
    }
    void unite(int a, int b) {
        a = find(a), b = find(b);
        if (a != b) parent[size_t(std::max(a, b))] = std::min(a, b);
    }
};

// A value's channels: node ids base .. base+C-1. A flattened value refers to its source's nodes
// with `hw` columns per channel.
struct ValueChannels {
    int base = -1;
    int64_t channels = 0;
    int64_t hw = 1;        // columns per channel when read flat (set when a Linear reads it)
    bool flat = false;     // produced by a flatten of a channelled value
};

enum class RecKind { Producer, Consumer, Follower };
// An op touching the channels of a value.
struct Record {
    RecKind kind;
    int op = -1;
    int base = -1;
    int64_t channels = 0;
    int64_t hw = 1;  // consumer columns per channel
};

struct CnnAnalysis {
    UnionFind uf;
    std::map<std::string, ValueChannels> values;
    std::vector<Record> records;
    std::map<int, std::string> pinned;        // node -> reason
    std::map<int, double> bn_scale;           // producer node -> folded BatchNorm scale
    std::map<int, std::pair<int, int64_t>> produced_by;  // node -> (op, channel)
    struct PadInfo {
        int op;
        int in_base, out_base;
        int64_t in_c, before, after;
    };
    std::vector<PadInfo> pads;
    struct ReshapeInfo {
        int op;
        std::string src;  // value flattened
    };
    std::vector<ReshapeInfo> reshapes;
};

int fresh_nodes(CnnAnalysis& a, int64_t n) {
    int base = -1;
    for (int64_t i = 0; i < n; ++i) {
        const int id = a.uf.add();
        if (i == 0) base = id;
    }
    return base;
}

void pin_value(CnnAnalysis& a, const ValueChannels& v, const std::string& reason) {
    for (int64_t c = 0; c < v.channels; ++c) a.pinned.emplace(v.base + int(c), reason);
}

const Tensor* weight(const Model& m, const Op& op, size_t i) {
    return i < op.weights.size() ? m.find(op.weights[i]) : nullptr;
}

Result<CnnAnalysis> analyze_cnn(const Model& m) {
    CnnAnalysis a;
    auto in_shape = cnn_input_shape(m);
    if (!in_shape) return in_shape.error();
    if (m.graph.inputs.size() != 1) return err(origin(m), ": a CNN graph with ", m.graph.inputs.size(), " inputs");
    {
        ValueChannels v;
        v.channels = in_shape->size() >= 2 ? (*in_shape)[1] : 1;
        v.base = fresh_nodes(a, v.channels);
        pin_value(a, v, "tied to the graph input");
        a.values[m.graph.inputs[0]] = v;
    }
    for (size_t i = 0; i < m.graph.ops.size(); ++i) {
        const Op& op = m.graph.ops[i];
        const int oi = int(i);
        for (const std::string& w : op.weights) {
            const Tensor* t = m.find(w);
            if (!t) return err(origin(m), ": op '", op.name, "' needs tensor '", w, "', which the model lacks");
            if (t->type != DType::F32)
                return err(origin(m), ": tensor '", w, "' is ", dtype_name(t->type), "; pruning needs F32 weights");
        }
        auto input = [&](size_t k) -> ValueChannels* {
            if (k >= op.inputs.size()) return nullptr;
            auto it = a.values.find(op.inputs[k]);
            return it == a.values.end() ? nullptr : &it->second;
        };
        ValueChannels* x = input(0);
        const std::string out = op.outputs.empty() ? std::string() : op.outputs[0];
        auto pin_inputs = [&](const std::string& why) {
            for (size_t k = 0; k < op.inputs.size(); ++k)
                if (ValueChannels* v = input(k)) pin_value(a, *v, why);
        };
        switch (op.type) {
            case OpType::Conv2d:
            case OpType::Linear: {
                const Tensor* w = weight(m, op, 0);
                if (!w || w->shape.empty())
                    return err(origin(m), ": op '", op.name, "' has no weight tensor");
                const int64_t oc = w->shape[0];
                const int64_t group = op.type == OpType::Conv2d ? int64_t(op_attr1(op, "group", 1)) : 1;
                ValueChannels y;
                y.channels = oc;
                if (group == 1) {
                    y.base = fresh_nodes(a, oc);
                    for (int64_t c = 0; c < oc; ++c) a.produced_by[y.base + int(c)] = {oi, c};
                    a.records.push_back({RecKind::Producer, oi, y.base, oc, 1});
                    if (x && x->base >= 0) {
                        const int64_t k = w->numel() / oc;  // IC*KH*KW or K
                        int64_t hw = 1;
                        if (op.type == OpType::Linear) {
                            if (x->channels <= 0 || k % x->channels)
                                return err(origin(m), ": linear '", op.name, "' reads ", k, " features from ",
                                           x->channels, " channels");
                            hw = k / x->channels;
                            x->hw = hw;
                        } else if (w->shape.size() != 4 || w->shape[1] != x->channels) {
                            return err(origin(m), ": conv '", op.name, "' weight ", shape_text(w->shape), " does not read ",
                                       x->channels, " input channels");
                        }
                        a.records.push_back({RecKind::Consumer, oi, x->base, x->channels, hw});
                    }
                } else if (x && x->base >= 0 && group == x->channels && group == oc) {
                    y.base = x->base;  // depthwise: channel c reads only channel c
                    a.records.push_back({RecKind::Follower, oi, x->base, oc, 1});
                } else {
                    y.base = fresh_nodes(a, oc);
                    pin_value(a, y, "produced by the grouped conv '" + op.name + "'");
                    pin_inputs("read by the grouped conv '" + op.name + "'");
                }
                a.values[out] = y;
                break;
            }
            case OpType::BatchNorm: {
                if (!x || x->base < 0) break;
                a.records.push_back({RecKind::Follower, oi, x->base, x->channels, 1});
                const Tensor* s = weight(m, op, 0);
                const Tensor* var = weight(m, op, 3);
                if (s && var && s->numel() == x->channels && var->numel() == x->channels) {
                    const double eps = op_attr1(op, "epsilon", 1e-5);
                    for (int64_t c = 0; c < x->channels; ++c)
                        a.bn_scale[x->base + int(c)] = double(s->f32()[c]) / std::sqrt(double(var->f32()[c]) + eps);
                } else {
                    return err(origin(m), ": batchnorm '", op.name, "' tensors do not have ", x->channels, " entries");
                }
                a.values[out] = *x;
                break;
            }
            case OpType::Relu:
            case OpType::MaxPool:
            case OpType::AvgPool:
            case OpType::GlobalAvgPool:
                if (x) a.values[out] = *x;
                break;
            case OpType::Add: {
                if (!x) break;
                if (op.inputs.size() == 2) {
                    ValueChannels* b = input(1);
                    if (b && b->base >= 0 && x->base >= 0 && b->channels == x->channels && !b->flat && !x->flat) {
                        for (int64_t c = 0; c < x->channels; ++c) a.uf.unite(x->base + int(c), b->base + int(c));
                    } else {
                        pin_inputs("added by '" + op.name + "' with a different channel layout");
                    }
                } else if (!op.weights.empty()) {
                    const Tensor* c = weight(m, op, 0);
                    if (c->numel() == x->channels && x->channels > 1)
                        a.records.push_back({RecKind::Follower, oi, x->base, x->channels, 1});
                    else if (c->numel() != 1)
                        pin_inputs("added to the constant of '" + op.name + "', which is not per channel");
                }
                a.values[out] = *x;
                break;
            }
            case OpType::Pad: {
                if (!x) break;
                const auto pads = op_attr(op, "pads");
                const size_t r = pads.size() / 2;
                if (r < 2 || x->flat) {
                    pin_inputs("padded by '" + op.name + "' in a layout pruning does not follow");
                    break;
                }
                if (pads[0] != 0 || pads[r] != 0) {
                    pin_inputs("padded along the batch axis by '" + op.name + "'");
                    break;
                }
                const int64_t before = int64_t(pads[1]), after = int64_t(pads[1 + r]);
                if (before == 0 && after == 0) {
                    a.values[out] = *x;
                    break;
                }
                ValueChannels y;
                y.channels = x->channels + before + after;
                y.base = fresh_nodes(a, y.channels);
                for (int64_t c = 0; c < x->channels; ++c) a.uf.unite(y.base + int(before + c), x->base + int(c));
                a.pads.push_back({oi, x->base, y.base, x->channels, before, after});
                a.values[out] = y;
                break;
            }
            case OpType::Reshape: {
                if (!x) break;
                const auto shape = op_attr(op, "shape");
                const bool flatten = op.attrs.count("flatten_axis") ? op_attr1(op, "flatten_axis", 1) == 1.0
                                                                    : shape.size() == 2;
                if (!flatten || x->flat) {
                    pin_inputs("reshaped by '" + op.name + "' in a way pruning does not follow");
                    break;
                }
                ValueChannels y = *x;
                y.flat = true;
                a.values[out] = y;
                a.reshapes.push_back({oi, op.inputs[0]});
                break;
            }
            default:
                pin_inputs(std::string("read by the ") + op_type_name(op.type) + " '" + op.name + "'");
                break;
        }
    }
    for (const std::string& o : m.graph.outputs) {
        auto it = a.values.find(o);
        if (it != a.values.end()) pin_value(a, it->second, "tied to the graph output '" + o + "'");
    }
    return a;
}

// The Linear consumer's hw is only known once the Linear is seen; consumer records carry it.

// The axis "rows" means: 0, or for a channel vector stored as [1, C, 1, 1] its one non-1 axis.
size_t row_axis(const Tensor& t) {
    if (t.shape.empty() || t.shape[0] != 1) return 0;
    for (size_t d = 0; d < t.shape.size(); ++d)
        if (t.shape[d] != 1) return d;
    return 0;
}
// Elements per row along row_axis (1 for a channel vector).
int64_t row_size(const Tensor& t) { return t.shape.empty() ? 1 : t.numel() / t.shape[row_axis(t)]; }

int64_t slice_params(const Model& m, const UnitSlice& s) {
    const Tensor* t = m.find(s.tensor);
    if (!t || t->shape.empty()) return 0;
    const int64_t n = int64_t(s.indices.size());
    if (s.axis == 0) return n * row_size(*t);
    return n * (t->numel() / t->shape[1]);
}

// A CNN's groups plus, per group, the union-find roots of its units (for apply/mask).
struct CnnGroups {
    std::vector<PruneGroup> groups;
    std::vector<std::vector<int>> roots;  // per group, per unit
    std::vector<std::vector<double>> bn;  // per group, per unit: folded BN scale of the first producer (or 1)
};

Result<CnnGroups> cnn_groups(const Model& m, CnnAnalysis& a) {
    const int n = int(a.uf.parent.size());
    std::map<int, std::vector<int>> members;  // root -> nodes
    for (int v = 0; v < n; ++v) members[a.uf.find(v)].push_back(v);
    // Per component: producers (op order), pinned reason.
    struct Comp {
        std::vector<std::pair<int, int64_t>> producers;
        std::string pinned;
    };
    std::map<int, Comp> comps;
    for (auto& [root, nodes] : members) {
        Comp c;
        for (int v : nodes) {
            auto p = a.produced_by.find(v);
            if (p != a.produced_by.end()) c.producers.push_back(p->second);
            auto q = a.pinned.find(v);
            if (q != a.pinned.end() && c.pinned.empty()) c.pinned = q->second;
        }
        if (c.producers.empty()) continue;
        std::sort(c.producers.begin(), c.producers.end());
        comps[root] = std::move(c);
    }
    // Group components by their set of producing ops.
    std::map<std::vector<int>, std::vector<int>> by_ops;
    for (auto& [root, c] : comps) {
        std::vector<int> ops;
        for (auto& p : c.producers)
            if (ops.empty() || ops.back() != p.first) ops.push_back(p.first);
        by_ops[ops].push_back(root);
    }
    std::vector<std::pair<std::vector<int>, std::vector<int>>> ordered(by_ops.begin(), by_ops.end());
    std::sort(ordered.begin(), ordered.end(), [&](const auto& x, const auto& y) {
        return std::make_pair(x.first[0], comps[x.second[0]].producers[0].second) <
               std::make_pair(y.first[0], comps[y.second[0]].producers[0].second);
    });
    // Per root: slices from every record.
    std::map<int, std::vector<UnitSlice>> slices;
    auto add = [&](int root, const std::string& tensor, int axis, int64_t lo, int64_t count) {
        auto& v = slices[root];
        UnitSlice* s = nullptr;
        for (auto& e : v)
            if (e.tensor == tensor && e.axis == axis) s = &e;
        if (!s) {
            v.push_back({tensor, axis, {}});
            s = &v.back();
        }
        for (int64_t k = 0; k < count; ++k) s->indices.push_back(lo + k);
    };
    for (const Record& r : a.records) {
        const Op& op = m.graph.ops[size_t(r.op)];
        for (int64_t c = 0; c < r.channels; ++c) {
            const int root = a.uf.find(r.base + int(c));
            if (!comps.count(root)) continue;
            switch (r.kind) {
                case RecKind::Producer:
                case RecKind::Follower:
                    for (const std::string& w : op.weights) add(root, w, 0, c, 1);
                    break;
                case RecKind::Consumer:
                    add(root, op.weights[0], 1, c * r.hw, r.hw);
                    break;
            }
        }
    }
    CnnGroups out;
    std::set<std::string> names;
    for (auto& [ops, roots] : ordered) {
        PruneGroup g;
        g.kind = UnitKind::ConvChannels;
        std::sort(roots.begin(), roots.end(), [&](int x, int y) { return comps[x].producers[0] < comps[y].producers[0]; });
        std::string name = m.graph.ops[size_t(ops[0])].name;
        for (int k = 2; names.count(name); ++k) name = m.graph.ops[size_t(ops[0])].name + "#" + std::to_string(k);
        names.insert(name);
        g.layer = name;
        g.units = int64_t(roots.size());
        for (int o : ops) g.producers.push_back(m.graph.ops[size_t(o)].name);
        std::set<int> consumer_ops, follower_ops;
        std::vector<double> bn;
        for (int root : roots) {
            for (const Record& r : a.records)
                for (int64_t c = 0; c < r.channels; ++c)
                    if (a.uf.find(r.base + int(c)) == root) {
                        if (r.kind == RecKind::Consumer) consumer_ops.insert(r.op);
                        if (r.kind == RecKind::Follower) follower_ops.insert(r.op);
                    }
            const Comp& c = comps[root];
            if (!c.pinned.empty() && g.prunable) {
                g.prunable = false;
                g.pinned_reason = c.pinned;
            }
            auto sl = slices[root];
            for (auto& s : sl) std::sort(s.indices.begin(), s.indices.end());
            for (auto& s : sl) g.params += slice_params(m, s);
            g.slices.push_back(std::move(sl));
            double scale = 1.0;
            for (auto& [node, op_ch] : a.produced_by)
                if (op_ch == c.producers[0]) {
                    auto b = a.bn_scale.find(node);
                    if (b != a.bn_scale.end()) scale = b->second;
                }
            bn.push_back(scale);
        }
        for (int o : consumer_ops) g.consumers.push_back(m.graph.ops[size_t(o)].name);
        for (int o : follower_ops) g.followers.push_back(m.graph.ops[size_t(o)].name);
        out.groups.push_back(std::move(g));
        out.roots.push_back(roots);
        out.bn.push_back(std::move(bn));
    }
    return out;
}

// ---- LLM groups --------------------------------------------------------------------------------

std::string tname(int b, const char* kind) { return "blk." + std::to_string(b) + "." + kind + ".weight"; }

Result<std::vector<PruneGroup>> llama_groups(const Model& m) {
    const LlamaConfig& c = m.config;
    if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads)
        return err(origin(m), ": ", c.n_heads, " heads do not split into ", c.n_kv_heads, " KV groups");
    const int g = c.n_heads / c.n_kv_heads, hd = c.head_dim;
    std::vector<PruneGroup> out;
    for (int b = 0; b < c.n_layers; ++b) {
        for (const char* k : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
            const Tensor* t = m.find(tname(b, k));
            if (!t) return err(origin(m), ": tensor '", tname(b, k), "' is missing");
            if (t->type != DType::F32)
                return err(origin(m), ": tensor '", t->name, "' is ", dtype_name(t->type), "; pruning needs F32 weights");
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
            ff.slices.push_back({{tname(b, "ffn_gate"), 0, {j}}, {tname(b, "ffn_up"), 0, {j}}, {tname(b, "ffn_down"), 1, {j}}});
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
                std::memcpy(dst + (o * nd1 + int64_t(i)) * rest, src + (o * d1 + keep[i]) * rest, size_t(rest) * sizeof(float));
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
    return "dim " + std::to_string(c.dim) + ", heads " + std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) +
           " kv, ffn " + std::to_string(c.hidden_dim);
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
    if (mk->kept() == 0) return err(origin(m), ": the mask of '", g.layer, "' removes every unit; a layer cannot be removed");
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
    finalize_llama(out);
    EDGE_TRY(validate_llama(out));
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
    if (m.architecture != "llama") return err(origin(m), ": pruning supports llama and CNN models, not '", m.architecture, "'");
    return llama_groups(m);
}

Result<std::map<std::string, std::vector<double>>> unit_importance(const Model& m, const std::vector<PruneGroup>& groups,
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
                        return err("taylor importance: no gradient for tensor '", s.tensor, "' (layer '", g.layer, "')");
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
        const bool kind_on = (g.kind == UnitKind::AttentionHeads && spec.heads) || (g.kind == UnitKind::MlpChannels && spec.mlp) ||
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
                const int64_t cap = std::min<int64_t>((*groups)[i].units - 1, std::llround(2.0 * target[i] * double((*groups)[i].units)));
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
                if (!l->is_number()) return err(path, ": prune.layers.", l.key(), " must be a number (a ratio in [0, 1))");
                spec.rules.emplace_back(l.key(), l->get<double>());
            }
        } else {
            return err(path, ": unknown key prune.", k, " (importance, ratio, layers)");
        }
    }
    return {};
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
