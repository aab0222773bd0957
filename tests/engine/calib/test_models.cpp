// engine/calib on real models: pseudo-label thresholds on mnist-8 (MNIST test images), mnist-8's
// penultimate features, stories260K pooled hidden states, and the calibration files written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/calib/calib_file.h"
#include "engine/calib/embed.h"
#include "engine/calib/image_sets.h"
#include "engine/calib/pseudo_label.h"
#include "engine/calib/select.h"
#include "engine/model/loader.h"
#include "engine/model/onnx.h"
#include "engine/prune/fold.h"
#include "engine/runtime/cnn/cnn.h"
#include "test_support.h"

namespace {

constexpr int64_t kImages = 2000;  // the first 2,000 MNIST test images

struct MnistPool {
    edge::calib::IdxImages images;
    std::vector<float> pixels;
    std::vector<uint8_t> labels;
};

const MnistPool& mnist_pool() {
    static MnistPool p = [] {
        MnistPool d;
        auto im = edge::calib::read_idx_images(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
        auto lb = edge::calib::read_idx_labels(edge::test::shared("data/t10k-labels-idx1-ubyte.gz"));
        if (im.ok() && lb.ok()) {
            d.images = im.value();
            d.pixels = edge::calib::scale_pixels(d.images, 1.0f / 255.0f);
            d.pixels.resize(size_t(kImages) * 784);
            d.labels.assign(lb->begin(), lb->begin() + kImages);
        }
        return d;
    }();
    return p;
}

}  // namespace

TEST(PseudoLabels, Mnist8ThresholdKeepsOnlyConfidentAndMostlyRightLabels) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(edge::test::shared("data/t10k-images-idx3-ubyte.gz"));
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    const MnistPool& d = mnist_pool();
    ASSERT_EQ(d.labels.size(), size_t(kImages));
    auto pl = edge::calib::pseudo_label(m.value(), d.pixels, kImages);
    ASSERT_TRUE(pl.ok()) << pl.message();
    EXPECT_EQ(pl->classes, 10);
    ASSERT_EQ(pl->layers.size(), 3u);  // Conv, Conv, MatMul head

    // The labels are the classifier's predictions (classify() agrees image by image).
    auto exec = edge::runtime::CnnExecutor::create(m.value(), 0);
    ASSERT_TRUE(exec.ok());
    auto cls = edge::runtime::classify(*exec.value(), d.pixels, d.labels, 100);
    ASSERT_TRUE(cls.ok());
    EXPECT_EQ(cls->predictions, pl->label);

    const auto accuracy = [&](const std::vector<int64_t>& idx) {
        int64_t right = 0;
        for (int64_t i : idx) right += pl->label[size_t(i)] == d.labels[size_t(i)];
        return idx.empty() ? 0.0 : double(right) / double(idx.size());
    };
    edge::calib::PseudoLabelOptions o;  // 0.92 default
    EXPECT_DOUBLE_EQ(o.threshold, 0.92);
    auto keep = edge::calib::accepted_samples(pl.value(), o, 2);
    ASSERT_TRUE(keep.ok()) << keep.message();
    for (int64_t i : *keep) EXPECT_GE(pl->confidence[size_t(i)], 0.92);
    int64_t below = 0;
    for (double c : pl->confidence) below += c < 0.92;
    EXPECT_EQ(int64_t(keep->size()) + below, kImages);
    EXPECT_GT(below, 0) << "some MNIST digits are ambiguous to mnist-8";
    EXPECT_GT(keep->size(), size_t(kImages * 9 / 10));
    std::vector<int64_t> all(static_cast<size_t>(kImages));
    for (int64_t i = 0; i < kImages; ++i) all[size_t(i)] = i;
    const double acc_all = accuracy(all), acc_kept = accuracy(keep.value());
    EXPECT_GT(acc_all, 0.97);
    EXPECT_GT(acc_kept, acc_all) << "confident labels are the more accurate ones";

    // Stricter thresholds keep subsets; 0 keeps everything.
    size_t prev = size_t(kImages) + 1;
    for (double t : {0.0, 0.5, 0.92, 0.999, 0.99999}) {
        o.threshold = t;
        auto k = edge::calib::accepted_samples(pl.value(), o, 0);
        ASSERT_TRUE(k.ok());
        if (t == 0.0) {
            EXPECT_EQ(k->size(), size_t(kImages));
        }
        EXPECT_LE(k->size(), prev) << "threshold " << t;
        prev = k->size();
    }
    EXPECT_LT(prev, keep->size()) << "0.99999 keeps fewer than 0.92";

