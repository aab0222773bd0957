// llama.cpp numerics (engine/runtime/ggml/ggml_compat.h) against llama.cpp's own greedy text for the
// stories260K GGUFs it made (../shared/ASSETS.md), and what each ingredient contributes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "engine/model/loader.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/ggml/ggml_compat.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::runtime::Numerics;
using edge::runtime::numerics_name;
using edge::runtime::parse_numerics;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::Tokenizer;

namespace edge {
namespace {

const std::vector<int32_t> kPromptIds = {1, 403, 407, 261, 378};
const std::string kDir = "models/stories260K/llamacpp/";
const char* kFp32Text =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day,";
const char* kQ40Text =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun. One day, she";
const char* kQ41Text =
    "Once upon a time, there was a little girl named Lily. She loved to play with her toys and her friends. One day, "
    "she";

struct Loaded {
    std::shared_ptr<Model> model;
    std::unique_ptr<Tokenizer> tok;
};

Loaded load(const std::string& path) {
    Loaded l;
    auto m = load_model(path);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.message());
    if (!m.ok()) return l;
    l.model = std::make_shared<Model>(std::move(m).value());
    auto t = make_tokenizer(l.model->tokenizer);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.message());
    if (t.ok()) l.tok = std::move(t).value();
    return l;
}

// Greedy continuation: the prompt as one batch, then one token at a time (llama.cpp's order).
// gaps[i] = best minus second-best logit at generated token i.
template <class Step>
std::vector<int32_t> greedy(Step&& step, int vocab, int n, std::vector<float>* gaps = nullptr) {
    const float* logits = step(kPromptIds.data(), int(kPromptIds.size()), 0);
    std::vector<int32_t> out;
    int pos = int(kPromptIds.size());
    for (int i = 0; i < n; ++i) {
        const int32_t t = argmax(logits, vocab);
        if (gaps) {
            float second = -INFINITY;
            for (int j = 0; j < vocab; ++j)
                if (j != t) second = std::max(second, logits[j]);
            gaps->push_back(logits[t] - second);
        }
        out.push_back(t);
        logits = step(&t, 1, pos++);
    }
    return out;
}

// How many generated tokens keep the decoded text a prefix of `want`.
int matching_tokens(const Tokenizer& tok, const std::vector<int32_t>& gen, const std::string& want) {
    std::vector<int32_t> all = kPromptIds;
    int k = 0;
    for (int32_t t : gen) {
        all.push_back(t);
        const std::string text = tok.decode(all);
        if (want.compare(0, text.size(), text) != 0 &&
            !(text.size() > want.size() && text.compare(0, want.size(), want) == 0))
            break;
        ++k;
    }
    return k;
}

struct Case {
    const char* file;
    const char* text;
    int exact;        // generated tokens that must match llama.cpp's text (30: all)
    bool split_kv64;  // split-KV decode as llama.cpp runs it with 64 threads over a 512-cell view
};

std::unique_ptr<LlamaCpu> llamacpp_runtime(const std::shared_ptr<Model>& m, bool split_kv64) {
    RuntimeOptions ro;
    ro.threads = 2;
    ro.max_seq = 512;
    ro.numerics = Numerics::LlamaCpp;
    if (split_kv64) {
        ro.llamacpp.split_kv_threads = 64;
        ro.llamacpp.kv_view_pad = 512;
    }
    auto rt = LlamaCpu::create(m, ro);
    EXPECT_TRUE(rt.ok()) << (rt.ok() ? "" : rt.message());
    if (!rt.ok()) return nullptr;
    EXPECT_EQ((*rt)->numerics(), Numerics::LlamaCpp);
    return std::move(rt).value();
}

class LlamaCppNumerics : public ::testing::TestWithParam<Case> {};

