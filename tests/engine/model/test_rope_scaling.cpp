// RoPE scaling (Llama 3.x "llama3", "linear"; GGUF's rope_freqs.weight) checked against an
// independent reference: tests/engine/model/reference/llama_forward.py, Debian's python3 with
// python3-torch implementing the published formulas in float64 on the same weights (the Hugging
// Face layout, rotate-half), at positions past the original context. The GGUF, .edgeq and
// compiled .edge forms of the same weights then agree with the folder they came from.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/compile/compile.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/edgeq.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_export.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/hf_config.h"
#include "engine/model/loader.h"
#include "engine/model/rope.h"
#include "engine/model/synth.h"
#include "engine/model/weights.h"
#include "engine/quant/apply.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/open_executor.h"
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
using edge::model::write_gguf_model;
using edge::runtime::LlamaCpu;
using edge::runtime::Numerics;
using edge::runtime::RuntimeOptions;

namespace edge {
namespace {

namespace fs = std::filesystem;

// Original context 32 with head_dim 16 (theta 10000): pair 0 (wavelength 6.3) keeps its
// frequency, pair 1 (19.9) is blended, pairs 2-7 (63 and up) are divided by the factor.
constexpr const char* kLlama3 = R"({"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,)"
                                R"("original_max_position_embeddings":32})";
constexpr const char* kLinear = R"({"type":"linear","factor":4.0})";
constexpr int kTokens = 96;  // three times the original context

const Model& small_model() {
    static const Model m = [] {
        LlamaConfig c;
        c.dim = 64;
        c.hidden_dim = 128;
        c.n_layers = 2;
        c.n_heads = 4;
        c.n_kv_heads = 2;
        c.head_dim = 16;
        c.vocab_size = 352;
        c.context_length = 256;
        c.rope_dim = 16;
        c.rope_theta = 10000.0f;
        c.norm_eps = 1e-5f;
        SynthOptions o;
        o.config = c;
        o.type = DType::F32;
        o.stddev = 0.15f;  // peaked attention, so positions matter to the logits
        o.seed = 7;
        auto r = make_synth_model(o);
        if (!r.ok()) throw std::runtime_error(r.message());
        return std::move(r).value();
    }();
    return m;
}

fs::path folder(const std::string& tag, const std::string& rope_scaling, bool phi3 = false,
                const std::string& extra_config = "") {
    fs::path dir = test::temp_dir("rope_" + tag);
    test::HfFixtureOptions o;
    o.rope_scaling = rope_scaling;
    o.phi3 = phi3;
    o.extra_config = extra_config;
    const std::string e = test::write_hf_folder(small_model(), dir, o);
    if (!e.empty()) ADD_FAILURE() << e;
    return dir;
}

const std::vector<int32_t>& tokens() {
    static const std::vector<int32_t> t = test::random_tokens(kTokens, 11, 352);
    return t;
}

// Every position's logits of the first n tokens from the one executor interface (what generate
// and perplexity run), on an executor holding max_seq positions.
std::vector<float> our_logits(const std::string& path, int n = kTokens, int max_seq = 128) {
    return test::executor_logits(path, std::span(tokens()).first(size_t(n)), max_seq);
}

std::vector<double> reference_logits(const fs::path& dir, int n = kTokens) {
    return test::torch_reference_logits(dir, std::span(tokens()).first(size_t(n)), 352);
}

template <class A, class B>
double worst_relative(const std::vector<A>& a, const std::vector<B>& b, int from = 0) {
    return test::worst_relative(a, b, 352, from);
}

TEST(RopeScaling, Llama3KeepsHighFrequenciesBlendsTheMiddleAndDividesLowOnes) {
    model::Llama3RopeScaling s;
    s.factor = 8.0;
    s.low_freq_factor = 1.0;
    s.high_freq_factor = 4.0;
    s.original_context = 32;
    const std::vector<float> f = model::llama3_rope_factors(16, 10000.0f, s);
    ASSERT_EQ(f.size(), 8u);
    EXPECT_EQ(f[0], 1.0f);
    // pair 1: wavelength 2*pi*sqrt(10); s = (32 / wavelength - 1) / 3; factor 1 / ((1-s)/8 + s)
    const double wl = 2.0 * std::acos(-1.0) * std::sqrt(10.0), sm = (32.0 / wl - 1.0) / 3.0;
    EXPECT_NEAR(f[1], 1.0 / ((1.0 - sm) / 8.0 + sm), 1e-6);
    for (size_t i = 2; i < f.size(); ++i) EXPECT_EQ(f[i], 8.0f) << i;

    auto h = parse_hf_config(R"({"architectures":["LlamaForCausalLM"],"hidden_size":64,"intermediate_size":128,)"
                             R"("num_hidden_layers":2,"num_attention_heads":4,"vocab_size":352,"rope_scaling":)" +
                                 std::string(kLlama3) + "}",
                             "cfg/config.json");
    ASSERT_TRUE(h.ok()) << h.message();
    EXPECT_EQ(h->llama.rope_freq_factors, f);
    EXPECT_EQ(h->llama.rope_scaling, "llama3: factor 8, low 1, high 4, original context 32");
}

TEST(RopeScaling, HfLlama3AndLinearMatchTheTorchReferencePastTheOriginalContext) {
    const fs::path plain = folder("plain", ""), llama3 = folder("llama3", kLlama3), linear = folder("linear", kLinear);
    const std::vector<double> ref_plain = reference_logits(plain);
    const std::vector<double> ref_llama3 = reference_logits(llama3);
    const std::vector<double> ref_linear = reference_logits(linear);
    const std::vector<float> ours_plain = our_logits(plain.string());
    const std::vector<float> ours_llama3 = our_logits(llama3.string());
    const std::vector<float> ours_linear = our_logits(linear.string());
    // float32 arithmetic against float64: a few ulps of the largest logit.
    std::printf("worst relative difference to the torch reference: plain %.2e, llama3 %.2e, linear %.2e\n",
                worst_relative(ours_plain, ref_plain), worst_relative(ours_llama3, ref_llama3),
                worst_relative(ours_linear, ref_linear));
    EXPECT_LE(worst_relative(ours_plain, ref_plain), 2e-5);
    EXPECT_LE(worst_relative(ours_llama3, ref_llama3), 2e-5);
    EXPECT_LE(worst_relative(ours_linear, ref_linear), 2e-5);
    // The scaling matters to these weights: past the original context the scaled logits are far
    // from the unscaled model's (so the comparisons above could fail).
    std::printf("scaled against unscaled past the original context: llama3 %.2e, linear %.2e\n",
                worst_relative(ours_llama3, ref_plain, 32), worst_relative(ours_linear, ref_plain, 32));
    EXPECT_GE(worst_relative(ours_llama3, ref_plain, 32), 1e-2);
    EXPECT_GE(worst_relative(ours_linear, ref_plain, 32), 1e-2);
    EXPECT_GE(worst_relative(ours_linear, ref_llama3, 32), 1e-2);
}

TEST(RopeScaling, GgufEdgeqAndCompiledFormsAgreeWithTheHfFolder) {
    const fs::path dir = folder("forms", kLlama3);
    auto hf = load_model(dir.string());
    ASSERT_TRUE(hf.ok()) << hf.message();
    const std::vector<float> want = our_logits(dir.string());

    const std::string gguf_path = (dir / "scaled.gguf").string();
    ASSERT_TRUE(write_gguf_model(*hf, gguf_path).ok());
    auto g = model::gguf::open(gguf_path);
    ASSERT_TRUE(g.ok()) << g.message();
    const model::gguf::TensorInfo* ff = g->find_tensor("rope_freqs.weight");
    ASSERT_NE(ff, nullptr) << "the GGUF carries the factors as llama.cpp reads them";
    EXPECT_EQ(ff->n_elements, 8u);
    auto back = load_model(gguf_path);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->config.rope_freq_factors, hf->config.rope_freq_factors);
    EXPECT_EQ(back->find("rope_freqs.weight"), nullptr) << "read into the config, not a weight";
    EXPECT_LE(worst_relative(our_logits(gguf_path), want), 1e-5);
    // llama.cpp's arithmetic (ggml_compat applies the factors as ggml's freq_factors do).
    RuntimeOptions ro;
    ro.threads = 1;
    ro.max_seq = 128;
    ro.numerics = Numerics::LlamaCpp;
    auto compat = LlamaCpu::create(std::make_shared<const Model>(*back), ro);
    ASSERT_TRUE(compat.ok()) << compat.message();
    std::vector<float> lc(want.size());
    (*compat)->prefill(tokens().data(), kTokens, 0, lc.data());
    // The same comparison without scaling is the yardstick: ggml's own rounding (F16 K/V, the
    // iterative angle) is all the difference there, and scaling must not add to it.
    const fs::path plain_dir = folder("forms_plain", "");
    auto plain = load_model(plain_dir.string());
    ASSERT_TRUE(plain.ok()) << plain.message();
    const std::string plain_gguf = (plain_dir / "plain.gguf").string();
    ASSERT_TRUE(write_gguf_model(*plain, plain_gguf).ok());
    auto plain_back = load_model(plain_gguf);
    ASSERT_TRUE(plain_back.ok()) << plain_back.message();
    auto plain_compat = LlamaCpu::create(std::make_shared<const Model>(*plain_back), ro);
    ASSERT_TRUE(plain_compat.ok()) << plain_compat.message();
    std::vector<float> lp(want.size());
    (*plain_compat)->prefill(tokens().data(), kTokens, 0, lp.data());
    const double scaled_gap = worst_relative(lc, want), plain_gap = worst_relative(lp, our_logits(plain_dir.string()));
    std::printf("llama.cpp numerics against the FP32 executor: scaled %.2e, unscaled %.2e\n", scaled_gap, plain_gap);
    EXPECT_LE(scaled_gap, 2.0 * plain_gap);