    // Per depth: a looser threshold for the first conv, a stricter one for the head.
    o.threshold = 0.92;
    o.per_depth = {{0, 0.5}, {2, 0.999}};
    auto k0 = edge::calib::accepted_samples(pl.value(), o, 0);
    auto k1 = edge::calib::accepted_samples(pl.value(), o, 1);
    auto k2 = edge::calib::accepted_samples(pl.value(), o, 2);
    ASSERT_TRUE(k0.ok() && k1.ok() && k2.ok());
    EXPECT_GT(k0->size(), k1->size());
    EXPECT_GT(k1->size(), k2->size());
    EXPECT_EQ(k1->size(), keep->size());  // depth 1 uses the default
    EXPECT_TRUE(std::includes(k0->begin(), k0->end(), k2->begin(), k2->end()));
    EXPECT_GE(accuracy(k2.value()), accuracy(k0.value()));

    // Bad thresholds and depths are named.
    o.per_depth = {{1, 1.5}};
    auto bad = edge::calib::accepted_samples(pl.value(), o, 0);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("1.5 for depth 1 is outside [0, 1]"), std::string::npos) << bad.message();
    o.per_depth = {{3, 0.9}};
    auto deep = edge::calib::accepted_samples(pl.value(), o, 0);
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.message().find("the model has 3 layers"), std::string::npos) << deep.message();
    o.per_depth.clear();
    o.threshold = -0.1;
    EXPECT_TRUE(edge::test::fails_with(edge::calib::accepted_samples(pl.value(), o, 0),
                                       {"pseudo-label threshold -0.1 for the default is outside [0, 1] (it is"}));
}

TEST(Features, Mnist8PenultimateFeaturesAreWhatTheHeadReads) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    // Bias Adds folded into their ops, so the head is one Linear with a bias.
    edge::model::Model folded = m.value();
    ASSERT_TRUE(edge::prune::simplify_cnn(folded).ok());
    const MnistPool& d = mnist_pool();
    const int64_t n = 300;
    std::vector<float> px(d.pixels.begin(), d.pixels.begin() + n * 784);
    auto f = edge::calib::cnn_features(folded, px, n, 64);
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_EQ(f->n, n);
    EXPECT_EQ(f->dim, 256);
    const edge::model::Op& head = folded.graph.ops.back();
    ASSERT_EQ(head.type, edge::model::OpType::Linear);
    const edge::Tensor* w = folded.find(head.weights.at(0));
    const edge::Tensor* b = folded.find(head.weights.at(1));
    ASSERT_TRUE(w && b);
    auto exec = edge::runtime::CnnExecutor::create(folded, 0);
    ASSERT_TRUE(exec.ok());
    edge::runtime::Activation in{{n, 1, 28, 28}, px};
    auto logits = (*exec)->run(in);
    ASSERT_TRUE(logits.ok());
    double worst = 0.0;
    for (int64_t i = 0; i < n; ++i)
        for (int c = 0; c < 10; ++c) {
            double y = b->f32()[c];
            for (int k = 0; k < 256; ++k) y += double(w->f32()[c * 256 + k]) * double(f->row(i)[k]);
            worst = std::max(worst, std::fabs(y - double(logits->data[size_t(i * 10 + c)])));
        }
    EXPECT_LT(worst, 1e-3);
    // The unfolded graph gives the same features (the cut is before the head either way).
    auto f2 = edge::calib::cnn_features(m.value(), px, n, 100);
    ASSERT_TRUE(f2.ok()) << f2.message();
    for (size_t i = 0; i < f->data.size(); ++i) ASSERT_NEAR(f->data[i], f2->data[i], 1e-4);

    // Selecting 50 of 300 by k-means on these features covers every digit class.
    edge::calib::Embeddings e = f.value();
    edge::calib::SelectOptions so;
    so.n = 50;
    so.seed = 3;
    auto s = edge::calib::select_samples(e, so);
    ASSERT_TRUE(s.ok()) << s.message();
    std::set<int> classes;
    for (int64_t i : s->indices) classes.insert(d.labels[size_t(i)]);
    EXPECT_EQ(classes.size(), 10u);

    // Pool of the wrong size, and a model that is not a CNN.
    auto bad = edge::calib::cnn_features(folded, px, n + 1);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("for 301 images"), std::string::npos) << bad.message();
    EXPECT_TRUE(edge::test::fails_with(edge::calib::cnn_features(folded, {}, 0),
                                       {"the calibration pool is empty", "no image to embed"}));
}