// Every stories260K GGUF that llama.cpp made gives llama.cpp's greedy text token for token (Q4_1:
// up to the near-tie docs/quant-formats.md describes, where llama.cpp's token must be within
// 0.025 of our best logit).
TEST_P(LlamaCppNumerics, GreedyTextMatchesLlamaCpp) {
    const Case& c = GetParam();
    const std::string path = test::shared(kDir + c.file);
    EDGE_REQUIRE_SHARED(path);
    Loaded l = load(path);
    ASSERT_TRUE(l.model && l.tok);
    ASSERT_EQ(l.tok->encode("Once upon a time", true), kPromptIds);
    auto rt = llamacpp_runtime(l.model, c.split_kv64);
    ASSERT_TRUE(rt);
    LlamaCpu& r = *rt;
    const int V = r.config().vocab_size;
    const auto gen = greedy([&](const int32_t* t, int n, int pos) { return r.prefill(t, n, pos); }, V, 30);
    const std::string want = c.text;
    const int k = matching_tokens(*l.tok, gen, want);
    if (c.exact >= 30) {
        std::vector<int32_t> all = kPromptIds;
        all.insert(all.end(), gen.begin(), gen.end());
        EXPECT_EQ(l.tok->decode(all).substr(0, want.size()), want);
        EXPECT_EQ(k, 30);
        return;
    }
    ASSERT_EQ(k, c.exact) << "the text now matches further: raise exact";
    // llama.cpp's token at the divergence: the best-scoring token that extends our matching
    // prefix along its text.
    std::vector<int32_t> seq = kPromptIds;
    seq.insert(seq.end(), gen.begin(), gen.begin() + k);
    const float* logits = r.prefill(seq.data(), int(seq.size()), 0);
    const int32_t best = argmax(logits, V);
    const size_t prefix_len = l.tok->decode(seq).size();
    int32_t theirs = -1;
    for (int32_t cand = 0; cand < V; ++cand) {
        std::vector<int32_t> gen2(gen.begin(), gen.begin() + k);
        gen2.push_back(cand);
        std::vector<int32_t> all2 = kPromptIds;
        all2.insert(all2.end(), gen2.begin(), gen2.end());
        if (l.tok->decode(all2).size() > prefix_len && matching_tokens(*l.tok, gen2, want) == k + 1 &&
            (theirs < 0 || logits[cand] > logits[theirs]))
            theirs = cand;
    }
    ASSERT_NE(theirs, best);
    ASSERT_GE(theirs, 0);
    EXPECT_LT(logits[best] - logits[theirs], 0.025f) << l.tok->token_text(best) << " vs " << l.tok->token_text(theirs);
}