    const std::string edgeq_path = (dir / "scaled.edgeq").string();
    ASSERT_TRUE(save_edgeq(*hf, edgeq_path).ok());
    EXPECT_LE(worst_relative(our_logits(edgeq_path), want), 1e-5);

    compile::CompileOptions co;
    co.out_path = (dir / "scaled.edge").string();
    co.max_seq = 128;
    auto rep = compile::compile(*hf, co);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_LE(worst_relative(our_logits(co.out_path), want), 1e-5);
}

// Phi-3 longrope with an original context of 32 and max_position_embeddings 256: the short
// factors within 32 positions, the long ones beyond, cos/sin times sqrt(1 + ln 8 / ln 32).
constexpr const char* kLongrope = R"({"type":"longrope","short_factor":[1.0,1.1,1.3,1.6,2.0,2.5,3.0,3.5],)"
                                  R"("long_factor":[1.0,1.5,3.0,6.0,10.0,16.0,24.0,32.0]})";
constexpr const char* kPhi3Original = R"({"original_max_position_embeddings":32})";

TEST(RopeScaling, Phi3LongropeMatchesTheTorchReferenceOnBothSidesOfTheOriginalContext) {
    const fs::path dir = folder("longrope", kLongrope, true, kPhi3Original);
    const fs::path plain = folder("phi3_plain", "", true);
    auto hf = load_model(dir.string());
    ASSERT_TRUE(hf.ok()) << hf.message();
    const LlamaConfig& c = hf->config;
    EXPECT_EQ(c.rope_original_context, 32);
    EXPECT_EQ(c.rope_freq_factors.size(), 8u);
    EXPECT_EQ(c.rope_long_freq_factors.size(), 8u);
    EXPECT_NEAR(c.rope_attn_factor, std::sqrt(1.6), 1e-6);
    EXPECT_NE(c.rope_scaling.find("longrope: original context 32"), std::string::npos) << c.rope_scaling;

    // Beyond the original context: 96 tokens on a 128-position executor (long factors) against
    // the reference on a 96-token sequence; within it: 24 tokens on a 32-position executor.
    const std::vector<float> ours_long = our_logits(dir.string(), kTokens, 128);
    const std::vector<float> ours_short = our_logits(dir.string(), 24, 32);
    const std::vector<double> ref_long = reference_logits(dir, kTokens), ref_short = reference_logits(dir, 24);
    const std::vector<double> ref_plain = reference_logits(plain, kTokens);
    std::printf("longrope against the torch reference: long %.2e, short %.2e; against no scaling: %.2e\n",
                worst_relative(ours_long, ref_long), worst_relative(ours_short, ref_short),
                worst_relative(ours_long, ref_plain, 32));
    EXPECT_LE(worst_relative(ours_long, ref_long), 2e-5);
    EXPECT_LE(worst_relative(ours_short, ref_short), 2e-5);
    EXPECT_GE(worst_relative(ours_long, ref_plain, 32), 1e-2);
    // The short factors are not the long ones: the first 24 positions differ between the sides.
    const std::vector<float> long_first(ours_long.begin(), ours_long.begin() + ptrdiff_t(ours_short.size()));
    EXPECT_GE(worst_relative(long_first, ref_short), 1e-3);

    // Saved and compiled forms keep the factors, the original context and the attention factor.
    const std::string edgeq_path = (dir / "longrope.edgeq").string();
    ASSERT_TRUE(save_edgeq(*hf, edgeq_path).ok());
    EXPECT_LE(worst_relative(our_logits(edgeq_path), ours_long), 1e-5);
    compile::CompileOptions co;
    co.out_path = (dir / "longrope.edge").string();
    co.max_seq = 128;
    auto rep = compile::compile(*hf, co);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_LE(worst_relative(our_logits(co.out_path), ours_long), 1e-5);

    // GGUF export: longrope exists only in llama.cpp's 'phi3' architecture, so the file is one,
    // and it reads back with the same logits on both sides of the original context.
    const std::string gguf_path = (dir / "longrope.gguf").string();
    model::GgufExportOptions eo;
    eo.float_type = DType::F32;
    auto ex = model::export_gguf(*hf, gguf_path, eo);
    ASSERT_TRUE(ex.ok()) << ex.message();
    EXPECT_EQ(ex->architecture, "phi3");
    EXPECT_LE(worst_relative(our_logits(gguf_path), ours_long), 1e-5);
    EXPECT_LE(worst_relative(our_logits(gguf_path, 24, 32), ours_short), 1e-5);
}

