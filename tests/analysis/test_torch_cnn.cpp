// The LibTorch CNN executor and trainer (engine/analysis/torch_cnn.h) against the runtime
// executor, on real models: mnist-8 (acceptance 1 through LibTorch), ResNet-20 from its
// safetensors, and the digits CNN trained here.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "engine/analysis/cnn_digits.h"
#include "engine/analysis/torch_cnn.h"
#include "engine/calib/image_sets.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/onnx.h"
#include "engine/prune/fold.h"
#include "engine/runtime/cnn/cnn.h"
#include "test_support.h"

namespace {

const edge::calib::LabelledImages& mnist() {
    static edge::calib::LabelledImages data = [] {
        edge::calib::LabelledImages d;
        auto im = edge::calib::read_idx_images(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
        auto lb = edge::calib::read_idx_labels(edge::test::shared("data/t10k-labels-idx1-ubyte.gz"));
        if (im.ok() && lb.ok()) {
            d.count = im->count;
            d.rows = im->rows;
            d.cols = im->cols;
            d.pixels = edge::calib::scale_pixels(im.value(), 1.0f / 255.0f);
            d.labels = lb.value();
        }
        return d;
    }();
    return data;
}

// max |a - b| / max |b|
double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num = std::max(num, std::fabs(double(a[i]) - double(b[i])));
        den = std::max(den, std::fabs(double(b[i])));
    }
    return num / std::max(den, 1e-30);
}

edge::runtime::Activation random_input(const std::vector<int64_t>& shape, uint64_t seed) {
    edge::runtime::Activation a;
    a.shape = shape;
    a.data.resize(size_t(a.numel()));
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : a.data) v = nd(rng);
    return a;
}

// The digits CNN, trained once per test binary.
const edge::analysis::DigitsCnn& digits() {
    static edge::analysis::DigitsCnn d = [] {
        auto r = edge::analysis::train_digits_cnn(edge::test::shared("data/digits.csv.gz"));
        if (!r.ok()) {
            ADD_FAILURE() << r.message();
            return edge::analysis::DigitsCnn{};
        }
        return std::move(r.value());
    }();
    return d;
}

}  // namespace

TEST(TorchCnn, Mnist8Top1Is9890ThroughLibTorch) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto r = edge::analysis::torch_cnn_classify(m.value(), mnist());
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->images, 10000);
    EXPECT_EQ(r->correct, 9890) << "top-1 " << r->top1();
    // And the two executors agree per image, not only on the count.
    auto exec = edge::runtime::CnnExecutor::create(m.value());
    ASSERT_TRUE(exec.ok()) << exec.message();
    auto rt = edge::runtime::classify(**exec, mnist().pixels, mnist().labels);
    ASSERT_TRUE(rt.ok()) << rt.message();
    int64_t differ = 0;
    for (size_t i = 0; i < rt->predictions.size(); ++i) differ += rt->predictions[i] != r->predictions[i];
    EXPECT_EQ(differ, 0);
}

TEST(TorchCnn, Mnist8LogitsMatchTheRuntime) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    edge::runtime::Activation in;
    in.shape = {64, 1, 28, 28};
    in.data.assign(mnist().pixels.begin(), mnist().pixels.begin() + 64 * 784);
    auto t = edge::analysis::torch_cnn_forward(m.value(), in);
    ASSERT_TRUE(t.ok()) << t.message();
    auto exec = edge::runtime::CnnExecutor::create(m.value());
    ASSERT_TRUE(exec.ok()) << exec.message();
    auto r = (*exec)->run(in);
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_EQ(t->shape, r->shape);
    EXPECT_LT(rel_err(t->data, r->data), 1e-5);
}

