// ggml's block types a GGUF may hold besides Q8_0 / Q4_0 (Q4_1, Q5_0, Q5_1 and the K-quants
// Q2_K..Q6_K) run as stored: load_weights_as_stored keeps their blocks (no FP32 copy of a
// matrix), the CPU kernels dequantize one row at a time (Q4_K/Q5_K/Q6_K: integer dot products on
// the blocks against int8 activations, as llama.cpp runs them), and the executor's logits equal
// those of the FP32 import of the same file (the K types within what int8 activations cost).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>

#include "engine/core/half.h"
#include "engine/model/ggml_kquant.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "engine/model/weights.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "test_support.h"

using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

namespace edge {
namespace {

LlamaConfig block_config() {
    LlamaConfig c;
    c.dim = 256;  // K-quant rows are whole 256-element super-blocks
    c.hidden_dim = 512;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = 64;
    c.rope_dim = 64;
    c.vocab_size = 320;
    c.context_length = 128;
    return c;
}

// Byte offsets of the half-precision scale fields in one block of `t` (ggml_dequant.cpp's
// structs), and a scale that keeps the weights of random codes small.
std::pair<std::vector<size_t>, float> half_fields(DType t) {
    switch (t) {
        case DType::Q4_1:
        case DType::Q5_1: return {{0, 2}, 0.01f};
        case DType::Q5_0: return {{0}, 0.01f};
        case DType::Q2_K: return {{80, 82}, 0.002f};
        case DType::Q3_K: return {{108}, 0.002f};
        case DType::Q4_K:
        case DType::Q5_K: return {{0, 2}, 0.0005f};
        case DType::Q6_K: return {{208}, 0.0005f};
        default: return {{}, 0.0f};
    }
}

// A llama GGUF whose matrices are random blocks of `type` (codes and sub-block scales random,
// the half scales set small), vectors F32 near one. "" or the error.
std::string write_block_gguf(const std::string& path, DType type, uint32_t seed) {
    const LlamaConfig c = block_config();
    model::gguf::Writer w;
    model::gguf::set_architecture(w, "llama", c);
    std::vector<std::pair<std::string, std::vector<int64_t>>> tensors = {{"token_embd.weight", {c.vocab_size, c.dim}},
                                                                         {"output_norm.weight", {c.dim}}};
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        tensors.push_back({p + "attn_norm.weight", {c.dim}});
        tensors.push_back({p + "attn_q.weight", {c.q_dim(), c.dim}});
        tensors.push_back({p + "attn_k.weight", {c.kv_dim(), c.dim}});
        tensors.push_back({p + "attn_v.weight", {c.kv_dim(), c.dim}});
        tensors.push_back({p + "attn_output.weight", {c.dim, c.q_dim()}});
        tensors.push_back({p + "ffn_norm.weight", {c.dim}});
        tensors.push_back({p + "ffn_gate.weight", {c.hidden_dim, c.dim}});
        tensors.push_back({p + "ffn_up.weight", {c.hidden_dim, c.dim}});
        tensors.push_back({p + "ffn_down.weight", {c.dim, c.hidden_dim}});
    }
    tensors.push_back({"output.weight", {c.vocab_size, c.dim}});
    for (const auto& [name, shape] : tensors)
        if (auto st = w.add_tensor(name, shape.size() == 2 ? type : DType::F32, shape); !st.ok()) return st.message();
    if (auto st = w.open(path); !st.ok()) return st.message();
    std::mt19937 rng(seed);
    const auto [fields, scale] = half_fields(type);
    std::uniform_real_distribution<float> jitter(0.5f, 1.5f);
    for (const auto& [name, shape] : tensors) {
        const int64_t n = shape.size() == 2 ? shape[0] * shape[1] : shape[0];
        if (shape.size() != 2) {
            std::vector<float> v(static_cast<size_t>(n));
            for (float& x : v) x = jitter(rng);
            if (auto st = w.write_f32(v.data(), n); !st.ok()) return st.message();
            continue;
        }
        std::vector<uint8_t> bytes(dtype_bytes(type, n));
        if (type == DType::Q4_K || type == DType::Q6_K) {
            // Blocks our quantizers make from normal weights: scales as a real file has them (random
            // int8 Q6_K scales make a network whose int8 activations are far from its FP32 ones).
            std::normal_distribution<float> nd(0.0f, 0.05f);
            std::vector<float> v(static_cast<size_t>(n));
            for (float& x : v) x = nd(rng);
            (type == DType::Q4_K ? model::quantize_row_q4_k : model::quantize_row_q6_k)(v.data(), n, bytes.data());
            if (auto st = w.write_raw(bytes.data(), bytes.size()); !st.ok()) return st.message();
            continue;
        }
        for (uint8_t& b : bytes) b = uint8_t(rng());
        const size_t block = size_t(dtype_block_bytes(type));
        for (size_t off = 0; off < bytes.size(); off += block)
            for (size_t f : fields) {
                const uint16_t h = f32_to_f16(scale * jitter(rng));
                std::memcpy(&bytes[off + f], &h, 2);
            }
        if (auto st = w.write_raw(bytes.data(), bytes.size()); !st.ok()) return st.message();
    }
    auto st = w.finish();
    return st.ok() ? "" : st.message();
}

std::vector<float> prefill_logits(const std::shared_ptr<const Model>& m, const std::vector<int32_t>& tokens) {
    auto rt = LlamaCpu::create(m, RuntimeOptions{2, 64});
    EXPECT_TRUE(rt.ok()) << rt.message();
    if (!rt.ok()) return {};
    std::vector<float> out(tokens.size() * size_t((*rt)->config().vocab_size));
    (*rt)->prefill(tokens.data(), int(tokens.size()), 0, out.data());
    return out;
}

// The file imported as F32 (the reference) and opened lazily (weights not read yet).
void load_f32_and_lazy(const std::string& path, std::optional<Model>& f32, std::optional<Model>& lazy) {
    auto a = load_model(path);
    ASSERT_TRUE(a.ok()) << a.message();
    LoadOptions lo;
    lo.lazy_weights = true;
    auto b = load_model(path, lo);
    ASSERT_TRUE(b.ok()) << b.message();
    f32 = std::move(a).value();
    lazy = std::move(b).value();
}

TEST(GgmlBlocksAsStored, EveryBlockTypeRunsWithoutAnFp32CopyAndGivesTheFp32Logits) {
    const auto dir = test::temp_dir("ggml-blocks-as-stored");
    const std::vector<int32_t> tokens = test::random_tokens(16, 3, block_config().vocab_size);
    uint32_t seed = 11;
    for (DType type :
         {DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
        SCOPED_TRACE(dtype_name(type));
        const std::string path = (dir / (std::string(dtype_name(type)) + ".gguf")).string();
        ASSERT_EQ(write_block_gguf(path, type, seed++), "");
        std::optional<Model> f32, m;
        ASSERT_NO_FATAL_FAILURE(load_f32_and_lazy(path, f32, m));
        EXPECT_EQ(model::as_stored_bytes(*m), model::stored_weight_bytes(*m));
        const size_t before = model::f32_weight_stats().live_bytes;
        ASSERT_TRUE(model::load_weights_as_stored(*m).ok());
        EXPECT_EQ(model::f32_weight_stats().live_bytes, before) << "matrices kept as blocks, F32 vectors aliased";
        for (const Tensor& t : m->tensors) {
            EXPECT_EQ(t.type, t.shape.size() == 2 ? type : DType::F32) << t.name;
            const Tensor* ref = f32->find(t.name);
            ASSERT_NE(ref, nullptr) << t.name;
            const std::vector<float> got = runtime::qkernels::dequantize(t);
            ASSERT_EQ(got.size(), size_t(ref->numel()));
            EXPECT_EQ(std::memcmp(got.data(), ref->f32(), got.size() * sizeof(float)), 0) << t.name;
        }
        const std::vector<float> want = prefill_logits(std::make_shared<const Model>(std::move(*f32)), tokens);
        const std::vector<float> have = prefill_logits(std::make_shared<const Model>(std::move(*m)), tokens);
        ASSERT_EQ(have.size(), want.size());
        double worst = 0, scale = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_TRUE(std::isfinite(have[i])) << i;
            worst = std::max(worst, double(std::fabs(have[i] - want[i])));
            scale = std::max(scale, double(std::fabs(want[i])));
        }
        EXPECT_GT(scale, 0.0);
        const bool int8_acts = type == DType::Q4_K || type == DType::Q5_K || type == DType::Q6_K;
        // int8 activations cost ~0.5% per product; through two blocks 0.05-2.2% of the largest logit
        // here (the kernels' sums themselves are exact: QuantKernels.KQuantBlocksMultiplyInPlace...).
        EXPECT_LE(worst / scale, int8_acts ? 5e-2 : 1e-5) << "logits as stored vs the FP32 import";
    }
}

// llama.cpp's own K-quant files (../shared/models/ktest, made by llama-quantize): their Q4_K, Q5_K
// and Q6_K tensors run in place through the integer kernels (Q2_K/Q3_K through the float path),
// and the logits of 24 tokens of prefill stay within the int8 activations' cost of the FP32
// import's; the top token agrees at most positions, and where it does not, the FP32 import ranks
// ours within that cost of its own (random weights: near ties).
TEST(GgmlBlocksAsStored, LlamaCppKQuantFilesRunInPlaceWithTheFp32ImportsTopTokens) {
    for (const char* name : {"synth256-Q4_K_M.gguf", "synth256-Q5_K_M.gguf", "synth256-Q6_K.gguf"}) {
        SCOPED_TRACE(name);
        const std::string path = test::shared("models/ktest/" + std::string(name));
        EDGE_REQUIRE_SHARED(path);
        std::optional<Model> f32, m;
        ASSERT_NO_FATAL_FAILURE(load_f32_and_lazy(path, f32, m));
        ASSERT_TRUE(model::load_weights_as_stored(*m).ok());
        int kquant = 0;
        for (const Tensor& t : m->tensors)
            kquant += t.type == DType::Q4_K || t.type == DType::Q5_K || t.type == DType::Q6_K;
        EXPECT_GE(kquant, 10) << "matrices kept as K-quant blocks";
        const int vocab = f32->config.vocab_size;
        const std::vector<int32_t> tokens = test::random_tokens(24, 5, vocab);
        const std::vector<float> want = prefill_logits(std::make_shared<const Model>(std::move(*f32)), tokens);
        const std::vector<float> have = prefill_logits(std::make_shared<const Model>(std::move(*m)), tokens);
        ASSERT_EQ(have.size(), want.size());
        double worst = 0, scale = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            worst = std::max(worst, double(std::fabs(have[i] - want[i])));
            scale = std::max(scale, double(std::fabs(want[i])));
        }
        EXPECT_LE(worst / scale, 5e-2);
        int agree = 0;
        for (size_t p = 0; p < tokens.size(); ++p) {
            const float* a = want.data() + p * size_t(vocab);
            const float* b = have.data() + p * size_t(vocab);
            const auto top_a = std::max_element(a, a + vocab) - a, top_b = std::max_element(b, b + vocab) - b;
            agree += top_a == top_b;
            EXPECT_LE(a[top_a] - a[top_b], 2 * worst) << "position " << p;
        }
        EXPECT_GE(agree, 20) << "of 24 positions";
    }
}

}  // namespace
}  // namespace edge