// A phi3 GGUF as llama.cpp's converter lays one out: phi3.* keys, fused blk.N.attn_qkv (Q and K
// rows in the rotate-half layout) and blk.N.ffn_up (gate rows, then up rows), longrope factors as
// rope_factors_short/long.weight. Written here from the IR weights of the HF folder above.
std::string write_phi3_gguf(const Model& m, const std::string& path, bool longrope, int ffn_key = 0) {
    const LlamaConfig& c = m.config;
    model::gguf::Writer w;
    model::gguf::set_architecture(w, "phi3", c);
    if (ffn_key > 0) w.set("phi3.feed_forward_length", model::gguf::Value::of_u32(uint32_t(ffn_key)));
    if (longrope) {
        w.set("phi3.rope.scaling.original_context_length", model::gguf::Value::of_u32(32));
        w.set("phi3.rope.scaling.attn_factor", model::gguf::Value::of_f32(float(std::sqrt(1.6))));
    }
    std::vector<std::pair<std::string, std::vector<float>>> data;
    auto put = [&](const std::string& name, std::vector<float> v, const std::vector<int64_t>& shape) {
        EXPECT_TRUE(w.add_tensor(name, DType::F32, shape).ok()) << name;
        data.emplace_back(name, std::move(v));
    };
    auto values = [&](const std::string& name) {
        const Tensor* t = m.find(name);
        EXPECT_NE(t, nullptr) << name;
        return t ? std::vector<float>(t->f32(), t->f32() + t->numel()) : std::vector<float>();
    };
    put("token_embd.weight", values("token_embd.weight"), {c.vocab_size, c.dim});
    put("output_norm.weight", values("output_norm.weight"), {c.dim});
    if (!c.tied_embeddings) put("output.weight", values("output.weight"), {c.vocab_size, c.dim});
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        std::vector<float> qkv = test::permute_to_hf(values(p + "attn_q.weight").data(), c.n_heads, c.head_dim, c.dim);
        const std::vector<float> k =
            test::permute_to_hf(values(p + "attn_k.weight").data(), c.n_kv_heads, c.head_dim, c.dim);
        const std::vector<float> v = values(p + "attn_v.weight");
        qkv.insert(qkv.end(), k.begin(), k.end());
        qkv.insert(qkv.end(), v.begin(), v.end());
        std::vector<float> gate_up = values(p + "ffn_gate.weight");
        const std::vector<float> up = values(p + "ffn_up.weight");
        gate_up.insert(gate_up.end(), up.begin(), up.end());
        put(p + "attn_norm.weight", values(p + "attn_norm.weight"), {c.dim});
        put(p + "attn_qkv.weight", qkv, {c.q_dim() + 2 * c.kv_dim(), c.dim});
        put(p + "attn_output.weight", values(p + "attn_output.weight"), {c.dim, c.q_dim()});
        put(p + "ffn_norm.weight", values(p + "ffn_norm.weight"), {c.dim});
        put(p + "ffn_up.weight", gate_up, {2 * c.hidden_dim, c.dim});
        put(p + "ffn_down.weight", values(p + "ffn_down.weight"), {c.dim, c.hidden_dim});
    }
    if (longrope) {
        put("rope_factors_short.weight", {1.0f, 1.1f, 1.3f, 1.6f, 2.0f, 2.5f, 3.0f, 3.5f}, {8});
        put("rope_factors_long.weight", {1.0f, 1.5f, 3.0f, 6.0f, 10.0f, 16.0f, 24.0f, 32.0f}, {8});
    }
    if (auto st = w.open(path); !st.ok()) return st.message();
    for (const auto& [name, v] : data)
        if (auto st = w.write_f32(v.data(), int64_t(v.size())); !st.ok()) return name + ": " + st.message();
    auto st = w.finish();
    return st.ok() ? "" : st.message();
}

