// TorchScript <-> CNN IR. The only LibTorch translation unit that touches torch::jit.
#include "engine/analysis/torchscript_cnn.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>

#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "engine/model/cnn_ir.h"

using edge::model::cnn_input_shape;
using edge::model::count_nodes;
using edge::model::is_cnn;
using edge::model::kCnnArchitecture;
using edge::model::Model;
using edge::model::Op;
using edge::model::op_attr;
using edge::model::op_attr1;
using edge::model::op_type_name;
using edge::model::OpType;
using edge::model::set_cnn_input_shape;
using edge::model::shape_text;

namespace edge::analysis {

namespace {

using torch::jit::Node;
using torch::jit::Value;

constexpr const char* kSupported =
    "aten::conv2d, aten::_convolution, aten::batch_norm, aten::relu, aten::max_pool2d, aten::avg_pool2d, "
    "aten::adaptive_avg_pool2d, aten::mean, aten::flatten, aten::reshape, aten::view, aten::linear, aten::add, "
    "aten::constant_pad_nd, aten::softmax, aten::dropout, aten::contiguous";

std::string first_line(const std::string& s) {
    const size_t nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
}

struct Importer {
    const std::string& path;
    torch::jit::Module& mod;
    Model m;
    std::map<const Value*, std::pair<c10::IValue, std::string>> attrs;  // GetAttr results + path
    std::map<const Value*, std::string> acts;                           // activations
    std::map<std::string, int> rank;                                    // activation ranks
    std::set<std::string> used_names;
    int counter = 0;

    std::string where(const Node* n) const { return std::string(n->kind().toQualString()); }

    // (Not `return toIValue(v)`: an empty c10::optional<IValue> would convert into an engaged
    // std::optional holding None.)
    std::optional<c10::IValue> constant(const Value* v) const {
        auto c = torch::jit::toIValue(v);
        if (!c.has_value()) return std::nullopt;
        return *c;
    }

    // An int list argument: a constant list, a ListConstruct of constants, or (for reshape) of
    // aten::size(x, d) at position d of the same tensor, which becomes 0 ("copy the dim").
    std::optional<std::vector<int64_t>> ints(const Value* v, const Value* sized = nullptr) const {
        if (auto c = constant(v)) {
            if (c->isIntList()) return c->toIntVector();
            if (c->isInt()) return std::vector<int64_t>{c->toInt()};
            if (c->isList()) {  // a ListConstruct of constants reads as a generic list
                std::vector<int64_t> out;
                for (const c10::IValue& e : c->toListRef()) {
                    if (!e.isInt()) return std::nullopt;
                    out.push_back(e.toInt());
                }
                return out;
            }
            if (n_is_list(v)) return from_list_construct(v, sized);
            return std::nullopt;
        }
        return from_list_construct(v, sized);
    }

    static bool n_is_list(const Value* v) { return v->node()->kind() == c10::prim::ListConstruct; }

    std::optional<std::vector<int64_t>> from_list_construct(const Value* v, const Value* sized) const {
        const Node* n = v->node();
        if (n->kind() != c10::prim::ListConstruct) return std::nullopt;
        std::vector<int64_t> out;
        for (size_t i = 0; i < n->inputs().size(); ++i) {
            const Value* e = n->inputs()[i];
            if (auto c = constant(e); c && c->isInt()) {
                out.push_back(c->toInt());
                continue;
            }
            const Node* s = e->node();
            if (sized && s->kind() == c10::aten::size && s->inputs().size() == 2 && s->inputs()[0] == sized) {
                if (auto d = constant(s->inputs()[1]); d && d->isInt() && d->toInt() == int64_t(i)) {
                    out.push_back(0);
                    continue;
                }
            }
            return std::nullopt;
        }
        return out;
    }

    std::optional<double> number(const Value* v) const {
        auto c = constant(v);
        if (!c) return std::nullopt;
        if (c->isDouble()) return c->toDouble();
        if (c->isInt()) return double(c->toInt());
        if (c->isBool()) return c->toBool() ? 1.0 : 0.0;
        return std::nullopt;
    }

    bool is_none(const Value* v) const {
        auto c = constant(v);
        return c && c->isNone();
    }

    // A weight argument: a module attribute (with its path) or a constant tensor.
    std::optional<std::pair<at::Tensor, std::string>> weight(const Value* v) const {
        if (auto it = attrs.find(v); it != attrs.end() && it->second.first.isTensor())
            return std::make_pair(it->second.first.toTensor(), it->second.second);
        if (auto c = constant(v); c && c->isTensor()) return std::make_pair(c->toTensor(), std::string());
        return std::nullopt;
    }

