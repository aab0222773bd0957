// The only LibTorch translation unit of the CNN path: the IR graph interpreted op for op with
// torch tensors (mirroring engine/runtime/cnn/cnn.cpp), an executor, gradients and the trainer.
#include "engine/analysis/torch_cnn.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "engine/model/cnn_ir.h"

using edge::model::cnn_input_shape;
using edge::model::Model;
using edge::model::Op;
using edge::model::op_attr;
using edge::model::op_attr1;
using edge::model::op_type_name;
using edge::model::OpType;
using edge::model::shape_text;
using edge::runtime::Activation;
using edge::runtime::ClassifyResult;
using edge::runtime::cnn_spatial_axis;
using edge::runtime::CnnAxis;
using edge::runtime::CnnExecutor;

namespace edge::analysis {

namespace {

std::string src_of(const Model& m) { return m.source_path.empty() ? m.name : m.source_path; }

std::vector<int64_t> sizes(const torch::Tensor& t) { return std::vector<int64_t>(t.sizes().begin(), t.sizes().end()); }
std::string shp(const torch::Tensor& t) { return "[" + shape_text(sizes(t)) + "]"; }

torch::Tensor as_torch(const Tensor& t) {
    return torch::from_blob(const_cast<float*>(t.f32()), t.shape, torch::kFloat32).clone();
}

}  // namespace

namespace torchcnn {

// Every tensor the graph's ops use, by name (BatchNorm running statistics included).
using Weights = std::map<std::string, torch::Tensor>;

struct ForwardMode {
    bool train_batchnorm = false;  // batch statistics, running statistics updated in place
    double bn_momentum = 0.1;
};

Result<Weights> load_weights(const Model& m) {
    // The runtime executor's checks (op arity, weights present and F32, shapes) apply here too.
    auto check = CnnExecutor::create(m, 1);
    if (!check) return check.error();
    Weights w;
    for (const Op& op : m.graph.ops)
        for (const std::string& name : op.weights)
            if (!w.count(name)) w[name] = as_torch(*m.find(name));
    return w;
}

std::vector<std::string> default_trainable(const Model& m) {
    std::vector<std::string> out;
    for (const Op& op : m.graph.ops) {
        if (op.type == OpType::BatchNorm) {
            out.push_back(op.weights[0]);
            out.push_back(op.weights[1]);
        } else if (op.type == OpType::Conv2d || op.type == OpType::Linear || op.type == OpType::Add) {
            out.insert(out.end(), op.weights.begin(), op.weights.end());
        }
    }
    return out;
}

Result<torch::Tensor> forward(const Model& m, const Weights& w, const torch::Tensor& input, const ForwardMode& mode) {
    const std::string src = src_of(m);
    std::map<std::string, torch::Tensor> values;
    values[m.graph.inputs[0]] = input;
    try {
        for (const Op& op : m.graph.ops) {
            const torch::Tensor& x = values.at(op.inputs[0]);
            auto W = [&](size_t i) -> const torch::Tensor& { return w.at(op.weights[i]); };
            auto need_rank = [&](int64_t r) -> Status {
                if (x.dim() != r)
                    return err(src, ": op '", op.name, "' (", op_type_name(op.type), ") got input of shape ", shp(x),
                               "; it needs ", r, " dimensions");
                return {};
            };
            torch::Tensor y;
            switch (op.type) {
                case OpType::Conv2d: {
                    EDGE_TRY(need_rank(4));
                    const torch::Tensor& wt = W(0);
                    const int64_t group = int64_t(op_attr1(op, "group", 1));
                    if (wt.size(1) * group != x.size(1))
                        return err(src, ": conv '", op.name, "' weight ", shp(wt), " (group ", group,
                                   ") does not fit input ", shp(x));
                    const auto st = op_attr(op, "strides", {1, 1}), dl = op_attr(op, "dilations", {1, 1}),
                               pd = op_attr(op, "pads", {0, 0, 0, 0});
                    const int ap = int(op_attr1(op, "auto_pad", 0));
                    const CnnAxis ay = cnn_spatial_axis(x.size(2), wt.size(2), int64_t(st[0]), int64_t(dl[0]),
                                                        int64_t(pd[0]), int64_t(pd[2]), ap, false);
                    const CnnAxis ax = cnn_spatial_axis(x.size(3), wt.size(3), int64_t(st[1]), int64_t(dl[1]),
                                                        int64_t(pd[1]), int64_t(pd[3]), ap, false);
                    if (ay.out <= 0 || ax.out <= 0)
                        return err(src, ": conv '", op.name, "' kernel ", shp(wt), " does not fit input ", shp(x));
                    torch::Tensor xin = x;
                    std::vector<int64_t> padding = {ay.pad_begin, ax.pad_begin};
                    if (ay.pad_begin != ay.pad_end || ax.pad_begin != ax.pad_end) {
                        xin = torch::constant_pad_nd(x, {ax.pad_begin, ax.pad_end, ay.pad_begin, ay.pad_end}, 0);
                        padding = {0, 0};
                    }
                    const std::vector<int64_t> stride = {int64_t(st[0]), int64_t(st[1])};
                    const std::vector<int64_t> dil = {int64_t(dl[0]), int64_t(dl[1])};
                    torch::Tensor bias = op.weights.size() > 1 ? W(1) : torch::Tensor();
                    y = torch::conv2d(xin, wt, bias, stride, padding, dil, group);
                    break;
                }
                case OpType::BatchNorm: {
                    if (x.dim() < 2) EDGE_TRY(need_rank(4));
                    if (W(0).numel() != x.size(1))
                        return err(src, ": batchnorm '", op.name, "' has ", W(0).numel(), " channels, input ", shp(x));
                    const double eps = op_attr1(op, "epsilon", 1e-5);
                    y = torch::batch_norm(x, W(0), W(1), W(2), W(3), mode.train_batchnorm, mode.bn_momentum, eps,
                                          false);
                    break;
                }
                case OpType::Relu: y = torch::relu(x); break;
                case OpType::MaxPool:
                case OpType::AvgPool: {
                    EDGE_TRY(need_rank(4));
                    const auto k = op_attr(op, "kernel", {1, 1}), st = op_attr(op, "strides", {1, 1}),
                               pd = op_attr(op, "pads", {0, 0, 0, 0});
                    const int ap = int(op_attr1(op, "auto_pad", 0));
                    const bool ceil = op_attr1(op, "ceil_mode", 0) != 0;
                    const int64_t kh = int64_t(k[0]), kw = int64_t(k[1]), sh = int64_t(st[0]), sw = int64_t(st[1]);
                    const int64_t H = x.size(2), Wd = x.size(3);
                    const CnnAxis ay = cnn_spatial_axis(H, kh, sh, 1, int64_t(pd[0]), int64_t(pd[2]), ap, ceil);
                    const CnnAxis ax = cnn_spatial_axis(Wd, kw, sw, 1, int64_t(pd[1]), int64_t(pd[3]), ap, ceil);
                    if (ay.out <= 0 || ax.out <= 0)
                        return err(src, ": pool '", op.name, "' window does not fit input ", shp(x));
                    // Pad explicitly to exactly the extent the output windows cover, then pool
                    // without padding: the same windows as the runtime whatever the pad rule.
                    const int64_t ey = std::max<int64_t>(0, (ay.out - 1) * sh + kh - H - ay.pad_begin);
                    const int64_t ex = std::max<int64_t>(0, (ax.out - 1) * sw + kw - Wd - ax.pad_begin);
                    const std::vector<int64_t> pads = {ax.pad_begin, ex, ay.pad_begin, ey};
                    if (op.type == OpType::MaxPool) {
                        auto xp = torch::constant_pad_nd(x, pads, -std::numeric_limits<double>::infinity());
                        y = torch::max_pool2d(xp, {kh, kw}, {sh, sw});
                    } else {
                        auto xp = torch::constant_pad_nd(x, pads, 0);
                        auto sum = torch::avg_pool2d(xp, {kh, kw}, {sh, sw}) * double(kh * kw);
                        // Divisor: real pixels, or (count_include_pad) pixels inside the declared pads.
                        torch::Tensor ind = torch::ones({1, 1, H, Wd}, x.options());
                        if (op_attr1(op, "count_include_pad", 0) != 0) {
                            ind = torch::constant_pad_nd(ind, {ax.pad_begin, ax.pad_end, ay.pad_begin, ay.pad_end}, 1);
                            ind = torch::constant_pad_nd(
                                ind,
                                {0, std::max<int64_t>(0, ex - ax.pad_end), 0, std::max<int64_t>(0, ey - ay.pad_end)},
                                0);
                            ind = ind.narrow(2, 0, H + ay.pad_begin + ey).narrow(3, 0, Wd + ax.pad_begin + ex);
                        } else {
                            ind = torch::constant_pad_nd(ind, pads, 0);
                        }
                        auto div = torch::avg_pool2d(ind, {kh, kw}, {sh, sw}) * double(kh * kw);
                        y = torch::where(div > 0, sum / div.clamp_min(1.0), torch::zeros_like(sum));
                    }
                    break;
                }
                case OpType::GlobalAvgPool:
                    EDGE_TRY(need_rank(4));
                    y = x.mean({2, 3}, true);
                    break;
                case OpType::Linear: {
                    const torch::Tensor& wt = W(0);
                    const int64_t n = x.dim() == 0 ? 1 : x.size(0);
                    if (n * wt.size(1) != x.numel())
                        return err(src, ": linear '", op.name, "' weight ", shp(wt), " does not fit input ", shp(x));
                    y = torch::linear(x.reshape({n, wt.size(1)}), wt, op.weights.size() > 1 ? W(1) : torch::Tensor());
                    break;
                }
                case OpType::Add: {
                    if (op.weights.empty()) {
                        const torch::Tensor& b = values.at(op.inputs[1]);
                        if (!x.sizes().equals(b.sizes()))
                            return err(src, ": add '", op.name, "' of shapes ", shp(x), " and ", shp(b));
                        y = x + b;
                        break;
                    }
                    std::vector<int64_t> cs = sizes(W(0));
                    while (!cs.empty() && cs.front() == 1 && int64_t(cs.size()) > x.dim()) cs.erase(cs.begin());
                    bool ok = int64_t(cs.size()) <= x.dim();
                    for (size_t d = 0; ok && d < cs.size(); ++d) {
                        const int64_t xd = x.size(int64_t(x.dim() - int64_t(cs.size()) + int64_t(d)));
                        ok = cs[d] == 1 || cs[d] == xd;
                    }
                    if (!ok)
                        return err(src, ": add '", op.name, "' constant ", shp(W(0)), " does not broadcast to ",
                                   shp(x));
                    y = x + W(0).reshape(cs);
                    break;
                }
                case OpType::Reshape: {
                    const std::vector<int64_t> xs = sizes(x);
                    if (op.attrs.count("flatten_axis")) {
                        const int64_t axis = int64_t(op_attr1(op, "flatten_axis", 1));
                        int64_t lo = 1, hi = 1;
                        for (size_t d = 0; d < xs.size(); ++d) (int64_t(d) < axis ? lo : hi) *= xs[d];
                        y = x.reshape({lo, hi});
                        break;
                    }
                    const auto want = op_attr(op, "shape");
                    std::vector<int64_t> ys;
                    int64_t known = 1, infer = -1;
                    for (size_t d = 0; d < want.size(); ++d) {
                        int64_t v = int64_t(want[d]);
                        if (v == 0 && d < xs.size()) v = xs[d];
                        if (v == -1 && infer < 0) {
                            infer = int64_t(d);
                            ys.push_back(1);
                            continue;
                        }
                        if (v <= 0) return err(src, ": reshape '", op.name, "': bad target dimension ", want[d]);
                        known *= v;
                        ys.push_back(v);
                    }
                    if (infer < 0 && !ys.empty() && ys[0] == 1 && xs[0] > 1 && known * xs[0] == x.numel())
                        ys[0] = xs[0], known *= xs[0];
                    if (infer >= 0) {
                        if (x.numel() % known)
                            return err(src, ": reshape '", op.name, "' cannot infer -1 for ", shp(x));
                        ys[size_t(infer)] = x.numel() / known;
                    } else if (known != x.numel()) {
                        return err(src, ": reshape '", op.name, "' to [", shape_text(ys), "] does not hold input ",
                                   shp(x));
                    }
                    y = x.reshape(ys);
                    break;
                }
                case OpType::Pad: {
                    const auto pads = op_attr(op, "pads");
                    const int64_t r = x.dim();
                    if (int64_t(pads.size()) != 2 * r)
                        return err(src, ": pad '", op.name, "' has ", pads.size(), " pads for input ", shp(x));
                    std::vector<int64_t> tp;  // torch order: last dimension first, (begin, end) pairs
                    for (int64_t d = r - 1; d >= 0; --d) {
                        tp.push_back(int64_t(pads[size_t(d)]));
                        tp.push_back(int64_t(pads[size_t(d + r)]));
                    }
                    y = torch::constant_pad_nd(x, tp, op_attr1(op, "value", 0));
                    break;
                }
                case OpType::Softmax: y = torch::softmax(x, -1); break;
                default: return err(src, ": op '", op.name, "' (", op_type_name(op.type), ") is not a CNN op");
            }
            values[op.outputs[0]] = y;
        }
    } catch (const std::exception& e) {
        return err(src, ": LibTorch forward failed: ", e.what());
    }
    return values.at(m.graph.outputs[0]);
}

torch::Tensor batch_tensor(const calib::LabelledImages& data, const std::vector<int64_t>& index) {
    const int64_t per = data.image_size();
    auto t = torch::empty({int64_t(index.size()), data.channels, data.rows, data.cols}, torch::kFloat32);
    float* dst = t.data_ptr<float>();
    for (size_t i = 0; i < index.size(); ++i)
        std::memcpy(dst + int64_t(i) * per, data.pixels.data() + index[i] * per, size_t(per) * sizeof(float));
    return t;
}

torch::Tensor label_tensor(const calib::LabelledImages& data, const std::vector<int64_t>& index) {
    auto t = torch::empty({int64_t(index.size())}, torch::kInt64);
    int64_t* dst = t.data_ptr<int64_t>();
    for (size_t i = 0; i < index.size(); ++i) dst[i] = data.labels[size_t(index[i])];
    return t;
}

Status check_data(const Model& m, const calib::LabelledImages& data) {
    auto shape = cnn_input_shape(m);
    if (!shape) return shape.error();
    const auto& s = shape.value();
    if (s.size() != 4 || s[1] != data.channels || s[2] != data.rows || s[3] != data.cols)
        return err(src_of(m), ": the model takes [N, ", shape_text(s), "] images; the data holds ", data.channels, "x",
                   data.rows, "x", data.cols);
    if (data.count < 1 || int64_t(data.labels.size()) != data.count ||
        int64_t(data.pixels.size()) != data.count * data.image_size())
        return err(src_of(m), ": the labelled set holds ", data.pixels.size(), " pixel values and ", data.labels.size(),
                   " labels for ", data.count, " images");
    return {};
}

torch::Tensor logits2d(const torch::Tensor& out) { return out.reshape({out.size(0), -1}); }

torch::Tensor fake_quant(const torch::Tensor& w, const FakeQuantSpec& spec, torch::Tensor* frozen_zp) {
    const auto wd = w.detach();
    const int64_t oc = w.size(0);
    auto flat = spec.per_channel && w.dim() > 1 ? wd.reshape({oc, -1}) : wd.reshape({1, -1});
    std::vector<int64_t> bshape(size_t(w.dim()), 1);
    if (spec.per_channel && w.dim() > 1) bshape[0] = oc;
    torch::Tensor scale, zp, lo, hi;
    if (spec.symmetric) {
        const double qmax = double((1 << (spec.bits - 1)) - 1);
        scale = (flat.abs().amax(1) / qmax).clamp_min(1e-12).reshape(bshape);
        zp = torch::zeros_like(scale);
        lo = torch::full_like(scale, -qmax);
        hi = torch::full_like(scale, qmax);
    } else {
        const double qmax = double((1 << spec.bits) - 1);
        auto mn = flat.amin(1).clamp_max(0.0), mx = flat.amax(1).clamp_min(0.0);
        if (spec.freeze_zero_point && frozen_zp && frozen_zp->defined()) {
            zp = frozen_zp->reshape({-1});
            // The smallest scale that keeps both ends representable around the frozen zero point.
            auto s_hi = mx / (qmax - zp).clamp_min(1.0);
            auto s_lo = -mn / zp.clamp_min(1.0);
            scale = torch::maximum(s_hi, s_lo).clamp_min(1e-12);
        } else {
            scale = ((mx - mn) / qmax).clamp_min(1e-12);
            zp = torch::round(-mn / scale).clamp(0.0, qmax);
            if (spec.freeze_zero_point && frozen_zp) *frozen_zp = zp.clone();
        }
        scale = scale.reshape(bshape);
        zp = zp.reshape(bshape);
        lo = torch::zeros_like(scale);
        hi = torch::full_like(scale, qmax);
    }
    auto code = torch::round(wd / scale) + zp;
    auto inside = (code >= lo).logical_and(code <= hi).to(torch::kFloat32);
    auto q = (torch::minimum(torch::maximum(code, lo), hi) - zp) * scale;
    // Value q; gradient 1 inside the clipping range, 0 outside (straight-through estimator).
    return q + (w - wd) * inside;
}

}  // namespace torchcnn

using namespace torchcnn;

Result<Activation> torch_cnn_forward(const Model& m, const Activation& input) {
    auto w = load_weights(m);
    if (!w) return w.error();
    auto shape = cnn_input_shape(m);
    if (!shape) return shape.error();
    const auto& s = shape.value();
    if (input.shape.size() != 4 || input.shape[0] < 1 ||
        !std::equal(input.shape.begin() + 1, input.shape.end(), s.begin() + 1))
        return err(src_of(m), ": input has shape [", shape_text(input.shape), "]; the model takes [N, ", s[1], ", ",
                   s[2], ", ", s[3], "]");
    if (int64_t(input.data.size()) != input.numel())
        return err(src_of(m), ": input holds ", input.data.size(), " values for shape [", shape_text(input.shape), "]");
    torch::NoGradGuard ng;
    auto x = torch::from_blob(const_cast<float*>(input.data.data()), input.shape, torch::kFloat32);
    auto y = forward(m, w.value(), x, {});
    if (!y) return y.error();
    auto c = y->contiguous();
    Activation out;
    out.shape = sizes(c);
    out.data.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    return out;
}

Result<ClassifyResult> torch_cnn_classify(const Model& m, const calib::LabelledImages& data, int64_t batch,
                                          Progress* progress) {
    EDGE_TRY(check_data(m, data));
    auto w = load_weights(m);
    if (!w) return w.error();
    torch::NoGradGuard ng;
    ClassifyResult r;
    batch = std::max<int64_t>(1, batch);
    for (int64_t b0 = 0; b0 < data.count; b0 += batch) {
        if (is_cancelled(progress)) return err("classify: cancelled");
        std::vector<int64_t> idx(size_t(std::min(batch, data.count - b0)));
        std::iota(idx.begin(), idx.end(), b0);
        auto y = forward(m, w.value(), batch_tensor(data, idx), {});
        if (!y) return y.error();
        auto pred = logits2d(*y).argmax(1).contiguous();
        for (size_t i = 0; i < idx.size(); ++i) {
            const int32_t p = int32_t(pred[int64_t(i)].item<int64_t>());
            r.predictions.push_back(p);
            r.correct += p == int32_t(data.labels[size_t(idx[i])]);
        }
        r.images += int64_t(idx.size());
        report(progress, double(r.images) / double(data.count), "classifying (LibTorch)");
    }
    return r;
}

Result<double> torch_cnn_loss(const Model& m, const calib::LabelledImages& data, int64_t batch) {
    EDGE_TRY(check_data(m, data));
    auto w = load_weights(m);
    if (!w) return w.error();
    torch::NoGradGuard ng;
    double total = 0;
    batch = std::max<int64_t>(1, batch);
    for (int64_t b0 = 0; b0 < data.count; b0 += batch) {
        std::vector<int64_t> idx(size_t(std::min(batch, data.count - b0)));
        std::iota(idx.begin(), idx.end(), b0);
        auto y = forward(m, w.value(), batch_tensor(data, idx), {});
        if (!y) return y.error();
        total += torch::nn::functional::cross_entropy(
                     logits2d(*y), label_tensor(data, idx),
                     torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                     .item<double>();
    }
    return total / double(data.count);
}

std::vector<std::string> cnn_layer_weights(const Model& m) {
    std::vector<std::string> out;
    for (const Op& op : m.graph.ops)
        if ((op.type == OpType::Conv2d || op.type == OpType::Linear) && !op.weights.empty())
            out.push_back(op.weights[0]);
    return out;
}

Result<std::map<std::string, std::vector<float>>> torch_cnn_gradients(const Model& m, const calib::LabelledImages& data,
                                                                      const std::vector<std::string>& tensors,
                                                                      int64_t batch) {
    EDGE_TRY(check_data(m, data));
    auto w = load_weights(m);
    if (!w) return w.error();
    const std::vector<std::string> names = tensors.empty() ? cnn_layer_weights(m) : tensors;
    for (const std::string& n : names) {
        if (!w->count(n)) return err(src_of(m), ": no op uses tensor '", n, "'");
        w.value()[n].set_requires_grad(true);
    }
    batch = std::max<int64_t>(1, batch);
    try {
        for (int64_t b0 = 0; b0 < data.count; b0 += batch) {
            std::vector<int64_t> idx(size_t(std::min(batch, data.count - b0)));
            std::iota(idx.begin(), idx.end(), b0);
            auto y = forward(m, w.value(), batch_tensor(data, idx), {});
            if (!y) return y.error();
            auto loss = torch::nn::functional::cross_entropy(
                            logits2d(*y), label_tensor(data, idx),
                            torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
                        double(data.count);
            loss.backward();
        }
    } catch (const std::exception& e) {
        return err(src_of(m), ": LibTorch backward failed: ", e.what());
    }
    std::map<std::string, std::vector<float>> out;
    for (const std::string& n : names) {
        auto g = w.value()[n].grad().contiguous();
        out[n].assign(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
    }
    return out;
}

Status train_cnn(Model& m, const calib::LabelledImages& data, const CnnTrainOptions& opts, Progress* progress,
                 CnnTrainReport* report_out) {
    const auto t0 = std::chrono::steady_clock::now();
    EDGE_TRY(check_data(m, data));
    auto wr = load_weights(m);
    if (!wr) return wr.error();
    Weights w = std::move(wr.value());
    if (opts.threads > 0) torch::set_num_threads(opts.threads);
    if (opts.batch < 1) return err("train_cnn: batch must be >= 1 (got ", opts.batch, ")");
    if (opts.epochs < 1 && opts.steps < 1) return err("train_cnn: neither epochs nor steps is positive");

    const std::vector<std::string> names = opts.trainable.empty() ? default_trainable(m) : opts.trainable;
    std::vector<torch::Tensor> params;
    std::set<std::string> seen;
    for (const std::string& n : names) {
        if (!w.count(n)) return err(src_of(m), ": cannot train '", n, "': no op of the graph uses it");
        if (!seen.insert(n).second) continue;
        w[n].set_requires_grad(true);
        params.push_back(w[n]);
    }
    std::map<std::string, torch::Tensor> masks;
    for (const auto& [n, mask] : opts.masks) {
        if (!w.count(n)) return err(src_of(m), ": mask for '", n, "': no op of the graph uses it");
        if (int64_t(mask.size()) != w[n].numel())
            return err(src_of(m), ": mask for '", n, "' has ", mask.size(), " entries for ", w[n].numel(), " weights");
        std::vector<float> f(mask.begin(), mask.end());
        masks[n] = torch::from_blob(f.data(), w[n].sizes(), torch::kFloat32).clone();
        torch::NoGradGuard ng;
        w[n].mul_(masks[n]);
    }
    std::map<std::string, torch::Tensor> frozen_zp;
    for (const auto& [n, spec] : opts.fake_quant) {
        if (!w.count(n)) return err(src_of(m), ": fake quantization of '", n, "': no op of the graph uses it");
        if (spec.bits < 2 || spec.bits > 8)
            return err("train_cnn: fake quantization of '", n, "' to ", spec.bits, " bits");
        frozen_zp[n] = torch::Tensor();
    }
    if (params.empty()) return err(src_of(m), ": nothing to train");

    std::unique_ptr<torch::optim::Optimizer> opt;
    if (opts.optimizer == CnnOptimizer::Adam)
        opt = std::make_unique<torch::optim::AdamW>(
            params, torch::optim::AdamWOptions(opts.lr).weight_decay(opts.weight_decay));
    else
        opt = std::make_unique<torch::optim::SGD>(
            params, torch::optim::SGDOptions(opts.lr).momentum(opts.momentum).weight_decay(opts.weight_decay));

    const int64_t per_epoch = (data.count + opts.batch - 1) / opts.batch;
    const int64_t total_steps =
        opts.steps > 0 ? (opts.epochs > 0 ? std::min<int64_t>(opts.steps, per_epoch * opts.epochs) : opts.steps)
                       : per_epoch * opts.epochs;
    std::mt19937_64 rng(opts.seed);
    std::vector<int64_t> order(size_t(data.count));
    std::iota(order.begin(), order.end(), 0);
    CnnTrainReport rep;
    std::vector<double> losses;
    ForwardMode mode;
    mode.train_batchnorm = !opts.freeze_batchnorm;
    mode.bn_momentum = opts.bn_momentum;
    try {
        int64_t step = 0;
        while (step < total_steps) {
            std::shuffle(order.begin(), order.end(), rng);
            for (int64_t b0 = 0; b0 < data.count && step < total_steps; b0 += opts.batch, ++step) {
                if (is_cancelled(progress)) return err("train_cnn: cancelled");
                if (opts.cosine_decay && total_steps > 1) {
                    const double f = 0.5 * (1 + std::cos(M_PI * double(step) / double(total_steps - 1)));
                    for (auto& g : opt->param_groups()) g.options().set_lr(opts.lr * (0.1 + 0.9 * f));
                }
                std::vector<int64_t> idx(order.begin() + b0, order.begin() + std::min(data.count, b0 + opts.batch));
                Weights eff = w;
                for (const auto& [n, spec] : opts.fake_quant) eff[n] = fake_quant(w[n], spec, &frozen_zp[n]);
                auto y = forward(m, eff, batch_tensor(data, idx), mode);
                if (!y) return y.error();
                auto loss = torch::nn::functional::cross_entropy(logits2d(*y), label_tensor(data, idx));
                opt->zero_grad();
                loss.backward();
                for (auto& [n, mask] : masks)
                    if (w[n].grad().defined()) w[n].mutable_grad().mul_(mask);
                opt->step();
                {
                    torch::NoGradGuard ng;
                    for (auto& [n, mask] : masks) w[n].mul_(mask);
                }
                const double l = loss.item<double>();
                if (!std::isfinite(l)) return err(src_of(m), ": training diverged at step ", step, " (loss ", l, ")");
                if (step == 0) rep.first_loss = l;
                losses.push_back(l);
                report(progress, double(step + 1) / double(total_steps), "training");
            }
            if (step % per_epoch == 0) rep.epochs = int(step / per_epoch);
        }
        rep.steps = int(step);
    } catch (const std::exception& e) {
        return err(src_of(m), ": LibTorch training failed: ", e.what());
    }
    const size_t tail = std::min<size_t>(20, losses.size());
    for (size_t i = losses.size() - tail; i < losses.size(); ++i) rep.last_loss += losses[i] / double(tail);
    // Write back: fresh owned buffers for everything training may have changed.
    for (const Op& op : m.graph.ops)
        for (const std::string& n : op.weights) {
            Tensor* t = m.find_mut(n);
            const torch::Tensor& v = w.at(n);
            const bool changed =
                seen.count(n) || masks.count(n) || (op.type == OpType::BatchNorm && mode.train_batchnorm);
            if (!t || !changed) continue;
            Tensor fresh = Tensor::zeros_f32(t->name, t->shape);
            fresh.source_type = t->source_type;
            auto c = v.detach().contiguous();
            std::memcpy(fresh.f32_mut(), c.data_ptr<float>(), size_t(c.numel()) * sizeof(float));
            *t = std::move(fresh);
        }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (report_out) *report_out = rep;
    return {};
}

namespace {

// Lanczos with full reorthogonalisation on a Hessian-vector product; Ritz values by |lambda|.
std::vector<double> lanczos(const std::function<torch::Tensor(const torch::Tensor&)>& hvp, int64_t n, int steps, int k,
                            uint64_t seed) {
    const int64_t m = std::min<int64_t>(n, steps);
    auto gen = at::detail::createCPUGenerator(seed);
    torch::Tensor v = at::randn({n}, gen, torch::kFloat64);
    v /= v.norm();
    std::vector<torch::Tensor> basis;
    std::vector<double> alpha, beta;
    for (int64_t j = 0; j < m; ++j) {
        basis.push_back(v);
        torch::Tensor w = hvp(v);
        const double a = w.dot(v).item<double>();
        alpha.push_back(a);
        for (int pass = 0; pass < 2; ++pass)
            for (const torch::Tensor& q : basis) w -= w.dot(q) * q;
        const double b = w.norm().item<double>();
        if (j + 1 == m || b <= 1e-12 * std::max(1.0, std::fabs(a))) break;
        beta.push_back(b);
        v = w / b;
    }
    const int64_t r = int64_t(alpha.size());
    auto T = torch::zeros({r, r}, torch::kFloat64);
    for (int64_t i = 0; i < r; ++i) {
        T[i][i] = alpha[size_t(i)];
        if (i + 1 < r) T[i][i + 1] = T[i + 1][i] = beta[size_t(i)];
    }
    auto ev = torch::linalg_eigvalsh(T).contiguous();
    std::vector<double> theta(ev.data_ptr<double>(), ev.data_ptr<double>() + r);
    std::sort(theta.begin(), theta.end(), [](double x, double y) { return std::fabs(x) > std::fabs(y); });
    theta.resize(size_t(std::min<int64_t>(k, r)));
    return theta;
}

}  // namespace

Result<std::vector<LayerCurvature>> torch_cnn_curvature(const Model& m, const calib::LabelledImages& data,
                                                        const CnnCurvatureOptions& o, Progress* progress) {
    EDGE_TRY(check_data(m, data));
    if (o.topk < 1 || o.lanczos_steps < o.topk)
        return err("curvature: lanczos steps (", o.lanczos_steps, ") must be at least topk (", o.topk, ") >= 1");
    if (o.hessian_images < 1 || o.batch_size < 1 || o.batches < 1)
        return err("curvature: empty Hessian or gradient batch");
    if (o.threads > 0) torch::set_num_threads(o.threads);
    auto wr = load_weights(m);
    if (!wr) return wr.error();
    Weights w = std::move(wr.value());
    std::vector<LayerCurvature> out;
    std::vector<torch::Tensor> ws;
    for (const Op& op : m.graph.ops) {
        if ((op.type != OpType::Conv2d && op.type != OpType::Linear) || op.weights.empty()) continue;
        LayerCurvature c;
        c.layer = op.name;
        c.tensor = op.weights[0];
        c.params = w[c.tensor].numel();
        w[c.tensor].set_requires_grad(true);
        ws.push_back(w[c.tensor]);
        out.push_back(std::move(c));
    }
    if (ws.empty()) return err(src_of(m), ": no Conv2d or Linear layer");
    auto loss_of = [&](const std::vector<int64_t>& idx) -> Result<torch::Tensor> {
        auto y = forward(m, w, batch_tensor(data, idx), {});
        if (!y) return y.error();
        return torch::nn::functional::cross_entropy(logits2d(*y), label_tensor(data, idx));
    };
    const double total = double(o.batches) + double(ws.size());
    try {
        std::mt19937_64 rng(o.seed);
        std::uniform_int_distribution<int64_t> pick(0, data.count - 1);
        for (int b = 0; b < o.batches; ++b) {
            if (is_cancelled(progress)) return err("sensitivity analysis cancelled");
            std::vector<int64_t> idx(size_t(o.batch_size));
            for (auto& i : idx) i = pick(rng);
            auto loss = loss_of(idx);
            if (!loss) return loss.error();
            auto g = torch::autograd::grad({*loss}, ws);
            for (size_t i = 0; i < ws.size(); ++i) out[i].grad_norms.push_back(g[i].norm().item<double>());
            report(progress, (b + 1) / total, "gradient statistics (batch " + std::to_string(b + 1) + ")");
        }
        std::vector<int64_t> hidx(size_t(std::min(o.hessian_images, data.count)));
        std::iota(hidx.begin(), hidx.end(), 0);
        auto hloss = loss_of(hidx);
        if (!hloss) return hloss.error();
        auto grads = torch::autograd::grad({*hloss}, ws, {}, true, true);
        for (size_t i = 0; i < ws.size(); ++i) {
            if (is_cancelled(progress)) return err("sensitivity analysis cancelled");
            const torch::Tensor& wt = ws[i];
            const torch::Tensor& g = grads[i];
            auto hvp = [&](const torch::Tensor& v) {
                auto vt = v.to(torch::kFloat32).view(wt.sizes());
                auto hv = torch::autograd::grad({(g * vt).sum()}, {wt}, {}, true, false)[0];
                return hv.to(torch::kFloat64).reshape({-1});
            };
            out[i].eigenvalues = lanczos(hvp, wt.numel(), o.lanczos_steps, o.topk, o.seed + i);
            report(progress, (double(o.batches) + double(i) + 1) / total, "Hessian spectrum of " + out[i].layer);
        }
    } catch (const std::exception& e) {
        return err(src_of(m), ": LibTorch curvature failed: ", e.what());
    }
    return out;
}

}  // namespace edge::analysis
