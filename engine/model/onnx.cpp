// ONNX ModelProto -> the one IR (CNN graph): the graph builder over the protobuf reader of
// onnx_reader.h. Field numbers are those of onnx.proto (IR 3..9).
#include "engine/model/onnx.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "engine/core/mapped_file.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/onnx_pb.h"
#include "engine/model/onnx_reader.h"

namespace edge::model {

namespace {

using namespace model::onnx;

const std::set<std::string>& supported_ops() {
    static const std::set<std::string> ops = {"Conv",        "BatchNormalization",
                                              "Relu",        "MaxPool",
                                              "AveragePool", "GlobalAveragePool",
                                              "Gemm",        "MatMul",
                                              "Add",         "Reshape",
                                              "Flatten",     "Pad",
                                              "Softmax",     "Identity",
                                              "Dropout",     "Constant"};
    return ops;
}

// Builds the IR from the parsed graph.
class Importer {
public:
    Importer(GraphProto& g, Model& m, const std::string& origin, int64_t opset)
        : g_(g), m_(m), origin_(origin), opset_(opset), consts_(g.inits) {}

    Status run() {
        EDGE_TRY(check_supported());
        // Graph input: the first declared input that is not an initializer.
        for (const ValueInfo& v : g_.inputs) {
            if (consts_.count(v.name)) continue;
            if (!m_.graph.inputs.empty())
                return err(origin_, ": the graph has more than one input ('", m_.graph.inputs[0], "', '", v.name,
                           "'); CNN models take one image tensor");
            m_.graph.inputs.push_back(v.name);
            if (v.dims.size() != 4)
                return err(origin_, ": input '", v.name, "' has shape [", shape_text(v.dims),
                           "]; a CNN input must be NCHW (4 dimensions)");
            set_cnn_input_shape(m_, v.dims);
        }
        if (m_.graph.inputs.empty()) return err(origin_, ": the graph declares no input");
        for (const Node& n : g_.nodes) EDGE_TRY(import(n));
        for (const ValueInfo& v : g_.outputs) {
            const std::string name = resolve(v.name);
            if (consts_.count(name)) return err(origin_, ": graph output '", v.name, "' is a constant");
            m_.graph.outputs.push_back(name);
        }
        if (m_.graph.outputs.empty()) return err(origin_, ": the graph declares no output");
        return {};
    }

private:
    Status check_supported() {
        std::map<std::string, std::vector<std::string>> unsupported;
        for (const Node& n : g_.nodes) {
            const bool std_domain = n.domain.empty() || n.domain == "ai.onnx";
            if (!std_domain || !supported_ops().count(n.op_type))
                unsupported[std_domain ? n.op_type : n.domain + "." + n.op_type].push_back(n.name);
        }
        if (unsupported.empty()) return {};
        std::string list;
        for (const auto& [op, nodes] : unsupported) {
            list += (list.empty() ? "" : "; ") + op + " (";
            for (size_t i = 0; i < nodes.size() && i < 3; ++i) list += (i ? ", " : "") + nodes[i];
            if (nodes.size() > 3) list += ", +" + std::to_string(nodes.size() - 3) + " more";
            list += ")";
        }
        return err(origin_, ": unsupported ONNX ops: ", list,
                   " (supported: Conv, BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool, Gemm, "
                   "MatMul, Add, Reshape, Flatten, Pad, Softmax, Identity, Dropout, Constant)");
    }

