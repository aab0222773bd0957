// CNN helpers over the one IR and the ResNet-20 (CIFAR-10) graph builder.
#include "engine/model/cnn_ir.h"

#include <cstring>

#include "engine/model/safetensors.h"

namespace edge::model {

bool is_cnn(const Model& m) { return m.architecture == kCnnArchitecture; }

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
    return s;
}

void set_cnn_input_shape(Model& m, const std::vector<int64_t>& shape) {
    for (auto& [k, v] : m.metadata)
        if (k == kCnnInputShapeKey) {
            v = shape_text(shape);
            return;
        }
    m.metadata.emplace_back(kCnnInputShapeKey, shape_text(shape));
}

Result<std::vector<int64_t>> cnn_input_shape(const Model& m) {
    for (const auto& [k, v] : m.metadata) {
        if (k != kCnnInputShapeKey) continue;
        std::vector<int64_t> shape;
        size_t pos = 0;
        while (pos <= v.size()) {
            size_t next = v.find('x', pos);
            if (next == std::string::npos) next = v.size();
            const std::string piece = v.substr(pos, next - pos);
            if (piece.empty() || piece.find_first_not_of("0123456789") != std::string::npos)
                return err(m.source_path, ": CNN input shape '", v, "' is not of the form 1x3x32x32");
            shape.push_back(std::stoll(piece));
            pos = next + 1;
        }
        return shape;
    }
    return err(m.source_path, ": the model declares no CNN input shape");
}

std::vector<double> op_attr(const Op& op, const std::string& key, const std::vector<double>& fallback) {
    auto it = op.attrs.find(key);
    return it == op.attrs.end() ? fallback : it->second;
}

double op_attr1(const Op& op, const std::string& key, double fallback) {
    auto it = op.attrs.find(key);
    return it == op.attrs.end() || it->second.empty() ? fallback : it->second[0];
}

NodeCounts count_nodes(const Graph& g) {
    NodeCounts c;
    for (const Op& op : g.ops) {
        ++c.total;
        const std::string t = op_type_name(op.type);
        bool found = false;
        for (auto& [name, n] : c.by_type)
            if (name == t) {
                ++n;
                found = true;
            }
        if (!found) c.by_type.emplace_back(t, 1);
    }
    return c;
}

std::string NodeCounts::text() const {
    std::string s = std::to_string(total) + " nodes:";
    for (size_t i = 0; i < by_type.size(); ++i)
        s += (i ? ", " : " ") + by_type[i].first + " " + std::to_string(by_type[i].second);
    return s;
}

namespace {

struct ResNetBuilder {
    const SafetensorsFile& st;
    Model& m;
    int counter = 0;

    std::string fresh(const std::string& base) { return base + ".out" + std::to_string(counter++); }

    Status copy(const std::string& src, const std::string& dst, const std::vector<int64_t>& want) {
        const SafetensorsEntry* e = st.find(src);
        if (!e) return err(st.origin, ": tensor '", src, "' is missing (ResNet-20 needs it)");
        if (e->shape != want)
            return err(st.origin, ": tensor '", src, "' has shape [", shape_text(e->shape), "], expected [",
                       shape_text(want), "]");
        auto t = st.to_f32(*e, dst);
        if (!t) return t.error();
        // Own the data: the graph is edited in place by transforms (BN folding).
        Tensor owned = Tensor::zeros_f32(dst, t->shape);
        std::memcpy(owned.f32_mut(), t->f32(), size_t(t->numel()) * sizeof(float));
        owned.source_type = t->source_type;
        m.tensors.push_back(std::move(owned));
        return {};
    }

    Result<std::string> conv_bn(const std::string& prefix, const std::string& conv, const std::string& bn,
                                const std::string& x, int64_t ic, int64_t oc, int stride, bool relu) {
        const std::string cname = prefix + conv, bname = prefix + bn;
        EDGE_TRY(copy(cname + ".weight", cname + ".weight", {oc, ic, 3, 3}));
        Op c{OpType::Conv2d, cname, {x}, {fresh(cname)}, {cname + ".weight"}, {}};
        c.attrs["strides"] = {double(stride), double(stride)};
        c.attrs["pads"] = {1, 1, 1, 1};
        c.attrs["dilations"] = {1, 1};
        c.attrs["group"] = {1};
        const std::string y = c.outputs[0];
        m.graph.ops.push_back(std::move(c));
        EDGE_TRY(copy(bname + ".weight", bname + ".scale", {oc}));
        EDGE_TRY(copy(bname + ".bias", bname + ".bias", {oc}));
        EDGE_TRY(copy(bname + ".running_mean", bname + ".mean", {oc}));
        EDGE_TRY(copy(bname + ".running_var", bname + ".var", {oc}));
        Op b{OpType::BatchNorm,
             bname,
             {y},
             {fresh(bname)},
             {bname + ".scale", bname + ".bias", bname + ".mean", bname + ".var"},
             {}};
        b.attrs["epsilon"] = {1e-5};
        std::string z = b.outputs[0];
        m.graph.ops.push_back(std::move(b));
        if (relu) {
            Op r{OpType::Relu, prefix + conv + ".relu", {z}, {fresh(prefix + conv + ".relu")}, {}, {}};
            z = r.outputs[0];
            m.graph.ops.push_back(std::move(r));
        }
        return z;
    }
};

}  // namespace

