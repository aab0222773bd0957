// The LibTorch forward (analysis) and the CPU executor (deployment) must agree on FP32 outputs
// (DESIGN.md: one IR, two executors).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "engine/analysis/torch_llama.h"
#include "engine/model/loader.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "test_support.h"

using edge::analysis::torch_logits;
using edge::analysis::torch_mean_nll;
using edge::analysis::train_llama;
using edge::analysis::TrainOptions;
using edge::analysis::TrainReport;
using edge::model::finalize_llama;
using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::Model;
using edge::model::validate_llama;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;

namespace {

// A small random llama model (GQA, partial rotary, untied head) built directly in the IR.
Model random_model(bool tied, int rope_dim, uint64_t seed) {
    Model m;
    m.name = "random";
    m.source_path = "random";
    m.source_format = "synth";
    LlamaConfig& c = m.config;
    c.dim = 32;
    c.hidden_dim = 48;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = 8;
    c.vocab_size = 40;
    c.context_length = 64;
    c.rope_dim = rope_dim;
    c.tied_embeddings = tied;
    std::mt19937 rng{uint32_t(seed)};
    std::normal_distribution<float> nd(0.0f, 0.3f);
    auto add = [&](const std::string& name, std::vector<int64_t> shape, bool norm) {
        Tensor t = Tensor::zeros_f32(name, std::move(shape));
        for (int64_t i = 0; i < t.numel(); ++i) t.f32_mut()[i] = norm ? 1.0f + 0.1f * nd(rng) : nd(rng);
        m.tensors.push_back(std::move(t));
    };
    const int64_t D = c.dim, F = c.hidden_dim, Q = c.q_dim(), KV = c.kv_dim();
    add("token_embd.weight", {c.vocab_size, D}, false);
    add("output_norm.weight", {D}, true);
    if (!tied) add("output.weight", {c.vocab_size, D}, false);
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

// Largest |a-b| / max(max|b|, tiny) over all logits: the normalised error of the whole output.
double max_rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    double scale = 1e-12, e = 0.0;
    for (float v : b) scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::fabs(double(a[i]) - double(b[i])));
    return e / scale;
}

std::vector<float> runtime_logits(const std::shared_ptr<const Model>& m, const std::vector<int32_t>& toks,
                                  bool batched) {
    RuntimeOptions o;
    o.threads = 2;
    o.max_seq = int(toks.size());
    auto rt = LlamaCpu::create(m, o);
    EXPECT_TRUE(rt.ok()) << (rt.ok() ? "" : rt.message());
    if (!rt.ok()) return {};
    const int V = m->config.vocab_size;
    std::vector<float> out(toks.size() * size_t(V));
    if (batched) {
        (*rt)->prefill(toks.data(), int(toks.size()), 0, out.data());
    } else {
        for (size_t t = 0; t < toks.size(); ++t) {
            const float* l = (*rt)->forward(toks[t], int(t));
            std::copy(l, l + V, out.begin() + std::ptrdiff_t(t * V));
        }
    }
    return out;
}

}  // namespace

TEST(TorchLlama, MatchesRuntimeOnRandomModel) {
    for (bool tied : {false, true})
        for (int rope_dim : {8, 4}) {
            auto m = std::make_shared<Model>(random_model(tied, rope_dim, 7));
            std::vector<int32_t> toks{1, 5, 9, 3, 39, 0, 17, 22, 8, 8, 30, 2};
            auto tl = torch_logits(*m, toks);
            ASSERT_TRUE(tl.ok()) << tl.message();
            ASSERT_EQ(tl->size(), toks.size() * 40);
            EXPECT_LT(max_rel_err(*tl, runtime_logits(m, toks, false)), 1e-5)
                << "tied " << tied << " rope " << rope_dim;
            EXPECT_LT(max_rel_err(*tl, runtime_logits(m, toks, true)), 1e-5) << "tied " << tied << " rope " << rope_dim;
        }
}

TEST(TorchLlama, MatchesRuntimeOnStories260K) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    auto loaded = load_model(path);
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    auto m = std::make_shared<Model>(std::move(loaded).value());
    // "Once upon a time" + its greedy continuation (ASSETS.md)
    std::vector<int32_t> toks{1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338,
                              401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328};
    auto tl = torch_logits(*m, toks);
    ASSERT_TRUE(tl.ok()) << tl.message();
    const auto rt = runtime_logits(m, toks, false);
    ASSERT_EQ(tl->size(), rt.size());
    EXPECT_LT(max_rel_err(*tl, rt), 1e-4);
    EXPECT_LT(max_rel_err(*tl, runtime_logits(m, toks, true)), 1e-4);
    // and the greedy choices agree position by position
    const int V = m->config.vocab_size;
    for (size_t t = 0; t + 1 < toks.size(); ++t)
        EXPECT_EQ(argmax(tl->data() + t * V, V), toks[t + 1]) << "position " << t;
}

TEST(TorchLlama, TrainingLowersLossAndUpdatesWeightsInPlace) {
    Model m = random_model(true, 8, 3);
    // A learnable pattern: counting modulo 10 from a random start.
    std::vector<std::vector<int32_t>> seqs;
    for (int s = 0; s < 40; ++s) {
        std::vector<int32_t> q{1};
        for (int i = 0; i < 30; ++i) q.push_back(10 + (s + i) % 10);
        seqs.push_back(q);
    }
    auto before = torch_mean_nll(m, seqs);
    ASSERT_TRUE(before.ok()) << before.message();
    const std::shared_ptr<uint8_t> old_data = m.find("token_embd.weight")->data;  // as another Model would
    const float* old_embd = reinterpret_cast<const float*>(old_data.get());
    const float first = old_embd[0];
    TrainOptions o;
    o.steps = 60;
    o.batch = 8;
    o.seq_len = 24;
    o.lr = 1e-2f;
    o.threads = 2;
    TrainReport rep;
    Status st = train_llama(m, seqs, o, nullptr, &rep);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(rep.steps, 60);
    EXPECT_LT(rep.last_loss, rep.first_loss * 0.5);
    EXPECT_EQ(old_embd[0], first) << "the old buffer must not be written";
    EXPECT_NE(m.find("token_embd.weight")->f32(), old_embd);
    auto after = torch_mean_nll(m, seqs);
    ASSERT_TRUE(after.ok());
    EXPECT_LT(*after, *before * 0.5);
    EXPECT_TRUE(validate_llama(m).ok());
}

TEST(TorchLlama, BadInputIsAnError) {
    Model m = random_model(false, 8, 1);
    EXPECT_TRUE(edge::test::fails_with(torch_logits(m, {1, 2, 400}),
                                       {"token 400 at position 2 is outside the vocabulary of 40"}));
    TrainOptions o;
    o.steps = 0;
    o.seconds = 0;
    EXPECT_TRUE(edge::test::fails_with(train_llama(m, {{1, 2, 3}}, o), {"training needs a step or a time bound"}));
    o.steps = 1;
    EXPECT_TRUE(edge::test::fails_with(train_llama(m, {{1}}, o),
                                       {"training sequence length 128 exceeds the model context 64"}));
    Progress p;
    p.cancel();
    EXPECT_TRUE(edge::test::fails_with(train_llama(m, {{1, 2, 3}}, o, &p),
                                       {"training sequence length 128 exceeds the model context 64"}));
}
