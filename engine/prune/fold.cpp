// BatchNorm folding and linear-op merging over the CNN IR.
#include "engine/prune/fold.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

using edge::model::count_nodes;
using edge::model::Model;
using edge::model::Op;
using edge::model::op_attr1;
using edge::model::OpType;

namespace edge::prune {

namespace {

std::string origin(const Model& m) { return m.source_path.empty() ? m.name : m.source_path; }

// How many ops read each value (graph outputs count as a reader).
std::map<std::string, int> readers(const Model& m) {
    std::map<std::string, int> r;
    for (const Op& op : m.graph.ops)
        for (const std::string& v : op.inputs) ++r[v];
    for (const std::string& v : m.graph.outputs) ++r[v];
    return r;
}

// Index of the op producing `value`, or -1.
int producer(const Model& m, const std::string& value) {
    for (size_t i = 0; i < m.graph.ops.size(); ++i)
        for (const std::string& o : m.graph.ops[i].outputs)
            if (o == value) return int(i);
    return -1;
}

// Replaces (or adds) an owned F32 tensor.
void put_tensor(Model& m, const std::string& name, const std::vector<int64_t>& shape, const std::vector<double>& v) {
    Tensor t = Tensor::zeros_f32(name, shape);
    for (size_t i = 0; i < v.size(); ++i) t.f32_mut()[i] = float(v[i]);
    for (Tensor& old : m.tensors)
        if (old.name == name) {
            t.source_type = old.source_type;
            old = std::move(t);
            return;
        }
    m.tensors.push_back(std::move(t));
}

std::vector<double> values(const Tensor& t) { return std::vector<double>(t.f32(), t.f32() + t.numel()); }

void drop_unused_tensors(Model& m) {
    std::set<std::string> used;
    for (const Op& op : m.graph.ops) used.insert(op.weights.begin(), op.weights.end());
    std::vector<Tensor> kept;
    for (Tensor& t : m.tensors)
        if (used.count(t.name)) kept.push_back(std::move(t));
    m.tensors = std::move(kept);
}

// Output channels of a weighted op and the elements per channel of its weight.
bool channel_layout(const Model& m, const Op& op, int64_t& channels, int64_t& per) {
    if ((op.type != OpType::Conv2d && op.type != OpType::Linear) || op.weights.empty()) return false;
    const Tensor* w = m.find(op.weights[0]);
    if (!w || w->type != DType::F32 || w->shape.empty()) return false;
    channels = w->shape[0];
    per = w->numel() / channels;
    return true;
}

Status ensure_f32(const Model& m, const Op& op) {
    for (const std::string& n : op.weights) {
        const Tensor* t = m.find(n);
        if (!t) return err(origin(m), ": op '", op.name, "' needs tensor '", n, "', which the model lacks");
        if (t->type != DType::F32)
            return err(origin(m), ": tensor '", n, "' is ", dtype_name(t->type), "; folding needs F32");
    }
    return {};
}

}  // namespace

Result<FoldReport> fold_batchnorm(Model& m) {
    FoldReport r;
    r.before = count_nodes(m.graph);
    r.params_before = m.parameter_count();
    for (size_t i = 0; i < m.graph.ops.size();) {
        const Op& bn = m.graph.ops[i];
        if (bn.type != OpType::BatchNorm || bn.inputs.size() != 1 || bn.weights.size() != 4) {
            ++i;
            continue;
        }
        const int p = producer(m, bn.inputs[0]);
        int64_t channels = 0, per = 0;
        if (p < 0 || readers(m)[bn.inputs[0]] != 1 || !channel_layout(m, m.graph.ops[size_t(p)], channels, per)) {
            ++i;
            continue;
        }
        Op& conv = m.graph.ops[size_t(p)];
        EDGE_TRY(ensure_f32(m, bn));
        EDGE_TRY(ensure_f32(m, conv));
        const Tensor* scale = m.find(bn.weights[0]);
        const Tensor* beta = m.find(bn.weights[1]);
        const Tensor* mean = m.find(bn.weights[2]);
        const Tensor* var = m.find(bn.weights[3]);
        for (const Tensor* t : {scale, beta, mean, var})
            if (t->numel() != channels)
                return err(origin(m), ": batchnorm '", bn.name, "' tensor '", t->name, "' has ", t->numel(),
                           " values; '", conv.name, "' has ", channels, " output channels");
        const double eps = op_attr1(bn, "epsilon", 1e-5);
        const Tensor* w = m.find(conv.weights[0]);
        const std::vector<int64_t> wshape = w->shape;
        std::vector<double> wv = values(*w);
        std::vector<double> bv(size_t(channels), 0.0);
        if (conv.weights.size() > 1) bv = values(*m.find(conv.weights[1]));
        for (int64_t c = 0; c < channels; ++c) {
            const double a = double(scale->f32()[c]) / std::sqrt(double(var->f32()[c]) + eps);
            for (int64_t k = 0; k < per; ++k) wv[size_t(c * per + k)] *= a;
            bv[size_t(c)] = a * (bv[size_t(c)] - double(mean->f32()[c])) + double(beta->f32()[c]);
        }
        const std::string bias_name = conv.weights.size() > 1 ? conv.weights[1] : conv.name + ".bias";
        const std::string wname = conv.weights[0];
        put_tensor(m, wname, wshape, wv);
        put_tensor(m, bias_name, {channels}, bv);
        Op& conv2 = m.graph.ops[size_t(p)];
        if (conv2.weights.size() == 1) conv2.weights.push_back(bias_name);
        // The conv now writes what the BN wrote.
        const std::string bn_out = m.graph.ops[i].outputs[0];
        m.graph.ops.erase(m.graph.ops.begin() + std::ptrdiff_t(i));
        m.graph.ops[size_t(p)].outputs[0] = bn_out;
        ++r.batchnorms_folded;
    }
    drop_unused_tensors(m);
    r.after = count_nodes(m.graph);
    r.params_after = m.parameter_count();
    return r;
}

Result<FoldReport> merge_linear(Model& m) {
    FoldReport r;
    r.before = count_nodes(m.graph);
    r.params_before = m.parameter_count();
    // 1. constant Add after Conv2d/Linear -> bias.
    for (size_t i = 0; i < m.graph.ops.size();) {
        const Op& add = m.graph.ops[i];
        if (add.type != OpType::Add || add.weights.size() != 1 || add.inputs.size() != 1) {
            ++i;
            continue;
        }
        const int p = producer(m, add.inputs[0]);
        int64_t channels = 0, per = 0;
        const Tensor* c = m.find(add.weights[0]);
        if (p < 0 || !c || c->type != DType::F32 || readers(m)[add.inputs[0]] != 1 ||
            !channel_layout(m, m.graph.ops[size_t(p)], channels, per) || c->numel() != channels) {
            ++i;
            continue;
        }
        // The constant must vary along the channel axis only: [C], [C,1,1], [1,C,1,1] for a conv
        // (NCHW), [C] or [1,C] for a linear ([N, C]).
        const bool is_conv = m.graph.ops[size_t(p)].type == OpType::Conv2d;
        std::vector<int64_t> s = c->shape;
        while (!s.empty() && s.front() == 1 && s.size() > 1) s.erase(s.begin());
        const bool ok = is_conv ? (s == std::vector<int64_t>{channels, 1, 1} || (c->shape.size() == 1 && channels == 1))
                                : (s == std::vector<int64_t>{channels});
        if (!ok) {
            ++i;
            continue;
        }
        Op& prod = m.graph.ops[size_t(p)];
        EDGE_TRY(ensure_f32(m, prod));
        std::vector<double> bv(size_t(channels), 0.0);
        if (prod.weights.size() > 1) bv = values(*m.find(prod.weights[1]));
        for (int64_t k = 0; k < channels; ++k) bv[size_t(k)] += double(c->f32()[k]);
        const std::string bias_name = prod.weights.size() > 1 ? prod.weights[1] : prod.name + ".bias";
        put_tensor(m, bias_name, {channels}, bv);
        if (m.graph.ops[size_t(p)].weights.size() == 1) m.graph.ops[size_t(p)].weights.push_back(bias_name);
        const std::string add_out = m.graph.ops[i].outputs[0];
        m.graph.ops.erase(m.graph.ops.begin() + std::ptrdiff_t(i));
        m.graph.ops[size_t(p)].outputs[0] = add_out;
        ++r.adds_merged;
    }
    // 2. Linear -> Linear with nothing between.
    for (size_t i = 0; i < m.graph.ops.size();) {
        const Op& l2 = m.graph.ops[i];
        const int p = l2.type == OpType::Linear && l2.inputs.size() == 1 ? producer(m, l2.inputs[0]) : -1;
        if (p < 0 || m.graph.ops[size_t(p)].type != OpType::Linear || readers(m)[l2.inputs[0]] != 1) {
            ++i;
            continue;
        }
        const Op& l1 = m.graph.ops[size_t(p)];
        EDGE_TRY(ensure_f32(m, l1));
        EDGE_TRY(ensure_f32(m, l2));
        const Tensor* w1 = m.find(l1.weights[0]);
        const Tensor* w2 = m.find(l2.weights[0]);
        if (w1->shape.size() != 2 || w2->shape.size() != 2 || w2->shape[1] != w1->shape[0]) {
            ++i;
            continue;
        }
        const int64_t out = w2->shape[0], mid = w1->shape[0], in = w1->shape[1];
        std::vector<double> w(size_t(out * in), 0.0), b(size_t(out), 0.0);
        for (int64_t o = 0; o < out; ++o) {
            double acc = l2.weights.size() > 1 ? double(m.find(l2.weights[1])->f32()[o]) : 0.0;
            for (int64_t j = 0; j < mid; ++j) {
                const double a = w2->f32()[o * mid + j];
                if (l1.weights.size() > 1) acc += a * double(m.find(l1.weights[1])->f32()[j]);
                for (int64_t k = 0; k < in; ++k) w[size_t(o * in + k)] += a * double(w1->f32()[j * in + k]);
            }
            b[size_t(o)] = acc;
        }
        const std::string wname = l2.weights[0];
        const std::string bname = l2.weights.size() > 1 ? l2.weights[1] : l2.name + ".bias";
        put_tensor(m, wname, {out, in}, w);
        put_tensor(m, bname, {out}, b);
        Op& second = m.graph.ops[i];
        if (second.weights.size() == 1) second.weights.push_back(bname);
        second.inputs[0] = m.graph.ops[size_t(p)].inputs[0];
        m.graph.ops.erase(m.graph.ops.begin() + p);
        ++r.linears_merged;
    }
    drop_unused_tensors(m);
    r.after = count_nodes(m.graph);
    r.params_after = m.parameter_count();
    return r;
}

Result<FoldReport> simplify_cnn(Model& m) {
    auto a = fold_batchnorm(m);
    if (!a) return a.error();
    auto b = merge_linear(m);
    if (!b) return b.error();
    FoldReport r = a.value();
    r.adds_merged = b->adds_merged;
    r.linears_merged = b->linears_merged;
    r.after = b->after;
    r.params_after = b->params_after;
    return r;
}

}  // namespace edge::prune