Result<Model> build_resnet20_cifar(const std::string& path) {
    auto st = open_safetensors(path);
    if (!st) return st.error();
    Model m;
    m.architecture = kCnnArchitecture;
    m.name = "resnet20-cifar10";
    m.source_path = path;
    m.source_format = "safetensors";
    m.graph.inputs = {"input"};
    set_cnn_input_shape(m, {1, 3, 32, 32});
    ResNetBuilder b{st.value(), m};

    auto x = b.conv_bn("", "conv1", "bn1", "input", 3, 16, 1, true);
    if (!x) return x.error();
    std::string cur = x.value();
    int64_t in_planes = 16;
    const int64_t planes_of[3] = {16, 32, 64};
    for (int stage = 0; stage < 3; ++stage) {
        const int64_t planes = planes_of[stage];
        for (int blk = 0; blk < 3; ++blk) {
            const int stride = (stage > 0 && blk == 0) ? 2 : 1;
            const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(blk) + ".";
            auto h = b.conv_bn(prefix, "conv1", "bn1", cur, in_planes, planes, stride, true);
            if (!h) return h.error();
            auto h2 = b.conv_bn(prefix, "conv2", "bn2", h.value(), planes, planes, 1, false);
            if (!h2) return h2.error();
            std::string shortcut = cur;
            if (stride != 1 || in_planes != planes) {
                // Option A: x[:, :, ::2, ::2] then zero channels, planes/4 on each side.
                Op sub{OpType::MaxPool, prefix + "shortcut.subsample", {cur}, {b.fresh(prefix + "shortcut")}, {}, {}};
                sub.attrs["kernel"] = {1, 1};
                sub.attrs["strides"] = {2, 2};
                sub.attrs["pads"] = {0, 0, 0, 0};
                const std::string s1 = sub.outputs[0];
                m.graph.ops.push_back(std::move(sub));
                Op pad{OpType::Pad, prefix + "shortcut.pad", {s1}, {b.fresh(prefix + "shortcut")}, {}, {}};
                const int64_t pad_channels = planes / 4;  // whole channels of zeros on each side
                const double p = pad_channels;
                pad.attrs["pads"] = {0, p, 0, 0, 0, p, 0, 0};
                pad.attrs["value"] = {0};
                shortcut = pad.outputs[0];
                m.graph.ops.push_back(std::move(pad));
            }
            Op add{OpType::Add, prefix + "add", {h2.value(), shortcut}, {b.fresh(prefix + "add")}, {}, {}};
            const std::string a = add.outputs[0];
            m.graph.ops.push_back(std::move(add));
            Op r{OpType::Relu, prefix + "relu", {a}, {b.fresh(prefix + "relu")}, {}, {}};
            cur = r.outputs[0];
            m.graph.ops.push_back(std::move(r));
            in_planes = planes;
        }
    }
    Op gap{OpType::GlobalAvgPool, "avgpool", {cur}, {"avgpool.out"}, {}, {}};
    m.graph.ops.push_back(std::move(gap));
    EDGE_TRY(b.copy("linear.weight", "linear.weight", {10, 64}));
    EDGE_TRY(b.copy("linear.bias", "linear.bias", {10}));
    Op fc{OpType::Linear, "linear", {"avgpool.out"}, {"logits"}, {"linear.weight", "linear.bias"}, {}};
    m.graph.ops.push_back(std::move(fc));
    m.graph.outputs = {"logits"};
    m.metadata.emplace_back("cnn.classes", "10 (CIFAR-10)");
    m.metadata.emplace_back("cnn.normalisation", "mean (0.485,0.456,0.406), std (0.229,0.224,0.225)");
    return m;
}

Status check_window_attr(const std::string& where, const char* attr, const std::vector<double>& v, size_t count,
                         double lo) {
    constexpr double kMax = 1 << 20;
    if (v.size() != count) return err(where, ": ", attr, " must have ", count, " values");
    for (double x : v)
        if (!(x >= lo && x <= kMax) || x != double(int64_t(x)))
            return err(where, ": ", attr, " value ", x, " is out of range (not an integer in [", lo, ", ", kMax, "])");
    return {};
}

}  // namespace edge::model