TEST(TorchCnn, ResNet20MatchesTheRuntime) {
    // BatchNorm, option-A shortcut (MaxPool k1 s2 + channel Pad), residual Add, global pool.
    const std::string path = edge::test::shared("models/cnn/resnet20_cifar10.safetensors");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::build_resnet20_cifar(path);
    ASSERT_TRUE(m.ok()) << m.message();
    const auto in = random_input({3, 3, 32, 32}, 7);
    auto t = edge::analysis::torch_cnn_forward(m.value(), in);
    ASSERT_TRUE(t.ok()) << t.message();
    auto exec = edge::runtime::CnnExecutor::create(m.value());
    ASSERT_TRUE(exec.ok()) << exec.message();
    auto r = (*exec)->run(in);
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_EQ(t->shape, (std::vector<int64_t>{3, 10}));
    ASSERT_EQ(t->shape, r->shape);
    EXPECT_LT(rel_err(t->data, r->data), 1e-4);
}

TEST(TorchCnn, PaddingRulesMatchTheRuntime) {
    // Asymmetric conv pads, SAME_LOWER, ceil-mode max pool, avg pool with and without pads counted.
    edge::model::Model m;
    m.architecture = edge::model::kCnnArchitecture;
    m.name = "pads";
    edge::model::set_cnn_input_shape(m, {1, 2, 9, 7});
    m.graph.inputs = {"x"};
    m.graph.outputs = {"y"};
    std::mt19937_64 rng(3);
    std::normal_distribution<float> nd(0.0f, 0.5f);
    edge::Tensor w = edge::Tensor::zeros_f32("c.weight", {4, 2, 3, 2});
    for (int64_t i = 0; i < w.numel(); ++i) w.f32_mut()[i] = nd(rng);
    m.tensors.push_back(w);
    edge::Tensor w2 = edge::Tensor::zeros_f32("d.weight", {4, 4, 2, 3});
    for (int64_t i = 0; i < w2.numel(); ++i) w2.f32_mut()[i] = nd(rng);
    m.tensors.push_back(w2);
    edge::model::Op c{edge::model::OpType::Conv2d, "c", {"x"}, {"c.out"}, {"c.weight"}, {}};
    c.attrs["strides"] = {2, 1};
    c.attrs["pads"] = {0, 2, 1, 0};
    m.graph.ops.push_back(c);
    edge::model::Op d{edge::model::OpType::Conv2d, "d", {"c.out"}, {"d.out"}, {"d.weight"}, {}};
    d.attrs["auto_pad"] = {2};
    m.graph.ops.push_back(d);
    edge::model::Op mp{edge::model::OpType::MaxPool, "mp", {"d.out"}, {"mp.out"}, {}, {}};
    mp.attrs["kernel"] = {2, 2};
    mp.attrs["strides"] = {2, 2};
    mp.attrs["pads"] = {1, 0, 0, 1};
    mp.attrs["ceil_mode"] = {1};
    m.graph.ops.push_back(mp);
    edge::model::Op ap{edge::model::OpType::AvgPool, "ap", {"mp.out"}, {"ap.out"}, {}, {}};
    ap.attrs["kernel"] = {3, 2};
    ap.attrs["strides"] = {1, 1};
    ap.attrs["pads"] = {1, 1, 1, 0};
    ap.attrs["count_include_pad"] = {1};
    m.graph.ops.push_back(ap);
    edge::model::Op ap2{edge::model::OpType::AvgPool, "ap2", {"ap.out"}, {"y"}, {}, {}};
    ap2.attrs["kernel"] = {2, 2};
    ap2.attrs["strides"] = {2, 2};
    ap2.attrs["pads"] = {1, 1, 0, 0};
    ap2.attrs["ceil_mode"] = {1};
    m.graph.ops.push_back(ap2);
    const auto in = random_input({2, 2, 9, 7}, 11);
    auto exec = edge::runtime::CnnExecutor::create(m);
    ASSERT_TRUE(exec.ok()) << exec.message();
    auto r = (*exec)->run(in);
    ASSERT_TRUE(r.ok()) << r.message();
    auto t = edge::analysis::torch_cnn_forward(m, in);
    ASSERT_TRUE(t.ok()) << t.message();
    ASSERT_EQ(t->shape, r->shape);
    EXPECT_LT(rel_err(t->data, r->data), 1e-5);
}

