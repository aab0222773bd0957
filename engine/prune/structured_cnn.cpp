// Structured pruning, CNN side: which conv output channels are tied together (structured.h).
#include <algorithm>
#include <cmath>
#include <set>

#include "engine/prune/structured_detail.h"

using edge::model::cnn_input_shape;
using edge::model::Model;
using edge::model::Op;
using edge::model::op_attr;
using edge::model::op_attr1;
using edge::model::op_type_name;
using edge::model::OpType;
using edge::model::shape_text;

namespace edge::prune::detail {

std::string origin(const Model& m) { return m.source_path.empty() ? m.name : m.source_path; }

namespace {

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

}  // namespace

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
                if (!w || w->shape.empty()) return err(origin(m), ": op '", op.name, "' has no weight tensor");
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
                            return err(origin(m), ": conv '", op.name, "' weight ", shape_text(w->shape),
                                       " does not read ", x->channels, " input channels");
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
                const bool flatten =
                    op.attrs.count("flatten_axis") ? op_attr1(op, "flatten_axis", 1) == 1.0 : shape.size() == 2;
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
            default: pin_inputs(std::string("read by the ") + op_type_name(op.type) + " '" + op.name + "'"); break;
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
                case RecKind::Consumer: add(root, op.weights[0], 1, c * r.hw, r.hw); break;
            }
        }
    }
    CnnGroups out;
    std::set<std::string> names;
    for (auto& [ops, roots] : ordered) {
        PruneGroup g;
        g.kind = UnitKind::ConvChannels;
        std::sort(roots.begin(), roots.end(),
                  [&](int x, int y) { return comps[x].producers[0] < comps[y].producers[0]; });
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

}  // namespace edge::prune::detail
