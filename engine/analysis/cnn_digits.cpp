// The digits CNN fixture: IR construction (no LibTorch here) and training via train_cnn().
#include "engine/analysis/cnn_digits.h"

#include <cmath>
#include <random>

#include "engine/model/cnn_ir.h"

using edge::model::kCnnArchitecture;
using edge::model::Model;
using edge::model::Op;
using edge::model::OpType;
using edge::model::set_cnn_input_shape;
using edge::runtime::classify;
using edge::runtime::CnnExecutor;

namespace edge::analysis {

namespace {

Tensor uniform(const std::string& name, std::vector<int64_t> shape, double bound, std::mt19937_64& rng) {
    Tensor t = Tensor::zeros_f32(name, std::move(shape));
    std::uniform_real_distribution<double> u(-bound, bound);
    for (int64_t i = 0; i < t.numel(); ++i) t.f32_mut()[i] = float(u(rng));
    return t;
}

Tensor filled(const std::string& name, int64_t n, float v) {
    Tensor t = Tensor::zeros_f32(name, {n});
    for (int64_t i = 0; i < n; ++i) t.f32_mut()[i] = v;
    return t;
}

}  // namespace

Model build_digits_cnn(uint64_t seed) {
    Model m;
    m.architecture = kCnnArchitecture;
    m.name = "digits-cnn";
    m.source_format = "synth";
    set_cnn_input_shape(m, {1, 1, 8, 8});
    m.graph.inputs = {"input"};
    m.graph.outputs = {"logits"};
    std::mt19937_64 rng(seed);
    std::string cur = "input";
    auto conv_bn_relu = [&](const std::string& tag, int64_t ic, int64_t oc) {
        const std::string conv = "conv" + tag, bn = "bn" + tag, relu = "relu" + tag;
        const double fan_in = double(ic * 9);
        m.tensors.push_back(uniform(conv + ".weight", {oc, ic, 3, 3}, std::sqrt(6.0 / fan_in), rng));
        m.tensors.push_back(uniform(conv + ".bias", {oc}, 1.0 / std::sqrt(fan_in), rng));
        Op c{OpType::Conv2d, conv, {cur}, {conv + ".out"}, {conv + ".weight", conv + ".bias"}, {}};
        c.attrs["strides"] = {1, 1};
        c.attrs["pads"] = {1, 1, 1, 1};
        c.attrs["dilations"] = {1, 1};
        c.attrs["group"] = {1};
        m.graph.ops.push_back(std::move(c));
        m.tensors.push_back(filled(bn + ".scale", oc, 1.0f));
        m.tensors.push_back(filled(bn + ".bias", oc, 0.0f));
        m.tensors.push_back(filled(bn + ".mean", oc, 0.0f));
        m.tensors.push_back(filled(bn + ".var", oc, 1.0f));
        Op b{OpType::BatchNorm,
             bn,
             {conv + ".out"},
             {bn + ".out"},
             {bn + ".scale", bn + ".bias", bn + ".mean", bn + ".var"},
             {}};
        b.attrs["epsilon"] = {1e-5};
        m.graph.ops.push_back(std::move(b));
        m.graph.ops.push_back(Op{OpType::Relu, relu, {bn + ".out"}, {relu + ".out"}, {}, {}});
        cur = relu + ".out";
    };
    conv_bn_relu("1", 1, 8);
    conv_bn_relu("2", 8, 16);
    Op pool{OpType::MaxPool, "pool", {cur}, {"pool.out"}, {}, {}};
    pool.attrs["kernel"] = {2, 2};
    pool.attrs["strides"] = {2, 2};
    pool.attrs["pads"] = {0, 0, 0, 0};
    m.graph.ops.push_back(std::move(pool));
    Op flat{OpType::Reshape, "flatten", {"pool.out"}, {"flatten.out"}, {}, {}};
    flat.attrs["flatten_axis"] = {1};
    m.graph.ops.push_back(std::move(flat));
    m.tensors.push_back(uniform("fc.weight", {10, 256}, std::sqrt(6.0 / 256.0), rng));
    m.tensors.push_back(uniform("fc.bias", {10}, 1.0 / 16.0, rng));
    m.graph.ops.push_back(Op{OpType::Linear, "fc", {"flatten.out"}, {"logits"}, {"fc.weight", "fc.bias"}, {}});
    m.metadata.emplace_back("cnn.dataset", "UCI optical digits 8x8 (split_every_fifth)");
    return m;
}

Result<DigitsCnn> train_digits_cnn(const std::string& csv_path, const DigitsCnnOptions& opts, Progress* progress) {
    auto all = calib::read_digits_csv(csv_path);
    if (!all) return all.error();
    DigitsCnn d;
    d.data = calib::split_every_fifth(all.value());
    d.model = build_digits_cnn(opts.seed);
    CnnTrainOptions t;
    t.optimizer = CnnOptimizer::Adam;
    t.lr = opts.lr;
    t.epochs = opts.epochs;
    t.batch = opts.batch;
    t.seed = opts.seed;
    t.threads = opts.threads;
    EDGE_TRY(train_cnn(d.model, d.data.train, t, progress, &d.train));
    auto exec = CnnExecutor::create(d.model, 1);
    if (!exec) return exec.error();
    auto r = classify(**exec, d.data.test.pixels, d.data.test.labels, 360);
    if (!r) return r.error();
    d.test_top1 = r->top1();
    d.model.metadata.emplace_back("cnn.test_top1", std::to_string(d.test_top1));
    return d;
}

}  // namespace edge::analysis
