// RoPE scaling (Llama 3.x "llama3", "linear"; GGUF's rope_freqs.weight) checked against an
// independent reference: tests/engine/model/reference/llama_forward.py, Debian's python3 with
// python3-torch implementing the published formulas in float64 on the same weights (the Hugging
// Face layout, rotate-half), at positions past the original context. The GGUF, .edgeq and
// compiled .edge forms of the same weights then agree with the folder they came from.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/compile/compile.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/edgeq.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/hf_config.h"
#include "engine/model/loader.h"
#include "engine/model/rope.h"
#include "engine/model/synth.h"
#include "engine/runtime/llama_cpu.h"
#include "engine/runtime/open_executor.h"
#include "hf_fixture.h"
#include "test_support.h"

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

fs::path folder(const std::string& tag, const std::string& rope_scaling) {
    const fs::path dir = test::temp_dir("rope_" + tag);
    test::HfFixtureOptions o;
    o.rope_scaling = rope_scaling;
    const std::string e = test::write_hf_folder(small_model(), dir, o);
    if (!e.empty()) ADD_FAILURE() << e;
    return dir;
}

const std::vector<int32_t>& tokens() {
    static const std::vector<int32_t> t = test::random_tokens(kTokens, 11, 352);
    return t;
}

// Every position's logits from the one executor interface (what generate and perplexity run).
std::vector<float> our_logits(const std::string& path) {
    auto opened = runtime::open_executor(path, {1, 128});
    if (!opened.ok()) {
        ADD_FAILURE() << opened.message();
        return {};
    }
    const LlamaConfig& c = opened->exe->config();
    auto kv = kv::PagedKv::create(kv::KvConfig{kv::KvShape{c.n_layers, c.n_kv_heads, c.head_dim, 16}, 64});
    if (!kv.ok()) {
        ADD_FAILURE() << kv.message();
        return {};
    }
    const runtime::PagedStep step{0, tokens(), true};
    auto out = opened->exe->step(*kv, std::span<const runtime::PagedStep>(&step, 1));
    if (!out.ok()) {
        ADD_FAILURE() << out.message();
        return {};
    }
    return std::vector<float>(*out, *out + size_t(kTokens) * size_t(c.vocab_size));
}

std::vector<double> reference_logits(const fs::path& dir) {
    std::string ids;
    for (int32_t t : tokens()) ids += (ids.empty() ? "" : ",") + std::to_string(t);
    const fs::path out = dir / "reference.f64", log = dir / "reference.log";
    const std::string cmd = "/usr/bin/python3 " + std::string(EDGE_SOURCE_DIR) +
                            "/tests/engine/model/reference/llama_forward.py '" + dir.string() + "' " + ids + " '" +
                            out.string() + "' > '" + log.string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        std::ifstream in(log);
        std::stringstream ss;
        ss << in.rdbuf();
        ADD_FAILURE() << "the torch reference failed (Debian's python3 with python3-torch, which "
                         "scripts/install-deps.sh installs): "
                      << ss.str();
        return {};
    }
    std::ifstream in(out, std::ios::binary);
    std::vector<double> v(size_t(kTokens) * 352);
    in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(double)));
    if (!in) ADD_FAILURE() << out << " is short";
    return v;
}

// The worst over positions from `from` of max|a - b| / max|b| within the position.
template <class A, class B>
double worst_relative(const std::vector<A>& a, const std::vector<B>& b, int from = 0) {
    if (a.size() != b.size() || a.empty()) return INFINITY;
    const size_t V = a.size() / kTokens;
    double worst = 0;
    for (size_t p = size_t(from); p < size_t(kTokens); ++p) {
        double num = 0, den = 0;
        for (size_t i = 0; i < V; ++i) {
            num = std::max(num, std::fabs(double(a[p * V + i]) - double(b[p * V + i])));
            den = std::max(den, std::fabs(double(b[p * V + i])));
        }
        worst = std::max(worst, num / den);
    }
    return worst;
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
    auto g = gguf::open(gguf_path);
    ASSERT_TRUE(g.ok()) << g.message();
    const gguf::TensorInfo* ff = g->find_tensor("rope_freqs.weight");
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

TEST(RopeScaling, UnsupportedTypesAndBadFactorsAreRefusedByName) {
    const std::string head = R"({"architectures":["LlamaForCausalLM"],"hidden_size":64,"intermediate_size":128,)"
                             R"("num_hidden_layers":2,"num_attention_heads":4,"vocab_size":352,"rope_scaling":)";
    for (const char* type : {"yarn", "longrope", "dynamic"}) {
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