    std::string resolve(const std::string& v) const {
        auto it = alias_.find(v);
        return it == alias_.end() ? v : it->second;
    }
    const Const* constant(const std::string& v) const {
        auto it = consts_.find(resolve(v));
        return it == consts_.end() ? nullptr : &it->second;
    }
    Status need_inputs(const Node& n, size_t lo, size_t hi) const {
        size_t count = n.inputs.size();
        while (count > 0 && n.inputs[count - 1].empty()) --count;  // trailing optional inputs
        if (count < lo || count > hi)
            return err(origin_, ": node '", n.name, "' (", n.op_type, ") has ", count, " inputs, expected ", lo,
                       lo == hi ? "" : " to " + std::to_string(hi));
        if (n.outputs.empty()) return err(origin_, ": node '", n.name, "' (", n.op_type, ") has no output");
        return {};
    }
    Status activation(const Node& n, size_t k) const {
        if (constant(n.inputs[k]))
            return err(origin_, ": node '", n.name, "' (", n.op_type, "): input ", k, " '", n.inputs[k],
                       "' is a constant; only the weight operands may be");
        return {};
    }
    Result<const Const*> weight(const Node& n, size_t k) const {
        const Const* c = k < n.inputs.size() && !n.inputs[k].empty() ? constant(n.inputs[k]) : nullptr;
        if (!c)
            return err(origin_, ": node '", n.name, "' (", n.op_type, "): input ", k, " must be an initializer (",
                       k < n.inputs.size() ? n.inputs[k] : std::string("missing"), ")");
        return c;
    }
    // Node n's weight `n.name + part` (part: ".weight", ".bias", ...), added to the model and to
    // op's weights; a tensor without elements (a zero dimension) is refused: no layer can use one.
    Status add_tensor(Op& op, const Node& n, const std::string& part, const std::vector<int64_t>& dims,
                      const float* data) {
        if (std::find(dims.begin(), dims.end(), int64_t(0)) != dims.end())
            return err(origin_, ": node '", n.name, "' (", n.op_type, "): its ", part.substr(1),
                       " has no elements (shape [", shape_text(dims), "])");
        Tensor t = Tensor::zeros_f32(n.name + part, dims.empty() ? std::vector<int64_t>{1} : dims);
        std::memcpy(t.f32_mut(), data, size_t(t.numel()) * sizeof(float));
        m_.tensors.push_back(std::move(t));
        op.weights.push_back(n.name + part);
        return {};
    }
    static std::vector<double> ints_of(const Attr* a, std::vector<double> fallback) {
        if (!a) return fallback;
        return std::vector<double>(a->ints.begin(), a->ints.end());
    }
    Status spatial_attrs(const Node& n, Op& op, bool kernel) {
        const Attr* ap = n.attr("auto_pad");
        double mode = 0;
        if (ap && ap->s != "NOTSET") {
            if (ap->s == "SAME_UPPER")
                mode = 1;
            else if (ap->s == "SAME_LOWER")
                mode = 2;
            else if (ap->s == "VALID")
                mode = 3;
            else
                return err(origin_, ": node '", n.name, "': unknown auto_pad '", ap->s, "'");
        }
        op.attrs["auto_pad"] = {mode};
        op.attrs["strides"] = ints_of(n.attr("strides"), {1, 1});
        op.attrs["pads"] = ints_of(n.attr("pads"), {0, 0, 0, 0});
        op.attrs["dilations"] = ints_of(n.attr("dilations"), {1, 1});
        if (kernel) {
            const Attr* k = n.attr("kernel_shape");
            if (!k) return err(origin_, ": node '", n.name, "' (", n.op_type, ") has no kernel_shape");
            op.attrs["kernel"] = ints_of(k, {});
        }
        for (const char* key : {"strides", "dilations", "kernel"}) {
            auto it = op.attrs.find(key);
            if (it != op.attrs.end() && it->second.size() != 2)
                return err(origin_, ": node '", n.name, "' (", n.op_type, "): ", key,
                           " must have 2 values (2-D images only)");
        }
        if (op.attrs["pads"].size() != 4)
            return err(origin_, ": node '", n.name, "' (", n.op_type, "): pads must have 4 values");
        // Values as well as counts: a stride, dilation or kernel of 0 would divide by zero later.
        for (const char* key : {"strides", "dilations", "kernel", "pads"})
            if (auto it = op.attrs.find(key); it != op.attrs.end())
                EDGE_TRY(check_window_attr(origin_ + ": node '" + n.name + "' (" + n.op_type + ")", key, it->second,
                                           it->second.size(), std::string_view(key) == "pads" ? 0 : 1));
        // ONNX pads are (top, left, bottom, right) for 2-D: begins then ends, as the IR keeps them.
        return {};
    }
    Op make(OpType t, const Node& n) {
        Op op{t, n.name, {resolve(n.inputs[0])}, {n.outputs[0]}, {}, {}};
        return op;
    }