TEST(TorchCnn, BadInputNamesTheModelAndShape) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto t = edge::analysis::torch_cnn_forward(m.value(), random_input({1, 3, 28, 28}, 1));
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("mnist-8.onnx"), std::string::npos) << t.message();
    EXPECT_NE(t.message().find("1x3x28x28"), std::string::npos) << t.message();
    edge::calib::LabelledImages wrong;
    wrong.count = 1;
    wrong.rows = wrong.cols = 8;
    wrong.pixels.assign(64, 0.0f);
    wrong.labels = {0};
    auto c = edge::analysis::torch_cnn_classify(m.value(), wrong);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.message().find("1x8x8"), std::string::npos) << c.message();
}

TEST(TorchCnn, GradientsMatchFiniteDifferences) {
    const auto& d = digits();
    ASSERT_GT(d.data.train.count, 0);
    edge::calib::LabelledImages few = d.data.test;
    few.count = 20;
    few.pixels.resize(size_t(20 * 64));
    few.labels.resize(20);
    auto g = edge::analysis::torch_cnn_gradients(d.model, few, {"conv2.weight", "fc.weight"});
    ASSERT_TRUE(g.ok()) << g.message();
    for (const std::string name : {"conv2.weight", "fc.weight"}) {
        const auto& gv = g->at(name);
        const size_t i = size_t(
            std::max_element(gv.begin(), gv.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); }) -
            gv.begin());
        const float h = 1e-2f;
        edge::model::Model plus = d.model, minus = d.model;
        for (edge::model::Model* mm : {&plus, &minus}) {
            edge::Tensor* t = mm->find_mut(name);
            edge::Tensor fresh = edge::Tensor::zeros_f32(t->name, t->shape);
            std::copy(t->f32(), t->f32() + t->numel(), fresh.f32_mut());
            fresh.f32_mut()[i] += mm == &plus ? h : -h;
            *t = fresh;
        }
        auto lp = edge::analysis::torch_cnn_loss(plus, few), lm = edge::analysis::torch_cnn_loss(minus, few);
        ASSERT_TRUE(lp.ok() && lm.ok());
        const double fd = (*lp - *lm) / (2.0 * h);
        EXPECT_NEAR(fd, gv[i], 2e-2 * std::fabs(gv[i]) + 1e-4) << name << "[" << i << "]";
    }
}

TEST(TorchCnn, DigitsCnnTrainsToHighTestAccuracy) {
    const std::string path = edge::test::shared("data/digits.csv.gz");
    EDGE_REQUIRE_SHARED(path);
    const auto& d = digits();
    EXPECT_EQ(d.data.train.count, 1437);
    EXPECT_EQ(d.data.test.count, 360);
    EXPECT_LT(d.train.last_loss, 0.5 * d.train.first_loss);
    EXPECT_GE(d.test_top1, 0.95) << "digits CNN test top-1 " << d.test_top1;
    std::printf("digits CNN: %d steps in %.2f s, loss %.3f -> %.3f, test top-1 %.4f\n", d.train.steps, d.train.seconds,
                d.train.first_loss, d.train.last_loss, d.test_top1);
    // The LibTorch forward agrees with the runtime on the trained model, BatchNorm included, and
    // after folding BatchNorm into the convolutions.
    auto t = edge::analysis::torch_cnn_classify(d.model, d.data.test);
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_NEAR(t->top1(), d.test_top1, 1.0 / 360.0 + 1e-9);
    edge::model::Model folded = d.model;
    auto f = edge::prune::fold_batchnorm(folded);
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_EQ(f->batchnorms_folded, 2);
    auto tf = edge::analysis::torch_cnn_classify(folded, d.data.test);
    ASSERT_TRUE(tf.ok()) << tf.message();
    int64_t differ = 0;
    for (size_t i = 0; i < tf->predictions.size(); ++i) differ += tf->predictions[i] != t->predictions[i];
    EXPECT_LE(differ, 1);
}

