// Acceptance 2: ResNet-20 (CIFAR-10) with BatchNorm folded gives the same outputs as unfolded
// within 1e-5 relative on random inputs; node counts before/after. Plus a Linear+Linear merge.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/model/cnn_ir.h"
#include "engine/prune/fold.h"
#include "engine/runtime/cnn/cnn.h"
#include "test_support.h"

namespace {

double max_rel(const edge::runtime::Activation& a, const edge::runtime::Activation& b) {
    double err = 0, scale = 0;
    for (size_t i = 0; i < a.data.size(); ++i) {
        err = std::max(err, double(std::fabs(a.data[i] - b.data[i])));
        scale = std::max(scale, double(std::fabs(a.data[i])));
    }
    return err / scale;
}

}  // namespace

TEST(Fold, ResNet20BatchNormFoldIsExact) {
    const std::string path = edge::test::shared("models/cnn/resnet20_cifar10.safetensors");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::build_resnet20_cifar(path);
    ASSERT_TRUE(m.ok()) << m.message();
    // ASSETS.md's 269,722 are the trainable parameters; the BN running mean and variance add
    // 2 x (16*7 + 32*6 + 64*6) = 1,376 values.
    EXPECT_EQ(m->parameter_count(), 269722 + 1376);
    const auto before = edge::model::count_nodes(m->graph);
    // conv, bn, relu x19; add x9; subsample + pad x2; global pool; linear
    EXPECT_EQ(before.total, 19 * 3 + 9 + 2 * 2 + 2) << before.text();

    edge::model::Model folded = m.value();
    auto rep = edge::prune::fold_batchnorm(folded);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_EQ(rep->batchnorms_folded, 19);
    EXPECT_EQ(rep->before.total, before.total);
    EXPECT_EQ(rep->after.total, before.total - 19) << rep->after.text();
    for (const edge::model::Op& op : folded.graph.ops) EXPECT_NE(op.type, edge::model::OpType::BatchNorm) << op.name;
    // 19 BNs had 4×C parameters; the folded convs gain a C bias: 3×C fewer per BN.
    EXPECT_EQ(rep->params_before - rep->params_after, 3 * (16 * 7 + 32 * 6 + 64 * 6));

    auto e1 = edge::runtime::CnnExecutor::create(m.value(), 0);
    ASSERT_TRUE(e1.ok()) << e1.message();
    auto e2 = edge::runtime::CnnExecutor::create(folded, 0);
    ASSERT_TRUE(e2.ok()) << e2.message();
    std::mt19937 rng(20);
    std::normal_distribution<float> g(0.0f, 1.0f);
    edge::runtime::Activation in{{4, 3, 32, 32}, std::vector<float>(4 * 3 * 32 * 32)};
    for (float& v : in.data) v = g(rng);
    auto a = e1.value()->run(in);
    ASSERT_TRUE(a.ok()) << a.message();
    auto b = e2.value()->run(in);
    ASSERT_TRUE(b.ok()) << b.message();
    ASSERT_EQ(a->shape, (std::vector<int64_t>{4, 10}));
    const double rel = max_rel(a.value(), b.value());
    EXPECT_LT(rel, 1e-5);
    // And the logits are not degenerate: different images give different classes' scores.
    double spread = 0;
    for (int k = 0; k < 10; ++k) spread += std::fabs(a->data[size_t(k)] - a->data[10 + size_t(k)]);
    EXPECT_GT(spread, 1e-3);
    std::printf("resnet20: %s -> %s; max relative difference %.3g\n", rep->before.text().c_str(),
                rep->after.text().c_str(), rel);
}

TEST(Fold, AdjacentLinearsMergeAndFoldingRefusesSharedOutputs) {
    edge::model::Model m;
    m.architecture = edge::model::kCnnArchitecture;
    m.name = "two-linears";
    m.graph.inputs = {"x"};
    edge::model::set_cnn_input_shape(m, {1, 2, 2, 2});
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        edge::Tensor t = edge::Tensor::zeros_f32(name, std::move(shape));
        for (int64_t i = 0; i < t.numel(); ++i) t.f32_mut()[i] = u(rng);
        m.tensors.push_back(std::move(t));
    };
    add("fc1.weight", {5, 8});
    add("fc1.bias", {5});
    add("fc2.weight", {3, 5});
    add("fc2.bias", {3});
    m.graph.ops.push_back({edge::model::OpType::Linear, "fc1", {"x"}, {"h"}, {"fc1.weight", "fc1.bias"}, {}});
    m.graph.ops.push_back({edge::model::OpType::Linear, "fc2", {"h"}, {"y"}, {"fc2.weight", "fc2.bias"}, {}});
    m.graph.outputs = {"y"};
    auto e1 = edge::runtime::CnnExecutor::create(m, 1);
    ASSERT_TRUE(e1.ok()) << e1.message();
    edge::runtime::Activation in{{2, 2, 2, 2}, std::vector<float>(16)};
    for (float& v : in.data) v = u(rng);
    auto a = e1.value()->run(in);
    ASSERT_TRUE(a.ok()) << a.message();

    edge::model::Model merged = m;
    auto rep = edge::prune::merge_linear(merged);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_EQ(rep->linears_merged, 1);
    EXPECT_EQ(rep->after.total, 1);
    ASSERT_EQ(merged.tensors.size(), 2u);
    auto e2 = edge::runtime::CnnExecutor::create(merged, 1);
    ASSERT_TRUE(e2.ok()) << e2.message();
    auto b = e2.value()->run(in);
    ASSERT_TRUE(b.ok()) << b.message();
    EXPECT_LT(max_rel(a.value(), b.value()), 1e-6);

    // When the intermediate value is also a graph output, merging would lose it: nothing changes.
    edge::model::Model shared = m;
    shared.graph.outputs = {"y", "h"};
    auto rep2 = edge::prune::merge_linear(shared);
    ASSERT_TRUE(rep2.ok()) << rep2.message();
    EXPECT_EQ(rep2->linears_merged, 0);
    EXPECT_EQ(rep2->after.total, 2);
}