// The same Phi-3 weights as a GGUF (architecture phi3) and as an HF folder give the same logits:
// fused tensors split by rows, Q/K rows permuted, longrope factors and attention factor read.
TEST(RopeScaling, Phi3GgufWithFusedTensorsAndLongropeEqualsTheHfFolder) {
    const fs::path dir = folder("phi3_gguf", kLongrope, true, kPhi3Original);
    auto hf = load_model(dir.string());
    ASSERT_TRUE(hf.ok()) << hf.message();
    const std::string path = (dir / "phi3.gguf").string();
    ASSERT_EQ(write_phi3_gguf(small_model(), path, true), "");
    auto g = load_model(path);
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_EQ(g->config.rope_freq_factors, hf->config.rope_freq_factors);
    EXPECT_EQ(g->config.rope_long_freq_factors, hf->config.rope_long_freq_factors);
    EXPECT_EQ(g->config.rope_original_context, 32);
    EXPECT_NEAR(g->config.rope_attn_factor, hf->config.rope_attn_factor, 1e-6);
    EXPECT_NE(g->find("blk.1.attn_k.weight"), nullptr);
    EXPECT_NE(g->find("blk.1.ffn_gate.weight"), nullptr);
    EXPECT_EQ(g->find("blk.1.attn_qkv.weight"), nullptr);
    EXPECT_EQ(g->find("rope_factors_long.weight"), nullptr) << "read into the config, not a weight";
    const double long_gap = worst_relative(our_logits(path), our_logits(dir.string()));
    const double short_gap = worst_relative(our_logits(path, 24, 32), our_logits(dir.string(), 24, 32));
    std::printf("phi3 GGUF against the HF folder: long %.2e, short %.2e\n", long_gap, short_gap);
    EXPECT_LE(long_gap, 1e-5);
    EXPECT_LE(short_gap, 1e-5);
    // Lazy open reads the header only: the fused tensors are sliced when a block is read.
    LoadOptions lo;
    lo.lazy_weights = true;
    auto lazy = load_model(path, lo);
    ASSERT_TRUE(lazy.ok()) << lazy.message();
    ASSERT_NE(lazy->find("blk.1.attn_q.weight"), nullptr);
    EXPECT_TRUE(model::is_unread(*lazy->find("blk.1.attn_q.weight")));
    ASSERT_TRUE(model::load_weights(*lazy).ok());
    EXPECT_EQ(test::compare_models(*g, *lazy), "");

    // The exporter writes that layout: the HF folder's model exported (F32) holds the same tensors,
    // byte for byte, as the converter-style file written above - fused rows, rotate-half Q/K rows,
    // both factor sets - and the phi3 keys.
    const std::string exported = (dir / "exported.gguf").string();
    model::GgufExportOptions eo;
    eo.float_type = DType::F32;
    auto ex = model::export_gguf(*hf, exported, eo);
    ASSERT_TRUE(ex.ok()) << ex.message();
    auto want = model::gguf::open(path);
    auto got = model::gguf::open(exported);
    ASSERT_TRUE(want.ok() && got.ok()) << want.message() << got.message();
    ASSERT_EQ(got->tensors.size(), want->tensors.size());
    for (const auto& t : want->tensors) {
        const auto* g2 = got->find_tensor(t.name);
        ASSERT_NE(g2, nullptr) << t.name;
        EXPECT_EQ(g2->type, t.type) << t.name;
        EXPECT_EQ(g2->shape(), t.shape()) << t.name;
        EXPECT_EQ(std::memcmp(g2->data, t.data, size_t(t.nbytes)), 0) << t.name;
    }
    auto arch = got->get_string("general.architecture");
    ASSERT_TRUE(arch.ok() && arch->has_value());
    EXPECT_EQ(**arch, "phi3");
    auto orig = got->get_int("phi3.rope.scaling.original_context_length");
    ASSERT_TRUE(orig.ok() && orig->has_value());
    EXPECT_EQ(**orig, 32);

    // A quantized Phi-3 (INT8 attention, INT4 FFN, RTN g32, half scales) exports as Q8_0 / Q4_0
    // fused tensors and re-imports with the .edgeq's logits exactly.
    auto plan = quant::parse_plan(R"({"version":1,"default":{"precision":"int4","method":"rtn","group_size":32},
        "layers":{"blk.*.attn_*":{"precision":"int8","scales":"fp16"}}})");
    ASSERT_TRUE(plan.ok()) << plan.message();
    auto q = quant::apply_plan(*hf, *plan, nullptr);
    ASSERT_TRUE(q.ok()) << q.message();
    const std::string qpath = (dir / "q.edgeq").string(), qgguf = (dir / "q.gguf").string();
    ASSERT_TRUE(save_edgeq(q->model, qpath).ok());
    auto qx = model::export_gguf(q->model, qgguf, eo);  // the F32 embedding and head stay F32
    ASSERT_TRUE(qx.ok()) << qx.message();
    auto qf = model::gguf::open(qgguf);
    ASSERT_TRUE(qf.ok()) << qf.message();
    EXPECT_EQ(qf->find_tensor("blk.0.attn_qkv.weight")->type, DType::Q8_0);
    EXPECT_EQ(qf->find_tensor("blk.0.ffn_up.weight")->type, DType::Q4_0);
    EXPECT_EQ(qf->find_tensor("blk.0.ffn_gate.weight"), nullptr);
    EXPECT_EQ(worst_relative(our_logits(qgguf), our_logits(qpath)), 0.0);

    // llama.cpp numerics run 'llama' files as stored: a phi3 file is refused by name.
    RuntimeOptions ro;
    ro.threads = 1;
    ro.max_seq = 64;
    ro.numerics = Numerics::LlamaCpp;
    auto compat = LlamaCpu::create(std::make_shared<const Model>(*g), ro);
    EXPECT_TRUE(test::fails_with(compat, {path, "architecture 'llama'", "'phi3'"}));

    // A fused tensor whose rows do not match the configuration, and half of the longrope pair.
    const std::string bad = (dir / "bad.gguf").string();
    ASSERT_EQ(write_phi3_gguf(small_model(), bad, false, 100), "");  // the key says 100; ffn_up holds 2 x 128 rows
    EXPECT_TRUE(test::fails_with(load_model(bad), {bad, "blk.0.ffn_up.weight", "[256, 64]", "expected [200, 64]"}));
}