    std::string unique_name(std::string base) {
        if (base.empty()) base = "op" + std::to_string(counter);
        std::string name = base;
        for (int k = 2; used_names.count(name); ++k) name = base + "#" + std::to_string(k);
        used_names.insert(name);
        return name;
    }

    static std::string strip(const std::string& p, const std::string& suffix) {
        if (p == suffix) return "";
        const std::string dotted = "." + suffix;
        if (p.size() > dotted.size() && p.compare(p.size() - dotted.size(), dotted.size(), dotted) == 0)
            return p.substr(0, p.size() - dotted.size());
        return "";
    }

    Status add_tensor(const std::string& name, const at::Tensor& t, const Node* n) {
        if (m.find(name)) return {};
        if (!t.is_floating_point())
            return err(path, ": ", where(n), ": tensor '", name, "' is ", std::string(t.dtype().name()),
                       ", not floating point");
        auto c = t.detach().to(torch::kFloat32).contiguous();
        std::vector<int64_t> shape(c.sizes().begin(), c.sizes().end());
        Tensor out = Tensor::zeros_f32(name, shape);
        std::memcpy(out.f32_mut(), c.data_ptr<float>(), size_t(c.numel()) * sizeof(float));
        m.tensors.push_back(std::move(out));
        return {};
    }

    Result<std::string> act(const Node* n, size_t i, const char* what) const {
        auto it = acts.find(n->inputs()[i]);
        if (it == acts.end()) return err(path, ": ", where(n), ": ", what, " is not a tensor computed from the input");
        return it->second;
    }

    void emit(Op op, const Node* n, int out_rank) {
        const std::string out = "v" + std::to_string(n->output()->unique());
        op.outputs = {out};
        acts[n->output()] = out;
        rank[out] = out_rank;
        m.graph.ops.push_back(std::move(op));
    }

