// Qwen2 / Qwen2.5: Q, K and V projections with biases, the Hugging Face architecture
// Qwen2ForCausalLM and the GGUF architecture qwen2 (rotate-half Q/K rows and biases). Checked
// against the independent float64 torch reference (reference/llama_forward.py adds the biases as
// transformers' Qwen2Attention does) on the HF folder; every other form of the same weights
// (qwen2 GGUF, our llama GGUF export, .edgeq, compiled .edge) then agrees with that folder.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "engine/compile/compile.h"
#include "engine/core/half.h"
#include "engine/model/edgeq.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/hf_config.h"
#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "engine/model/weights.h"
#include "engine/prune/structured.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "hf_fixture.h"
#include "test_support.h"
#include "torch_reference.h"

using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::make_synth_model;
using edge::model::Model;
using edge::model::parse_hf_config;
using edge::model::save_edgeq;
using edge::model::SynthOptions;
using edge::model::validate_llama;
using edge::model::write_gguf_model;
using edge::runtime::LlamaCpu;
using edge::runtime::Numerics;
using edge::runtime::RuntimeOptions;

namespace edge {
namespace {

namespace fs = std::filesystem;

constexpr int kVocab = 352, kTokens = 40;

// A small Qwen2-shaped model: synth makes the Q/K/V biases when the config asks for them.
const Model& qwen2_model() {
    static const Model m = [] {
        LlamaConfig c;
        c.dim = 64;
        c.hidden_dim = 128;
        c.n_layers = 2;
        c.n_heads = 4;
        c.n_kv_heads = 2;
        c.head_dim = 16;
        c.vocab_size = kVocab;
        c.context_length = 256;
        c.rope_dim = 16;
        c.rope_theta = 1000000.0f;
        c.norm_eps = 1e-6f;
        c.attn_qkv_bias = true;
        SynthOptions o;
        o.config = c;
        o.type = DType::F32;
        o.stddev = 0.15f;
        o.seed = 5;
        auto r = make_synth_model(o);
        if (!r.ok()) throw std::runtime_error(r.message());
        // Biases of the size Qwen2's have next to its weights (the K bias especially is large).
        Model big = std::move(r).value();
        for (Tensor& t : big.tensors)
            if (t.name.ends_with(".bias"))
                for (int64_t i = 0; i < t.numel(); ++i) t.f32_mut()[i] *= 8.0f;
        return big;
    }();
    return m;
}

const std::vector<int32_t>& tokens() {
    static const std::vector<int32_t> t = test::random_tokens(kTokens, 17, kVocab);
    return t;
}

fs::path qwen2_folder(const std::string& tag, const Model& m = qwen2_model()) {
    fs::path dir = test::temp_dir("qwen2_" + tag);
    const std::string e = test::write_hf_folder(m, dir, {});
    if (!e.empty()) ADD_FAILURE() << e;
    return dir;
}

std::vector<float> logits(const std::string& path) { return test::executor_logits(path, tokens()); }

// Bytes of a model's matrices at two bytes an element.
size_t stored_weight_bytes_f16(const Model& m) {
    size_t n = 0;
    for (const Tensor& t : m.tensors)
        if (t.shape.size() == 2) n += size_t(t.numel()) * 2;
    return n;
}

// A qwen2 GGUF as llama.cpp's converter writes one: qwen2.* keys, Q/K rows and their biases in
// the rotate-half layout (the converter does not permute them for this architecture).
// Matrices are written as `matrix_type` (F32, F16 or BF16), vectors as F32.
std::string write_qwen2_gguf(const Model& m, const std::string& path, int64_t k_bias_len = -1,
                             DType matrix_type = DType::F32) {
    const LlamaConfig& c = m.config;
    model::gguf::Writer w;
    model::gguf::set_architecture(w, "qwen2", c);
    std::vector<std::vector<float>> data;
    auto put = [&](const std::string& name, std::vector<float> v, const std::vector<int64_t>& shape) {
        EXPECT_TRUE(w.add_tensor(name, shape.size() == 2 ? matrix_type : DType::F32, shape).ok()) << name;
        data.push_back(std::move(v));
    };
    auto values = [&](const std::string& name) {
        const Tensor* t = m.find(name);
        EXPECT_NE(t, nullptr) << name;
        return t ? std::vector<float>(t->f32(), t->f32() + t->numel()) : std::vector<float>();
    };
    put("token_embd.weight", values("token_embd.weight"), {c.vocab_size, c.dim});
    put("output_norm.weight", values("output_norm.weight"), {c.dim});
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        auto hf = [&](const std::string& name, int heads, int cols) {
            return test::permute_to_hf(values(p + name).data(), heads, c.head_dim, cols);
        };
        put(p + "attn_norm.weight", values(p + "attn_norm.weight"), {c.dim});
        put(p + "attn_q.weight", hf("attn_q.weight", c.n_heads, c.dim), {c.q_dim(), c.dim});
        put(p + "attn_k.weight", hf("attn_k.weight", c.n_kv_heads, c.dim), {c.kv_dim(), c.dim});
        put(p + "attn_v.weight", values(p + "attn_v.weight"), {c.kv_dim(), c.dim});
        put(p + "attn_q.bias", hf("attn_q.bias", c.n_heads, 1), {c.q_dim()});
        std::vector<float> bk = hf("attn_k.bias", c.n_kv_heads, 1);
        if (k_bias_len >= 0) bk.resize(size_t(k_bias_len));
        put(p + "attn_k.bias", bk, {int64_t(bk.size())});
        put(p + "attn_v.bias", values(p + "attn_v.bias"), {c.kv_dim()});
        put(p + "attn_output.weight", values(p + "attn_output.weight"), {c.dim, c.q_dim()});
        put(p + "ffn_norm.weight", values(p + "ffn_norm.weight"), {c.dim});
        put(p + "ffn_gate.weight", values(p + "ffn_gate.weight"), {c.hidden_dim, c.dim});
        put(p + "ffn_up.weight", values(p + "ffn_up.weight"), {c.hidden_dim, c.dim});
        put(p + "ffn_down.weight", values(p + "ffn_down.weight"), {c.dim, c.hidden_dim});
    }
    put("output.weight", values("output.weight"), {c.vocab_size, c.dim});
    if (auto st = w.open(path); !st.ok()) return st.message();
    for (const auto& v : data)
        if (auto st = w.write_f32(v.data(), int64_t(v.size())); !st.ok()) return st.message();
    auto st = w.finish();
    return st.ok() ? "" : st.message();
}

TEST(Qwen2, HfFolderWithQkvBiasesMatchesTheTorchReference) {
    const fs::path dir = qwen2_folder("hf");
    auto hf = load_model(dir.string());
    ASSERT_TRUE(hf.ok()) << hf.message();
    EXPECT_TRUE(hf->config.attn_qkv_bias);
    ASSERT_NE(hf->find("blk.1.attn_k.bias"), nullptr);
    const std::vector<double> ref = test::torch_reference_logits(dir, tokens(), kVocab);
    const double gap = test::worst_relative(logits(dir.string()), ref, kVocab);
    // The same weights with the biases left out: what an importer that dropped them would give.
    Model unbiased = qwen2_model();
    for (Tensor& t : unbiased.tensors)
        if (t.name.ends_with(".bias")) std::fill(t.f32_mut(), t.f32_mut() + t.numel(), 0.0f);
    const fs::path plain = qwen2_folder("hf_zero_bias", unbiased);
    const double without = test::worst_relative(logits(plain.string()), ref, kVocab);
    std::printf("Qwen2 HF folder against the torch reference: %.2e (biases zeroed: %.2e)\n", gap, without);
    EXPECT_LE(gap, 2e-5);
    EXPECT_GE(without, 1e-2) << "the biases must matter to the logits, or this test could not fail";
}

TEST(Qwen2, Qwen2GgufExportEdgeqAndCompiledFormsEqualTheHfFolder) {
    const fs::path dir = qwen2_folder("forms");
    auto hf = load_model(dir.string());
    ASSERT_TRUE(hf.ok()) << hf.message();
    const std::vector<float> want = logits(dir.string());
    ASSERT_FALSE(want.empty());

    // GGUF architecture qwen2 (rotate-half rows and biases), eager and lazy.
    const std::string q2 = (dir / "model-qwen2.gguf").string();
    ASSERT_EQ(write_qwen2_gguf(qwen2_model(), q2), "");
    auto g = load_model(q2);
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_TRUE(g->config.attn_qkv_bias);
    EXPECT_EQ(test::compare_models(*hf, *g), "") << "the same IR tensors, biases permuted back";
    EXPECT_LE(test::worst_relative(logits(q2), want, kVocab), 1e-6);
    LoadOptions lo;
    lo.lazy_weights = true;
    auto lazy = load_model(q2, lo);
    ASSERT_TRUE(lazy.ok()) << lazy.message();
    EXPECT_TRUE(model::is_unread(*lazy->find("blk.1.attn_q.bias")));
    ASSERT_TRUE(model::load_weights(*lazy).ok());
    EXPECT_EQ(test::compare_models(*g, *lazy), "");

    // Our GGUF export writes a 'llama' file with the biases beside the projections (llama.cpp's
    // llama architecture reads them when present).
    const std::string exported = (dir / "export.gguf").string();
    ASSERT_TRUE(write_gguf_model(*hf, exported).ok());
    auto gf = model::gguf::open(exported);
    ASSERT_TRUE(gf.ok()) << gf.message();
    ASSERT_NE(gf->find_tensor("blk.0.attn_q.bias"), nullptr);
    EXPECT_LE(test::worst_relative(logits(exported), want, kVocab), 1e-6);

    const std::string edgeq = (dir / "model.edgeq").string();
    ASSERT_TRUE(save_edgeq(*hf, edgeq).ok());
    EXPECT_LE(test::worst_relative(logits(edgeq), want, kVocab), 1e-6);

    // The compiled program adds each bias after its projection (the fused Q/K/V node too).
    compile::CompileOptions co;
    co.out_path = (dir / "model.edge").string();
    co.max_seq = 128;
    auto rep = compile::compile(*hf, co);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_LE(test::worst_relative(logits(co.out_path), want, kVocab), 1e-5);

    // llama.cpp numerics on the exported llama file add the biases as ggml_add does.
    auto back = load_model(exported);
    ASSERT_TRUE(back.ok()) << back.message();
    RuntimeOptions ro;
    ro.threads = 1;
    ro.max_seq = 64;
    ro.numerics = Numerics::LlamaCpp;
    auto compat = LlamaCpu::create(std::make_shared<const Model>(*back), ro);
    ASSERT_TRUE(compat.ok()) << compat.message();
    std::vector<float> lc(want.size());
    (*compat)->prefill(tokens().data(), kTokens, 0, lc.data());
    const double compat_gap = test::worst_relative(lc, want, kVocab);
    std::printf("llama.cpp numerics (F16 K/V) against the FP32 executor: %.2e\n", compat_gap);
    EXPECT_LE(compat_gap, 2e-2);
}

// Weights as stored (what generate, perplexity, bench and the agent run): an F16 qwen2 file's
// matrices stay F16 - Q/K rows copied in the interleaved order, the rest aliasing the mapping -
// with no FP32 copy but the vectors, and the executor gives the logits of the F32 import.
TEST(Qwen2, F16GgufAndBf16HfFolderRunAsStoredWithPermutedRowsAndNoFp32Copy) {
    const fs::path dir = test::temp_dir("qwen2_stored");
    const std::string path = (dir / "model-f16.gguf").string();
    ASSERT_EQ(write_qwen2_gguf(qwen2_model(), path, -1, DType::F16), "");
    auto f32 = load_model(path);
    ASSERT_TRUE(f32.ok()) << f32.message();
    LoadOptions lo;
    lo.lazy_weights = true;
    auto stored = load_model(path, lo);
    ASSERT_TRUE(stored.ok()) << stored.message();
    size_t vector_bytes = 0;
    for (const Tensor& t : stored->tensors)
        if (t.shape.size() == 1) vector_bytes += t.nbytes;
    EXPECT_EQ(model::as_stored_bytes(*stored), stored_weight_bytes_f16(*stored) + vector_bytes);
    // FP32 memory: the Q/K biases only (permuted copies); F32 norms and V biases alias the file.
    size_t qk_bias_bytes = 0;
    for (const Tensor& t : stored->tensors)
        if (t.name.ends_with("attn_q.bias") || t.name.ends_with("attn_k.bias")) qk_bias_bytes += t.nbytes;
    const size_t before = model::f32_weight_stats().live_bytes;
    ASSERT_TRUE(model::load_weights_as_stored(*stored).ok());
    EXPECT_EQ(model::f32_weight_stats().live_bytes - before, qk_bias_bytes);
    for (const Tensor& t : stored->tensors) {
        EXPECT_EQ(t.type, t.shape.size() == 2 ? DType::F16 : DType::F32) << t.name;
        if (t.shape.size() != 2) continue;
        // Row for row the values of the F32 import (Q/K permuted out of the rotate-half layout).
        const Tensor* want = f32->find(t.name);
        ASSERT_NE(want, nullptr) << t.name;
        const uint16_t* h = reinterpret_cast<const uint16_t*>(t.raw());
        for (int64_t i = 0; i < t.numel(); ++i)
            ASSERT_EQ(f16_to_f32(h[i]), want->f32()[i]) << t.name << " element " << i;
    }
    const std::vector<float> want = logits(path);
    auto rt = LlamaCpu::create(std::make_shared<const Model>(std::move(stored).value()), RuntimeOptions{1, 64});
    ASSERT_TRUE(rt.ok()) << rt.message();
    std::vector<float> got(want.size());
    (*rt)->prefill(tokens().data(), kTokens, 0, got.data());
    EXPECT_LE(test::worst_relative(got, want, kVocab), 1e-5);

    // A BF16 Hugging Face folder, sharded: the same, Q/K rows permuted out of rotate-half.
    const fs::path hf = test::temp_dir("qwen2_stored_hf");
    test::HfFixtureOptions ho;
    ho.storage = DType::BF16;
    ho.sharded = true;
    ASSERT_EQ(test::write_hf_folder(qwen2_model(), hf, ho), "");
    auto hf32 = load_model(hf.string());
    ASSERT_TRUE(hf32.ok()) << hf32.message();
    auto hfs = load_model(hf.string(), lo);
    ASSERT_TRUE(hfs.ok()) << hfs.message();
    ASSERT_TRUE(model::load_weights_as_stored(*hfs).ok());
    for (const Tensor& t : hfs->tensors) {
        EXPECT_EQ(t.type, t.shape.size() == 2 ? DType::BF16 : DType::F32) << t.name;
        if (t.shape.size() != 2) continue;
        const Tensor* w = hf32->find(t.name);
        ASSERT_NE(w, nullptr) << t.name;
        const uint16_t* h = reinterpret_cast<const uint16_t*>(t.raw());
        for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(bf16_to_f32(h[i]), w->f32()[i]) << t.name << " " << i;
    }
    const std::vector<float> hf_want = logits(hf.string());
    auto hrt = LlamaCpu::create(std::make_shared<const Model>(std::move(hfs).value()), RuntimeOptions{1, 64});
    ASSERT_TRUE(hrt.ok()) << hrt.message();
    (*hrt)->prefill(tokens().data(), kTokens, 0, got.data());
    EXPECT_LE(test::worst_relative(got, hf_want, kVocab), 1e-5);
}

TEST(Qwen2, BadBiasesAndUnsupportedBiasConfigsAreRefusedByName) {
    const fs::path dir = test::temp_dir("qwen2_bad");
    const std::string bad = (dir / "short-bias.gguf").string();
    ASSERT_EQ(write_qwen2_gguf(qwen2_model(), bad, 16), "");
    EXPECT_TRUE(test::fails_with(load_model(bad), {bad, "blk.0.attn_k.bias", "[16]", "expected [32]"}));

    // Llama's attention_bias puts a bias on the output projection too: refused, not half-read.
    EXPECT_TRUE(test::fails_with(parse_hf_config(R"({"architectures":["LlamaForCausalLM"],"hidden_size":64,
        "intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":352,
        "attention_bias":true})",
                                                 "cfg.json"),
                                 {"cfg.json", "attention_bias", "Qwen2"}));

    // A bias the configuration does not announce.
    Model stray = qwen2_model();
    stray.config.attn_qkv_bias = false;
    EXPECT_TRUE(test::fails_with(validate_llama(stray), {"blk.0.attn_q.bias", "attn_qkv_bias"}));

    // Structured pruning would cut rows without their biases: refused with what still works.
    EXPECT_TRUE(test::fails_with(prune::find_groups(qwen2_model()), {"Q/K/V biases", "quantization"}));
}

}  // namespace
}  // namespace edge
