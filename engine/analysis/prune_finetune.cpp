// LibTorch half of prune_finetune.h: a differentiable CNN forward over the IR, its trainer and
// gradients. (The pruning modes, the digits fixture and the runtime accuracy are in
// prune_modes.cpp, which has no torch include.)
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <numeric>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>
#include <set>

#include "engine/analysis/prune_finetune.h"
#include "engine/model/cnn_ir.h"

namespace edge::analysis {

namespace {

namespace F = torch::nn::functional;

std::string origin(const Model& m) { return m.source_path.empty() ? m.name : m.source_path; }

struct TorchCnn {
    std::map<std::string, torch::Tensor> tensors;
    std::vector<torch::Tensor> trainable;
};

Result<TorchCnn> build(const Model& m, bool grad) {
    if (!is_cnn(m)) return err(origin(m), ": not a CNN model");
    std::set<std::string> buffers;  // BatchNorm running statistics
    for (const Op& op : m.graph.ops)
        if (op.type == OpType::BatchNorm && op.weights.size() == 4) buffers.insert({op.weights[2], op.weights[3]});
    TorchCnn t;
    for (const Tensor& x : m.tensors) {
        if (x.type != DType::F32 || !x.data)
            return err(origin(m), ": tensor '", x.name, "' is ", dtype_name(x.type), "; training needs F32");
        torch::Tensor v = torch::from_blob(const_cast<float*>(x.f32()), x.shape, torch::kFloat32).clone();
        if (grad && !buffers.count(x.name)) {
            v.set_requires_grad(true);
            t.trainable.push_back(v);
        }
        t.tensors[x.name] = v;
    }
    return t;
}

// Explicit pads (top, left, bottom, right) of a conv or pool, SAME auto-padding resolved for the
// input size.
std::array<int64_t, 4> pads_of(const Op& op, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                               int64_t dh, int64_t dw) {
    const int autopad = int(op_attr1(op, "auto_pad", 0));
    if (autopad == 1 || autopad == 2) {
        auto same = [&](int64_t in, int64_t k, int64_t s, int64_t d, bool upper) {
            const int64_t out = (in + s - 1) / s;
            const int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
            const int64_t small = total / 2;
            return upper ? std::make_pair(small, total - small) : std::make_pair(total - small, small);
        };
        auto [t, b] = same(h, kh, sh, dh, autopad == 1);
        auto [l, r] = same(w, kw, sw, dw, autopad == 1);
        return {t, l, b, r};
    }
    if (autopad == 3) return {0, 0, 0, 0};
    const auto p = op_attr(op, "pads", {0, 0, 0, 0});
    if (p.size() != 4) return {0, 0, 0, 0};
    return {int64_t(p[0]), int64_t(p[1]), int64_t(p[2]), int64_t(p[3])};
}

Result<torch::Tensor> forward(const Model& m, TorchCnn& t, const torch::Tensor& input, bool training) {
    std::map<std::string, torch::Tensor> v;
    v[m.graph.inputs.at(0)] = input;
    auto get = [&](const Op& op, size_t i) -> Result<torch::Tensor> {
        if (i >= op.inputs.size()) return err(origin(m), ": op '", op.name, "' lacks input ", i);
        auto it = v.find(op.inputs[i]);
        if (it == v.end()) return err(origin(m), ": op '", op.name, "' reads '", op.inputs[i], "', which nothing produced");
        return it->second;
    };
    auto w = [&](const Op& op, size_t i) -> torch::Tensor {
        return i < op.weights.size() ? t.tensors.at(op.weights[i]) : torch::Tensor();
    };
    for (const Op& op : m.graph.ops) {
        auto xr = get(op, 0);
        if (!xr) return xr.error();
        torch::Tensor x = xr.value(), y;
        switch (op.type) {
            case OpType::Conv2d: {
                const torch::Tensor W = w(op, 0);
                const auto st = op_attr(op, "strides", {1, 1}), dl = op_attr(op, "dilations", {1, 1});
                const int64_t sh = int64_t(st[0]), sw = int64_t(st[1]), dh = int64_t(dl[0]), dw = int64_t(dl[1]);
                auto p = pads_of(op, x.size(2), x.size(3), W.size(2), W.size(3), sh, sw, dh, dw);
                if (p[0] != p[2] || p[1] != p[3]) {
                    x = F::pad(x, F::PadFuncOptions({p[1], p[3], p[0], p[2]}));
                    p = {0, 0, 0, 0};
                }
                y = torch::conv2d(x, W, op.weights.size() > 1 ? w(op, 1) : torch::Tensor(), {sh, sw}, {p[0], p[1]},
                                  {dh, dw}, int64_t(op_attr1(op, "group", 1)));
                break;
            }
            case OpType::BatchNorm:
                y = torch::batch_norm(x, w(op, 0), w(op, 1), w(op, 2), w(op, 3), training, 0.1,
                                      op_attr1(op, "epsilon", 1e-5), false);
                break;
            case OpType::Relu:
                y = torch::relu(x);
                break;
            case OpType::MaxPool:
            case OpType::AvgPool: {
                const auto k = op_attr(op, "kernel", {1, 1}), st = op_attr(op, "strides", {1, 1});
                auto p = pads_of(op, x.size(2), x.size(3), int64_t(k[0]), int64_t(k[1]), int64_t(st[0]), int64_t(st[1]), 1, 1);
                const bool ceil = op_attr1(op, "ceil_mode", 0) != 0;
                if (p[0] != p[2] || p[1] != p[3]) {
                    const double fill = op.type == OpType::MaxPool ? -std::numeric_limits<double>::infinity() : 0.0;
                    x = F::pad(x, F::PadFuncOptions({p[1], p[3], p[0], p[2]}).value(fill));
                    p = {0, 0, 0, 0};
                }
                if (op.type == OpType::MaxPool)
                    y = torch::max_pool2d(x, {int64_t(k[0]), int64_t(k[1])}, {int64_t(st[0]), int64_t(st[1])}, {p[0], p[1]},
                                          {1, 1}, ceil);
                else
                    y = torch::avg_pool2d(x, {int64_t(k[0]), int64_t(k[1])}, {int64_t(st[0]), int64_t(st[1])}, {p[0], p[1]},
                                          ceil, op_attr1(op, "count_include_pad", 0) != 0);
                break;
            }
            case OpType::GlobalAvgPool:
                y = x.mean({2, 3}, true);
                break;
            case OpType::Linear:
                y = torch::linear(x.flatten(1), w(op, 0), op.weights.size() > 1 ? w(op, 1) : torch::Tensor());
                break;
            case OpType::Add:
                if (op.inputs.size() == 2) {
                    auto b = get(op, 1);
                    if (!b) return b.error();
                    y = x + b.value();
                } else {
                    y = x + w(op, 0);
                }
                break;
            case OpType::Reshape:
                y = x.flatten(1);  // the flattens CNN graphs use ([N, C*H*W])
                if (!op.attrs.count("flatten_axis")) {
                    const auto s = op_attr(op, "shape");
                    if (s.size() != 2) return err(origin(m), ": reshape '", op.name, "' to rank ", s.size(), " is not supported in training");
                }
                break;
            case OpType::Pad: {
                const auto p = op_attr(op, "pads");
                const int64_t r = int64_t(p.size() / 2);
                std::vector<int64_t> tp;
                for (int64_t d = r - 1; d >= 0; --d) tp.push_back(int64_t(p[size_t(d)])), tp.push_back(int64_t(p[size_t(d + r)]));
                y = F::pad(x, F::PadFuncOptions(tp).value(op_attr1(op, "value", 0)));
                break;
            }
            case OpType::Softmax:
                y = torch::softmax(x, -1);
                break;
            default:
                return err(origin(m), ": op '", op.name, "' (", op_type_name(op.type), ") is not supported in CNN training");
        }
        v[op.outputs.at(0)] = y;
    }
    auto it = v.find(m.graph.outputs.at(0));
    if (it == v.end()) return err(origin(m), ": the graph output '", m.graph.outputs[0], "' is never produced");
    return it->second;
}

torch::Tensor images(const ImageSet& d, const std::vector<int64_t>& idx) {
    const int64_t per = d.shape[0] * d.shape[1] * d.shape[2];
    torch::Tensor x = torch::empty({int64_t(idx.size()), d.shape[0], d.shape[1], d.shape[2]}, torch::kFloat32);
    float* dst = x.data_ptr<float>();
    for (size_t i = 0; i < idx.size(); ++i)
        std::memcpy(dst + int64_t(i) * per, d.pixels.data() + idx[i] * per, size_t(per) * sizeof(float));
    return x;
}

torch::Tensor labels(const ImageSet& d, const std::vector<int64_t>& idx) {
    torch::Tensor y = torch::empty({int64_t(idx.size())}, torch::kInt64);
    for (size_t i = 0; i < idx.size(); ++i) y[int64_t(i)] = int64_t(d.labels[size_t(idx[i])]);
    return y;
}

Status check_data(const Model& m, const ImageSet& d) {
    if (d.count() == 0) return err("no images to train on");
    if (d.shape.size() != 3 || int64_t(d.pixels.size()) != d.count() * d.shape[0] * d.shape[1] * d.shape[2])
        return err("image set: ", d.pixels.size(), " pixels for ", d.count(), " images of ", shape_text(d.shape));
    auto in = cnn_input_shape(m);
    if (!in) return in.error();
    if (in->size() != 4 || (*in)[1] != d.shape[0] || (*in)[2] != d.shape[1] || (*in)[3] != d.shape[2])
        return err(origin(m), ": the model takes ", shape_text(in.value()), "; the images are ", shape_text(d.shape));
    return {};
}

}  // namespace

Status train_cnn(Model& m, const ImageSet& data, const CnnTrainOptions& o, const WeightMasks* masks, Progress* progress,
                 CnnTrainReport* report) {
    EDGE_TRY(check_data(m, data));
    if (o.steps <= 0 || o.batch <= 0) return err("CNN training needs positive steps and batch size");
    if (o.threads > 0) torch::set_num_threads(o.threads);
    torch::manual_seed(o.seed);
    auto built = build(m, true);
    if (!built) return built.error();
    TorchCnn& t = built.value();
    std::vector<std::pair<torch::Tensor, torch::Tensor>> masked;
    if (masks)
        for (const auto& [name, mk] : *masks) {
            auto it = t.tensors.find(name);
            if (it == t.tensors.end()) return err(origin(m), ": training mask for '", name, "', which the model lacks");
            if (int64_t(mk.size()) != it->second.numel())
                return err(origin(m), ": training mask of '", name, "' has ", mk.size(), " values; the tensor has ", it->second.numel());
            masked.emplace_back(it->second, torch::from_blob(const_cast<float*>(mk.data()), it->second.sizes(), torch::kFloat32).clone());
        }
    auto apply_masks = [&] {
        torch::NoGradGuard ng;
        for (auto& [x, mk] : masked) x.mul_(mk);
    };
    apply_masks();
    torch::optim::AdamW opt(t.trainable, torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
    std::mt19937_64 rng(o.seed);
    std::vector<int64_t> order(size_t(data.count()));
    std::iota(order.begin(), order.end(), 0);
    size_t pos = order.size();
    const auto t0 = std::chrono::steady_clock::now();
    CnnTrainReport rep;
    std::vector<double> recent;
    for (int step = 0; step < o.steps; ++step) {
        if (is_cancelled(progress)) return err("training cancelled");
        const double lr = o.lr * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(std::numbers::pi * double(step) / double(o.steps))));
        for (auto& g : opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
        std::vector<int64_t> idx;
        while (int64_t(idx.size()) < std::min<int64_t>(o.batch, data.count())) {
            if (pos >= order.size()) {
                std::shuffle(order.begin(), order.end(), rng);
                pos = 0;
            }
            idx.push_back(order[pos++]);
        }
        opt.zero_grad();
        auto logits = forward(m, t, images(data, idx), true);
        if (!logits) return logits.error();
        auto loss = F::cross_entropy(logits.value(), labels(data, idx));
        loss.backward();
        opt.step();
        apply_masks();
        const double l = loss.item<double>();
        if (!std::isfinite(l)) return err(origin(m), ": training diverged at step ", step, " (loss ", l, ")");
        if (step == 0) rep.first_loss = l;
        recent.push_back(l);
        if (recent.size() > 10) recent.erase(recent.begin());
        rep.steps = step + 1;
        edge::report(progress, double(step + 1) / o.steps, "training (loss " + std::to_string(l) + ")");
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (double l : recent) rep.last_loss += l / double(recent.size());
    // Fresh owned buffers: a mapped file or a Model sharing the old buffers is never written.
    for (auto& [name, x] : t.tensors) {
        Tensor* dst = m.find_mut(name);
        torch::Tensor c = x.detach().contiguous();
        const size_t bytes = size_t(c.numel()) * sizeof(float);
        auto buf = alloc_aligned(bytes);
        std::memcpy(buf.get(), c.data_ptr<float>(), bytes);
        dst->data = std::move(buf);
        dst->nbytes = bytes;
    }
    if (report) *report = rep;
    return {};
}

Result<std::vector<float>> torch_cnn_logits(const Model& m, const ImageSet& data) {
    EDGE_TRY(check_data(m, data));
    auto built = build(m, false);
    if (!built) return built.error();
    torch::NoGradGuard ng;
    std::vector<int64_t> idx(size_t(data.count()));
    std::iota(idx.begin(), idx.end(), 0);
    auto y = forward(m, built.value(), images(data, idx), false);
    if (!y) return y.error();
    torch::Tensor c = y->contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

Result<prune::Gradients> cnn_gradients(const Model& m, const ImageSet& data, int batches, int batch) {
    EDGE_TRY(check_data(m, data));
    if (batches <= 0 || batch <= 0) return err("gradient batches and batch size must be positive");
    auto built = build(m, true);
    if (!built) return built.error();
    TorchCnn& t = built.value();
    const int64_t n = std::min<int64_t>(data.count(), int64_t(batches) * batch);
    for (int64_t start = 0; start < n; start += batch) {
        std::vector<int64_t> idx;
        for (int64_t i = start; i < std::min(n, start + batch); ++i) idx.push_back(i);
        auto logits = forward(m, t, images(data, idx), false);
        if (!logits) return logits.error();
        (F::cross_entropy(logits.value(), labels(data, idx), F::CrossEntropyFuncOptions().reduction(torch::kSum)) /
         double(n))
            .backward();
    }
    prune::Gradients out;
    for (auto& [name, x] : t.tensors) {
        torch::Tensor g = x.grad().defined() ? x.grad().contiguous() : torch::zeros_like(x);
        out[name].assign(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
    }
    return out;
}

}  // namespace edge::analysis
