// Hessian spectra from Hessian-vector products (Lanczos) against the eigendecomposition of the
// explicitly formed Hessian, and the gradient statistics, on stories260K with real text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/analysis/torch_llama.h"
#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/quant/calib.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

using edge::analysis::CurvatureOptions;
using edge::analysis::LayerCurvature;
using edge::analysis::symmetric_eigenvalues;
using edge::analysis::torch_layer_curvature;
using edge::analysis::torch_layer_hessian;
using edge::model::finalize_llama;
using edge::model::list_layers;
using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::Model;
using edge::tokenizer::make_tokenizer;

using namespace edge;

namespace {

struct Fixture {
    Model model;
    std::vector<std::vector<int32_t>> seqs;
};

// stories260K and 8 windows of 33 tokens from tinystories_val.
Fixture load_fixture() {
    Fixture f;
    auto m = load_model(test::shared("models/stories260K/stories260K.gguf"));
    EXPECT_TRUE(m.ok()) << m.message();
    if (!m.ok()) return f;
    f.model = std::move(*m);
    auto tok = make_tokenizer(f.model.tokenizer);
    EXPECT_TRUE(tok.ok()) << tok.message();
    auto text = read_text_file(test::shared("data/tinystories_val.txt"));
    EXPECT_TRUE(text.ok()) << text.message();
    if (!tok.ok() || !text.ok()) return f;
    auto calib = quant::calib_from_text(**tok, *text, 8, 33);
    EXPECT_TRUE(calib.ok()) << calib.message();
    if (calib.ok()) f.seqs = calib->sequences;
    return f;
}

// A tiny random llama (dim 16, 2 heads of 8, 1 KV head): blk.1.attn_k is [8, 16] = 128 weights, so
// its Hessian can be formed explicitly in a few seconds.
Model tiny_model() {
    Model m;
    m.name = m.source_path = "tiny";
    m.source_format = "synth";
    LlamaConfig& c = m.config;
    c.dim = 16;
    c.hidden_dim = 24;
    c.n_layers = 2;
    c.n_heads = 2;
    c.n_kv_heads = 1;
    c.head_dim = 8;
    c.vocab_size = 32;
    c.context_length = 32;
    c.rope_dim = 8;
    std::mt19937 rng{7u};
    std::normal_distribution<float> nd(0.0f, 0.4f);
    auto add = [&](const std::string& name, std::vector<int64_t> shape, bool norm) {
        Tensor t = Tensor::zeros_f32(name, std::move(shape));
        for (int64_t i = 0; i < t.numel(); ++i) t.f32_mut()[i] = norm ? 1.0f + 0.1f * nd(rng) : nd(rng);
        m.tensors.push_back(std::move(t));
    };
    const int64_t D = c.dim, F = c.hidden_dim, Q = c.q_dim(), KV = c.kv_dim();
    add("token_embd.weight", {c.vocab_size, D}, false);
    add("output_norm.weight", {D}, true);
    add("output.weight", {c.vocab_size, D}, false);
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", {D}, true);
        add(b + "attn_q.weight", {Q, D}, false);
        add(b + "attn_k.weight", {KV, D}, false);
        add(b + "attn_v.weight", {KV, D}, false);
        add(b + "attn_output.weight", {D, Q}, false);
        add(b + "ffn_norm.weight", {D}, true);
        add(b + "ffn_gate.weight", {F, D}, false);
        add(b + "ffn_up.weight", {F, D}, false);
        add(b + "ffn_down.weight", {D, F}, false);
    }
    finalize_llama(m);
    return m;
}

