// Acceptance 1 (runtime half): mnist-8.onnx gives 98.90% top-1 on all 10,000 MNIST test images
// (pixels / 255) through the CNN executor; and the conv kernel agrees with its definition.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/calib/image_sets.h"
#include "engine/core/thread_pool.h"
#include "engine/model/onnx.h"
#include "engine/prune/fold.h"
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

TEST(Mnist, IdxFilesRead) {
    EDGE_REQUIRE_SHARED(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    auto im = edge::calib::read_idx_images(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    ASSERT_TRUE(im.ok()) << im.message();
    EXPECT_EQ(im->count, 10000);
    EXPECT_EQ(im->rows, 28);
    EXPECT_EQ(im->cols, 28);
    auto lb = edge::calib::read_idx_labels(edge::test::shared("data/t10k-labels-idx1-ubyte.gz"));
    ASSERT_TRUE(lb.ok()) << lb.message();
    ASSERT_EQ(lb->size(), 10000u);
    EXPECT_EQ((*lb)[0], 7);  // the first MNIST test digit is a 7
    // The wrong kind of file is an error naming it.
    auto wrong = edge::calib::read_idx_images(edge::test::shared("data/t10k-labels-idx1-ubyte.gz"));
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.message().find("t10k-labels"), std::string::npos) << wrong.message();
}

TEST(Mnist, Mnist8Top1Is9890OnAllTestImages) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto exec = edge::runtime::CnnExecutor::create(m.value(), 0);
    ASSERT_TRUE(exec.ok()) << exec.message();
    const Mnist& d = mnist();
    ASSERT_EQ(d.labels.size(), 10000u);
    auto r = edge::runtime::classify(*exec.value(), d.pixels, d.labels, 100);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->images, 10000);
    EXPECT_EQ(r->correct, 9890) << "top-1 " << 100.0 * r->top1() << "%";

    // Folding the bias Adds into Conv/Linear (merge_linear) leaves every prediction unchanged.
    edge::model::Model folded = m.value();
    auto rep = edge::prune::simplify_cnn(folded);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_EQ(rep->adds_merged, 3);
    EXPECT_EQ(rep->before.total, 11);
    EXPECT_EQ(rep->after.total, 8);
    EXPECT_EQ(rep->params_after, rep->params_before);
    auto exec2 = edge::runtime::CnnExecutor::create(folded, 0);
    ASSERT_TRUE(exec2.ok()) << exec2.message();
    auto r2 = edge::runtime::classify(*exec2.value(), d.pixels, d.labels, 100);
    ASSERT_TRUE(r2.ok()) << r2.message();
    EXPECT_EQ(r2->correct, 9890);
    int differ = 0;
    for (size_t i = 0; i < r->predictions.size(); ++i) differ += r->predictions[i] != r2->predictions[i];
    EXPECT_EQ(differ, 0);
}

TEST(Mnist, BatchSizeDoesNotChangeLogits) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto exec = edge::runtime::CnnExecutor::create(m.value(), 2);
    ASSERT_TRUE(exec.ok()) << exec.message();
    const Mnist& d = mnist();
    ASSERT_EQ(d.labels.size(), 10000u);
    edge::runtime::Activation batch{{7, 1, 28, 28}, std::vector<float>(d.pixels.begin(), d.pixels.begin() + 7 * 784)};
    auto all = exec.value()->run(batch);
    ASSERT_TRUE(all.ok()) << all.message();
    ASSERT_EQ(all->shape, (std::vector<int64_t>{7, 10}));
    for (int i = 0; i < 7; ++i) {
        edge::runtime::Activation one{{1, 1, 28, 28},
                                      std::vector<float>(d.pixels.begin() + i * 784, d.pixels.begin() + (i + 1) * 784)};
        auto o = exec.value()->run(one);
        ASSERT_TRUE(o.ok()) << o.message();
        for (int k = 0; k < 10; ++k) EXPECT_FLOAT_EQ(o->data[size_t(k)], all->data[size_t(i * 10 + k)]);
    }
    // A wrong input shape is an error naming the shapes.
    edge::runtime::Activation bad{{1, 3, 28, 28}, std::vector<float>(3 * 784)};
    auto e = exec.value()->run(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.message().find("[1x3x28x28]"), std::string::npos) << e.message();
}

TEST(CnnKernels, Conv2dMatchesTheDefinition) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    edge::ThreadPool pool(2);
    struct Case {
        int64_t n, ic, h, w, oc, k, stride, pad, dil, group;
    };
    for (const Case& c :
         {Case{2, 3, 9, 7, 4, 3, 1, 1, 1, 1}, Case{1, 4, 11, 11, 6, 3, 2, 1, 1, 2}, Case{3, 2, 8, 8, 5, 5, 1, 2, 1, 1},
          Case{1, 6, 10, 9, 6, 3, 1, 2, 2, 6}, Case{1, 1, 28, 28, 8, 5, 1, 2, 1, 1}}) {
        edge::runtime::Conv2dParams p;
        p.kh = p.kw = c.k;
        p.stride_h = p.stride_w = c.stride;
        p.pad_t = p.pad_l = p.pad_b = p.pad_r = c.pad;
        p.dil_h = p.dil_w = c.dil;
        p.group = c.group;
        const int64_t oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
        const int64_t ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
        std::vector<float> x(size_t(c.n * c.ic * c.h * c.w)), wt(size_t(c.oc * (c.ic / c.group) * c.k * c.k)),
            b(size_t(c.oc));
        for (float& v : x) v = u(rng);
        for (float& v : wt) v = u(rng);
        for (float& v : b) v = u(rng);
        std::vector<float> y(size_t(c.n * c.oc * oh * ow)), ref(y.size());
        edge::runtime::conv2d(x.data(), c.n, c.ic, c.h, c.w, wt.data(), b.data(), c.oc, p, y.data(), oh, ow, &pool);
        edge::runtime::conv2d_reference(x.data(), c.n, c.ic, c.h, c.w, wt.data(), b.data(), c.oc, p, ref.data(), oh,
                                        ow);
        double max_err = 0, max_ref = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            max_err = std::max(max_err, double(std::fabs(y[i] - ref[i])));
            max_ref = std::max(max_ref, double(std::fabs(ref[i])));
        }
        EXPECT_LT(max_err / max_ref, 1e-6) << "case k=" << c.k << " stride=" << c.stride << " group=" << c.group;
    }
}
