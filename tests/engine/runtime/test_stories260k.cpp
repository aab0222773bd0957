// Acceptance against ../shared/ASSETS.md: stories260K in GGUF and llama2.c form, the quantized
// GGUFs made by llama.cpp, the reference greedy continuations and perplexities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/model/weights.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/validate/perplexity.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::Tokenizer;
using edge::validate::evaluate_perplexity;
using edge::validate::PplOptions;
using edge::validate::PplProtocol;

namespace edge {
namespace {

const std::vector<int32_t> kPromptIds = {1, 403, 407, 261, 378};
const std::vector<int32_t> kGreedy30 = {432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267,
                                        337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432};

struct Loaded {
    std::shared_ptr<Model> model;
    std::unique_ptr<Tokenizer> tok;
    std::unique_ptr<LlamaCpu> rt;
};

// as_stored: the weights as the file stores them (model::load_weights_as_stored), else as F32.
Loaded load(const std::string& path, const std::string& tokenizer = {}, bool as_stored = false) {
    Loaded l;
    LoadOptions o;
    o.tokenizer_path = tokenizer;
    o.lazy_weights = as_stored;
    auto m = load_model(path, o);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.message());
    if (!m.ok()) return l;
    if (as_stored) {
        EXPECT_TRUE(model::load_weights_as_stored(*m).ok());
    }
    l.model = std::make_shared<Model>(std::move(m).value());
    auto t = make_tokenizer(l.model->tokenizer);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.message());
    if (t.ok()) l.tok = std::move(t).value();
    auto r = LlamaCpu::create(l.model, {2, 512});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.message());
    if (r.ok()) l.rt = std::move(r).value();
    return l;
}

std::vector<int32_t> greedy(LlamaCpu& rt, const std::vector<int32_t>& prompt, int n) {
    const float* logits = rt.prefill(prompt.data(), int(prompt.size()), 0);
    std::vector<int32_t> out;
    int pos = int(prompt.size());
    for (int i = 0; i < n; ++i) {
        const int32_t t = argmax(logits, rt.config().vocab_size);
        out.push_back(t);
        logits = rt.forward(t, pos++);
    }
    return out;
}

std::string decode_all(const Tokenizer& tok, const std::vector<int32_t>& prompt, const std::vector<int32_t>& gen) {
    std::vector<int32_t> all = prompt;
    all.insert(all.end(), gen.begin(), gen.end());
    return tok.decode(all);
}

const std::string kModels = "models/stories260K/";