    Status import(const Node& n) {
        const std::string& t = n.op_type;
        if (t == "Constant") {
            const Attr* v = n.attr("value");
            if (!v || !v->has_t) return err(origin_, ": Constant node '", n.name, "' has no tensor value");
            auto c = parse_tensor(v->t, v->t_size, origin_, nullptr);
            if (!c) return c.error();
            if (n.outputs.empty()) return err(origin_, ": Constant node '", n.name, "' has no output");
            consts_[n.outputs[0]] = std::move(c.value());
            return {};
        }
        if (t == "Identity" || t == "Dropout") {
            EDGE_TRY(need_inputs(n, 1, 3));
            if (const Const* c = constant(n.inputs[0]))
                consts_[n.outputs[0]] = *c;
            else
                alias_[n.outputs[0]] = resolve(n.inputs[0]);
            return {};
        }
        if (t == "Reshape" || t == "Flatten") return import_reshape(n);
        if (t == "Conv") return import_conv(n);
        if (t == "BatchNormalization") {
            EDGE_TRY(need_inputs(n, 5, 5));
            EDGE_TRY(activation(n, 0));
            Op op = make(OpType::BatchNorm, n);
            const char* parts[4] = {".scale", ".bias", ".mean", ".var"};
            int64_t channels = -1;
            for (size_t k = 1; k <= 4; ++k) {
                auto c = weight(n, k);
                if (!c) return c.error();
                const Const* w = c.value();
                if (w->dims.size() != 1 || (channels >= 0 && w->dims[0] != channels))
                    return err(origin_, ": node '", n.name, "' (BatchNormalization): input ", k, " has shape [",
                               shape_text(w->dims), "], expected one [C] vector");
                channels = w->dims[0];
                EDGE_TRY(add_tensor(op, n, parts[k - 1], w->dims, w->f.data()));
            }
            const Attr* eps = n.attr("epsilon");
            op.attrs["epsilon"] = {eps && eps->has_f ? double(eps->f) : 1e-5};
            m_.graph.ops.push_back(std::move(op));
            return {};
        }
        if (t == "Relu" || t == "GlobalAveragePool" || t == "Softmax") {
            EDGE_TRY(need_inputs(n, 1, 1));
            EDGE_TRY(activation(n, 0));
            const OpType ty = t == "Relu" ? OpType::Relu : t == "Softmax" ? OpType::Softmax : OpType::GlobalAvgPool;
            if (t == "Softmax") {
                const Attr* axis = n.attr("axis");
                // opset < 13 flattens from `axis` (default 1); the IR's softmax is over the last
                // axis, which agrees for the [N, classes] logits a classifier ends with.
                (void)axis;
            }
            m_.graph.ops.push_back(make(ty, n));
            return {};
        }
        if (t == "MaxPool" || t == "AveragePool") {
            EDGE_TRY(need_inputs(n, 1, 1));
            EDGE_TRY(activation(n, 0));
            if (n.outputs.size() > 1 && !n.outputs[1].empty())
                return err(origin_, ": node '", n.name, "' (MaxPool): the indices output is not supported");
            Op op = make(t == "MaxPool" ? OpType::MaxPool : OpType::AvgPool, n);
            EDGE_TRY(spatial_attrs(n, op, true));
            const Attr* ceil = n.attr("ceil_mode");
            op.attrs["ceil_mode"] = {ceil ? double(ceil->i) : 0};
            const Attr* cip = n.attr("count_include_pad");
            op.attrs["count_include_pad"] = {cip ? double(cip->i) : 0};
            if (t == "MaxPool" && op.attrs["dilations"] != std::vector<double>{1, 1})
                return err(origin_, ": node '", n.name, "' (MaxPool): dilated pooling is not supported");
            op.attrs.erase("dilations");
            m_.graph.ops.push_back(std::move(op));
            return {};
        }
        if (t == "Add") {
            EDGE_TRY(need_inputs(n, 2, 2));
            const Const* a = constant(n.inputs[0]);
            const Const* b = constant(n.inputs[1]);
            if (a && b) {
                if (a->dims != b->dims)
                    return err(origin_, ": node '", n.name, "' (Add) of two constants of different shapes");
                Const c = *a;
                for (size_t k = 0; k < c.f.size(); ++k) c.f[k] += b->f[k];
                c.integer = false;
                consts_[n.outputs[0]] = std::move(c);
                return {};
            }
            if (!a && !b) {
                Op op{OpType::Add, n.name, {resolve(n.inputs[0]), resolve(n.inputs[1])}, {n.outputs[0]}, {}, {}};
                m_.graph.ops.push_back(std::move(op));
                return {};
            }
            const Const* c = a ? a : b;
            Op op{OpType::Add, n.name, {resolve(n.inputs[a ? 1 : 0])}, {n.outputs[0]}, {}, {}};
            EDGE_TRY(add_tensor(op, n, ".const", c->dims, c->f.data()));
            m_.graph.ops.push_back(std::move(op));
            return {};
        }
        if (t == "MatMul") {
            EDGE_TRY(need_inputs(n, 2, 2));
            EDGE_TRY(activation(n, 0));
            auto b = weight(n, 1);
            if (!b) return b.error();
            const Const* w = b.value();
            if (w->dims.size() != 2)
                return err(origin_, ": node '", n.name, "' (MatMul): weight has shape [", shape_text(w->dims),
                           "], expected [K, N]");
            return add_linear(n, w->dims[0], w->dims[1], w->f.data(), /*transposed=*/false, 1.0f, nullptr, 0.f);
        }
        if (t == "Gemm") {
            EDGE_TRY(need_inputs(n, 2, 3));
            EDGE_TRY(activation(n, 0));
            const Attr* ta = n.attr("transA");
            if (ta && ta->i != 0) return err(origin_, ": node '", n.name, "' (Gemm): transA=1 is not supported");
            auto b = weight(n, 1);
            if (!b) return b.error();
            const Const* w = b.value();
            if (w->dims.size() != 2)
                return err(origin_, ": node '", n.name, "' (Gemm): B has shape [", shape_text(w->dims), "]");
            const Attr* tb = n.attr("transB");
            const bool trans = tb && tb->i != 0;
            const int64_t k = trans ? w->dims[1] : w->dims[0], out = trans ? w->dims[0] : w->dims[1];
            const Attr* alpha = n.attr("alpha");
            const Attr* beta = n.attr("beta");
            const Const* c = nullptr;
            if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
                auto cc = weight(n, 2);
                if (!cc) return cc.error();
                c = cc.value();
                if (c->numel() != out && c->numel() != 1)
                    return err(origin_, ": node '", n.name, "' (Gemm): C has shape [", shape_text(c->dims),
                               "]; only a bias broadcast over rows ([", out, "] or [1, ", out, "]) is supported");
            }
            return add_linear(n, k, out, w->f.data(), trans, alpha && alpha->has_f ? alpha->f : 1.0f, c,
                              beta && beta->has_f ? beta->f : 1.0f);
        }
        if (t == "Pad") {
            EDGE_TRY(need_inputs(n, 1, 3));
            EDGE_TRY(activation(n, 0));
            const Attr* mode = n.attr("mode");
            if (mode && mode->s != "constant")
                return err(origin_, ": node '", n.name, "' (Pad): mode '", mode->s,
                           "' is not supported (constant only)");
            Op op = make(OpType::Pad, n);
            std::vector<double> pads;
            double value = 0;
            if (opset_ < 11) {
                pads = ints_of(n.attr("pads"), {});
                const Attr* v = n.attr("value");
                if (v && v->has_f) value = v->f;
            } else {
                auto p = weight(n, 1);
                if (!p) return p.error();
                pads.assign(p.value()->f.begin(), p.value()->f.end());
                if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
                    auto v = weight(n, 2);
                    if (!v) return v.error();
                    if (!v.value()->f.empty()) value = v.value()->f[0];
                }
            }
            if (pads.empty() || pads.size() % 2)
                return err(origin_, ": node '", n.name, "' (Pad): pads must hold 2 values per axis");
            for (double p : pads)
                if (p < 0)
                    return err(origin_, ": node '", n.name, "' (Pad): negative pads (cropping) are not supported");
            op.attrs["pads"] = pads;
            op.attrs["value"] = {value};
            m_.graph.ops.push_back(std::move(op));
            return {};
        }
        return err(origin_, ": node '", n.name, "': op ", t, " is not supported");  // unreachable
    }

