// The FP32 executor on a small random model: batched prefill equals token-by-token decoding,
// GQA and thread counts do not change the answer, and the sampler behaves.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "engine/model/ir.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/llama_cpu.h"

using edge::model::finalize_llama;
using edge::model::LlamaConfig;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::Sampler;

namespace edge {
namespace {

std::shared_ptr<Model> random_model(int n_heads, int n_kv_heads, uint32_t seed) {
    auto m = std::make_shared<Model>();
    LlamaConfig& c = m->config;
    c.dim = 32;
    c.hidden_dim = 72;
    c.n_layers = 2;
    c.n_heads = n_heads;
    c.n_kv_heads = n_kv_heads;
    c.head_dim = c.dim / n_heads;
    c.rope_dim = c.head_dim;
    c.vocab_size = 50;
    c.context_length = 64;
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    auto add = [&](const std::string& name, std::vector<int64_t> shape, bool ones) {
        Tensor t = Tensor::zeros_f32(name, std::move(shape));
        for (int64_t i = 0; i < t.numel(); ++i) t.f32_mut()[i] = ones ? 1.0f + 0.1f * nd(rng) : nd(rng);
        m->tensors.push_back(std::move(t));
    };
    add("token_embd.weight", {c.vocab_size, c.dim}, false);
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", {c.dim}, true);
        add(p + "attn_q.weight", {c.q_dim(), c.dim}, false);
        add(p + "attn_k.weight", {c.kv_dim(), c.dim}, false);
        add(p + "attn_v.weight", {c.kv_dim(), c.dim}, false);
        add(p + "attn_output.weight", {c.dim, c.q_dim()}, false);
        add(p + "ffn_norm.weight", {c.dim}, true);
        add(p + "ffn_gate.weight", {c.hidden_dim, c.dim}, false);
        add(p + "ffn_up.weight", {c.hidden_dim, c.dim}, false);
        add(p + "ffn_down.weight", {c.dim, c.hidden_dim}, false);
    }
    add("output_norm.weight", {c.dim}, true);
    add("output.weight", {c.vocab_size, c.dim}, false);
    finalize_llama(*m);
    return m;
}

float max_rel(const float* a, const float* b, int n) {
    float num = 0, den = 0;
    for (int i = 0; i < n; ++i) {
        num = std::max(num, std::fabs(a[i] - b[i]));
        den = std::max(den, std::fabs(b[i]));
    }
    return num / den;
}

TEST(LlamaCpu, PrefillMatchesTokenByToken) {
    for (int kv : {4, 2, 1}) {
        auto m = random_model(4, kv, 7u + unsigned(kv));
        auto a = LlamaCpu::create(m, {1, 32});
        auto b = LlamaCpu::create(m, {2, 32});
        ASSERT_TRUE(a.ok()) << a.message();
        ASSERT_TRUE(b.ok()) << b.message();
        const std::vector<int32_t> toks = {1, 5, 9, 13, 2, 44, 17, 3, 8, 30};
        const int V = m->config.vocab_size;
        std::vector<float> batched(toks.size() * V);
        (*b)->prefill(toks.data(), int(toks.size()), 0, batched.data());
        for (size_t t = 0; t < toks.size(); ++t) {
            const float* l = (*a)->forward(toks[t], int(t));
            EXPECT_LT(max_rel(&batched[t * V], l, V), 1e-5f) << "kv heads " << kv << " position " << t;
        }
    }
}

TEST(LlamaCpu, RejectsIncompleteModel) {
    auto m = random_model(4, 2, 3);
    m->tensors.erase(m->tensors.begin() + 3);  // drop blk.0.attn_k.weight
    m->source_path = "broken.gguf";
    auto r = LlamaCpu::create(m, {});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("broken.gguf"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("blk.0.attn_k.weight"), std::string::npos) << r.message();
}

TEST(Kernels, DotMatchesDoubleReference) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int n : {1, 7, 8, 31, 32, 33, 100, 1000}) {
        std::vector<float> a(n), b(n);
        double ref = 0;
        for (int i = 0; i < n; ++i) {
            a[i] = u(rng);
            b[i] = u(rng);
            ref += double(a[i]) * b[i];
        }
        EXPECT_NEAR(runtime::kernels::dot(a.data(), b.data(), n), ref, 1e-5 * n)
            << runtime::kernels::dot_kernel_name() << " n=" << n;
    }
}