    Status convert(const Node* n, std::set<std::string>& unsupported) {
        const auto k = n->kind();
        const std::string kind = where(n);
        auto need_ints = [&](size_t i, const char* what) -> Result<std::vector<int64_t>> {
            auto v = ints(n->inputs()[i]);
            if (!v) return err(path, ": ", kind, ": ", what, " is not a constant int list");
            return *v;
        };
        auto need_num = [&](size_t i, const char* what) -> Result<double> {
            auto v = number(n->inputs()[i]);
            if (!v) return err(path, ": ", kind, ": ", what, " is not a constant");
            return *v;
        };
        auto pair = [](const std::vector<int64_t>& v) {
            return v.size() == 1 ? std::vector<double>{double(v[0]), double(v[0])}
                                 : std::vector<double>{double(v[0]), double(v[1])};
        };
        ++counter;
        if (k == c10::aten::conv2d || k == c10::aten::_convolution) {
            auto x = act(n, 0, "the conv input");
            if (!x) return x.error();
            auto w = weight(n->inputs()[1]);
            if (!w) return err(path, ": ", kind, ": the weight is not a module parameter or constant");
            if (w->first.dim() != 4) return err(path, ": ", kind, ": weight is not 4-D");
            const bool conv = k == c10::aten::conv2d;
            if (!conv) {
                auto tr = number(n->inputs()[6]);
                if (!tr || *tr != 0) return err(path, ": ", kind, ": transposed convolution is not supported");
            }
            auto st = need_ints(3, "stride");
            if (!st) return st.error();
            auto dl = need_ints(5, "dilation");
            if (!dl) return dl.error();
            auto g = need_num(conv ? 6 : 8, "groups");
            if (!g) return g.error();
            Op op{OpType::Conv2d, unique_name(strip(w->second, "weight")), {x.value()}, {}, {}, {}};
            op.attrs["strides"] = pair(*st);
            op.attrs["dilations"] = pair(*dl);
            op.attrs["group"] = {*g};
            auto padc = constant(n->inputs()[4]);
            if (padc && padc->isString()) {
                const std::string s = padc->toStringRef();
                if (s != "same" && s != "valid") return err(path, ": ", kind, ": padding '", s, "'");
                op.attrs["auto_pad"] = {s == "same" ? 1.0 : 3.0};
                op.attrs["pads"] = {0, 0, 0, 0};
            } else {
                auto pd = need_ints(4, "padding");
                if (!pd) return pd.error();
                const auto p = pair(*pd);
                op.attrs["pads"] = {p[0], p[1], p[0], p[1]};
            }
            op.weights = {op.name + ".weight"};
            EDGE_TRY(add_tensor(op.name + ".weight", w->first, n));
            if (!is_none(n->inputs()[2])) {
                auto b = weight(n->inputs()[2]);
                if (!b) return err(path, ": ", kind, ": the bias is not a module parameter or constant");
                op.weights.push_back(op.name + ".bias");
                EDGE_TRY(add_tensor(op.name + ".bias", b->first, n));
            }
            emit(std::move(op), n, 4);
        } else if (k == c10::aten::batch_norm) {
            auto x = act(n, 0, "the batch_norm input");
            if (!x) return x.error();
            auto mean = weight(n->inputs()[3]), var = weight(n->inputs()[4]);
            if (!mean || !var) return err(path, ": ", kind, ": running statistics are not module buffers or constants");
            auto w = weight(n->inputs()[1]), b = weight(n->inputs()[2]);
            std::string base = w ? strip(w->second, "weight") : "";
            if (base.empty()) base = strip(mean->second, "running_mean");
            auto eps = need_num(7, "eps");
            if (!eps) return eps.error();
            Op op{OpType::BatchNorm, unique_name(base), {x.value()}, {}, {}, {}};
            op.attrs["epsilon"] = {*eps};
            const int64_t c = mean->first.numel();
            EDGE_TRY(add_tensor(op.name + ".scale", w ? w->first : torch::ones({c}), n));
            EDGE_TRY(add_tensor(op.name + ".bias", b ? b->first : torch::zeros({c}), n));
            EDGE_TRY(add_tensor(op.name + ".mean", mean->first, n));
            EDGE_TRY(add_tensor(op.name + ".var", var->first, n));
            op.weights = {op.name + ".scale", op.name + ".bias", op.name + ".mean", op.name + ".var"};
            emit(std::move(op), n, rank[x.value()]);
        } else if (k == c10::aten::relu || k == c10::aten::relu_) {
            auto x = act(n, 0, "the relu input");
            if (!x) return x.error();
            emit(Op{OpType::Relu, unique_name("relu" + std::to_string(counter)), {x.value()}, {}, {}, {}}, n,
                 rank[x.value()]);
        } else if (k == c10::aten::dropout || k == c10::aten::contiguous) {
            auto x = act(n, 0, "the input");
            if (!x) return x.error();
            acts[n->output()] = x.value();
        } else if (k == c10::aten::max_pool2d || k == c10::aten::avg_pool2d) {
            auto x = act(n, 0, "the pool input");
            if (!x) return x.error();
            const bool is_max = k == c10::aten::max_pool2d;
            auto ks = need_ints(1, "kernel_size");
            if (!ks) return ks.error();
            auto st = need_ints(2, "stride");
            if (!st) return st.error();
            auto pd = need_ints(3, "padding");
            if (!pd) return pd.error();
            if (st->empty()) *st = *ks;
            Op op{is_max ? OpType::MaxPool : OpType::AvgPool,
                  unique_name((is_max ? "maxpool" : "avgpool") + std::to_string(counter)),
                  {x.value()},
                  {},
                  {},
                  {}};
            op.attrs["kernel"] = pair(*ks);
            op.attrs["strides"] = pair(*st);
            const auto p = pair(*pd);
            op.attrs["pads"] = {p[0], p[1], p[0], p[1]};
            if (is_max) {
                auto dl = need_ints(4, "dilation");
                if (!dl) return dl.error();
                for (int64_t d : *dl)
                    if (d != 1) return err(path, ": ", kind, ": dilation ", d, " is not supported");
                auto ceil = need_num(5, "ceil_mode");
                if (!ceil) return ceil.error();
                op.attrs["ceil_mode"] = {*ceil};
            } else {
                auto ceil = need_num(4, "ceil_mode");
                if (!ceil) return ceil.error();
                auto cip = need_num(5, "count_include_pad");
                if (!cip) return cip.error();
                if (n->inputs().size() > 6 && !is_none(n->inputs()[6]))
                    return err(path, ": ", kind, ": divisor_override is not supported");
                op.attrs["ceil_mode"] = {*ceil};
                op.attrs["count_include_pad"] = {*cip};
            }
            emit(std::move(op), n, 4);
        } else if (k == c10::aten::adaptive_avg_pool2d) {
            auto x = act(n, 0, "the pool input");
            if (!x) return x.error();
            auto os = need_ints(1, "output_size");
            if (!os) return os.error();
            for (int64_t d : *os)
                if (d != 1) return err(path, ": ", kind, ": only output size 1x1 (global pooling) is supported");
            emit(Op{OpType::GlobalAvgPool, unique_name("gap" + std::to_string(counter)), {x.value()}, {}, {}, {}}, n,
                 4);
        } else if (k == c10::aten::mean) {
            auto x = act(n, 0, "the mean input");
            if (!x) return x.error();
            auto dims = n->inputs().size() >= 3 ? ints(n->inputs()[1]) : std::nullopt;
            auto keep = n->inputs().size() >= 3 ? number(n->inputs()[2]) : std::nullopt;
            std::set<int64_t> ds;
            if (dims)
                for (int64_t d : *dims) ds.insert(d < 0 ? d + 4 : d);
            if (rank[x.value()] != 4 || ds != std::set<int64_t>{2, 3} || !keep)
                return err(path, ": ", kind, ": only the mean over H and W of an NCHW tensor is supported");
            Op gap{OpType::GlobalAvgPool, unique_name("gap" + std::to_string(counter)), {x.value()}, {}, {}, {}};
            if (*keep != 0) {
                emit(std::move(gap), n, 4);
            } else {
                gap.outputs = {"v" + std::to_string(n->output()->unique()) + ".pool"};
                const std::string pooled = gap.outputs[0];
                m.graph.ops.push_back(std::move(gap));
                Op flat{OpType::Reshape, unique_name("flatten" + std::to_string(counter)), {pooled}, {}, {}, {}};
                flat.attrs["flatten_axis"] = {1};
                emit(std::move(flat), n, 2);
            }
        } else if (k == c10::aten::flatten) {
            auto x = act(n, 0, "the flatten input");
            if (!x) return x.error();
            auto s = need_num(1, "start_dim");
            if (!s) return s.error();
            auto e = need_num(2, "end_dim");
            if (!e) return e.error();
            if (*e != -1 && *e != rank[x.value()] - 1)
                return err(path, ": ", kind, ": only flattening to the last dimension is supported");
            Op op{OpType::Reshape, unique_name("flatten" + std::to_string(counter)), {x.value()}, {}, {}, {}};
            op.attrs["flatten_axis"] = {*s};
            emit(std::move(op), n, *s == 0 ? 1 : 2);
        } else if (k == c10::aten::reshape || k == c10::aten::view) {
            auto x = act(n, 0, "the reshape input");
            if (!x) return x.error();
            auto shape = ints(n->inputs()[1], n->inputs()[0]);
            if (!shape) return err(path, ": ", kind, ": the shape is neither constant nor x.size(d) at position d");
            Op op{OpType::Reshape, unique_name("reshape" + std::to_string(counter)), {x.value()}, {}, {}, {}};
            op.attrs["shape"] = std::vector<double>(shape->begin(), shape->end());
            emit(std::move(op), n, int(shape->size()));
        } else if (k == c10::aten::linear) {
            auto x = act(n, 0, "the linear input");
            if (!x) return x.error();
            auto w = weight(n->inputs()[1]);
            if (!w || w->first.dim() != 2) return err(path, ": ", kind, ": the weight is not a 2-D parameter");
            Op op{OpType::Linear, unique_name(strip(w->second, "weight")), {x.value()}, {}, {}, {}};
            op.weights = {op.name + ".weight"};
            EDGE_TRY(add_tensor(op.name + ".weight", w->first, n));
            if (!is_none(n->inputs()[2])) {
                auto b = weight(n->inputs()[2]);
                if (!b) return err(path, ": ", kind, ": the bias is not a module parameter or constant");
                op.weights.push_back(op.name + ".bias");
                EDGE_TRY(add_tensor(op.name + ".bias", b->first, n));
            }
            emit(std::move(op), n, 2);
        } else if (k == c10::aten::add || k == c10::aten::add_) {
            if (n->inputs().size() != 3) return err(path, ": ", kind, ": unexpected arguments");
            auto alpha = number(n->inputs()[2]);
            if (!alpha || *alpha != 1.0) return err(path, ": ", kind, ": only alpha = 1 is supported");
            auto a = acts.find(n->inputs()[0]), b = acts.find(n->inputs()[1]);
            if (a != acts.end() && b != acts.end()) {
                emit(Op{OpType::Add, unique_name("add" + std::to_string(counter)), {a->second, b->second}, {}, {}, {}},
                     n, rank[a->second]);
            } else {
                const Value* xv = a != acts.end() ? n->inputs()[0] : n->inputs()[1];
                const Value* cv = a != acts.end() ? n->inputs()[1] : n->inputs()[0];
                if (!acts.count(xv)) return err(path, ": ", kind, ": neither operand is computed from the input");
                auto c = weight(cv);
                if (!c) return err(path, ": ", kind, ": the other operand is a scalar, not a tensor");
                std::string base = strip(c->second, "constant");
                if (base.empty()) base = "add" + std::to_string(counter);
                Op op{OpType::Add, unique_name(base), {acts[xv]}, {}, {op_const(base)}, {}};
                EDGE_TRY(add_tensor(op.weights[0], c->first, n));
                emit(std::move(op), n, rank[acts[xv]]);
            }
        } else if (k == c10::aten::constant_pad_nd) {
            auto x = act(n, 0, "the pad input");
            if (!x) return x.error();
            auto pads = need_ints(1, "pad");
            if (!pads) return pads.error();
            auto value = need_num(2, "value");
            if (!value) return value.error();
            const int r = rank[x.value()];
            if (pads->size() % 2 || int(pads->size()) > 2 * r)
                return err(path, ": ", kind, ": ", pads->size(), " pads for rank ", r);
            std::vector<double> onnx(size_t(2 * r), 0.0);
            for (size_t i = 0; i < pads->size() / 2; ++i) {
                const size_t d = size_t(r) - 1 - i;
                onnx[d] = double((*pads)[2 * i]);
                onnx[d + size_t(r)] = double((*pads)[2 * i + 1]);
            }
            Op op{OpType::Pad, unique_name("pad" + std::to_string(counter)), {x.value()}, {}, {}, {}};
            op.attrs["pads"] = onnx;
            op.attrs["value"] = {*value};
            emit(std::move(op), n, r);
        } else if (k == c10::aten::softmax) {
            auto x = act(n, 0, "the softmax input");
            if (!x) return x.error();
            auto d = need_num(1, "dim");
            if (!d) return d.error();
            if (*d != -1 && *d != rank[x.value()] - 1)
                return err(path, ": ", kind, ": only the last axis is supported");
            emit(Op{OpType::Softmax, unique_name("softmax" + std::to_string(counter)), {x.value()}, {}, {}, {}}, n,
                 rank[x.value()]);
        } else {
            unsupported.insert(kind);
        }
        return {};
    }