auto case_name = [](const auto& info) {
    std::string n = info.param.file;
    n = n.substr(12, n.size() - 12 - 5);
    for (char& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
};

// The default mode: llama.cpp's arithmetic for a short sequence (one flash-attention chunk).
INSTANTIATE_TEST_SUITE_P(Stories260K, LlamaCppNumerics,
                         ::testing::Values(Case{"stories260K-F16.gguf", kFp32Text, 30, false},
                                           Case{"stories260K-BF16.gguf", kFp32Text, 30, false},
                                           Case{"stories260K-Q8_0.gguf", kFp32Text, 30, false},
                                           Case{"stories260K-Q5_0.gguf", kFp32Text, 30, false},
                                           Case{"stories260K-Q4_0.gguf", kQ40Text, 30, false},
                                           Case{"stories260K-Q4_1.gguf", kQ41Text, 29, false}),
                         case_name);

// With split-KV decode in 8-cell chunks (64 threads over a 512-cell view) all six files give
// llama.cpp's text, Q4_1's 30th token included. Whether the reference run had such a view and
// thread count is not known: docs/quant-formats.md explains why this is a fitted configuration.
INSTANTIATE_TEST_SUITE_P(SplitKv64, LlamaCppNumerics,
                         ::testing::Values(Case{"stories260K-F16.gguf", kFp32Text, 30, true},
                                           Case{"stories260K-BF16.gguf", kFp32Text, 30, true},
                                           Case{"stories260K-Q8_0.gguf", kFp32Text, 30, true},
                                           Case{"stories260K-Q5_0.gguf", kFp32Text, 30, true},
                                           Case{"stories260K-Q4_0.gguf", kQ40Text, 30, true},
                                           Case{"stories260K-Q4_1.gguf", kQ41Text, 30, true}),
                         case_name);

// What each ingredient moves: the Q4_1 text with one ingredient switched off at a time (the table
// in docs/quant-formats.md). llama.cpp's first near-tie (generated token 24) needs quantized
// activations with FP16 scales, the F16 cache and flash attention's F16 accumulator together.
TEST(LlamaCppNumerics, Q41IngredientTable) {
    const std::string path = test::shared(kDir + "stories260K-Q4_1.gguf");
    EDGE_REQUIRE_SHARED(path);
    Loaded l = load(path);
    ASSERT_TRUE(l.model && l.tok);
    ThreadPool pool(2);
    using I = runtime::ggml_compat::Ingredients;
    struct Row {
        const char* what;
        bool I::*field;
        bool needed;            // switching it off loses llama.cpp's token 24
        int split_threads = 0;  // > 0: split-KV decode over a 512-cell view with this many threads
        int want = -1;          // >= 0: the matching tokens this row must give
    };
    const Row rows[] = {{"all on (llama.cpp)", nullptr, false},
                        {"- quantized activations", &I::quantized_activations, true},
                        {"- FP16 activation scales", &I::fp16_act_scales, true},
                        {"- SIMD lane order", &I::simd_lanes, false},
                        {"- F16 KV cache", &I::f16_kv, true},
                        {"- flash attention", &I::flash_attn, true},
                        {"- vectorised expf", &I::vec_expf, false},
                        {"- FMA contraction", &I::fma_contract, false},
                        {"- iterative RoPE angles", &I::rope_iterative, false},
                        {"+ split KV, 16 threads", nullptr, false, 16, 29},
                        {"+ split KV, 32 threads", nullptr, false, 32, 23},
                        {"+ split KV, 64 threads", nullptr, false, 64, 30}};
    int all_on = -1;
    for (const Row& row : rows) {
        I ing;
        if (row.field) ing.*row.field = false;
        if (row.split_threads > 0) {
            ing.split_kv_threads = row.split_threads;
            ing.kv_view_pad = 512;
        }
        auto ex = runtime::ggml_compat::Executor::create(*l.model, 512, ing);
        ASSERT_TRUE(ex.ok()) << ex.message();
        runtime::ggml_compat::Executor& e = **ex;
        std::vector<float> gaps;
        const auto gen = greedy([&](const int32_t* t, int n, int pos) { return e.prefill(t, n, pos, nullptr, pool); },
                                l.model->config.vocab_size, 30, &gaps);
        const int k = matching_tokens(*l.tok, gen, kQ41Text);
        std::printf("%-26s %2d/30 tokens; gap at the first difference %.4f; gaps < 0.1 at:", row.what, k,
                    k < 30 ? double(gaps[size_t(k)]) : 0.0);
        for (size_t i = 0; i < gaps.size(); ++i)
            if (gaps[i] < 0.1f) std::printf(" %zu (%.4f)", i + 1, double(gaps[i]));
        std::printf("\n");
        if (!row.field && row.split_threads == 0) all_on = k;
        if (row.want >= 0)
            EXPECT_EQ(k, row.want) << row.what;
        else if (row.needed)
            EXPECT_EQ(k, 23) << row.what;
        else
            EXPECT_GE(k, all_on) << row.what;
    }
    EXPECT_EQ(all_on, 29);
}

// A model that is not a GGUF file cannot run llama.cpp numerics: a clear error, not a crash.
TEST(LlamaCppNumerics, RefusesNonGguf) {
    const std::string bin = test::shared("models/stories260K/stories260K.bin");
    const std::string tok = test::shared("models/stories260K/tok512.bin");
    EDGE_REQUIRE_SHARED(bin);
    LoadOptions o;
    o.tokenizer_path = tok;
    auto m = load_model(bin, o);
    ASSERT_TRUE(m.ok()) << m.message();
    RuntimeOptions ro;
    ro.threads = 1;
    ro.max_seq = 64;
    ro.numerics = Numerics::LlamaCpp;
    auto rt = LlamaCpu::create(std::make_shared<Model>(std::move(m).value()), ro);
    ASSERT_FALSE(rt.ok());
    EXPECT_NE(rt.message().find("GGUF"), std::string::npos) << rt.message();
}

// A tensor changed after import (here: its recorded file type), or options out of range: clear
// errors naming the tensor or the option.
TEST(LlamaCppNumerics, RefusesChangedTensorsAndBadOptions) {
    const std::string path = test::shared(kDir + "stories260K-Q4_1.gguf");
    EDGE_REQUIRE_SHARED(path);
    Loaded l = load(path);
    ASSERT_TRUE(l.model);
    {
        runtime::ggml_compat::Ingredients bad;
        bad.split_kv_threads = -1;
        auto ex = runtime::ggml_compat::Executor::create(*l.model, 64, bad);
        ASSERT_FALSE(ex.ok());
        EXPECT_NE(ex.message().find("split-KV thread count"), std::string::npos) << ex.message();
    }
    Model changed = *l.model;
    changed.find_mut("blk.2.ffn_up.weight")->source_type = DType::Q8_0;
    auto ex = runtime::ggml_compat::Executor::create(changed, 64);
    ASSERT_FALSE(ex.ok());
    EXPECT_NE(ex.message().find("blk.2.ffn_up.weight"), std::string::npos) << ex.message();
    EXPECT_NE(ex.message().find("as the GGUF file stores them"), std::string::npos) << ex.message();
}

TEST(LlamaCppNumerics, ParsesNames) {
    auto a = parse_numerics("fp32"), b = parse_numerics("llamacpp");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, Numerics::Fp32);
    EXPECT_EQ(*b, Numerics::LlamaCpp);
    auto bad = parse_numerics("ggml");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("fp32 or llamacpp"), std::string::npos);
    EXPECT_STREQ(numerics_name(Numerics::LlamaCpp), "llamacpp");
}

}  // namespace
}  // namespace edge