TEST(RopeScaling, BadLongropeConfigsAreRefusedNamingTheField) {
    const std::string head = R"({"architectures":["Phi3ForCausalLM"],"hidden_size":64,"intermediate_size":128,)"
                             R"("num_hidden_layers":2,"num_attention_heads":4,"vocab_size":352,)"
                             R"("max_position_embeddings":256,)";
    const std::string shorts = R"("short_factor":[1,1,1,1,1,1,1,1])";
    auto seven = parse_hf_config(head + R"("original_max_position_embeddings":32,"rope_scaling":{"type":"su",)" +
                                     R"("short_factor":[1,1,1,1,1,1,1],"long_factor":[1,1,1,1,1,1,1,1]}})",
                                 "p/config.json");
    EXPECT_TRUE(test::fails_with(seven, {"p/config.json", "'short_factor' holds 7 values", "8 pairs"}));
    auto negative =
        parse_hf_config(head + R"("original_max_position_embeddings":32,"rope_scaling":{"type":"longrope",)" + shorts +
                            R"(,"long_factor":[1,1,1,-2,1,1,1,1]}})",
                        "p/config.json");
    EXPECT_TRUE(test::fails_with(negative, {"p/config.json", "'long_factor'[3] must be a positive number", "-2"}));
    auto no_original = parse_hf_config(
        head + R"("rope_scaling":{"type":"longrope",)" + shorts + R"(,"long_factor":[1,1,1,1,1,1,1,1]}})",
        "p/config.json");
    EXPECT_TRUE(test::fails_with(no_original, {"p/config.json", "'original_max_position_embeddings' is missing"}));
    auto no_long = parse_hf_config(
        head + R"("original_max_position_embeddings":32,"rope_scaling":{"type":"longrope",)" + shorts + "}}",
        "p/config.json");
    EXPECT_TRUE(test::fails_with(no_long, {"p/config.json", "'long_factor' must be a list of 8 numbers", "missing"}));
    // Given in rope_scaling, the original context and the attention factor are taken as they are.
    auto inside = parse_hf_config(head + R"("rope_scaling":{"type":"longrope","original_max_position_embeddings":64,)" +
                                      R"("attention_factor":1.25,)" + shorts + R"(,"long_factor":[2,2,2,2,2,2,2,2]}})",
                                  "p/config.json");
    ASSERT_TRUE(inside.ok()) << inside.message();
    EXPECT_EQ(inside->llama.rope_original_context, 64);
    EXPECT_EQ(inside->llama.rope_attn_factor, 1.25f);
}

