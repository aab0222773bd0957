// Structured pruning invariants (engine/prune/structured.h): groups and shapes, GQA query groups,
// residual ties, refusals, and pruned model == masked model on real models (stories260K,
// ResNet-20, mnist-8) and on a small residual CNN built here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/model/cnn_ir.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "engine/prune/structured.h"
#include "engine/runtime/cnn/cnn.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "test_support.h"

using edge::model::build_resnet20_cifar;
using edge::model::cnn_input_shape;
using edge::model::kCnnArchitecture;
using edge::model::load_model;
using edge::model::Model;
using edge::model::Op;
using edge::model::OpType;
using edge::model::set_cnn_input_shape;
using edge::model::write_gguf_model;
using edge::runtime::Activation;
using edge::runtime::CnnExecutor;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;
using namespace edge::prune;

namespace {

Model load_stories() {
    auto m = load_model(edge::test::shared("models/stories260K/stories260K.gguf"));
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.message());
    return std::move(m.value());
}

const LayerMask& mask_of(const PruneReport& r, const std::string& layer) {
    for (const LayerMask& l : r.layers)
        if (l.layer == layer) return l;
    ADD_FAILURE() << "no layer " << layer;
    return r.layers.front();
}

// Logits of every position of `tokens` under the FP32 runtime.
std::vector<float> llama_logits(const Model& m, const std::vector<int32_t>& tokens) {
    auto shared = std::make_shared<const Model>(m);
    auto rt = LlamaCpu::create(shared, RuntimeOptions{2, 64});
    EXPECT_TRUE(rt.ok()) << (rt.ok() ? "" : rt.message());
    std::vector<float> all(tokens.size() * size_t(m.config.vocab_size));
    rt.value()->prefill(tokens.data(), int(tokens.size()), 0, all.data());
    return all;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num = std::max(num, double(std::fabs(a[i] - b[i])));
        den = std::max(den, double(std::fabs(b[i])));
    }
    return num / std::max(den, 1e-30);
}

const std::vector<int32_t> kTokens = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315};

// Tensor value at [r][c] of a 2-D tensor.
float at(const Model& m, const std::string& t, int64_t r, int64_t c) {
    const Tensor* x = m.find(t);
    return x->f32()[r * x->shape[1] + c];
}

}  // namespace

TEST(StructuredLlama, GroupsFollowGqa) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    Model m = load_stories();
    auto g = find_groups(m);
    ASSERT_TRUE(g.ok()) << g.message();
    ASSERT_EQ(g->size(), 10u);  // 5 blocks x (attn, ffn)
    const PruneGroup& at0 = (*g)[0];
    EXPECT_EQ(at0.layer, "blk.0.attn");
    EXPECT_EQ(at0.units, 4);                 // 4 KV heads
    EXPECT_EQ(at0.query_heads_per_unit, 2);  // 8 query heads
    // KV head 1 owns query heads 2 and 3: attn_q rows 16..31 (head_dim 8), attn_k/v rows 8..15,
    // attn_output columns 16..31.
    const auto& s = at0.slices[1];
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0].tensor, "blk.0.attn_q.weight");
    EXPECT_EQ(s[0].indices.front(), 16);
    EXPECT_EQ(s[0].indices.back(), 31);
    EXPECT_EQ(s[1].indices.front(), 8);
    EXPECT_EQ(s[1].indices.back(), 15);
    EXPECT_EQ(s[3].axis, 1);
    EXPECT_EQ((*g)[1].layer, "blk.0.ffn");
    EXPECT_EQ((*g)[1].units, 172);
    EXPECT_EQ((*g)[1].params, 172 * 64 * 3);
}

