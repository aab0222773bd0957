// CNN quantization (engine/quant/cnn_quant.h) and the runtime's integer conv / linear kernels:
// the integer kernel against the float definition on the dequantized values, and mnist-8 at
// W8A8 and INT4 on all 10,000 MNIST test images.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "engine/calib/image_sets.h"
#include "engine/model/onnx.h"
#include "engine/quant/cnn_quant.h"
#include "engine/runtime/cnn/cnn.h"
#include "test_support.h"

namespace {

struct Mnist {
    std::vector<float> pixels;
    std::vector<uint8_t> labels;
};

const Mnist& mnist() {
    static Mnist data = [] {
        Mnist d;
        auto im = edge::calib::read_idx_images(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
        auto lb = edge::calib::read_idx_labels(edge::test::shared("data/t10k-labels-idx1-ubyte.gz"));
        if (im.ok() && lb.ok()) {
            d.pixels = edge::calib::scale_pixels(im.value(), 1.0f / 255.0f);
            d.labels = lb.value();
        }
        return d;
    }();
    return data;
}

}  // namespace

TEST(CnnQuant, IntegerConvMatchesTheDefinitionOnDequantizedValues) {
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> code(-127, 127), act(-128, 127);
    const int64_t n = 2, ic = 4, h = 7, w = 6, oc = 6;
    edge::runtime::Conv2dParams p;
    p.kh = 3;
    p.kw = 2;
    p.stride_h = 2;
    p.pad_t = 1;
    p.pad_b = 1;
    p.pad_l = 1;
    p.group = 2;
    const int64_t k = (ic / p.group) * p.kh * p.kw;
    const int64_t oh = (h + 2 - 3) / 2 + 1, ow = (w + 1 - 2) / 1 + 1;
    const float act_scale = 0.03f;
    const int32_t act_zero = -17;
    std::vector<int8_t> xq(size_t(n * ic * h * w)), codes(size_t(oc * k));
    for (auto& v : xq) v = int8_t(act(rng));
    for (auto& v : codes) v = int8_t(code(rng));
    std::vector<float> scales(static_cast<size_t>(oc)), bias(static_cast<size_t>(oc)),
        out_scale(static_cast<size_t>(oc));
    std::vector<int32_t> rowsum(static_cast<size_t>(oc), 0);
    for (int64_t o = 0; o < oc; ++o) {
        scales[size_t(o)] = 0.001f * float(o + 1);
        bias[size_t(o)] = 0.1f * float(o) - 0.2f;
        out_scale[size_t(o)] = scales[size_t(o)] * act_scale;
        for (int64_t i = 0; i < k; ++i) rowsum[size_t(o)] += codes[size_t(o * k + i)];
    }
    std::vector<float> xf(xq.size()), wf(codes.size());
    for (size_t i = 0; i < xq.size(); ++i) xf[i] = act_scale * float(xq[i] - act_zero);
    for (size_t i = 0; i < codes.size(); ++i) wf[i] = scales[i / size_t(k)] * float(codes[i]);
    std::vector<float> y(size_t(n * oc * oh * ow)), ref(y.size());
    edge::runtime::conv2d_int8(xq.data(), n, ic, h, w, act_zero, codes.data(), rowsum.data(), out_scale.data(),
                               bias.data(), oc, p, y.data(), oh, ow, nullptr);
    edge::runtime::conv2d_reference(xf.data(), n, ic, h, w, wf.data(), bias.data(), oc, p, ref.data(), oh, ow);
    double worst = 0, big = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        worst = std::max(worst, std::fabs(double(y[i]) - ref[i]));
        big = std::max(big, std::fabs(double(ref[i])));
    }
    EXPECT_LT(worst / big, 1e-5) << worst << " of " << big;
    // Activation quantization rounds and saturates.
    EXPECT_EQ(edge::runtime::quantize_act(0.0f, 0.5f, 3), 3);
    EXPECT_EQ(edge::runtime::quantize_act(1.26f, 0.5f, 3), 6);
    EXPECT_EQ(edge::runtime::quantize_act(1000.0f, 0.5f, 3), 127);
    EXPECT_EQ(edge::runtime::quantize_act(-1000.0f, 0.5f, 3), -128);
}

