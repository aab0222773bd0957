// llama2.c checkpoints: stories260K.bin against stories260K.gguf, v1 and untied files written
// here, and bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "hf_fixture.h"
#include "test_support.h"

using edge::model::LlamaConfig;
using edge::model::load_gguf_model;
using edge::model::load_llama2c_model;
using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;

namespace edge {
namespace {

namespace fs = std::filesystem;
const std::string kDir = "models/stories260K/";

std::vector<char> slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void spit(const fs::path& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

struct Writer {
    std::vector<char> b;
    void i32(int32_t v) { b.insert(b.end(), reinterpret_cast<char*>(&v), reinterpret_cast<char*>(&v) + 4); }
    void f32(const Tensor& t) {
        b.insert(b.end(), reinterpret_cast<const char*>(t.f32()), reinterpret_cast<const char*>(t.f32() + t.numel()));
    }
    void layers(const Model& m, const char* part) {
        for (int l = 0; l < m.config.n_layers; ++l) f32(*m.find("blk." + std::to_string(l) + "." + part + ".weight"));
    }
};

TEST(Llama2c, Stories260KLoadsWithItsConfigAndTokenizer) {
    const std::string bin = test::shared(kDir + "stories260K.bin");
    EDGE_REQUIRE_SHARED(bin);
    EDGE_REQUIRE_SHARED(test::shared(kDir + "tok512.bin"));
    auto m = load_llama2c_model(bin, "");  // tok512.bin is found beside it
    ASSERT_TRUE(m.ok()) << m.message();
    const LlamaConfig& c = m->config;
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.hidden_dim, 172);
    EXPECT_EQ(c.n_layers, 5);
    EXPECT_EQ(c.n_heads, 8);
    EXPECT_EQ(c.n_kv_heads, 4);
    EXPECT_EQ(c.vocab_size, 512);
    EXPECT_EQ(c.context_length, 512);
    EXPECT_EQ(c.head_dim, 8);
    EXPECT_EQ(c.rope_dim, 8);
    EXPECT_TRUE(c.tied_embeddings);
    EXPECT_EQ(m->find("output.weight"), nullptr);
    EXPECT_EQ(m->source_format, "llama2c");
    EXPECT_FALSE(m->graph.ops.empty());
    ASSERT_FALSE(m->tokenizer.empty());
    EXPECT_EQ(m->tokenizer.tokens.size(), 512u);
}

TEST(Llama2c, EveryTensorEqualsTheGguf) {
    const std::string bin = test::shared(kDir + "stories260K.bin");
    const std::string gguf = test::shared(kDir + "stories260K.gguf");
    EDGE_REQUIRE_SHARED(bin);
    EDGE_REQUIRE_SHARED(gguf);
    auto a = load_gguf_model(gguf);
    ASSERT_TRUE(a.ok()) << a.message();
    LoadOptions o;
    o.tokenizer_path = test::shared(kDir + "tok512.bin");
    auto b = load_model(bin, o);  // through the dispatcher
    ASSERT_TRUE(b.ok()) << b.message();
    EXPECT_EQ(b->source_format, "llama2c");
    EXPECT_EQ(test::compare_models(*a, *b), "");
    EXPECT_EQ(a->tensors.size() - (a->find("output.weight") ? 1 : 0), b->tensors.size());
}

TEST(Llama2c, ReadsVersion1AndSeparateClassifier) {
    const std::string bin = test::shared(kDir + "stories260K.bin");
    EDGE_REQUIRE_SHARED(bin);
    auto m = load_llama2c_model(bin, "");
    ASSERT_TRUE(m.ok()) << m.message();
    const LlamaConfig& c = m->config;
    const auto dir = test::temp_dir("l2c");
    // A different classifier so that untied loading is visible.
    Tensor cls = Tensor::alloc("output.weight", DType::F32, {c.vocab_size, c.dim});
    for (int64_t i = 0; i < cls.numel(); ++i) cls.f32_mut()[i] = m->find("token_embd.weight")->f32()[i] * 2.0f;

    // v1: magic, version, 7 ints, shared flag, padded to 256; norms first, no RoPE tables.
    Writer v1;
    v1.i32(0x616b3432);
    v1.i32(1);
    for (int v : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.context_length}) v1.i32(v);
    v1.b.push_back(0);  // separate classifier
    v1.b.resize(256, 0);
    v1.layers(*m, "attn_norm");
    v1.layers(*m, "ffn_norm");
    v1.f32(*m->find("output_norm.weight"));
    v1.f32(*m->find("token_embd.weight"));
    for (const char* p : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_down", "ffn_up"})
        v1.layers(*m, p);
    v1.f32(cls);
    spit(dir / "v1.bin", v1.b);

    // v0 with a negative vocab size: separate classifier after the RoPE tables.
    Writer v0;
    for (int v : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, -c.vocab_size, c.context_length}) v0.i32(v);
    v0.f32(*m->find("token_embd.weight"));
    for (const char* p :
         {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_down", "ffn_up"})
        v0.layers(*m, p);
    v0.f32(*m->find("output_norm.weight"));
    v0.b.resize(v0.b.size() + size_t(c.context_length) * size_t(c.head_dim) * 4, 0);  // freq_cis real + imag
    v0.f32(cls);
    spit(dir / "untied.bin", v0.b);

    for (const char* name : {"v1.bin", "untied.bin"}) {
        auto r = load_model((dir / name).string());
        ASSERT_TRUE(r.ok()) << name << ": " << r.message();
        EXPECT_FALSE(r->config.tied_embeddings) << name;
        EXPECT_TRUE(r->tokenizer.empty()) << name;  // no tokenizer beside it
        Model want = *m;
        want.tensors.push_back(cls);
        want.config.tied_embeddings = false;
        EXPECT_EQ(test::compare_models(want, *r), "") << name;
    }
}

TEST(Llama2c, MissingTokenizerStillLoadsWithAnEmptySpec) {
    const std::string bin = test::shared(kDir + "stories260K.bin");
    EDGE_REQUIRE_SHARED(bin);
    const auto dir = test::temp_dir("l2c");
    fs::copy_file(bin, dir / "model.bin");
    auto m = load_model((dir / "model.bin").string());
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_TRUE(m->tokenizer.empty());
    bool noted = false;
    for (const auto& [k, v] : m->metadata) noted = noted || (k == "tokenizer" && v.find("none") == 0);
    EXPECT_TRUE(noted);
    // An explicitly named tokenizer that does not exist is an error naming it.
    auto bad = load_llama2c_model((dir / "model.bin").string(), (dir / "tok.bin").string());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("tok.bin"), std::string::npos) << bad.message();
}

TEST(Llama2c, BadFilesGetClearErrors) {
    const std::string bin = test::shared(kDir + "stories260K.bin");
    EDGE_REQUIRE_SHARED(bin);
    const auto dir = test::temp_dir("l2c");
    const std::vector<char> good = slurp(bin);
    auto expect = [&](const std::string& name, const std::vector<char>& bytes,
                      const std::vector<std::string>& needles) {
        const fs::path p = dir / name;
        spit(p, bytes);
        auto r = load_model(p.string());
        ASSERT_FALSE(r.ok()) << name;
        EXPECT_NE(r.message().find(p.string()), std::string::npos) << r.message();
        for (const auto& n : needles) EXPECT_NE(r.message().find(n), std::string::npos) << r.message();
    };
    std::vector<char> cut(good.begin(), good.end() - 100);
    expect("truncated.bin", cut, {"truncated", std::to_string(good.size()), std::to_string(cut.size())});
    std::vector<char> longer = good;
    longer.resize(good.size() + 4);
    expect("trailing.bin", longer, {"trailing data", std::to_string(good.size())});
    std::vector<char> absurd = good;
    const int32_t huge = 1 << 30;
    std::memcpy(absurd.data(), &huge, 4);
    expect("absurd.bin", absurd, {"implausibly large"});
    expect("short.bin", std::vector<char>(good.begin(), good.begin() + 12), {"too short"});
    std::vector<char> v9(good.begin(), good.begin() + 300);
    const int32_t magic = 0x616b3432, nine = 9;
    std::memcpy(v9.data(), &magic, 4);
    std::memcpy(v9.data() + 4, &nine, 4);
    expect("v9.bin", v9, {"version 9"});
    // Found by fuzz_llama2c: a v1 vocab_size of INT32_MIN (negative = separate classifier) has no
    // magnitude; it is refused as a vocabulary of 0, without undefined behaviour.
    std::vector<char> v1(300, '\0');
    const int32_t one = 1, dims[] = {64, 172, 5, 8, 4, INT32_MIN, 512};
    std::memcpy(v1.data(), &magic, 4);
    std::memcpy(v1.data() + 4, &one, 4);
    std::memcpy(v1.data() + 8, dims, sizeof dims);
    expect("vocab-min.bin", v1, {"not a valid llama2.c checkpoint", "vocab_size 0"});
}

TEST(Llama2c, Version2Int8DequantizesWithinHalfAStep) {
    const std::string q80 = test::shared(kDir + "stories260K_q80.bin");
    const std::string gguf = test::shared(kDir + "stories260K.gguf");
    EDGE_REQUIRE_SHARED(q80);
    EDGE_REQUIRE_SHARED(gguf);
    auto ref = load_gguf_model(gguf);
    ASSERT_TRUE(ref.ok()) << ref.message();
    auto m = load_model(q80);
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_FALSE(m->tokenizer.empty());  // tok512.bin beside it
    EXPECT_EQ(m->config.dim, 64);
    EXPECT_TRUE(m->config.tied_embeddings);
    for (const Tensor& t : m->tensors) {
        const Tensor* r = ref->find(t.name);
        ASSERT_NE(r, nullptr) << t.name;
        ASSERT_EQ(r->shape, t.shape) << t.name;
        if (t.shape.size() == 1) {  // norms stay fp32
            EXPECT_EQ(t.source_type, DType::F32) << t.name;
            for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.f32()[i], r->f32()[i]) << t.name;
            continue;
        }
        EXPECT_EQ(t.source_type, DType::I8) << t.name;
        // Groups of 32 over the flattened tensor, scale = max|w| / 127: error <= scale / 2.
        for (int64_t g = 0; g < t.numel() / 32; ++g) {
            float mx = 0;
            for (int64_t i = g * 32; i < g * 32 + 32; ++i) mx = std::max(mx, std::fabs(r->f32()[i]));
            for (int64_t i = g * 32; i < g * 32 + 32; ++i)
                ASSERT_LE(std::fabs(t.f32()[i] - r->f32()[i]), mx / 127.0f * 0.5f * 1.001f + 1e-12f)
                    << t.name << "[" << i << "]";
        }
    }
    const auto dir = test::temp_dir("l2c");
    std::vector<char> cut = slurp(q80);
    cut.resize(cut.size() - 32);
    spit(dir / "q80cut.bin", cut);
    auto bad = load_model((dir / "q80cut.bin").string());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("truncated"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace edge