TEST(StructuredLlama, PrunedShapesAndKeptRows) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    Model m = load_stories();
    PruneSpec spec;
    spec.ratio = 0.25;
    spec.heads = false;  // MLP channels only
    auto r = plan_pruning(m, spec);
    ASSERT_TRUE(r.ok()) << r.message();
    const LayerMask& ffn = mask_of(r.value(), "blk.2.ffn");
    EXPECT_EQ(ffn.removed(), 43);  // round(0.25 * 172)
    EXPECT_EQ(mask_of(r.value(), "blk.2.attn").removed(), 0);
    // The lowest-magnitude channels go.
    const auto removed = ffn.removed_units(), kept = ffn.kept_units();
    double max_removed = 0, min_kept = 1e30;
    for (int64_t u : removed) max_removed = std::max(max_removed, ffn.scores[size_t(u)]);
    for (int64_t u : kept) min_kept = std::min(min_kept, ffn.scores[size_t(u)]);
    EXPECT_LE(max_removed, min_kept);

    auto p = apply_masks(m, r->layers);
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_EQ(p->config.hidden_dim, 129);
    EXPECT_EQ(p->find("blk.2.ffn_gate.weight")->shape, (std::vector<int64_t>{129, 64}));
    EXPECT_EQ(p->find("blk.2.ffn_down.weight")->shape, (std::vector<int64_t>{64, 129}));
    EXPECT_EQ(p->parameter_count(), r->params_after);
    EXPECT_EQ(r->params_before - r->params_after, 5 * 43 * 64 * 3);
    // Kept channel k of the pruned model is original channel kept[k], in order.
    for (size_t k : {size_t(0), size_t(57), size_t(128)}) {
        EXPECT_EQ(at(p.value(), "blk.2.ffn_up.weight", int64_t(k), 5), at(m, "blk.2.ffn_up.weight", kept[k], 5));
        EXPECT_EQ(at(p.value(), "blk.2.ffn_down.weight", 7, int64_t(k)), at(m, "blk.2.ffn_down.weight", 7, kept[k]));
    }
}

TEST(StructuredLlama, HeadsGoWithTheirQueryGroupAndPrunedEqualsMasked) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    Model m = load_stories();
    PruneSpec spec;
    spec.rules = {{"blk.*.attn", 0.5}, {"blk.*.ffn", 0.25}, {"blk.3.ffn", 0.5}};  // non-uniform FFN widths
    auto r = plan_pruning(m, spec);
    ASSERT_TRUE(r.ok()) << r.message();
    const LayerMask& a1 = mask_of(r.value(), "blk.1.attn");
    ASSERT_EQ(a1.removed(), 2);
    for (int64_t u : a1.removed_units()) {
        const auto heads = a1.removed_heads();
        EXPECT_NE(std::find(heads.begin(), heads.end(), 2 * u), heads.end());
        EXPECT_NE(std::find(heads.begin(), heads.end(), 2 * u + 1), heads.end());
    }
    auto p = apply_masks(m, r->layers);
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_EQ(p->config.n_kv_heads, 2);
    EXPECT_EQ(p->config.n_heads, 4);
    EXPECT_EQ(p->config.hidden_dim, 129);  // the widest block; blk.3 keeps 86 + 43 zero channels
    EXPECT_EQ(p->find("blk.1.attn_q.weight")->shape, (std::vector<int64_t>{32, 64}));
    EXPECT_EQ(p->find("blk.1.attn_output.weight")->shape, (std::vector<int64_t>{64, 32}));
    // Kept KV head k of the pruned model is the original KV head kept[k], with its query heads.
    const auto kept = a1.kept_units();
    for (int64_t k = 0; k < 2; ++k)
        for (int64_t row : {int64_t(0), int64_t(9)}) {
            EXPECT_EQ(at(p.value(), "blk.1.attn_q.weight", k * 16 + row, 3),
                      at(m, "blk.1.attn_q.weight", kept[size_t(k)] * 16 + row, 3));
            EXPECT_EQ(at(p.value(), "blk.1.attn_v.weight", k * 8 + row % 8, 3),
                      at(m, "blk.1.attn_v.weight", kept[size_t(k)] * 8 + row % 8, 3));
        }

    Model masked = m;
    ASSERT_TRUE(mask_model(masked, r->layers).ok());
    const auto lp = llama_logits(p.value(), kTokens);
    const auto lm = llama_logits(masked, kTokens);
    const auto lo = llama_logits(m, kTokens);
    EXPECT_LT(max_rel_diff(lp, lm), 1e-5);
    EXPECT_GT(max_rel_diff(lo, lm), 1e-2);  // pruning half the heads changes the model
    // The original model's buffers were not touched by masking.
    EXPECT_EQ(max_rel_diff(llama_logits(m, kTokens), lo), 0.0);
}

