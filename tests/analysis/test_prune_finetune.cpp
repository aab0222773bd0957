// Pruning with fine-tuning (engine/analysis/prune_finetune.h) on the digits CNN fixture
// (cnn_digits.h, calib::split_every_fifth) trained through torch_cnn.h: the LibTorch CNN forward agrees
// with the runtime executor, masks hold removed units at zero during training, the fast version of
// acceptance 3 (digits CNN, 50% of its channels, iterative with fine-tuning), DST, and the LLM path
// (stories260K MLP channels, fine-tuning lowers the loss on held-out paragraphs).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "engine/analysis/cnn_digits.h"
#include "engine/analysis/prune_finetune.h"
#include "engine/analysis/torch_cnn.h"
#include "engine/analysis/torch_llama.h"
#include "engine/analysis/torchscript_cnn.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/loader.h"
#include "engine/runtime/cnn/cnn.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/validate/perplexity.h"
#include "test_support.h"

using edge::analysis::build_digits_cnn;
using edge::analysis::cnn_layer_weights;
using edge::analysis::CnnTrainOptions;
using edge::analysis::CnnTrainReport;
using edge::analysis::load_torchscript_cnn;
using edge::analysis::save_torchscript_cnn;
using edge::analysis::torch_cnn_classify;
using edge::analysis::torch_cnn_forward;
using edge::analysis::torch_mean_nll;
using edge::analysis::train_cnn;
using edge::model::build_resnet20_cifar;
using edge::model::cnn_input_shape;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::Activation;
using edge::runtime::CnnExecutor;
using edge::tokenizer::make_tokenizer;
using edge::validate::ppl_sequences;
using edge::validate::PplOptions;
using edge::validate::PplProtocol;

using namespace edge;
using namespace edge::analysis;

namespace {

calib::ImageSplit digits() {
    const std::string path = edge::test::shared("data/digits.csv.gz");
    auto d = calib::read_digits_csv(path);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.message());
    return calib::split_every_fifth(d.value());
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num = std::max(num, double(std::fabs(a[i] - b[i])));
        den = std::max(den, double(std::fabs(b[i])));
    }
    return num / std::max(den, 1e-30);
}

Activation as_input(const calib::LabelledImages& d) {
    Activation in;
    in.shape = {d.count, d.channels, d.rows, d.cols};
    in.data = d.pixels;
    return in;
}

std::vector<float> runtime_logits(const Model& m, const calib::LabelledImages& d) {
    auto ex = CnnExecutor::create(m, 2);
    EXPECT_TRUE(ex.ok()) << (ex.ok() ? "" : ex.message());
    auto y = ex.value()->run(as_input(d));
    EXPECT_TRUE(y.ok()) << (y.ok() ? "" : y.message());
    return y->data;
}

std::vector<float> torch_logits(const Model& m, const calib::LabelledImages& d) {
    auto y = torch_cnn_forward(m, as_input(d));
    EXPECT_TRUE(y.ok()) << (y.ok() ? "" : y.message());
    return y.ok() ? y->data : std::vector<float>{};
}

calib::LabelledImages random_images(std::vector<int64_t> shape, int n, uint32_t seed) {
    calib::LabelledImages s;
    s.count = n;
    s.channels = shape[0];
    s.rows = shape[1];
    s.cols = shape[2];
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    s.pixels.resize(size_t(n * shape[0] * shape[1] * shape[2]));
    for (float& v : s.pixels) v = u(rng);
    s.labels.assign(size_t(n), 0);
    return s;
}

calib::LabelledImages head(const calib::LabelledImages& d, int64_t n) {
    calib::LabelledImages s = d;
    s.count = n;
    s.pixels.resize(size_t(n * d.image_size()));
    s.labels.resize(size_t(n));
    return s;
}

double accuracy(const Model& m, const calib::LabelledImages& d) {
    auto r = torch_cnn_classify(m, d);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.message());
    return r.ok() ? r->top1() : 0.0;
}

