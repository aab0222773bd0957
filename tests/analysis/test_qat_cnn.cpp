// Quantization-aware fine-tuning (engine/analysis/cnn_qat.h) of mnist-8 at INT4 weights: trained
// with fake quantization on the first half of the MNIST test set, measured on the other half
// against post-training INT4 of the original weights. And the CNN sensitivity report.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "engine/analysis/cnn_digits.h"
#include "engine/analysis/cnn_qat.h"
#include "engine/analysis/cnn_sensitivity.h"
#include "engine/calib/image_sets.h"
#include "engine/model/onnx.h"
#include "engine/quant/cnn_quant.h"
#include "engine/runtime/cnn/cnn.h"
#include "test_support.h"

namespace {

edge::calib::LabelledImages mnist_half(bool first) {
    edge::calib::LabelledImages d;
    auto im = edge::calib::read_idx_images(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    auto lb = edge::calib::read_idx_labels(edge::test::shared("data/t10k-labels-idx1-ubyte.gz"));
    if (!im.ok() || !lb.ok()) return d;
    const auto px = edge::calib::scale_pixels(im.value(), 1.0f / 255.0f);
    const int64_t half = im->count / 2, per = im->rows * im->cols, from = first ? 0 : half;
    d.count = half;
    d.rows = im->rows;
    d.cols = im->cols;
    d.pixels.assign(px.begin() + from * per, px.begin() + (from + half) * per);
    d.labels.assign(lb->begin() + from, lb->begin() + from + half);
    return d;
}

}  // namespace

TEST(CnnQat, Mnist8Int4RecoversAccuracyOnHeldOutImages) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    const auto train = mnist_half(true), held = mnist_half(false);
    ASSERT_EQ(held.count, 5000);
    const auto plan = edge::quant::cnn_uniform_plan(edge::quant::Precision::INT4);
    edge::quant::CnnQuantOptions wo;
    wo.int8_activations = false;
    auto ref = edge::runtime::CnnExecutor::create(m.value());
    ASSERT_TRUE(ref.ok()) << ref.message();
    auto ptq = edge::quant::quantize_cnn(m.value(), plan, {}, 0, wo);
    ASSERT_TRUE(ptq.ok()) << ptq.message();
    auto eptq = edge::runtime::CnnExecutor::create(m.value(), ptq.value());
    ASSERT_TRUE(eptq.ok()) << eptq.message();
    auto before = edge::quant::compare_cnn(**ref, **eptq, held.pixels, held.labels);
    ASSERT_TRUE(before.ok()) << before.message();

    edge::model::Model tuned = m.value();
    edge::analysis::CnnQatOptions o;
    o.train.optimizer = edge::analysis::CnnOptimizer::Adam;
    o.train.lr = 2e-4f;
    o.train.steps = 150;
    o.train.batch = 64;
    o.train.threads = 1;
    edge::analysis::CnnTrainReport rep;
    auto s = edge::analysis::qat_finetune_cnn(tuned, plan, train, o, nullptr, &rep);
    ASSERT_TRUE(s.ok()) << s.message();
    auto qat = edge::quant::quantize_cnn(tuned, plan, {}, 0, wo);
    ASSERT_TRUE(qat.ok()) << qat.message();
    auto eqat = edge::runtime::CnnExecutor::create(tuned, qat.value());
    ASSERT_TRUE(eqat.ok()) << eqat.message();
    auto after = edge::quant::compare_cnn(**ref, **eqat, held.pixels, held.labels);
    ASSERT_TRUE(after.ok()) << after.message();
    std::printf("mnist-8 INT4 on held-out 5000: fp32 %.4f, PTQ %.4f (KL %.3g), QAT %.4f (KL %.3g), %d steps %.1f s\n",
                before->top1_ref, before->top1, before->kl_mean, after->top1, after->kl_mean, rep.steps, rep.seconds);
    EXPECT_GT(after->top1, before->top1);
    EXPECT_LT(after->nll, before->nll);
}

TEST(CnnQat, FrozenZeroPointsChangeAsymmetricTraining) {
    auto d = edge::analysis::train_digits_cnn(edge::test::shared("data/digits.csv.gz"));
    ASSERT_TRUE(d.ok()) << d.message();
    edge::analysis::CnnTrainOptions o;
    o.steps = 20;
    o.threads = 1;
    o.lr = 1e-2f;
    edge::analysis::FakeQuantSpec f;
    f.bits = 3;
    f.symmetric = false;
    o.fake_quant["conv2.weight"] = f;
    edge::model::Model a = d->model, b = d->model;
    ASSERT_TRUE(edge::analysis::train_cnn(a, d->data.train, o).ok());
    o.fake_quant["conv2.weight"].freeze_zero_point = true;
    ASSERT_TRUE(edge::analysis::train_cnn(b, d->data.train, o).ok());
    const edge::Tensor* wa = a.find("conv2.weight");
    const edge::Tensor* wb = b.find("conv2.weight");
    int64_t differ = 0;
    for (int64_t i = 0; i < wa->numel(); ++i) differ += wa->f32()[i] != wb->f32()[i];
    EXPECT_GT(differ, 0);
    o.fake_quant["conv2.weight"].bits = 9;
    auto bad = edge::analysis::train_cnn(b, d->data.train, o);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("9 bits"), std::string::npos) << bad.message();
}

TEST(CnnSensitivity, Mnist8ReportHasEveryLayer) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    const auto data = mnist_half(true);
    edge::analysis::AnalysisOptions o;
    o.topk = 3;
    o.lanczos_steps = 10;
    o.hessian_sequences = 128;
    o.batches = 4;
    o.batch_size = 32;
    o.quant_sequences = 1000;
    o.threads = 1;
    auto r = edge::analysis::analyze_cnn_sensitivity(m.value(), data, o);
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_EQ(r->layers.size(), 3u);
    int ranks = 0;
    for (const auto& L : r->layers) {
        EXPECT_EQ(L.eigenvalues.size(), 3u) << L.layer;
        EXPECT_GT(std::fabs(L.eigenvalues[0]), 0.0) << L.layer;
        EXPECT_GT(L.grad_norm_std, 0.0) << L.layer;
        ASSERT_TRUE(L.int4_kl.has_value()) << L.layer;
        EXPECT_GT(*L.int4_kl, 0.0) << L.layer;
        ranks += L.rank;
    }
    EXPECT_EQ(ranks, 1 + 2 + 3);
    // The JSON round-trips through the reader the studio uses.
    auto back = edge::analysis::analysis_from_json(edge::analysis::analysis_to_json(r.value()));
    ASSERT_TRUE(back.ok()) << back.message();
    ASSERT_EQ(back->layers.size(), 3u);
    EXPECT_EQ(back->layers[0].int4_top1_delta, r->layers[0].int4_top1_delta);
}