    static std::string op_const(const std::string& base) { return base + ".const"; }

    Result<Model> run(const std::vector<int64_t>& input_shape) {
        std::shared_ptr<torch::jit::Graph> g;
        try {
            g = mod.get_method("forward").graph()->copy();
            torch::jit::Inline(*g);
        } catch (const std::exception& e) {
            return err(path, ": the module has no usable forward: ", first_line(e.what()));
        }
        if (g->inputs().size() != 2)
            return err(path, ": forward takes ", g->inputs().size() - 1, " inputs; expected one tensor");
        m.architecture = kCnnArchitecture;
        m.source_path = path;
        m.source_format = "torchscript";
        m.name = mod.type()->name() ? mod.type()->name()->name() : "torchscript";
        m.graph.inputs = {"input"};
        acts[g->inputs()[1]] = "input";
        rank["input"] = 4;
        set_cnn_input_shape(m, input_shape);
        std::set<std::string> unsupported;
        // Every unsupported op is listed up front, before any conversion error.
        const std::set<c10::Symbol> known = {
            c10::prim::Constant, c10::prim::ListConstruct, c10::prim::GetAttr,    c10::aten::size,
            c10::aten::conv2d,   c10::aten::_convolution,  c10::aten::batch_norm, c10::aten::relu,
            c10::aten::relu_,    c10::aten::max_pool2d,    c10::aten::avg_pool2d, c10::aten::adaptive_avg_pool2d,
            c10::aten::mean,     c10::aten::flatten,       c10::aten::reshape,    c10::aten::view,
            c10::aten::linear,   c10::aten::add,           c10::aten::add_,       c10::aten::constant_pad_nd,
            c10::aten::softmax,  c10::aten::dropout,       c10::aten::contiguous};
        for (const Node* n : g->nodes())
            if (!known.count(n->kind())) unsupported.insert(where(n));
        if (!unsupported.empty()) {
            std::string list;
            for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
            return err(path, ": unsupported TorchScript ops: ", list, " (supported: ", kSupported, ")");
        }
        try {
            for (const Node* n : g->nodes()) {
                const auto k = n->kind();
                if (k == c10::prim::Constant || k == c10::prim::ListConstruct) continue;
                if (k == c10::aten::size) continue;  // only used inside reshape shapes (checked there)
                if (k == c10::prim::GetAttr) {
                    const std::string name = n->s(c10::attr::name);
                    const Value* owner = n->inputs()[0];
                    c10::IValue obj;
                    std::string p;
                    if (owner == g->inputs()[0]) {
                        obj = mod._ivalue();
                    } else if (auto it = attrs.find(owner); it != attrs.end()) {
                        obj = it->second.first;
                        p = it->second.second;
                    } else {
                        return err(path, ": prim::GetAttr '", name, "' of a value that is not the module");
                    }
                    if (!obj.isObject())
                        return err(path, ": prim::GetAttr '", name, "' of a non-module attribute '", p, "'");
                    if (!p.empty()) p += '.';
                    p += name;
                    attrs[n->output()] = {obj.toObject()->getAttr(name), p};
                    continue;
                }
                EDGE_TRY(convert(n, unsupported));
            }
        } catch (const std::exception& e) {
            return err(path, ": cannot convert the TorchScript graph: ", first_line(e.what()));
        }
        if (!unsupported.empty()) {
            std::string list;
            for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
            return err(path, ": unsupported TorchScript ops: ", list, " (supported: ", kSupported, ")");
        }
        if (g->outputs().size() != 1 || !acts.count(g->outputs()[0]))
            return err(path, ": forward must return one tensor computed from the input");
        m.graph.outputs = {acts[g->outputs()[0]]};
        if (m.graph.ops.empty()) return err(path, ": forward computes nothing");
        m.metadata.emplace_back("cnn.nodes", count_nodes(m.graph).text());
        return std::move(m);
    }
};

// ---- export ---------------------------------------------------------------------------------

bool identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

std::string list(const std::vector<double>& v, size_t from, size_t n) {
    std::string s = "[";
    for (size_t i = from; i < from + n; ++i) s += (i > from ? ", " : "") + std::to_string(int64_t(v[i]));
    return s + "]";
}

std::string number(double v) {
    std::ostringstream o;
    o.precision(17);
    o << v;
    std::string s = o.str();
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
}

}  // namespace

Result<Model> load_torchscript_cnn(const std::string& path, const std::vector<int64_t>& input_shape) {
    torch::jit::Module mod;
    try {
        mod = torch::jit::load(path);
    } catch (const std::exception& e) {
        return err(path, ": not a loadable TorchScript module: ", first_line(e.what()));
    }
    mod.eval();
    std::vector<int64_t> shape = input_shape;
    if (shape.empty()) {
        if (!mod.hasattr("input_shape"))
            return err(path, ": the input shape is not given and the module has no 'input_shape' attribute");
        auto iv = mod.attr("input_shape");
        if (!iv.isIntList()) return err(path, ": the module's 'input_shape' is not a list of ints");
        shape = iv.toIntVector();
    }
    if (shape.size() != 4) return err(path, ": input shape [", shape_text(shape), "] is not NCHW");
    Importer imp{path, mod, {}, {}, {}, {}, {}, 0};
    return imp.run(shape);
}

Status save_torchscript_cnn(const Model& m, const std::string& path) {
    if (!is_cnn(m)) return err(m.name, ": not a CNN model");
    auto shape = cnn_input_shape(m);
    if (!shape) return shape.error();
    try {
        auto cu = std::make_shared<torch::jit::CompilationUnit>();
        torch::jit::Module root(c10::QualifiedName("__torch__.edgestudio.Cnn"), cu, true);
        std::map<std::string, torch::jit::Module> subs;  // dotted path -> module
        int made = 0;
        std::function<torch::jit::Module(const std::string&)> module_at =
            [&](const std::string& p) -> torch::jit::Module {
            if (p.empty()) return root;
            if (auto it = subs.find(p); it != subs.end()) return it->second;
            const size_t dot = p.rfind('.');
            torch::jit::Module parent = module_at(dot == std::string::npos ? "" : p.substr(0, dot));
            torch::jit::Module child(c10::QualifiedName("__torch__.edgestudio.M" + std::to_string(made++)), cu, true);
            parent.register_module(dot == std::string::npos ? p : p.substr(dot + 1), child);
            subs.emplace(p, child);
            return child;
        };
        auto access = [](const std::string& p) {
            std::string e = "self";
            size_t start = 0;
            while (start <= p.size()) {
                size_t dot = p.find('.', start);
                if (dot == std::string::npos) dot = p.size();
                const std::string seg = p.substr(start, dot - start);
                if (identifier(seg)) {
                    e += '.';
                    e += seg;
                } else {
                    e.insert(0, "getattr(");
                    e += ", \"";
                    e += seg;
                    e += "\")";
                }
                start = dot + 1;
            }
            return e;
        };
        auto tensor = [&](const std::string& name) {
            const Tensor* t = m.find(name);
            return torch::from_blob(const_cast<float*>(t->f32()), t->shape, torch::kFloat32).clone();
        };
        std::map<std::string, std::string> var;  // IR value -> local
        var[m.graph.inputs.at(0)] = "x";
        std::string body;
        int nv = 0;
        // The TorchScript expression of one op; registers its parameters and buffers under `self`.
        const auto op_expr = [&](const Op& op, const std::vector<std::string>& in,
                                 const std::string& self) -> Result<std::string> {
            std::string expr;
            auto symmetric = [&](const std::vector<double>& p) {
                return p.size() == 4 && p[0] == p[2] && p[1] == p[3];
            };
            switch (op.type) {
                case OpType::Conv2d: {
                    torch::jit::Module mod = module_at(op.name);
                    mod.register_parameter("weight", tensor(op.weights[0]), false);
                    if (op.weights.size() > 1) mod.register_parameter("bias", tensor(op.weights[1]), false);
                    auto pads = op_attr(op, "pads", {0, 0, 0, 0});
                    const int ap = int(op_attr1(op, "auto_pad", 0));
                    const auto st = op_attr(op, "strides", {1, 1}), dl = op_attr(op, "dilations", {1, 1});
                    const Tensor* w = m.find(op.weights[0]);
                    if (ap == 1 || ap == 2) {
                        const double sy = dl[0] * double(w->shape[2] - 1), sx = dl[1] * double(w->shape[3] - 1);
                        if (st[0] != 1 || st[1] != 1 || int64_t(sy) % 2 || int64_t(sx) % 2)
                            return err(m.name, ": conv '", op.name,
                                       "': SAME padding with stride or even kernel is not exported");
                        pads = {sy / 2, sx / 2, sy / 2, sx / 2};
                    } else if (ap == 3) {
                        pads = {0, 0, 0, 0};
                    }
                    std::string x = in[0];
                    if (!symmetric(pads)) {
                        x = "torch.constant_pad_nd(" + x + ", [" + std::to_string(int64_t(pads[1])) + ", " +
                            std::to_string(int64_t(pads[3])) + ", " + std::to_string(int64_t(pads[0])) + ", " +
                            std::to_string(int64_t(pads[2])) + "], 0.0)";
                        pads = {0, 0, 0, 0};
                    }
                    expr = "torch.conv2d(" + x + ", " + self + ".weight, " +
                           (op.weights.size() > 1 ? self + ".bias" : "None") + ", " + list(st, 0, 2) + ", " +
                           list(pads, 0, 2) + ", " + list(dl, 0, 2) + ", " +
                           std::to_string(int64_t(op_attr1(op, "group", 1))) + ")";
                    break;
                }
                case OpType::BatchNorm: {
                    torch::jit::Module mod = module_at(op.name);
                    mod.register_parameter("weight", tensor(op.weights[0]), false);
                    mod.register_parameter("bias", tensor(op.weights[1]), false);
                    mod.register_buffer("running_mean", tensor(op.weights[2]));
                    mod.register_buffer("running_var", tensor(op.weights[3]));
                    expr = "torch.batch_norm(" + in[0] + ", " + self + ".weight, " + self + ".bias, " + self +
                           ".running_mean, " + self + ".running_var, False, 0.1, " +
                           number(op_attr1(op, "epsilon", 1e-5)) + ", False)";
                    break;
                }
                case OpType::Relu: expr = "torch.relu(" + in[0] + ")"; break;
                case OpType::MaxPool:
                case OpType::AvgPool: {
                    const auto pads = op_attr(op, "pads", {0, 0, 0, 0});
                    if (int(op_attr1(op, "auto_pad", 0)) != 0 || !symmetric(pads))
                        return err(m.name, ": pool '", op.name, "': automatic or asymmetric padding is not exported");
                    const auto k = op_attr(op, "kernel", {1, 1}), st = op_attr(op, "strides", {1, 1});
                    const std::string ceil = op_attr1(op, "ceil_mode", 0) != 0 ? "True" : "False";
                    if (op.type == OpType::MaxPool)
                        expr = "torch.max_pool2d(" + in[0] + ", " + list(k, 0, 2) + ", " + list(st, 0, 2) + ", " +
                               list(pads, 0, 2) + ", [1, 1], " + ceil + ")";
                    else
                        expr = "torch.avg_pool2d(" + in[0] + ", " + list(k, 0, 2) + ", " + list(st, 0, 2) + ", " +
                               list(pads, 0, 2) + ", " + ceil + ", " +
                               (op_attr1(op, "count_include_pad", 0) != 0 ? "True" : "False") + ", None)";
                    break;
                }
                case OpType::GlobalAvgPool: expr = "torch.adaptive_avg_pool2d(" + in[0] + ", [1, 1])"; break;
                case OpType::Linear: {
                    torch::jit::Module mod = module_at(op.name);
                    mod.register_parameter("weight", tensor(op.weights[0]), false);
                    if (op.weights.size() > 1) mod.register_parameter("bias", tensor(op.weights[1]), false);
                    expr = "torch.linear(torch.flatten(" + in[0] + ", 1, -1), " + self + ".weight, " +
                           (op.weights.size() > 1 ? self + ".bias" : "None") + ")";
                    break;
                }
                case OpType::Add:
                    if (op.weights.empty()) {
                        expr = in[0] + " + " + in[1];
                    } else {
                        torch::jit::Module mod = module_at(op.name);
                        mod.register_buffer("constant", tensor(op.weights[0]));
                        expr = in[0] + " + " + self + ".constant";
                    }
                    break;
                case OpType::Reshape:
                    if (op.attrs.count("flatten_axis")) {
                        expr = "torch.flatten(" + in[0] + ", " +
                               std::to_string(int64_t(op_attr1(op, "flatten_axis", 1))) + ", -1)";
                    } else {
                        auto shape = op_attr(op, "shape");
                        // The runtime's batch rule: a fixed leading 1 follows the batch.
                        if (!shape.empty() && shape[0] == 1 &&
                            std::find(shape.begin(), shape.end(), -1.0) == shape.end())
                            shape[0] = -1;
                        std::string s = "[";
                        for (size_t i = 0; i < shape.size(); ++i)
                            s += (i ? ", " : "") + (shape[i] == 0 ? in[0] + ".size(" + std::to_string(i) + ")"
                                                                  : std::to_string(int64_t(shape[i])));
                        expr = "torch.reshape(" + in[0] + ", " + s + "])";
                    }
                    break;
                case OpType::Pad: {
                    const auto pads = op_attr(op, "pads");
                    const size_t r = pads.size() / 2;
                    std::string s = "[";
                    for (size_t i = 0; i < r; ++i) {
                        const size_t d = r - 1 - i;
                        s += (i ? ", " : "") + std::to_string(int64_t(pads[d])) + ", " +
                             std::to_string(int64_t(pads[d + r]));
                    }
                    expr = "torch.constant_pad_nd(" + in[0] + ", " + s + "], " + number(op_attr1(op, "value", 0)) + ")";
                    break;
                }
                case OpType::Softmax: expr = "torch.softmax(" + in[0] + ", -1)"; break;
                default: return err(m.name, ": op '", op.name, "' (", op_type_name(op.type), ") is not exported");
            }
            return expr;
        };
        for (const Op& op : m.graph.ops) {
            for (const std::string& w : op.weights) {
                const Tensor* t = m.find(w);
                if (!t || t->type != DType::F32 || !t->data)
                    return err(m.name, ": op '", op.name, "': tensor '", w, "' is missing or not F32");
            }
            if (!identifier(op.name.substr(0, op.name.find('.'))) && !op.weights.empty())
                return err(m.name, ": layer name '", op.name, "' cannot be a TorchScript attribute path");
            std::vector<std::string> in;
            for (const std::string& v : op.inputs) {
                if (!var.count(v)) return err(m.name, ": op '", op.name, "' reads '", v, "' before it is computed");
                in.push_back(var[v]);
            }
            const std::string self = access(op.name);
            const std::string out = "v" + std::to_string(nv++);
            auto expr = op_expr(op, in, self);
            if (!expr) return expr.error();
            body += "    " + out + " = " + *expr + "\n";
            var[op.outputs.at(0)] = out;
        }
        root.register_attribute("input_shape", c10::ListType::ofInts(), c10::IValue(shape.value()));
        root.define("def forward(self, x):\n" + body + "    return " + var.at(m.graph.outputs.at(0)) + "\n");
        root.save(path);
    } catch (const std::exception& e) {
        return err(path, ": cannot write the TorchScript module: ", first_line(e.what()));
    }
    return {};
}

}  // namespace edge::analysis