TEST(TorchCnn, TrainingIsDeterministicAndKeepsMasksAtZero) {
    const auto& d = digits();
    ASSERT_GT(d.data.train.count, 0);
    edge::analysis::CnnTrainOptions o;
    o.optimizer = edge::analysis::CnnOptimizer::Sgd;
    o.lr = 0.02f;
    o.steps = 15;
    o.batch = 64;
    o.threads = 1;
    // Prune half of conv2's weights (the smaller magnitudes) and fine-tune.
    const edge::Tensor* w = d.model.find("conv2.weight");
    std::vector<float> mag(w->f32(), w->f32() + w->numel());
    for (float& v : mag) v = std::fabs(v);
    std::vector<float> sorted = mag;
    std::nth_element(sorted.begin(), sorted.begin() + long(sorted.size() / 2), sorted.end());
    const float thr = sorted[sorted.size() / 2];
    std::vector<uint8_t> mask(mag.size());
    for (size_t i = 0; i < mag.size(); ++i) mask[i] = mag[i] >= thr;
    o.masks["conv2.weight"] = mask;
    edge::model::Model a = d.model, b = d.model;
    edge::analysis::CnnTrainReport ra, rb;
    ASSERT_TRUE(edge::analysis::train_cnn(a, d.data.train, o, nullptr, &ra).ok());
    ASSERT_TRUE(edge::analysis::train_cnn(b, d.data.train, o, nullptr, &rb).ok());
    EXPECT_EQ(ra.steps, 15);
    EXPECT_EQ(ra.last_loss, rb.last_loss);
    const edge::Tensor* wa = a.find("conv2.weight");
    const edge::Tensor* wb = b.find("conv2.weight");
    ASSERT_NE(wa->f32(), w->f32()) << "training must write fresh buffers";
    int64_t changed = 0;
    for (int64_t i = 0; i < wa->numel(); ++i) {
        EXPECT_EQ(wa->f32()[i], wb->f32()[i]);
        if (!mask[size_t(i)]) {
            EXPECT_EQ(wa->f32()[i], 0.0f) << i;
        }
        changed += mask[size_t(i)] && wa->f32()[i] != w->f32()[i];
    }
    EXPECT_GT(changed, 0);
    // The source model is untouched.
    EXPECT_EQ(d.model.find("conv2.weight")->f32()[0], w->f32()[0]);
}

TEST(TorchCnn, TrainerRejectsBadOptions) {
    const auto& d = digits();
    edge::model::Model m = d.model;
    edge::analysis::CnnTrainOptions o;
    o.steps = 1;
    o.masks["conv2.weight"] = std::vector<uint8_t>(3, 1);
    auto s = edge::analysis::train_cnn(m, d.data.train, o);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("conv2.weight"), std::string::npos) << s.message();
    o.masks.clear();
    o.trainable = {"nope.weight"};
    s = edge::analysis::train_cnn(m, d.data.train, o);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("nope.weight"), std::string::npos) << s.message();
}

TEST(DigitsData, CsvReadsAndBadLinesAreNamed) {
    const std::string path = edge::test::shared("data/digits.csv.gz");
    EDGE_REQUIRE_SHARED(path);
    auto all = edge::calib::read_digits_csv(path);
    ASSERT_TRUE(all.ok()) << all.message();
    EXPECT_EQ(all->count, 1797);
    EXPECT_EQ(all->labels[0], 0);
    EXPECT_EQ(all->labels[1], 1);
    EXPECT_FLOAT_EQ(all->pixels[2], 5.0f / 16.0f);  // first row: 0,0,5,13,...
    const auto dir = edge::test::temp_dir("digits");
    const std::string bad = (dir / "bad.csv").string();
    {
        std::ofstream f(bad);
        for (int i = 0; i < 64; ++i) f << "1,";
        f << "3\n";
        for (int i = 0; i < 64; ++i) f << (i == 10 ? "x" : "1") << ",";
        f << "3\n";
    }
    auto r = edge::calib::read_digits_csv(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("bad.csv:2"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("value 11"), std::string::npos) << r.message();
}