    Status import_reshape(const Node& n) {
        const bool flatten = n.op_type == "Flatten";
        EDGE_TRY(need_inputs(n, 1, flatten ? 1 : 2));
        std::vector<int64_t> shape;
        int64_t axis = 1;
        if (flatten) {
            const Attr* a = n.attr("axis");
            if (a) axis = a->i;
            if (axis < 0) return err(origin_, ": node '", n.name, "' (Flatten): negative axis is not supported");
        } else if (n.inputs.size() >= 2 && !n.inputs[1].empty()) {
            auto s = weight(n, 1);
            if (!s) return s.error();
            shape = s.value()->i;
            if (!s.value()->integer) return err(origin_, ": node '", n.name, "' (Reshape): shape must be int64");
        } else {
            const Attr* a = n.attr("shape");
            if (!a) return err(origin_, ": node '", n.name, "' (Reshape) has no shape");
            shape = a->ints;
        }
        if (const Const* c = constant(n.inputs[0])) {  // fold: a reshaped weight
            Const out = *c;
            std::vector<int64_t> dims;
            if (flatten) {
                int64_t lo = 1, hi = 1;
                for (size_t k = 0; k < c->dims.size(); ++k) (int64_t(k) < axis ? lo : hi) *= c->dims[k];
                dims = {lo, hi};
            } else {
                int64_t known = 1, infer = -1;
                for (size_t k = 0; k < shape.size(); ++k) {
                    int64_t d = shape[k];
                    if (d == 0) {
                        if (k >= c->dims.size()) return err(origin_, ": node '", n.name, "' (Reshape): bad 0 in shape");
                        d = c->dims[k];
                    }
                    if (d == -1) {
                        if (infer >= 0) return err(origin_, ": node '", n.name, "' (Reshape): two -1 in shape");
                        infer = int64_t(k);
                        dims.push_back(1);
                        continue;
                    }
                    if (d < 0) return err(origin_, ": node '", n.name, "' (Reshape): bad dimension ", d);
                    known *= d;
                    dims.push_back(d);
                }
                if (infer >= 0) {
                    if (known == 0 || c->numel() % known)
                        return err(origin_, ": node '", n.name, "' (Reshape): cannot infer -1");
                    dims[size_t(infer)] = c->numel() / known;
                }
            }
            out.dims = dims;
            if (out.numel() != c->numel())
                return err(origin_, ": node '", n.name, "' (Reshape): shape [", shape_text(dims), "] does not hold ",
                           c->numel(), " values");
            consts_[n.outputs[0]] = std::move(out);
            return {};
        }
        Op op = make(OpType::Reshape, n);
        if (flatten)
            op.attrs["flatten_axis"] = {double(axis)};
        else
            op.attrs["shape"] = std::vector<double>(shape.begin(), shape.end());
        m_.graph.ops.push_back(std::move(op));
        return {};
    }