Model trained_digits(const calib::ImageSplit& d, int steps) {
    Model m = build_digits_cnn(1);
    CnnTrainOptions t = prune_cnn_train_defaults();
    t.steps = steps;
    t.threads = 1;
    CnnTrainReport rep;
    auto s = train_cnn(m, d.train, t, nullptr, &rep);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.message());
    EXPECT_LT(rep.last_loss, rep.first_loss);
    return m;
}

}  // namespace

TEST(PruneFinetune, DigitsSplitIsFixed) {
    EDGE_REQUIRE_SHARED(edge::test::shared("data/digits.csv.gz"));
    const calib::ImageSplit d = digits();
    EXPECT_EQ(d.train.count, 1437);
    EXPECT_EQ(d.test.count, 360);
    EXPECT_EQ((std::vector<int64_t>{d.train.channels, d.train.rows, d.train.cols}), (std::vector<int64_t>{1, 8, 8}));
    for (float v : d.test.pixels) ASSERT_TRUE(v >= 0.0f && v <= 1.0f);
    auto bad = calib::read_digits_csv(edge::test::shared("models/cnn/mnist-8.onnx"));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("mnist-8.onnx"), std::string::npos) << bad.message();
}

TEST(PruneFinetune, TorchForwardMatchesRuntime) {
    EDGE_REQUIRE_SHARED(edge::test::shared("data/digits.csv.gz"));
    const calib::ImageSplit d = digits();
    const Model m = trained_digits(d, 60);  // BatchNorm statistics are no longer trivial
    const calib::LabelledImages few = head(d.test, 64);
    EXPECT_LT(max_rel_diff(torch_logits(m, few), runtime_logits(m, few)), 1e-4);
    // ResNet-20 (channel Pad shortcuts, strided MaxPool) and mnist-8 (SAME_UPPER pads, Reshape).
    for (const std::string rel : {"models/cnn/resnet20_cifar10.safetensors", "models/cnn/mnist-8.onnx"}) {
        const std::string path = edge::test::shared(rel);
        EDGE_REQUIRE_SHARED(path);
        auto x = rel.find("resnet") != std::string::npos ? build_resnet20_cifar(path) : load_model(path);
        ASSERT_TRUE(x.ok()) << x.message();
        auto in = cnn_input_shape(x.value());
        ASSERT_TRUE(in.ok());
        const calib::LabelledImages imgs = random_images({(*in)[1], (*in)[2], (*in)[3]}, 3, 5);
        EXPECT_LT(max_rel_diff(torch_logits(x.value(), imgs), runtime_logits(x.value(), imgs)), 1e-4) << rel;
    }
}

TEST(PruneFinetune, TrainingHoldsRemovedUnitsAtZero) {
    EDGE_REQUIRE_SHARED(edge::test::shared("data/digits.csv.gz"));
    const calib::ImageSplit d = digits();
    Model m = build_digits_cnn(2);
    prune::PruneSpec spec;
    spec.ratio = 0.5;
    auto plan = prune::plan_pruning(m, spec);
    ASSERT_TRUE(plan.ok()) << plan.message();
    auto masks = consumer_masks(m, plan->layers);
    ASSERT_TRUE(masks.ok()) << masks.message();
    EXPECT_EQ(masks->size(), 2u);  // conv2 and fc (through the flatten) read pruned channels
    CnnTrainOptions t = prune_cnn_train_defaults();
    t.steps = 20;
    t.threads = 1;
    for (const auto& [name, mk] : masks.value())
        for (float v : mk) t.masks[name].push_back(v != 0.0f ? 1 : 0);
    ASSERT_TRUE(train_cnn(m, d.train, t).ok());
    const Tensor* w = m.find("conv2.weight");  // [16, 8, 3, 3]; reads conv1's channels
    std::vector<int64_t> removed;
    for (const auto& l : plan->layers)
        if (l.layer == "conv1") removed = l.removed_units();
    ASSERT_EQ(removed.size(), 4u);
    double zero_sum = 0, kept_sum = 0;
    for (int64_t o = 0; o < 16; ++o)
        for (int64_t c = 0; c < 8; ++c)
            for (int64_t k = 0; k < 9; ++k) {
                const double v = std::fabs(w->f32()[(o * 8 + c) * 9 + k]);
                (std::find(removed.begin(), removed.end(), c) != removed.end() ? zero_sum : kept_sum) += v;
            }
    EXPECT_EQ(zero_sum, 0.0);
    EXPECT_GT(kept_sum, 1.0);
    // The masked, trained model and its physically pruned twin agree.
    auto p = prune::apply_masks(m, plan->layers);
    ASSERT_TRUE(p.ok()) << p.message();
    const calib::LabelledImages few = head(d.test, 32);
    EXPECT_LT(max_rel_diff(runtime_logits(p.value(), few), runtime_logits(m, few)), 1e-5);
}