TEST(Stories260K, GgufEncodesAndContinuesGreedily) {
    const std::string path = test::shared(kModels + "stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    Loaded l = load(path);
    ASSERT_TRUE(l.rt && l.tok);
    EXPECT_EQ(l.tok->encode("Once upon a time", true), kPromptIds);
    EXPECT_EQ(greedy(*l.rt, kPromptIds, 30), kGreedy30);
    EXPECT_EQ(decode_all(*l.tok, kPromptIds, kGreedy30),
              "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day,");
}

TEST(Stories260K, Llama2cBinMatchesGgufLogits) {
    const std::string gguf = test::shared(kModels + "stories260K.gguf");
    const std::string bin = test::shared(kModels + "stories260K.bin");
    const std::string tok = test::shared(kModels + "tok512.bin");
    EDGE_REQUIRE_SHARED(gguf);
    EDGE_REQUIRE_SHARED(bin);
    EDGE_REQUIRE_SHARED(tok);
    Loaded a = load(gguf), b = load(bin, tok);
    ASSERT_TRUE(a.rt && b.rt && b.tok);
    EXPECT_EQ(b.tok->encode("Once upon a time", true), kPromptIds);
    std::vector<int32_t> seq = kPromptIds;
    seq.insert(seq.end(), kGreedy30.begin(), kGreedy30.end());
    const int V = a.rt->config().vocab_size;
    std::vector<float> la(seq.size() * V), lb(seq.size() * V);
    a.rt->prefill(seq.data(), int(seq.size()), 0, la.data());
    b.rt->prefill(seq.data(), int(seq.size()), 0, lb.data());
    for (size_t p = 0; p < seq.size(); ++p) {
        float num = 0, den = 0;
        for (int i = 0; i < V; ++i) {
            num = std::max(num, std::fabs(la[p * V + i] - lb[p * V + i]));
            den = std::max(den, std::fabs(lb[p * V + i]));
        }
        EXPECT_LE(num / den, 1e-5f) << "position " << p;
    }
    EXPECT_EQ(greedy(*b.rt, kPromptIds, 30), kGreedy30);
}

struct QuantCase {
    const char* file;
    const char* text;
    int exact_tokens;  // generated tokens that must match llama.cpp's text exactly
};

class QuantizedGreedy : public ::testing::TestWithParam<QuantCase> {};

// llama.cpp's own greedy text (ASSETS.md) for each file. Our executor dequantizes to FP32, while
// llama.cpp multiplies quantized weights with activations quantized to 8 bits and keeps an F16 KV
// cache; where the two best logits are closer than that arithmetic's rounding, the argmax may
// legitimately differ. Q4_1 has such a near-tie at generated token 23 ("▁to" vs "▁friend", 0.004
// apart in logits of ~13, 3e-4 relative): the test pins the text exactly up to the tie and checks
// that llama.cpp's choice there is within 0.01 of our best logit.
void expect_llamacpp_text(const QuantCase& qc, bool as_stored) {
    const std::string path = test::shared(kModels + "llamacpp/" + qc.file);
    EDGE_REQUIRE_SHARED(path);
    Loaded l = load(path, {}, as_stored);
    ASSERT_TRUE(l.rt && l.tok);
    const auto prompt = l.tok->encode("Once upon a time", true);
    ASSERT_EQ(prompt, kPromptIds);
    const std::vector<int32_t> gen = greedy(*l.rt, prompt, 30);
    const std::string want = qc.text;
    if (qc.exact_tokens >= 30) {
        const std::string text = decode_all(*l.tok, prompt, gen);
        EXPECT_EQ(text.substr(0, want.size()), want);
        return;
    }
    // Exact up to the tie: our text for the first exact_tokens tokens is a prefix of llama.cpp's.
    const std::vector<int32_t> head(gen.begin(), gen.begin() + qc.exact_tokens);
    const std::string ours = decode_all(*l.tok, prompt, head);
    ASSERT_EQ(want.substr(0, ours.size()), ours);
    // At the tie, llama.cpp's next token (encoded from its text) is within 0.01 of our best logit.
    const auto want_ids = l.tok->encode(want, true);
    ASSERT_GT(want_ids.size(), prompt.size() + size_t(qc.exact_tokens));
    const int32_t theirs = want_ids[prompt.size() + size_t(qc.exact_tokens)];
    std::vector<int32_t> seq = prompt;
    seq.insert(seq.end(), head.begin(), head.end());
    const float* logits = l.rt->prefill(seq.data(), int(seq.size()), 0);
    const int32_t best = argmax(logits, l.rt->config().vocab_size);
    EXPECT_NE(best, theirs) << "no longer a divergence: tighten exact_tokens to 30";
    // As stored, the file's Q8_0 ffn_down runs with 8-bit activations: a little more rounding.
    EXPECT_LT(logits[best] - logits[theirs], as_stored ? 0.02f : 0.01f)
        << l.tok->token_text(best) << " vs " << l.tok->token_text(theirs);
}

TEST_P(QuantizedGreedy, MatchesLlamaCppText) { expect_llamacpp_text(GetParam(), false); }

// The same files as stored, which is how generate, perplexity and the agent run them: F16/BF16 in
// place, Q8_0/Q4_0 repacked as QI8/QI4 and multiplied with 8-bit activations as llama.cpp does.
TEST_P(QuantizedGreedy, AsStoredMatchesLlamaCppText) { expect_llamacpp_text(GetParam(), true); }

// What load_weights_as_stored makes of each llama.cpp file: F16/BF16 matrices kept, Q8_0/Q4_0
// repacked into QI8/QI4 with the very codes and scales, Q5_0/Q4_1 kept as ggml blocks (the
// dequantized values equal the F32 import's bit for bit); no FP32 memory but converted vectors.
TEST(Stories260K, LlamaCppFilesLoadAsStoredWithTheSameValues) {
    const std::pair<const char*, DType> cases[] = {
        {"stories260K-F16.gguf", DType::F16},   {"stories260K-BF16.gguf", DType::BF16},
        {"stories260K-Q8_0.gguf", DType::QI8},  {"stories260K-Q4_0.gguf", DType::QI4},
        {"stories260K-Q5_0.gguf", DType::Q5_0}, {"stories260K-Q4_1.gguf", DType::Q4_1}};
    for (const auto& [file, want_type] : cases) {
        SCOPED_TRACE(file);
        const std::string path = test::shared(kModels + "llamacpp/" + file);
        EDGE_REQUIRE_SHARED(path);
        auto f32 = load_model(path);
        ASSERT_TRUE(f32.ok()) << f32.message();
        LoadOptions lo;
        lo.lazy_weights = true;
        auto m = load_model(path, lo);
        ASSERT_TRUE(m.ok()) << m.message();
        // FP32 memory: converted vectors (F32 ones alias the mapping) and matrices of other types.
        size_t expect_f32 = 0;
        for (const Tensor& t : m->tensors)
            if (t.source_type != DType::F32 && (t.shape.size() != 2 || !model::runs_as_stored(t.source_type)))
                expect_f32 += t.nbytes;
        const size_t before = model::f32_weight_stats().live_bytes;
        ASSERT_TRUE(model::load_weights_as_stored(*m).ok());
        EXPECT_EQ(model::f32_weight_stats().live_bytes - before, expect_f32);
        int kept = 0;
        for (const Tensor& t : m->tensors) {
            const Tensor* ref = f32->find(t.name);
            ASSERT_NE(ref, nullptr) << t.name;
            if (t.shape.size() == 2 && model::runs_as_stored(t.source_type)) {
                EXPECT_EQ(t.type, model::as_stored_type(t.source_type)) << t.name;
                kept += t.type == want_type;
            }
            const std::vector<float> got = t.type == DType::F32 ? std::vector<float>(t.f32(), t.f32() + t.numel())
                                                                : runtime::qkernels::dequantize(t);
            ASSERT_EQ(got.size(), size_t(ref->numel())) << t.name;
            EXPECT_EQ(std::memcmp(got.data(), ref->f32(), got.size() * sizeof(float)), 0) << t.name;
        }
        {
            // llama.cpp falls back to another type for ffn_down (172 columns: no whole blocks).
            EXPECT_GE(kept, 5 * 6) << "every block's 64-column matrices kept as stored";
        }
    }
}

const char* kFp32Text =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day,";

INSTANTIATE_TEST_SUITE_P(
    LlamaCpp, QuantizedGreedy,
    ::testing::Values(QuantCase{"stories260K-F16.gguf", kFp32Text, 30},
                      QuantCase{"stories260K-BF16.gguf", kFp32Text, 30},
                      QuantCase{"stories260K-Q8_0.gguf", kFp32Text, 30},
                      QuantCase{"stories260K-Q5_0.gguf", kFp32Text, 30},
                      QuantCase{"stories260K-Q4_0.gguf",
                                "Once upon a time, there was a little girl named Lily. She loved to play outside in "
                                "the sun. One day, she",
                                30},
                      QuantCase{"stories260K-Q4_1.gguf",
                                "Once upon a time, there was a little girl named Lily. She loved to play with her toys "
                                "and her friends. One day, she",
                                23}),
    [](const auto& info) {
        std::string n = info.param.file;
        n = n.substr(12, n.size() - 12 - 5);
        for (char& c : n)
            if (!isalnum(static_cast<unsigned char>(c))) c = '_';
        return n;
    });

double ppl(const std::string& data, PplProtocol p, int max_parts, int64_t* tokens) {
    const std::string path = test::shared(kModels + "stories260K.gguf");
    Loaded l = load(path);
    if (!l.rt) return -1;
    auto text = read_text_file(test::shared("data/" + data));
    EXPECT_TRUE(text.ok());
    PplOptions o;
    o.protocol = p;
    o.max_parts = max_parts;
    auto r = evaluate_perplexity(*l.rt, *l.tok, *text, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.message());
    if (!r.ok()) return -1;
    *tokens = r->tokens;
    return r->perplexity;
}

TEST(Stories260K, PerplexityStorySample) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_sample.txt"));
    int64_t n = 0;
    const double p = ppl("tinystories_sample.txt", PplProtocol::Story, -1, &n);
    EXPECT_EQ(n, 1804);
    EXPECT_NEAR(p, 3.5482, 3.5482 * 1e-3);
}

TEST(Stories260K, PerplexityParaVal400) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    int64_t n = 0;
    const double p = ppl("tinystories_val.txt", PplProtocol::Para, 400, &n);
    EXPECT_EQ(n, 38675);
    EXPECT_NEAR(p, 4.2267, 4.2267 * 1e-3);
}

TEST(Stories260K, PerplexityStreamRuns) {
    int64_t n = 0;
    const double p = ppl("tinystories_sample.txt", PplProtocol::Stream, -1, &n);
    // Windows start mid-story and cross story boundaries, so the stream figure sits above the
    // story protocol's 3.55 on the same text but stays far below a uniform guess (512).
    EXPECT_GT(n, 1700);
    EXPECT_GT(p, 3.5482);
    EXPECT_LT(p, 10.0);
}

}  // namespace
}  // namespace edge
