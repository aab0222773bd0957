// synth's Hugging Face folder output and byte-level BPE vocabulary: the folder and the GGUF of
// one seed are one model (weights bit for bit, tokenizers id for id), the folder's tokenizer.json
// translates back into the GGUF tokenizer it came from, sharding follows the shard size, and
// what cannot be written is refused naming the option.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/model/hf_export.h"
#include "engine/model/loader.h"
#include "engine/model/safetensors.h"
#include "engine/model/synth.h"
#include "engine/tokenizer/gguf_translate.h"
#include "engine/tokenizer/tokenizer.h"
#include "hf_fixture.h"
#include "test_support.h"

using edge::model::LlamaConfig;
using edge::model::load_gguf_model;
using edge::model::load_hf_model;
using edge::model::Model;
using edge::model::SynthFormat;
using edge::model::SynthOptions;
using edge::model::SynthTokenizer;
using edge::model::write_synth_model;
namespace fs = std::filesystem;

namespace edge {
namespace {

LlamaConfig small_config(bool qwen2) {
    LlamaConfig c;
    c.dim = 64;
    c.hidden_dim = 160;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = 16;
    c.rope_dim = 16;
    c.vocab_size = 600;
    c.context_length = 256;
    c.rope_theta = qwen2 ? 1000000.0f : 500000.0f;
    c.norm_eps = 1e-5f;
    c.attn_qkv_bias = qwen2;
    return c;
}

SynthOptions options(const LlamaConfig& c, SynthFormat format, const fs::path& out) {
    SynthOptions o;
    o.config = c;
    o.format = format;
    o.path = out.string();
    o.type = DType::BF16;
    o.tokenizer = SynthTokenizer::ByteLevelBpe;
    o.seed = 77;
    o.max_shard_bytes = 48 * 1024;  // several shards even at this size
    return o;
}

const char* const kTexts[] = {
    "Once upon a time, there was a little girl named Lily.",
    "  two spaces, digits 12345 and punctuation!? ",
    "caf\xc3\xa9 na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
    "the theme of them: they went there\n\nnew lines\ttabs",
    "<|begin_of_text|>a special token in text",
};

class SynthHf : public ::testing::TestWithParam<bool> {};

TEST_P(SynthHf, FolderAndGgufOfOneSeedAreOneModel) {
    const bool qwen2 = GetParam();
    const fs::path dir = test::temp_dir(qwen2 ? "synth_hf_qwen2" : "synth_hf_llama");
    const LlamaConfig c = small_config(qwen2);
    ASSERT_TRUE(write_synth_model(options(c, SynthFormat::HfFolder, dir / "hf")).ok());
    ASSERT_TRUE(write_synth_model(options(c, SynthFormat::Gguf, dir / "m.gguf")).ok());

    // Several shards and their index, as save_pretrained writes them.
    std::ifstream idx(dir / "hf" / "model.safetensors.index.json");
    ASSERT_TRUE(idx.good());
    const auto index = nlohmann::json::parse(idx);
    std::set<std::string> shards;
    for (const auto& [name, file] : index["weight_map"].items()) shards.insert(file.get<std::string>());
    EXPECT_GE(shards.size(), 3u);
    for (const auto& s : shards) EXPECT_TRUE(fs::exists(dir / "hf" / s)) << s;
    std::ifstream cfg(dir / "hf" / "config.json");
    const auto config = nlohmann::json::parse(cfg);
    EXPECT_EQ(config["architectures"][0], qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM");
    EXPECT_EQ(config["torch_dtype"], "bfloat16");

    auto hf = load_hf_model((dir / "hf").string());
    ASSERT_TRUE(hf.ok()) << hf.message();
    auto gg = load_gguf_model((dir / "m.gguf").string());
    ASSERT_TRUE(gg.ok()) << gg.message();
    EXPECT_EQ(hf->config.attn_qkv_bias, qwen2);
    // The importer undoes HF's rotate-half Q/K order: every tensor equal bit for bit (the GGUF
    // keeps 1-D tensors, Qwen2's biases among them, in F32; the folder holds everything in BF16).
    EXPECT_EQ(test::compare_models(*gg, *hf, DType::BF16), "");

    auto th = tokenizer::make_tokenizer(hf->tokenizer);
    ASSERT_TRUE(th.ok()) << th.message();
    auto tg = tokenizer::make_tokenizer(gg->tokenizer);
    ASSERT_TRUE(tg.ok()) << tg.message();
    for (const char* t : kTexts) {
        const auto a = (*th)->encode(t, true), b = (*tg)->encode(t, true);
        EXPECT_EQ(a, b) << t;
        EXPECT_EQ(a.front(), gg->tokenizer.bos_id) << t;
        EXPECT_GT(a.size(), 2u);
        const std::string text(t);
        if (text.rfind("<|", 0) == 0) {
            EXPECT_EQ(a[1], gg->tokenizer.bos_id) << "a special token in the text is that token";
        } else {
            EXPECT_EQ((*th)->decode(std::vector<int32_t>(a.begin() + 1, a.end())), text);
        }
    }
    EXPECT_EQ(hf->tokenizer.eos_ids, gg->tokenizer.eos_ids);
}

INSTANTIATE_TEST_SUITE_P(LlamaAndQwen2, SynthHf, ::testing::Values(false, true));

TEST(SynthBpe, VocabularyIsByteLevelWithLlama3sSpecialTokens) {
    const auto t = model::synth_bpe_tokenizer(128256);
    ASSERT_EQ(t.tokens.size(), 128256u);
    EXPECT_EQ(t.model, "gpt2");
    EXPECT_EQ(t.pre, "llama-bpe");
    EXPECT_EQ(t.tokens[128000], "<|begin_of_text|>");
    EXPECT_EQ(t.tokens[128009], "<|eot_id|>");
    EXPECT_EQ(t.bos_id, 128000);
    EXPECT_EQ(t.eos_id, 128001);
    EXPECT_EQ(t.eos_ids, (std::vector<int32_t>{128001, 128009}));
    EXPECT_EQ(t.merges.size(), 128000u - 256u);
    // Every merge joins two earlier tokens into the next one.
    for (size_t k = 0; k < t.merges.size(); k += 997) {
        const auto sp = t.merges[k].find(' ');
        ASSERT_NE(sp, std::string::npos);
        EXPECT_EQ(t.merges[k].substr(0, sp) + t.merges[k].substr(sp + 1), t.tokens[256 + k]) << k;
    }
    auto tok = tokenizer::make_tokenizer(t);
    ASSERT_TRUE(tok.ok()) << tok.message();
    const auto ids = (*tok)->encode("Once upon a time there was a little girl", false);
    EXPECT_LE(ids.size(), 9u);  // whole words are tokens
    EXPECT_EQ((*tok)->decode(ids), "Once upon a time there was a little girl");
}

TEST(SynthBpe, TokenizerJsonTranslatesBackToTheGgufTokenizer) {
    auto t = model::synth_bpe_tokenizer(2000);
    auto text = tokenizer::tokenizer_json_from_gguf(t);
    ASSERT_TRUE(text.ok()) << text.message();
    tokenizer::TokenizerSpec hf;
    hf.model = "hf";
    hf.hf_json = *text;
    hf.source = "synth/tokenizer.json";
    hf.bos_id = t.bos_id;
    hf.eos_id = t.eos_id;
    // The translation encodes a probe text both ways before it answers.
    auto back = tokenizer::gguf_from_tokenizer_json(hf);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->spec.model, "gpt2");
    EXPECT_EQ(back->spec.pre, "llama-bpe");
    EXPECT_EQ(back->spec.tokens, t.tokens);
    EXPECT_EQ(back->spec.merges, t.merges);
    EXPECT_EQ(back->spec.token_types, t.token_types);

    t.model = "llama";
    EXPECT_TRUE(test::fails_with(tokenizer::tokenizer_json_from_gguf(t), {"tokenizer.json", "\"llama\""}));
    t.model = "gpt2";
    t.pre = "smollm";
    EXPECT_TRUE(test::fails_with(tokenizer::tokenizer_json_from_gguf(t), {"pre-tokenizer 'smollm'"}));
}

TEST(SynthHfErrors, WhatAFolderCannotHoldIsRefusedNamingIt) {
    const fs::path dir = test::temp_dir("synth_hf_errors");
    SynthOptions o = options(small_config(false), SynthFormat::HfFolder, dir / "kq");
    o.q4_k_m = true;
    EXPECT_TRUE(test::fails_with(write_synth_model(o), {"q4_k_m", "Hugging Face folder"}));
    EXPECT_FALSE(fs::exists(dir / "kq" / "config.json"));
    o = options(small_config(false), SynthFormat::HfFolder, dir / "small");
    o.config->vocab_size = 300;
    EXPECT_TRUE(test::fails_with(write_synth_model(o), {"vocabulary 300", "byte-level"}));
    // A folder that holds something already is left alone.
    o = options(small_config(false), SynthFormat::HfFolder, dir / "used");
    fs::create_directories(dir / "used");
    std::ofstream(dir / "used" / "config.json") << "{}";
    EXPECT_TRUE(test::fails_with(write_synth_model(o), {(dir / "used").string(), "not empty"}));
    EXPECT_EQ(fs::file_size(dir / "used" / "config.json"), 2u);
    // A file where the folder should go.
    std::ofstream(dir / "file") << "x";
    o = options(small_config(false), SynthFormat::HfFolder, dir / "file");
    EXPECT_TRUE(test::fails_with(write_synth_model(o), {(dir / "file").string()}));
}

TEST(SafetensorsStream, PiecesOfAnySizeMakeTheFileTheSerializerMakes) {
    const fs::path dir = test::temp_dir("safetensors_stream");
    std::vector<model::SafetensorsWriteItem> items;
    items.push_back({"a", DType::F32, {3, 5}, std::vector<uint8_t>(60)});
    items.push_back({"b", DType::BF16, {7}, std::vector<uint8_t>(14)});
    for (size_t i = 0; i < items[0].bytes.size(); ++i) items[0].bytes[i] = uint8_t(i * 7);
    for (size_t i = 0; i < items[1].bytes.size(); ++i) items[1].bytes[i] = uint8_t(200 - i);
    auto whole = model::serialize_safetensors(items, {{"format", "pt"}});
    ASSERT_TRUE(whole.ok()) << whole.message();

    model::SafetensorsStreamWriter w;
    for (const auto& it : items) ASSERT_TRUE(w.add(it.name, it.dtype, it.shape).ok());
    const std::string path = (dir / "s.safetensors").string();
    ASSERT_TRUE(w.open(path, {{"format", "pt"}}).ok());
    std::vector<uint8_t> data(items[0].bytes);
    data.insert(data.end(), items[1].bytes.begin(), items[1].bytes.end());
    for (size_t off = 0; off < data.size(); off += 9)
        ASSERT_TRUE(w.write(data.data() + off, std::min<size_t>(9, data.size() - off)).ok());
    ASSERT_TRUE(w.finish().ok());
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(file, *whole);

    model::SafetensorsStreamWriter short_w;
    ASSERT_TRUE(short_w.add("a", DType::F32, {4}).ok());
    EXPECT_TRUE(test::fails_with(short_w.add("a", DType::F32, {4}), {"'a'", "repeated"}));
    EXPECT_TRUE(test::fails_with(short_w.add("q", DType::Q8_0, {32}), {"'q'", "not supported"}));
    ASSERT_TRUE(short_w.open((dir / "short.safetensors").string()).ok());
    ASSERT_TRUE(short_w.write(data.data(), 8).ok());
    EXPECT_TRUE(test::fails_with(short_w.write(data.data(), 9), {"short.safetensors", "17 data bytes", "16"}));
    EXPECT_TRUE(test::fails_with(short_w.finish(), {"short.safetensors", "8 data bytes", "16"}));
}

}  // namespace
}  // namespace edge