TEST(StructuredLlama, PrunedModelExportsToGguf) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    Model m = load_stories();
    PruneSpec spec;
    spec.ratio = 0.25;
    auto r = plan_pruning(m, spec);
    ASSERT_TRUE(r.ok()) << r.message();
    auto p = apply_masks(m, r->layers);
    ASSERT_TRUE(p.ok()) << p.message();
    const auto path = (edge::test::temp_dir("prune") / "pruned.gguf").string();
    ASSERT_TRUE(write_gguf_model(p.value(), path).ok());
    auto back = load_model(path);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->config.n_kv_heads, 3);
    EXPECT_EQ(back->config.hidden_dim, 129);
    EXPECT_LT(back->parameter_count(), m.parameter_count());
    EXPECT_LT(max_rel_diff(llama_logits(back.value(), kTokens), llama_logits(p.value(), kTokens)), 1e-6);
}

TEST(StructuredLlama, RefusesRemovingALayerAndUnknownNames) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    Model m = load_stories();
    PruneSpec all;
    all.rules = {{"blk.2.attn", 1.0}};
    auto r = plan_pruning(m, all);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("blk.2.attn"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("cannot be removed"), std::string::npos) << r.message();
    // 0.9 of 4 KV heads rounds to all 4.
    PruneSpec most;
    most.rules = {{"blk.4.attn", 0.9}};
    auto r2 = plan_pruning(m, most);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.message().find("blk.4.attn"), std::string::npos) << r2.message();
    PruneSpec global;
    global.ratio = 1.0;
    EXPECT_TRUE(edge::test::fails_with(
        plan_pruning(m, global), {"pruning ratio 1 is outside [0, 1)", "a ratio of 1 would remove whole layers"}));
    PruneSpec unknown;
    unknown.rules = {{"blk.9.attn", 0.5}};
    auto r3 = plan_pruning(m, unknown);
    ASSERT_FALSE(r3.ok());
    EXPECT_NE(r3.message().find("blk.9.attn"), std::string::npos) << r3.message();
    // A hand-made mask removing every unit is refused too.
    auto ok = plan_pruning(m, PruneSpec{});
    ASSERT_TRUE(ok.ok());
    auto masks = ok->layers;
    for (auto& l : masks)
        if (l.layer == "blk.0.ffn") std::fill(l.keep.begin(), l.keep.end(), uint8_t(0));
    auto a = apply_masks(m, masks);
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.message().find("blk.0.ffn"), std::string::npos) << a.message();
    // Taylor without gradients says so.
    PruneSpec taylor;
    taylor.ratio = 0.1;
    taylor.importance = Importance::Taylor;
    auto t = plan_pruning(m, taylor);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("gradient"), std::string::npos) << t.message();
}

TEST(StructuredLlama, TaylorAndHessianScores) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    Model m = load_stories();
    // Gradients that are zero except on ffn channel 7 of block 0: Taylor ranks it first there.
    Gradients grads;
    for (const Tensor& t : m.tensors) grads[t.name].assign(size_t(t.numel()), 0.0f);
    for (int64_t c = 0; c < 64; ++c) grads["blk.0.ffn_up.weight"][size_t(7 * 64 + c)] = 1.0f;
    PruneSpec spec;
    spec.importance = Importance::Taylor;
    spec.gradients = &grads;
    spec.rules = {{"blk.0.ffn", 0.5}};
    auto r = plan_pruning(m, spec);
    ASSERT_TRUE(r.ok()) << r.message();
    const LayerMask& f = mask_of(r.value(), "blk.0.ffn");
    EXPECT_TRUE(f.keep[7]);
    double expect = 0;
    for (int64_t c = 0; c < 64; ++c) expect += std::fabs(at(m, "blk.0.ffn_up.weight", 7, c));
    EXPECT_NEAR(f.scores[7], expect, 1e-9 * expect);
    // Hessian: a block with a large fused importance loses fewer channels under a global ratio.
    std::map<std::string, double> imp;
    for (int b = 0; b < 5; ++b)
        for (const char* k : {"ffn_gate", "ffn_up", "ffn_down", "attn_q", "attn_k", "attn_v", "attn_output"})
            imp["blk." + std::to_string(b) + "." + k] = b == 1 ? 1.0 : 0.2;
    PruneSpec h;
    h.importance = Importance::Hessian;
    h.layer_importance = &imp;
    h.ratio = 0.25;
    h.heads = false;
    auto rh = plan_pruning(m, h);
    ASSERT_TRUE(rh.ok()) << rh.message();
    int64_t total = 0;
    for (int b = 0; b < 5; ++b) total += mask_of(rh.value(), "blk." + std::to_string(b) + ".ffn").removed();
    EXPECT_EQ(total, 5 * 43);  // LLM blocks keep the per-layer count (one config for all blocks)
    EXPECT_EQ(mask_of(rh.value(), "blk.1.ffn").removed(), 43);
    std::map<std::string, double> none;
    h.layer_importance = &none;
    auto rn = plan_pruning(m, h);
    ASSERT_FALSE(rn.ok());
    EXPECT_NE(rn.message().find("blk.0.ffn"), std::string::npos) << rn.message();
}