TEST(Embeddings, Stories260KPooledHiddenStates) {
    const std::string path = edge::test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto model = std::make_shared<const edge::model::Model>(std::move(m).value());
    auto tok = edge::tokenizer::make_tokenizer(model->tokenizer);
    ASSERT_TRUE(tok.ok()) << tok.message();
    const std::vector<std::string> samples = {"Once upon a time, there was a little girl named Lily.",
                                              "The dog ran to the park and played with a big red ball.",
                                              "Once upon a time, there was a little girl named Lily."};
    auto e = edge::calib::llm_embeddings(model, *tok.value(), samples);
    ASSERT_TRUE(e.ok()) << e.message();
    EXPECT_EQ(e->emb.n, 3);
    EXPECT_EQ(e->emb.dim, 64);
    EXPECT_GT(e->tokens[0], 5);
    // Each sample starts from a fresh cache: equal text, equal embedding; the order does not matter.
    for (int j = 0; j < 64; ++j) EXPECT_EQ(e->emb.row(0)[j], e->emb.row(2)[j]);
    double diff = 0.0;
    for (int j = 0; j < 64; ++j) diff += std::fabs(e->emb.row(0)[j] - e->emb.row(1)[j]);
    EXPECT_GT(diff, 1e-2);
    auto rev = edge::calib::llm_embeddings(model, *tok.value(), {samples[1], samples[0]});
    ASSERT_TRUE(rev.ok());
    for (int j = 0; j < 64; ++j) EXPECT_FLOAT_EQ(rev->emb.row(0)[j], e->emb.row(1)[j]);
    // The hidden state after the output RMSNorm: each token's vector has RMS = |norm weight|-ish,
    // so the pooled vector is finite and non-zero.
    for (float v : e->emb.data) ASSERT_TRUE(std::isfinite(v));

    // A cut: a long sample embeds like its first max_tokens tokens.
    edge::calib::LlmEmbedOptions o;
    o.max_tokens = 8;
    auto cut = edge::calib::llm_embeddings(model, *tok.value(), {samples[0]}, o);
    ASSERT_TRUE(cut.ok());
    EXPECT_EQ(cut->tokens[0], e->tokens[0]);
    diff = 0.0;
    for (int j = 0; j < 64; ++j) diff += std::fabs(cut->emb.row(0)[j] - e->emb.row(0)[j]);
    EXPECT_GT(diff, 1e-3);

    auto empty = edge::calib::llm_embeddings(model, *tok.value(), {});
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.message().find("pool is empty"), std::string::npos) << empty.message();
}

TEST(CalibFiles, ParagraphsAndIdxRoundTrip) {
    const std::string text = "  First one.\n\n\n\nSecond\nline two.  \n\n \n\nThird.";
    const auto parts = edge::calib::split_paragraphs(text);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[1], "Second\nline two.");
    EXPECT_EQ(edge::calib::split_paragraphs(edge::calib::join_paragraphs(parts)), parts);

    const MnistPool& d = mnist_pool();
    ASSERT_GT(d.images.count, 100);
    const auto dir = edge::test::temp_dir("calib_idx");
    const std::string p = (dir / "sel.idx").string();
    ASSERT_TRUE(edge::calib::write_idx_images(p, d.images, {3, 1, 99}).ok());
    auto back = edge::calib::read_idx_images(p);
    ASSERT_TRUE(back.ok()) << back.message();
    ASSERT_EQ(back->count, 3);
    EXPECT_TRUE(std::equal(back->pixels.begin(), back->pixels.begin() + 784, d.images.pixels.begin() + 3 * 784));
    EXPECT_TRUE(std::equal(back->pixels.begin() + 2 * 784, back->pixels.end(), d.images.pixels.begin() + 99 * 784));
    const std::string lp = (dir / "sel.labels").string();
    ASSERT_TRUE(edge::calib::write_idx_labels(lp, {7, 2, 1}).ok());
    auto lb = edge::calib::read_idx_labels(lp);
    ASSERT_TRUE(lb.ok()) << lb.message();
    EXPECT_EQ(lb.value(), (std::vector<uint8_t>{7, 2, 1}));
    auto bad = edge::calib::write_idx_images(p, d.images, {d.images.count});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("outside the pool"), std::string::npos);
    EXPECT_TRUE(edge::test::fails_with(edge::write_text_file((dir / "no/such/dir/x.txt").string(), "x"),
                                       {"x.txt", "cannot open for writing"}));
}