// The pruned model is physically smaller and exports: ResNet-20 (residual ties, channel-Pad
// shortcuts) at 30% leaves as a TorchScript module whose import has the narrower tensors and
// gives the pruned model's outputs.
TEST(PruneFinetune, PrunedResNet20ExportsAsTorchScript) {
    const std::string path = edge::test::shared("models/cnn/resnet20_cifar10.safetensors");
    EDGE_REQUIRE_SHARED(path);
    auto m = build_resnet20_cifar(path);
    ASSERT_TRUE(m.ok()) << m.message();
    prune::PruneSpec spec;
    spec.ratio = 0.3;
    auto plan = prune::plan_pruning(m.value(), spec);
    ASSERT_TRUE(plan.ok()) << plan.message();
    auto p = prune::apply_masks(m.value(), plan->layers);
    ASSERT_TRUE(p.ok()) << p.message();
    ASSERT_LT(plan->params_after, plan->params_before);
    const std::string pt = (edge::test::temp_dir("prune-pt") / "resnet20-pruned.pt").string();
    ASSERT_TRUE(save_torchscript_cnn(p.value(), pt).ok());
    auto back = load_torchscript_cnn(pt);
    ASSERT_TRUE(back.ok()) << back.message();
    int64_t params = 0;
    for (const auto& name : cnn_layer_weights(back.value())) params += back->find(name)->numel();
    int64_t pruned_params = 0;
    for (const auto& name : cnn_layer_weights(p.value())) pruned_params += p->find(name)->numel();
    EXPECT_EQ(params, pruned_params);
    int64_t orig_params = 0;
    for (const auto& name : cnn_layer_weights(m.value())) orig_params += m->find(name)->numel();
    EXPECT_LT(params, orig_params);
    auto in = cnn_input_shape(p.value());
    ASSERT_TRUE(in.ok());
    const calib::LabelledImages imgs = random_images({(*in)[1], (*in)[2], (*in)[3]}, 4, 9);
    EXPECT_LT(max_rel_diff(runtime_logits(back.value(), imgs), runtime_logits(p.value(), imgs)), 1e-5);
}

// Acceptance 3, fast version: 50% of every conv's channels, iterative (5% per round here, 1% in
// the bench) with fine-tuning, loses at most 1 point of test accuracy.
TEST(PruneFinetune, IterativeHalfTheChannelsKeepsDigitsAccuracy) {
    EDGE_REQUIRE_SHARED(edge::test::shared("data/digits.csv.gz"));
    const calib::ImageSplit d = digits();
    const Model base = trained_digits(d, 800);
    const double acc0 = accuracy(base, d.test);
    EXPECT_GT(acc0, 0.95);
    PruneRunOptions o;
    o.mode = PruneMode::Iterative;
    o.spec.ratio = 0.5;
    o.step = 0.05;
    o.round_steps = 50;
    o.final_steps = 300;
    o.cnn.threads = 1;
    auto run = prune_cnn(base, d.train, o);
    ASSERT_TRUE(run.ok()) << run.message();
    EXPECT_EQ(run->rounds, 10);
    const double acc = accuracy(run->model, d.test);
    std::printf("digits: unpruned %.2f%%, iterative 50%% %.2f%% (%lld -> %lld params)\n", 100 * acc0, 100 * acc,
                (long long)base.parameter_count(), (long long)run->model.parameter_count());
    EXPECT_GE(acc, acc0 - 0.01);
    EXPECT_EQ(run->model.find("conv2.weight")->shape, (std::vector<int64_t>{8, 4, 3, 3}));
    EXPECT_EQ(run->model.parameter_count(), run->report.params_after);
    for (const auto& l : run->report.layers)
        if (l.prunable) {
            EXPECT_EQ(l.removed() * 2, l.units) << l.layer;
        }
}