// ---- CNN ---------------------------------------------------------------------------------------

namespace {

struct CnnBuilder {
    Model m;
    std::mt19937 rng{7};
    void tensor(const std::string& name, std::vector<int64_t> shape, float lo, float hi) {
        Tensor t = Tensor::zeros_f32(name, std::move(shape));
        std::uniform_real_distribution<float> d(lo, hi);
        for (int64_t i = 0; i < t.numel(); ++i) t.f32_mut()[i] = d(rng);
        m.tensors.push_back(std::move(t));
    }
    std::string conv_bn(const std::string& name, const std::string& x, int64_t ic, int64_t oc, bool relu) {
        tensor(name + ".weight", {oc, ic, 3, 3}, -0.5f, 0.5f);
        Op c{OpType::Conv2d, name, {x}, {name + ".y"}, {name + ".weight"}, {}};
        c.attrs["pads"] = {1, 1, 1, 1};
        m.graph.ops.push_back(c);
        const std::string bn = name + ".bn";
        tensor(bn + ".scale", {oc}, 0.5f, 1.5f);
        tensor(bn + ".bias", {oc}, -0.2f, 0.2f);
        tensor(bn + ".mean", {oc}, -0.1f, 0.1f);
        tensor(bn + ".var", {oc}, 0.5f, 2.0f);
        m.graph.ops.push_back({OpType::BatchNorm,
                               bn,
                               {name + ".y"},
                               {bn + ".y"},
                               {bn + ".scale", bn + ".bias", bn + ".mean", bn + ".var"},
                               {{"epsilon", {1e-5}}}});
        if (!relu) return bn + ".y";
        m.graph.ops.push_back({OpType::Relu, name + ".relu", {bn + ".y"}, {name + ".r"}, {}, {}});
        return name + ".r";
    }
};

// stem conv(3->8)+BN+ReLU; block: conv a(8->6)+BN+ReLU, conv b(6->8)+BN, Add with the stem, ReLU;
// GAP; Linear 8->4.
Model residual_cnn() {
    CnnBuilder b;
    b.m.architecture = kCnnArchitecture;
    b.m.name = "residual-test";
    b.m.graph.inputs = {"x"};
    set_cnn_input_shape(b.m, {1, 3, 8, 8});
    const std::string s = b.conv_bn("stem", "x", 3, 8, true);
    const std::string a = b.conv_bn("a", s, 8, 6, true);
    const std::string c = b.conv_bn("b", a, 6, 8, false);
    b.m.graph.ops.push_back({OpType::Add, "add", {c, s}, {"sum"}, {}, {}});
    b.m.graph.ops.push_back({OpType::Relu, "relu", {"sum"}, {"h"}, {}, {}});
    b.m.graph.ops.push_back({OpType::GlobalAvgPool, "gap", {"h"}, {"g"}, {}, {}});
    b.tensor("fc.weight", {4, 8}, -0.5f, 0.5f);
    b.tensor("fc.bias", {4}, -0.1f, 0.1f);
    b.m.graph.ops.push_back({OpType::Linear, "fc", {"g"}, {"logits"}, {"fc.weight", "fc.bias"}, {}});
    b.m.graph.outputs = {"logits"};
    return b.m;
}

std::vector<float> cnn_out(const Model& m, const Activation& in) {
    auto ex = CnnExecutor::create(m, 2);
    EXPECT_TRUE(ex.ok()) << (ex.ok() ? "" : ex.message());
    auto y = ex.value()->run(in);
    EXPECT_TRUE(y.ok()) << (y.ok() ? "" : y.message());
    return y->data;
}

Activation random_input(const std::vector<int64_t>& shape, int n, uint32_t seed) {
    Activation a;
    a.shape = shape;
    a.shape[0] = n;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    a.data.resize(size_t(a.numel()));
    for (float& v : a.data) v = d(rng);
    return a;
}

// Plans `ratio` over every prunable group, applies it physically and by masking, and compares.
void expect_pruned_equals_masked(const Model& m, double ratio, double tol, int64_t* params_removed = nullptr) {
    PruneSpec spec;
    spec.ratio = ratio;
    auto r = plan_pruning(m, spec);
    ASSERT_TRUE(r.ok()) << r.message();
    auto p = apply_masks(m, r->layers);
    ASSERT_TRUE(p.ok()) << p.message();
    Model masked = m;
    ASSERT_TRUE(mask_model(masked, r->layers).ok());
    auto shape = cnn_input_shape(m);
    ASSERT_TRUE(shape.ok());
    const Activation in = random_input(shape.value(), 3, 11);
    const auto yp = cnn_out(p.value(), in), ym = cnn_out(masked, in), yo = cnn_out(m, in);
    ASSERT_EQ(yp.size(), ym.size());
    EXPECT_LT(max_rel_diff(yp, ym), tol) << m.name;
    EXPECT_GT(max_rel_diff(yo, ym), 1e-3) << m.name << ": pruning changed nothing";
    EXPECT_EQ(p->parameter_count(), r->params_after);
    EXPECT_LT(r->params_after, r->params_before);
    if (params_removed) *params_removed = r->params_before - r->params_after;
}

}  // namespace