    Status import_conv(const Node& n) {
        EDGE_TRY(need_inputs(n, 2, 3));
        EDGE_TRY(activation(n, 0));
        auto w = weight(n, 1);
        if (!w) return w.error();
        const Const* wc = w.value();
        if (wc->dims.size() != 4)
            return err(origin_, ": node '", n.name, "' (Conv): weight has shape [", shape_text(wc->dims),
                       "], expected [OC, IC/group, KH, KW] (2-D convolution only)");
        Op op = make(OpType::Conv2d, n);
        EDGE_TRY(spatial_attrs(n, op, false));
        const Attr* k = n.attr("kernel_shape");
        if (k && (k->ints.size() != 2 || k->ints[0] != wc->dims[2] || k->ints[1] != wc->dims[3]))
            return err(origin_, ": node '", n.name, "' (Conv): kernel_shape disagrees with the weight's shape [",
                       shape_text(wc->dims), "]");
        const Attr* group = n.attr("group");
        const int64_t g = group ? group->i : 1;
        if (g < 1 || wc->dims[0] % g)
            return err(origin_, ": node '", n.name, "' (Conv): group ", g, " does not divide ", wc->dims[0],
                       " output channels");
        op.attrs["group"] = {double(g)};
        EDGE_TRY(add_tensor(op, n, ".weight", wc->dims, wc->f.data()));
        if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
            auto b = weight(n, 2);
            if (!b) return b.error();
            if (b.value()->numel() != wc->dims[0])
                return err(origin_, ": node '", n.name, "' (Conv): bias has ", b.value()->numel(), " values for ",
                           wc->dims[0], " output channels");
            EDGE_TRY(add_tensor(op, n, ".bias", {wc->dims[0]}, b.value()->f.data()));
        }
        m_.graph.ops.push_back(std::move(op));
        return {};
    }

    Status add_linear(const Node& n, int64_t k, int64_t out, const float* w, bool transposed, float alpha,
                      const Const* c, float beta) {
        // The IR's linear weight is [out, K] (y = x W^T + b).
        std::vector<float> wt(size_t(out * k));
        for (int64_t o = 0; o < out; ++o)
            for (int64_t i = 0; i < k; ++i)
                wt[size_t(o * k + i)] = alpha * (transposed ? w[o * k + i] : w[i * out + o]);
        Op op = make(OpType::Linear, n);
        EDGE_TRY(add_tensor(op, n, ".weight", {out, k}, wt.data()));
        if (c) {
            std::vector<float> b(static_cast<size_t>(out));
            for (int64_t o = 0; o < out; ++o) b[size_t(o)] = beta * c->f[c->f.size() == 1 ? 0 : size_t(o)];
            EDGE_TRY(add_tensor(op, n, ".bias", {out}, b.data()));
        }
        m_.graph.ops.push_back(std::move(op));
        return {};
    }

    GraphProto& g_;
    Model& m_;
    std::string origin_;
    int64_t opset_;
    std::map<std::string, Const> consts_;
    std::map<std::string, std::string> alias_;
};

}  // namespace