TEST(PruneFinetune, DynamicSparseTrainingSwapsUnits) {
    EDGE_REQUIRE_SHARED(edge::test::shared("data/digits.csv.gz"));
    const calib::ImageSplit d = digits();
    const Model base = trained_digits(d, 300);
    PruneRunOptions o;
    o.mode = PruneMode::Dst;
    o.spec.ratio = 0.5;
    o.dst_steps = 200;
    o.dst_every = 50;
    o.final_steps = 50;
    o.cnn.threads = 1;
    auto run = prune_cnn(base, d.train, o);
    ASSERT_TRUE(run.ok()) << run.message();
    EXPECT_EQ(run->rounds, 3);
    EXPECT_GT(run->units_swapped, 0);
    EXPECT_EQ(run->train_steps, 250);
    EXPECT_EQ(run->model.parameter_count(), run->report.params_after);
    EXPECT_GT(accuracy(run->model, d.test), 0.85);
}

TEST(PruneFinetune, LlamaMlpPruningFineTunesOnDisjointText) {
    const std::string mp = edge::test::shared("models/stories260K/stories260K.gguf");
    const std::string tp = edge::test::shared("data/tinystories_val.txt");
    EDGE_REQUIRE_SHARED(mp);
    EDGE_REQUIRE_SHARED(tp);
    auto m = load_model(mp);
    ASSERT_TRUE(m.ok()) << m.message();
    auto tok = make_tokenizer(m->tokenizer);
    ASSERT_TRUE(tok.ok());
    std::ifstream f(tp, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    PplOptions po;
    po.protocol = PplProtocol::Para;
    po.max_tokens = 65;
    auto seqs = ppl_sequences(*tok.value(), ss.str(), po);
    ASSERT_TRUE(seqs.ok()) << seqs.message();
    ASSERT_GT(seqs->size(), 1000u);
    const std::vector<std::vector<int32_t>> eval(seqs->begin(), seqs->begin() + 60);
    const std::vector<std::vector<int32_t>> train(seqs->begin() + 60, seqs->end());

    PruneRunOptions o;
    o.spec.ratio = 0.25;
    o.spec.heads = false;
    o.spec.importance = prune::Importance::Taylor;
    o.final_steps = 0;
    o.llm_batch = 8;
    o.llm_seq_len = 64;
    o.threads = 1;
    auto raw = prune_llama(m.value(), train, o);
    ASSERT_TRUE(raw.ok()) << raw.message();
    EXPECT_EQ(raw->model.config.hidden_dim, 129);
    o.final_steps = 40;
    auto tuned = prune_llama(m.value(), train, o);
    ASSERT_TRUE(tuned.ok()) << tuned.message();
    auto n0 = torch_mean_nll(m.value(), eval), n1 = torch_mean_nll(raw->model, eval),
         n2 = torch_mean_nll(tuned->model, eval);
    ASSERT_TRUE(n0.ok() && n1.ok() && n2.ok());
    std::printf("stories260K held-out NLL: unpruned %.4f, 25%% MLP pruned %.4f, + 40 fine-tuning steps %.4f\n",
                n0.value(), n1.value(), n2.value());
    EXPECT_GT(n1.value(), n0.value());
    EXPECT_LT(n2.value(), n1.value());

    // Iterative: 3% in 1% rounds, the report keeps the original unit indices.
    o.mode = PruneMode::Iterative;
    o.spec.importance = prune::Importance::Magnitude;
    o.spec.ratio = 0.03;
    o.step = 0.01;
    o.round_steps = 2;
    o.final_steps = 0;
    auto it = prune_llama(m.value(), train, o);
    ASSERT_TRUE(it.ok()) << it.message();
    EXPECT_EQ(it->rounds, 3);
    EXPECT_EQ(it->model.config.hidden_dim, 172 - 5);  // round(0.03 * 172)
    EXPECT_EQ(it->train_steps, 4);
}