TEST(CnnQuant, Mnist8W8A8AndInt4OnAllTestImages) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto ref = edge::runtime::CnnExecutor::create(m.value());
    ASSERT_TRUE(ref.ok()) << ref.message();
    // Calibration on the first 256 images, evaluation on all 10,000.
    auto q8 = edge::quant::quantize_cnn(m.value(), edge::quant::cnn_uniform_plan(edge::quant::Precision::INT8),
                                        mnist().pixels, 10000);
    ASSERT_TRUE(q8.ok()) << q8.message();
    EXPECT_EQ(q8->layers.size(), 3u);  // two convs and the classifier
    for (const auto& l : q8->layers) {
        EXPECT_TRUE(l.int8_activations);
        EXPECT_GT(l.act_scale, 0.0f) << l.op;
    }
    auto e8 = edge::runtime::CnnExecutor::create(m.value(), q8.value());
    ASSERT_TRUE(e8.ok()) << e8.message();
    auto c8 = edge::quant::compare_cnn(**ref, **e8, mnist().pixels, mnist().labels);
    ASSERT_TRUE(c8.ok()) << c8.message();
    EXPECT_NEAR(c8->top1_ref, 0.9890, 1e-9);
    EXPECT_GE(c8->top1, 0.985);
    EXPECT_GE(c8->agreement, 0.995);
    EXPECT_LT(c8->kl_mean, 0.01);
    std::printf("mnist-8 W8A8: top-1 %.4f (fp32 %.4f), agreement %.4f, KL mean %.2e max %.2e\n", c8->top1, c8->top1_ref,
                c8->agreement, c8->kl_mean, c8->kl_max);

    edge::quant::CnnQuantOptions wo;
    wo.int8_activations = false;
    auto q4 = edge::quant::quantize_cnn(m.value(), edge::quant::cnn_uniform_plan(edge::quant::Precision::INT4),
                                        mnist().pixels, 10000, wo);
    ASSERT_TRUE(q4.ok()) << q4.message();
    for (const auto& l : q4->layers)
        for (int8_t c : l.codes) ASSERT_TRUE(c >= -7 && c <= 7) << l.op;
    auto e4 = edge::runtime::CnnExecutor::create(m.value(), q4.value());
    ASSERT_TRUE(e4.ok()) << e4.message();
    // INT4 and the dequantized cross-check on the first 2,000 images (the W8A8 pass above covers
    // all 10,000; docs/cnn.md has the full-set figures from `edgestudio-cli cnn-quant`).
    const std::vector<float> px(mnist().pixels.begin(), mnist().pixels.begin() + 2000 * 784);
    const std::vector<uint8_t> lb(mnist().labels.begin(), mnist().labels.begin() + 2000);
    auto c4 = edge::quant::compare_cnn(**ref, **e4, px, lb);
    ASSERT_TRUE(c4.ok()) << c4.message();
    EXPECT_GE(c4->top1, 0.97);
    EXPECT_GT(c4->kl_mean, c8->kl_mean);  // four bits lose more than eight
    std::printf("mnist-8 W4 (weight-only): top-1 %.4f, agreement %.4f, KL mean %.2e max %.2e\n", c4->top1,
                c4->agreement, c4->kl_mean, c4->kl_max);
    // The dequantized model through the float path gives the same logits as the weight-only
    // integer path.
    edge::model::Model dq = edge::quant::dequantized_cnn(m.value(), q4.value());
    auto edq = edge::runtime::CnnExecutor::create(dq);
    ASSERT_TRUE(edq.ok()) << edq.message();
    auto same = edge::quant::compare_cnn(**edq, **e4, px, lb);
    ASSERT_TRUE(same.ok()) << same.message();
    EXPECT_EQ(same->agreement, 1.0);
    EXPECT_LT(same->kl_max, 1e-9);
}

TEST(CnnQuant, PlansAndCodesAreChecked) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    // Grouped weights are not a CNN layout: the error names a layer.
    auto plan = edge::quant::uniform_plan(edge::quant::Precision::INT8, edge::QMethod::RTN, 4, true);
    edge::quant::CnnQuantOptions wo;
    wo.int8_activations = false;
    auto q = edge::quant::quantize_cnn(m.value(), plan, {}, 0, wo);
    ASSERT_FALSE(q.ok());
    EXPECT_NE(q.message().find("per output channel"), std::string::npos) << q.message();
    // Codes that do not fit the layer, or an unknown layer, are refused by the executor.
    auto good =
        edge::quant::quantize_cnn(m.value(), edge::quant::cnn_uniform_plan(edge::quant::Precision::INT4), {}, 0, wo);
    ASSERT_TRUE(good.ok()) << good.message();
    edge::runtime::CnnQuantization bad = good.value();
    bad.layers[0].codes.pop_back();
    auto e = edge::runtime::CnnExecutor::create(m.value(), bad);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.message().find(bad.layers[0].op), std::string::npos) << e.message();
    bad = good.value();
    bad.layers[0].codes[0] = 100;  // outside INT4
    e = edge::runtime::CnnExecutor::create(m.value(), bad);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.message().find("outside"), std::string::npos) << e.message();
    bad = good.value();
    bad.layers[0].op = "nope";
    e = edge::runtime::CnnExecutor::create(m.value(), bad);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.message().find("nope"), std::string::npos) << e.message();
}