// axpy (attention's weighted sum of the values) multiplies, then adds, like the plain loop it
// replaced: bit-identical results on every length, tails included.
TEST(Kernels, AxpyIsTheLoopBitForBit) {
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int n : {1, 7, 8, 9, 64, 100}) {
        std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
        for (auto& v : x) v = nd(rng);
        for (auto& v : y) v = nd(rng);
        const float a = nd(rng);
        std::vector<float> want = y;
        for (int i = 0; i < n; ++i) {
            volatile float prod = a * x[size_t(i)];  // rounded on its own, as without FMA
            want[size_t(i)] = want[size_t(i)] + prod;
        }
        runtime::kernels::axpy(y.data(), a, x.data(), n);
        for (int i = 0; i < n; ++i) ASSERT_EQ(y[size_t(i)], want[size_t(i)]) << "n=" << n << " i=" << i;
    }
}

// The vector exponential behind swiglu and softmax stays within a few float ulp of libm's expf
// over the whole range where e^x is a normal float, and passes NaN through.
TEST(Kernels, VectorExpMatchesLibm) {
    std::vector<float> x;
    for (float v = -87.0f; v < 88.0f; v += 0.000731f) x.push_back(v);
    for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.34657359f, -0.34657359f}) x.push_back(v);
    x.push_back(std::numeric_limits<float>::quiet_NaN());
    std::vector<float> y(x.size());
    runtime::kernels::exp(y.data(), x.data(), int(x.size()));
    double worst = 0;
    for (size_t i = 0; i + 1 < x.size(); ++i) {
        const double want = std::exp(double(x[i]));
        worst = std::max(worst, std::abs(y[i] - want) / want);
    }
    EXPECT_LT(worst, 3 * 5.97e-8) << runtime::kernels::dot_kernel_name();
    EXPECT_TRUE(std::isnan(y.back()));
    // Far outside: 0 and a huge finite value or +inf, never a wrapped exponent.
    float big[2] = {-1000.0f, 1000.0f};
    runtime::kernels::exp(big, big, 2);
    EXPECT_LT(big[0], 1e-37f);
    EXPECT_GT(big[1], 1e38f);
}

// SwiGLU: g / (1 + e^-g) · b within a few ulp of the double formula, and the same values whether
// a row is processed whole or in pieces of any length (the gate/up region applies it per chunk).
TEST(Kernels, SwigluIsAccurateAndPiecewiseIdentical) {
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 4.0f);
    const int n = 203;
    std::vector<float> g(n), b(n);
    for (auto& v : g) v = nd(rng);
    for (auto& v : b) v = nd(rng);
    g[0] = 120.0f, g[1] = -120.0f, g[2] = 0.0f;
    std::vector<float> whole = g;
    runtime::kernels::swiglu(whole.data(), b.data(), n);
    for (int i = 0; i < n; ++i) {
        const double want = double(g[size_t(i)]) / (1.0 + std::exp(-double(g[size_t(i)]))) * b[size_t(i)];
        EXPECT_NEAR(whole[size_t(i)], want, 4e-7 * std::abs(want) + 1e-30) << "i=" << i;
    }
    for (int piece : {1, 3, 8, 13, 64}) {
        std::vector<float> p = g;
        for (int i = 0; i < n; i += piece) runtime::kernels::swiglu(p.data() + i, b.data() + i, std::min(piece, n - i));
        for (int i = 0; i < n; ++i) ASSERT_EQ(p[size_t(i)], whole[size_t(i)]) << "piece " << piece << " i=" << i;
    }
}