TEST(RopeScaling, UnsupportedTypesAndBadFactorsAreRefusedByName) {
    const std::string head = R"({"architectures":["LlamaForCausalLM"],"hidden_size":64,"intermediate_size":128,)"
                             R"("num_hidden_layers":2,"num_attention_heads":4,"vocab_size":352,"rope_scaling":)";
    for (const char* type : {"yarn", "dynamic"}) {
        auto h = parse_hf_config(head + R"({"rope_type":")" + type + R"(","factor":4.0}})", "m/config.json");
        ASSERT_FALSE(h.ok()) << type;
        EXPECT_NE(h.message().find("m/config.json"), std::string::npos) << h.message();
        EXPECT_NE(h.message().find(std::string("rope_scaling of type '") + type + "' is not supported"),
                  std::string::npos)
            << h.message();
    }
    auto no_original = parse_hf_config(head + R"({"rope_type":"llama3","factor":8.0}})", "m/config.json");
    ASSERT_FALSE(no_original.ok());
    EXPECT_NE(no_original.message().find("'original_max_position_embeddings' is missing"), std::string::npos)
        << no_original.message();
    auto no_factor = parse_hf_config(head + R"({"type":"linear"}})", "m/config.json");
    ASSERT_FALSE(no_factor.ok());
    EXPECT_NE(no_factor.message().find("rope_scaling of type 'linear' has no 'factor'"), std::string::npos)
        << no_factor.message();

    // A GGUF whose rope_freqs.weight does not have one value per rotary pair.
    Model m = small_model();
    m.source_path = "in-memory";
    m.config.rope_freq_factors.assign(5, 2.0f);
    const fs::path bad_dir = test::temp_dir("rope_bad");
    const std::string bad = (bad_dir / "bad.gguf").string();
    ASSERT_TRUE(write_gguf_model(m, bad).ok());
    auto r = load_model(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find(bad), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("'rope_freqs.weight' has 5 values but the rotary dimension 16 has 8 pairs"),
              std::string::npos)
        << r.message();
    m.config.rope_freq_factors.assign(8, 0.0f);
    ASSERT_TRUE(save_edgeq(m, (bad_dir / "bad.edgeq").string()).ok());
    auto rq = load_model((bad_dir / "bad.edgeq").string());
    ASSERT_FALSE(rq.ok());
    EXPECT_NE(rq.message().find("rope frequency factor 0 is 0 (must be finite and positive)"), std::string::npos)
        << rq.message();
}

}  // namespace
}  // namespace edge
