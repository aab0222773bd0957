// CNN quantization: per-channel symmetric weight codes, min/max calibration of the activations
// at the inputs of the quantized layers, and the FP32-vs-quantized comparison.
#include "engine/quant/cnn_quant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/model/cnn_ir.h"

using edge::model::is_cnn;
using edge::model::Model;
using edge::model::Op;
using edge::model::OpType;
using edge::runtime::Activation;
using edge::runtime::CnnExecutor;
using edge::runtime::CnnQuantization;
using edge::runtime::CnnQuantLayer;

namespace edge::quant {

QuantPlan cnn_uniform_plan(Precision p) { return uniform_plan(p, QMethod::RTN, 0, true, QGrouping::PerChannel); }

Result<CnnQuantization> quantize_cnn(const Model& m, const QuantPlan& plan, const std::vector<float>& calib_pixels,
                                     int64_t calib_count, const CnnQuantOptions& o, Progress* progress) {
    const std::string src = m.source_path.empty() ? m.name : m.source_path;
    if (!is_cnn(m)) return err(src, ": not a CNN model");
    auto choices = resolve_plan(m, plan);
    if (!choices) return choices.error();
    std::map<std::string, const Op*> ops;
    for (const Op& op : m.graph.ops) ops[op.name] = &op;
    CnnQuantization q;
    for (const LayerChoice& c : choices.value()) {
        if (c.precision == Precision::FP32) continue;
        if (c.precision != Precision::INT8 && c.precision != Precision::INT4)
            return err(plan.source, ": layer '", c.layer, "': ", precision_name(c.precision),
                       " is not a CNN integer precision (int8, int4)");
        if (c.spec.grouping != QGrouping::PerChannel || !c.spec.symmetric)
            return err(plan.source, ": layer '", c.layer, "': CNN layers are quantized symmetric per output channel (",
                       spec_name(c.spec), " asked)");
        auto it = ops.find(c.layer);
        if (it == ops.end() || (it->second->type != OpType::Conv2d && it->second->type != OpType::Linear))
            return err(src, ": layer '", c.layer, "' is not a Conv2d or Linear op");
        const Tensor* w = m.find(c.tensor);
        if (!w || w->type != DType::F32 || !w->data) return err(src, ": layer '", c.layer, "' has no F32 weight");
        CnnQuantLayer l;
        l.op = c.layer;
        l.bits = c.spec.bits;
        l.int8_activations = o.int8_activations;
        const int64_t oc = w->shape[0], k = w->numel() / oc;
        const int lim = (1 << (l.bits - 1)) - 1;
        l.codes.resize(size_t(w->numel()));
        l.scales.resize(size_t(oc));
        for (int64_t r = 0; r < oc; ++r) {
            const float* row = w->f32() + r * k;
            float amax = 0;
            for (int64_t i = 0; i < k; ++i) {
                if (!std::isfinite(row[i]))
                    return err(src, ": tensor '", c.tensor, "' element ", r * k + i, " is not finite");
                amax = std::max(amax, std::fabs(row[i]));
            }
            const float scale = amax > 0 ? amax / float(lim) : 1.0f;
            l.scales[size_t(r)] = scale;
            for (int64_t i = 0; i < k; ++i)
                l.codes[size_t(r * k + i)] =
                    int8_t(std::clamp(std::nearbyint(row[i] / scale), float(-lim), float(lim)));
        }
        q.layers.push_back(std::move(l));
    }
    if (q.layers.empty()) return err(plan.source, ": the plan quantizes no layer of ", src);
    if (!o.int8_activations) return q;

    // Calibration: min/max of every quantized layer's input over the calibration images.
    auto exec = CnnExecutor::create(m);
    if (!exec) return exec.error();
    const auto& s = (*exec)->input_shape();
    const int64_t per = s[1] * s[2] * s[3];
    const int64_t n = std::min(calib_count, o.calib_images);
    if (n < 1 || int64_t(calib_pixels.size()) < n * per)
        return err(src, ": calibration needs images of ", per, " values (", calib_pixels.size(), " values for ",
                   calib_count, " images given)");
    std::map<std::string, std::pair<float, float>> range;
    for (const CnnQuantLayer& l : q.layers) range[l.op] = {0.0f, 0.0f};  // 0 is always representable
    const int64_t batch = 64;
    for (int64_t b0 = 0; b0 < n; b0 += batch) {
        if (is_cancelled(progress)) return err("quantize_cnn: cancelled");
        const int64_t nb = std::min(batch, n - b0);
        Activation in;
        in.shape = {nb, s[1], s[2], s[3]};
        in.data.assign(calib_pixels.begin() + b0 * per, calib_pixels.begin() + (b0 + nb) * per);
        auto out = (*exec)->run(in, [&](const Op& op, const Activation& x) {
            auto it = range.find(op.name);
            if (it == range.end()) return;
            const auto [lo, hi] = std::minmax_element(x.data.begin(), x.data.end());
            it->second.first = std::min(it->second.first, *lo);
            it->second.second = std::max(it->second.second, *hi);
        });
        if (!out) return out.error();
        report(progress, double(b0 + nb) / double(n), "calibrating");
    }
    for (CnnQuantLayer& l : q.layers) {
        const auto [lo, hi] = range[l.op];
        if (!std::isfinite(lo) || !std::isfinite(hi))
            return err(src, ": layer '", l.op, "' sees non-finite activations");
        const float span = hi - lo;
        l.act_scale = span > 0 ? span / 255.0f : 1.0f;
        l.act_zero = int32_t(std::clamp(std::nearbyint(-128.0f - lo / l.act_scale), -128.0f, 127.0f));
    }
    return q;
}

Model dequantized_cnn(const Model& m, const CnnQuantization& q) {
    Model out = m;
    for (const CnnQuantLayer& l : q.layers) {
        const Op* op = nullptr;
        for (const Op& o : m.graph.ops)
            if (o.name == l.op) op = &o;
        if (!op || op->weights.empty()) continue;
        Tensor* t = out.find_mut(op->weights[0]);
        if (!t || int64_t(l.codes.size()) != t->numel()) continue;
        Tensor fresh = Tensor::zeros_f32(t->name, t->shape);
        fresh.source_type = t->source_type;
        const int64_t k = t->numel() / t->shape[0];
        for (int64_t i = 0; i < t->numel(); ++i)
            fresh.f32_mut()[i] = l.scales[size_t(i / k)] * float(l.codes[size_t(i)]);
        *t = std::move(fresh);
    }
    return out;
}

Result<CnnComparison> compare_cnn(const CnnExecutor& ref, const CnnExecutor& test, const std::vector<float>& pixels,
                                  const std::vector<uint8_t>& labels, int64_t batch, Progress* progress) {
    const auto& s = ref.input_shape();
    const int64_t per = s[1] * s[2] * s[3];
    const int64_t count = int64_t(labels.size());
    if (int64_t(pixels.size()) != count * per)
        return err("compare_cnn: ", pixels.size(), " pixel values for ", count, " labels of ", per, " values each");
    CnnComparison c;
    int64_t ok_ref = 0, ok_test = 0, agree = 0;
    double kl_sum = 0, nll_ref_sum = 0, nll_sum = 0;
    batch = std::max<int64_t>(1, batch);
    for (int64_t b0 = 0; b0 < count; b0 += batch) {
        if (is_cancelled(progress)) return err("compare_cnn: cancelled");
        const int64_t n = std::min(batch, count - b0);
        Activation in;
        in.shape = {n, s[1], s[2], s[3]};
        in.data.assign(pixels.begin() + b0 * per, pixels.begin() + (b0 + n) * per);
        auto a = ref.run(in);
        if (!a) return a.error();
        auto b = test.run(in);
        if (!b) return b.error();
        if (a->numel() != b->numel()) return err("compare_cnn: the models' outputs differ in shape");
        const int64_t classes = a->numel() / n;
        for (int64_t i = 0; i < n; ++i) {
            const float* ra = a->data.data() + i * classes;
            const float* rb = b->data.data() + i * classes;
            const int64_t pa = std::max_element(ra, ra + classes) - ra, pb = std::max_element(rb, rb + classes) - rb;
            const int64_t label = labels[size_t(b0 + i)];
            ok_ref += pa == label;
            ok_test += pb == label;
            agree += pa == pb;
            // log-softmax in double
            const double ma = *std::max_element(ra, ra + classes), mb = *std::max_element(rb, rb + classes);
            double za = 0, zb = 0;
            for (int64_t j = 0; j < classes; ++j) {
                za += std::exp(double(ra[j]) - ma);
                zb += std::exp(double(rb[j]) - mb);
            }
            const double la = std::log(za) + ma, lb = std::log(zb) + mb;
            double kl = 0;
            for (int64_t j = 0; j < classes; ++j) {
                const double lpa = double(ra[j]) - la, lpb = double(rb[j]) - lb;
                kl += std::exp(lpa) * (lpa - lpb);
            }
            kl = std::max(0.0, kl);
            nll_ref_sum += la - double(ra[label]);
            nll_sum += lb - double(rb[label]);
            kl_sum += kl;
            c.kl_max = std::max(c.kl_max, kl);
        }
        report(progress, double(b0 + n) / double(count), "comparing");
    }
    c.images = count;
    if (count) {
        c.top1_ref = double(ok_ref) / double(count);
        c.top1 = double(ok_test) / double(count);
        c.agreement = double(agree) / double(count);
        c.kl_mean = kl_sum / double(count);
        c.nll_ref = nll_ref_sum / double(count);
        c.nll = nll_sum / double(count);
    }
    return c;
}

Result<std::vector<CnnLayerLoss>> cnn_layer_losses(const Model& m, Precision p, const std::vector<float>& pixels,
                                                   const std::vector<uint8_t>& labels, Progress* progress) {
    auto ref = CnnExecutor::create(m);
    if (!ref) return ref.error();
    std::vector<CnnLayerLoss> out;
    std::vector<const Op*> layers;
    for (const Op& op : m.graph.ops)
        if ((op.type == OpType::Conv2d || op.type == OpType::Linear) && !op.weights.empty()) layers.push_back(&op);
    CnnQuantOptions o;
    o.int8_activations = false;
    for (size_t i = 0; i < layers.size(); ++i) {
        if (is_cancelled(progress)) return err("cnn_layer_losses: cancelled");
        QuantPlan plan;
        LayerRule r;
        r.pattern = layers[i]->name;
        r.precision = p;
        r.grouping = QGrouping::PerChannel;
        r.symmetric = true;
        plan.rules.push_back(r);
        plan.source = "<layer " + layers[i]->name + ">";
        auto q = quantize_cnn(m, plan, {}, 0, o);
        if (!q) return q.error();
        auto test = CnnExecutor::create(m, q.value());
        if (!test) return test.error();
        auto c = compare_cnn(**ref, **test, pixels, labels);
        if (!c) return c.error();
        CnnLayerLoss l;
        l.layer = layers[i]->name;
        l.params = m.find(layers[i]->weights[0])->numel();
        l.top1_ref = c->top1_ref;
        l.top1 = c->top1;
        l.agreement = c->agreement;
        l.kl_mean = c->kl_mean;
        l.kl_max = c->kl_max;
        l.nll_delta = c->nll - c->nll_ref;
        out.push_back(l);
        report(progress, double(i + 1) / double(layers.size()), "per-layer quantization");
    }
    return out;
}

}  // namespace edge::quant