TEST(StructuredCnn, ResidualAddTiesChannelsAcrossLayers) {
    const Model m = residual_cnn();
    auto g = find_groups(m);
    ASSERT_TRUE(g.ok()) << g.message();
    ASSERT_EQ(g->size(), 3u);  // + the output Linear, pinned
    EXPECT_FALSE((*g)[2].prunable);
    EXPECT_EQ((*g)[2].layer, "fc");
    EXPECT_NE((*g)[2].pinned_reason.find("graph output"), std::string::npos) << (*g)[2].pinned_reason;
    const PruneGroup& res = (*g)[0];
    EXPECT_EQ(res.layer, "stem");
    EXPECT_EQ(res.units, 8);
    EXPECT_EQ(res.producers, (std::vector<std::string>{"stem", "b"}));  // tied by the Add
    EXPECT_EQ(res.consumers, (std::vector<std::string>{"a", "fc"}));
    EXPECT_TRUE(res.prunable);
    EXPECT_EQ((*g)[1].layer, "a");
    EXPECT_EQ((*g)[1].units, 6);
    EXPECT_EQ((*g)[1].consumers, (std::vector<std::string>{"b"}));

    PruneSpec spec;
    spec.rules = {{"stem", 0.25}, {"a", 0.5}};
    auto r = plan_pruning(m, spec);
    ASSERT_TRUE(r.ok()) << r.message();
    auto p = apply_masks(m, r->layers);
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_EQ(p->find("stem.weight")->shape, (std::vector<int64_t>{6, 3, 3, 3}));
    EXPECT_EQ(p->find("b.weight")->shape, (std::vector<int64_t>{6, 3, 3, 3}));  // 6 out (tied), 3 in
    EXPECT_EQ(p->find("a.weight")->shape, (std::vector<int64_t>{3, 6, 3, 3}));
    EXPECT_EQ(p->find("b.bn.var")->shape, (std::vector<int64_t>{6}));
    EXPECT_EQ(p->find("fc.weight")->shape, (std::vector<int64_t>{4, 6}));
    // BatchNorm follows its conv: kept channel k carries the original channel's statistics.
    const auto kept = mask_of(r.value(), "stem").kept_units();
    for (size_t k = 0; k < kept.size(); ++k) {
        EXPECT_EQ(p->find("stem.bn.mean")->f32()[k], m.find("stem.bn.mean")->f32()[kept[k]]);
        EXPECT_EQ(p->find("b.bn.scale")->f32()[k], m.find("b.bn.scale")->f32()[kept[k]]);
    }
    expect_pruned_equals_masked(m, 0.5, 1e-5);
}