Result<Model> parse_onnx_model(const uint8_t* data, size_t size, const std::string& origin) {
    pb::Reader r(data, size);
    pb::Field f;
    int64_t ir_version = -1, opset = -1;
    std::string producer;
    const uint8_t* graph = nullptr;
    size_t graph_size = 0;
    while (r.next(f)) {
        if (f.number == 1 && f.wire == 0)
            ir_version = int64_t(f.value);
        else if (f.number == 2 && f.wire == 2)
            producer = std::string(f.str());
        else if (f.number == 7 && f.wire == 2) {
            graph = f.data;
            graph_size = f.size;
        } else if (f.number == 8 && f.wire == 2) {
            pb::Reader o(f.data, f.size);
            pb::Field of;
            std::string domain;
            int64_t version = -1;
            while (o.next(of)) {
                if (of.number == 1 && of.wire == 2) domain = std::string(of.str());
                if (of.number == 2 && of.wire == 0) version = int64_t(of.value);
            }
            if (domain.empty() || domain == "ai.onnx") opset = version;
        }
    }
    if (r.failed()) return err(bad(origin, "model", r.why()));
    if (ir_version < 1 || !graph)
        return err(origin, ": not an ONNX model (no ir_version or no graph in the protobuf ModelProto)");
    auto g = parse_graph(graph, graph_size, origin);
    if (!g) return g.error();
    Model m;
    m.architecture = kCnnArchitecture;
    m.source_path = origin;
    m.source_format = "onnx";
    m.name = origin.substr(origin.find_last_of('/') == std::string::npos ? 0 : origin.find_last_of('/') + 1);
    m.metadata.emplace_back("onnx.ir_version", std::to_string(ir_version));
    m.metadata.emplace_back("onnx.opset", std::to_string(opset));
    if (!producer.empty()) m.metadata.emplace_back("onnx.producer", producer);
    Importer imp(g.value(), m, origin, opset < 0 ? 13 : opset);
    EDGE_TRY(imp.run());
    return m;
}

Result<Model> load_onnx_model(const std::string& path, Progress* progress) {
    auto f = MappedFile::open(path);
    if (!f) return f.error();
    if (progress) progress->report(0.0, "parsing ONNX");
    auto m = parse_onnx_model(f.value()->data(), f.value()->size(), path);
    if (progress) progress->report(1.0, "parsing ONNX");
    return m;
}

}  // namespace edge::model