// RMSNorm against the double formula, on lengths with and without a partial vector.
TEST(Kernels, RmsnormMatchesDoubleReference) {
    std::mt19937 rng(9);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int n : {1, 5, 8, 33, 64, 2048, 5633}) {
        std::vector<float> x(static_cast<size_t>(n)), w(x.size()), out(x.size());
        for (auto& v : x) v = nd(rng);
        for (auto& v : w) v = nd(rng);
        double ss = 0;
        for (float v : x) ss += double(v) * v;
        const double inv = 1.0 / std::sqrt(ss / n + 1e-5);
        runtime::kernels::rmsnorm(out.data(), x.data(), w.data(), n, 1e-5f);
        for (int i = 0; i < n; ++i) {
            const double want = double(w[size_t(i)]) * inv * x[size_t(i)];
            ASSERT_NEAR(out[size_t(i)], want, 1e-5 * std::abs(want) + 1e-9) << "n=" << n << " i=" << i;
        }
    }
}

// The element-wise kernels between regions (residual add, RoPE) round every element exactly as
// the plain loops do, tails included.
TEST(Kernels, AddAndRopeAreTheLoopsBitForBit) {
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int n : {1, 7, 8, 9, 2048, 2051}) {
        std::vector<float> y(static_cast<size_t>(n)), x(y.size());
        for (auto& v : y) v = nd(rng);
        for (auto& v : x) v = nd(rng);
        std::vector<float> want = y;
        for (size_t i = 0; i < want.size(); ++i) want[i] += x[i];
        runtime::kernels::add(y.data(), x.data(), n);
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(y[i], want[i]) << "n=" << n << " i=" << i;
    }
    for (int half : {1, 3, 4, 7, 32}) {
        const int heads = 3, head_dim = 2 * half + 2;  // two trailing values per head left alone
        std::vector<float> v(static_cast<size_t>(heads * head_dim)), cs(static_cast<size_t>(half)), sn(cs.size());
        for (auto& e : v) e = nd(rng);
        for (int i = 0; i < half; ++i) {
            cs[size_t(i)] = std::cos(0.37f * float(i + 1));
            sn[size_t(i)] = std::sin(0.37f * float(i + 1));
        }
        std::vector<float> want = v;
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < half; ++i) {
                float* p = &want[size_t(h) * size_t(head_dim) + 2 * size_t(i)];
                volatile float ac = p[0] * cs[size_t(i)], bs = p[1] * sn[size_t(i)], as = p[0] * sn[size_t(i)],
                               bc = p[1] * cs[size_t(i)];
                p[0] = ac - bs;
                p[1] = as + bc;
            }
        runtime::kernels::rope_interleaved(v.data(), heads, head_dim, half, cs.data(), sn.data());
        for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], want[i]) << "half=" << half << " i=" << i;
    }
}

TEST(Sampler, GreedyTopKTopP) {
    std::vector<float> logits = {0.1f, 3.0f, 2.9f, -1.0f, 0.0f};
    Sampler greedy({0.0f, 0, 1.0f, 1});
    EXPECT_EQ(greedy.sample(logits.data(), 5), 1);
    // top-k 2 never yields anything but the two best
    Sampler k2({1.0f, 2, 1.0f, 5});
    int counts[5] = {};
    for (int i = 0; i < 2000; ++i) counts[k2.sample(logits.data(), 5)]++;
    EXPECT_EQ(counts[0] + counts[3] + counts[4], 0);
    EXPECT_GT(counts[1], 700);
    EXPECT_GT(counts[2], 700);
    // top-p small keeps just the best
    Sampler p({1.0f, 0, 0.3f, 9});
    for (int i = 0; i < 100; ++i) EXPECT_EQ(p.sample(logits.data(), 5), 1);
    // the same seed gives the same stream
    Sampler s1({0.8f, 0, 0.95f, 123}), s2({0.8f, 0, 0.95f, 123});
    for (int i = 0; i < 50; ++i) EXPECT_EQ(s1.sample(logits.data(), 5), s2.sample(logits.data(), 5));
}

}  // namespace
}  // namespace edge