TEST(Hessian, LanczosTopEigenvaluesMatchTheExplicitHessian) {
    Model tiny = tiny_model();
    std::mt19937 rng{11u};
    std::vector<std::vector<int32_t>> seqs(4);
    for (auto& s : seqs)
        for (int i = 0; i < 17; ++i) s.push_back(int32_t(rng() % 32));
    CurvatureOptions o;
    o.topk = 3;
    o.lanczos_steps = 60;
    o.hessian_sequences = 4;
    o.seq_len = 16;
    o.batches = 2;
    o.batch_size = 2;
    o.threads = 1;
    o.layers = {"blk.1.attn_k"};
    auto c = torch_layer_curvature(tiny, seqs, o);
    ASSERT_TRUE(c.ok()) << c.message();
    ASSERT_EQ(c->size(), 1u);
    const LayerCurvature& lc = c->front();
    const int64_t n = 128;
    EXPECT_EQ(lc.params, n);
    ASSERT_EQ(lc.eigenvalues.size(), 3u);
    EXPECT_EQ(lc.grad_norms.size(), 2u);

    auto h = torch_layer_hessian(tiny, seqs, o, "blk.1.attn_k");
    ASSERT_TRUE(h.ok()) << h.message();
    double asym = 0, scale = 0;  // the formed Hessian is symmetric (to float rounding)
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < i; ++j) {
            asym = std::max(asym, std::abs((*h)[size_t(i * n + j)] - (*h)[size_t(j * n + i)]));
            scale = std::max(scale, std::abs((*h)[size_t(i * n + j)]));
        }
    EXPECT_LT(asym, 1e-3 * scale);
    std::vector<double> sym(h->size());
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
            sym[size_t(i * n + j)] = 0.5 * ((*h)[size_t(i * n + j)] + (*h)[size_t(j * n + i)]);
    auto ev = symmetric_eigenvalues(sym, n);
    ASSERT_TRUE(ev.ok()) << ev.message();
    std::sort(ev->begin(), ev->end(), [](double a, double b) { return std::abs(a) > std::abs(b); });
    ASSERT_GT(std::abs((*ev)[0]), 0.0);
    EXPECT_NEAR(lc.eigenvalues[0], (*ev)[0], 0.01 * std::abs((*ev)[0]));
    EXPECT_NEAR(lc.eigenvalues[1], (*ev)[1], 0.02 * std::abs((*ev)[1]));
}

TEST(Hessian, EveryLayerGetsASpectrumAndGradientStatistics) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    Fixture f = load_fixture();
    ASSERT_FALSE(f.seqs.empty());
    CurvatureOptions o;
    o.topk = 2;
    o.lanczos_steps = 6;
    o.hessian_sequences = 2;
    o.seq_len = 16;
    o.batches = 3;
    o.batch_size = 2;
    o.threads = 2;
    int reports = 0;
    Progress p([&](double, const std::string&) { ++reports; });
    auto c = torch_layer_curvature(f.model, f.seqs, o, &p);
    ASSERT_TRUE(c.ok()) << c.message();
    const auto layers = list_layers(f.model);
    ASSERT_EQ(c->size(), layers.size());
    EXPECT_EQ(reports, int(3 + layers.size()));
    for (size_t i = 0; i < c->size(); ++i) {
        const LayerCurvature& lc = (*c)[i];
        EXPECT_EQ(lc.layer, layers[i].name);
        ASSERT_EQ(lc.eigenvalues.size(), 2u) << lc.layer;
        EXPECT_GE(std::abs(lc.eigenvalues[0]), std::abs(lc.eigenvalues[1])) << lc.layer;
        ASSERT_EQ(lc.grad_norms.size(), 3u);
        for (double g : lc.grad_norms) EXPECT_TRUE(std::isfinite(g) && g > 0) << lc.layer;
    }
    // deterministic for fixed options
    auto again = torch_layer_curvature(f.model, f.seqs, o);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)[3].eigenvalues, (*c)[3].eigenvalues);
    EXPECT_EQ((*again)[3].grad_norms, (*c)[3].grad_norms);
}

TEST(Hessian, CancelAndBadOptionsAreErrors) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    Fixture f = load_fixture();
    ASSERT_FALSE(f.seqs.empty());
    CurvatureOptions o;
    o.seq_len = 16;
    Progress p;
    p.cancel();
    auto c = torch_layer_curvature(f.model, f.seqs, o, &p);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.message().find("cancelled"), std::string::npos);
    o.layers = {"blk.9.attn_q"};
    auto u = torch_layer_curvature(f.model, f.seqs, o);
    ASSERT_FALSE(u.ok());
    EXPECT_NE(u.message().find("blk.9.attn_q"), std::string::npos) << u.message();
    o.layers = {"blk.0.ffn_up"};
    auto big = torch_layer_hessian(f.model, f.seqs, o, "blk.0.ffn_up");
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.message().find("8192"), std::string::npos) << big.message();
    o.layers.clear();
    o.lanczos_steps = 2;
    o.topk = 5;
    EXPECT_TRUE(edge::test::fails_with(torch_layer_curvature(f.model, f.seqs, o),
                                       {"lanczos steps (2) must be at least topk (5)"}));
}

}  // namespace