TEST(StructuredCnn, RefusesWholeLayerAndPinnedGroups) {
    const Model m = residual_cnn();
    PruneSpec all;
    all.rules = {{"a", 1.0}};
    auto r = plan_pruning(m, all);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("'a'"), std::string::npos) << r.message();
    PruneSpec unknown;
    unknown.rules = {{"conv9", 0.5}};
    auto u = plan_pruning(m, unknown);
    ASSERT_FALSE(u.ok());
    EXPECT_NE(u.message().find("conv9"), std::string::npos) << u.message();
    PruneSpec logits;
    logits.rules = {{"fc", 0.5}};
    auto l = plan_pruning(m, logits);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.message().find("'fc' cannot be pruned"), std::string::npos) << l.message();
}

TEST(StructuredCnn, ResNet20PadShortcutsPrunedEqualsMasked) {
    const std::string path = edge::test::shared("models/cnn/resnet20_cifar10.safetensors");
    EDGE_REQUIRE_SHARED(path);
    auto m = build_resnet20_cifar(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto g = find_groups(m.value());
    ASSERT_TRUE(g.ok()) << g.message();
    // The inner conv of each of the 9 blocks is its own group; the option-A shortcuts tie the
    // residual chains of the three stages into 3 more groups (channels carried across stages by
    // the channel Pad, and the channels each stage adds).
    int inner = 0;
    for (const PruneGroup& x : g.value()) {
        EXPECT_EQ(x.prunable, x.layer != "linear") << x.layer << ": " << x.pinned_reason;
        if (x.layer.find(".conv1") != std::string::npos && x.producers.size() == 1) ++inner;
    }
    EXPECT_EQ(inner, 9);
    EXPECT_EQ(g->size(), 13u);  // + the output Linear (pinned)
    EXPECT_EQ(g->front().layer, "conv1");
    EXPECT_EQ(g->front().units, 16);
    EXPECT_EQ(g->front().producers.size(), 10u);  // stem + 9 block conv2 (stage 1 channels run through all)
    int64_t removed = 0;
    expect_pruned_equals_masked(m.value(), 0.5, 1e-4, &removed);
    EXPECT_GT(removed, 269722 / 3);
}

TEST(StructuredCnn, Mnist8FlattenAndReshapeFollow) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = load_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto g = find_groups(m.value());
    ASSERT_TRUE(g.ok()) << g.message();
    ASSERT_GE(g->size(), 2u);
    EXPECT_EQ((*g)[0].units, 8);
    EXPECT_EQ((*g)[1].units, 16);
    expect_pruned_equals_masked(m.value(), 0.5, 1e-5);
}

TEST(StructuredCnn, HessianAllocatesAcrossConvLayers) {
    const Model m = residual_cnn();
    std::map<std::string, double> imp{{"stem", 1.0}, {"b", 1.0}, {"a", 0.01}};
    PruneSpec h;
    h.importance = Importance::Hessian;
    h.layer_importance = &imp;
    h.ratio = 0.25;  // 2 of 8 tied channels + 2 of 6 (rounded 1.5) = 4 in all
    auto r = plan_pruning(m, h);
    ASSERT_TRUE(r.ok()) << r.message();
    // The unimportant layer gives up to twice its share; the important residual chain less.
    EXPECT_EQ(mask_of(r.value(), "a").removed(), 3);
    EXPECT_EQ(mask_of(r.value(), "stem").removed(), 1);
}

TEST(StructuredCnn, ReportJsonListsMasks) {
    const Model m = residual_cnn();
    PruneSpec spec;
    spec.ratio = 0.5;
    auto r = plan_pruning(m, spec);
    ASSERT_TRUE(r.ok()) << r.message();
    const std::string j = report_to_json(r.value());
    EXPECT_NE(j.find("\"layer\": \"stem\""), std::string::npos) << j;
    EXPECT_NE(j.find("\"removed_units\""), std::string::npos);
    EXPECT_EQ(mask_of(r.value(), "stem").removed(), 4);
    EXPECT_EQ(mask_of(r.value(), "a").removed(), 3);
}
