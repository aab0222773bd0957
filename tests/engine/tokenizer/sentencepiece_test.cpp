// SentencePiece-style ("llama") tokenizer on the real stories260K tokenizer (tok512.bin).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"
#include "tok_test_util.h"

using edge::tokenizer::load_llama2c_tokenizer;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::Tokenizer;
using edge::tokenizer::TokenizerSpec;

namespace edge {
namespace {

const char* kTok512 = "models/stories260K/tok512.bin";

std::unique_ptr<Tokenizer> tok512() {
    auto spec = load_llama2c_tokenizer(test::shared(kTok512), 512);
    EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.message());
    if (!spec) return nullptr;
    auto t = make_tokenizer(*spec);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.message());
    return t ? std::move(t.value()) : nullptr;
}

TEST(SentencePiece, OnceUponATimeMatchesLlama2c) {
    EDGE_REQUIRE_SHARED(test::shared(kTok512));
    auto t = tok512();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->encode("Once upon a time", true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
    EXPECT_EQ(t->encode("Once upon a time", false), (std::vector<int32_t>{403, 407, 261, 378}));
    EXPECT_EQ(t->vocab_size(), 512);
    EXPECT_EQ(t->bos_id(), 1);
    EXPECT_EQ(t->eos_id(), 2);
    EXPECT_EQ(t->byte_token('\n'), 13);
    EXPECT_EQ(t->encode("", true), (std::vector<int32_t>{1}));
    // ASSETS.md's greedy continuation decodes to the published text.
    std::vector<int32_t> ids = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315,
                                421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419,
                                292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432};
    EXPECT_EQ(t->decode(ids),
              "Once upon a time, there was a little girl named Lily. She loved to play outside in "
              "the park. One day,");
    EXPECT_EQ(t->piece(403, 1), "Once");
    EXPECT_EQ(t->piece(407, 403), " upon");
    EXPECT_EQ(t->piece(1, -1), "");
    EXPECT_EQ(t->piece(13, 5), "\n");
}

TEST(SentencePiece, RoundTripsSampleStoriesAndValParagraphs) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_sample.txt"));
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    EDGE_REQUIRE_SHARED(test::shared(kTok512));
    auto t = tok512();
    ASSERT_TRUE(t);
    auto stories = test::split_parts(test::read_shared("data/tinystories_sample.txt"), "<|endoftext|>");
    ASSERT_EQ(stories.size(), 5u);
    bool saw_non_ascii = false;
    for (const auto& s : stories) {
        auto ids = t->encode(s, true);
        EXPECT_EQ(t->decode(ids), s);
        EXPECT_EQ(t->decode(t->encode(s, false)), s);
        for (char c : s) saw_non_ascii |= static_cast<unsigned char>(c) >= 0x80;
    }
    EXPECT_TRUE(saw_non_ascii) << "the sample's curly quotes should exercise byte fallback";
    auto paras = test::split_parts(test::read_shared("data/tinystories_val.txt"), "\n\n");
    ASSERT_GT(paras.size(), 1000u);
    for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(t->decode(t->encode(paras[i], true)), paras[i]) << i;
    // Characters the vocabulary lacks, and bytes that are not UTF-8 at all.
    for (std::string s : {"naïve café — “quoted” 日本語 😀", "tab\tand\nnewline", "\xff\xfe broken \xe2\x80"})
        EXPECT_EQ(t->decode(t->encode(s, true)), s);
}

TEST(SentencePiece, GgufStyleVocabularyGivesIdenticalIds) {
    EDGE_REQUIRE_SHARED(test::shared(kTok512));
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    auto spec = load_llama2c_tokenizer(test::shared(kTok512), 512);
    ASSERT_TRUE(spec.ok());
    auto bin = make_tokenizer(*spec);
    ASSERT_TRUE(bin.ok());
    // As a GGUF stores it: "▁" for space, token types, proper control names.
    TokenizerSpec g = *spec;
    for (auto& tok : g.tokens) {
        std::string out;
        for (char c : tok) out += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
        tok = out;
    }
    g.tokens[1] = "<s>";
    g.tokens[2] = "</s>";
    auto gg = make_tokenizer(g);
    ASSERT_TRUE(gg.ok());
    auto paras = test::split_parts(test::read_shared("data/tinystories_val.txt"), "\n\n");
    for (size_t i = 0; i < 300 && i < paras.size(); ++i) {
        auto a = (*bin)->encode(paras[i], true);
        ASSERT_EQ(a, (*gg)->encode(paras[i], true)) << i;
        ASSERT_EQ((*gg)->decode(a), paras[i]);
    }
    EXPECT_EQ((*gg)->token_text(259), "\xE2\x96\x81t");
    EXPECT_EQ((*bin)->token_text(259), " t");
}

TEST(SentencePiece, EncodeSpeedOnValidationSet) {
    EDGE_REQUIRE_SHARED(test::shared(kTok512));
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    auto t = tok512();
    ASSERT_TRUE(t);
    auto paras = test::split_parts(test::read_shared("data/tinystories_val.txt"), "\n\n");
    size_t tokens = 0, bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& p : paras) {
        tokens += t->encode(p, true).size();
        bytes += p.size();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ speed    ] %zu paragraphs, %zu bytes -> %zu tokens in %.3f s: %.0f tokens/s\n", paras.size(), bytes,
                tokens, s, tokens / s);
    EXPECT_LT(tokens, bytes);
}

TEST(SentencePiece, LoaderRejectsDamagedFiles) {
    EDGE_REQUIRE_SHARED(test::shared(kTok512));
    const std::string good = test::read_shared(kTok512);
    auto dir = test::temp_dir("tok");
    auto write = [&](const std::string& name, const std::string& bytes) {
        std::ofstream(dir / name, std::ios::binary) << bytes;
        return (dir / name).string();
    };
    const std::string cut = write("cut.bin", good.substr(0, 1000));
    auto r = load_llama2c_tokenizer(cut, 512);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find(cut), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("offset"), std::string::npos) << r.message();
    // Wrong vocabulary size for this file: bytes left over.
    auto r2 = load_llama2c_tokenizer(test::shared(kTok512), 300);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.message().find("left"), std::string::npos) << r2.message();
    // vocab_size <= 0 reads to the end.
    auto r3 = load_llama2c_tokenizer(test::shared(kTok512), 0);
    ASSERT_TRUE(r3.ok()) << r3.message();
    EXPECT_EQ(r3->tokens.size(), 512u);
    // A hostile length.
    std::string bad = good;
    const int32_t huge = 0x7fffffff;
    std::memcpy(&bad[8], &huge, 4);
    auto r4 = load_llama2c_tokenizer(write("bad.bin", bad), 512);
    ASSERT_FALSE(r4.ok());
    EXPECT_NE(r4.message().find("offset 8"), std::string::npos) << r4.message();
    auto r5 = load_llama2c_tokenizer((dir / "missing.bin").string(), 512);
    EXPECT_TRUE(edge::test::fails_with(r5, {"missing.bin", "cannot open"}));
    TokenizerSpec none;
    EXPECT_TRUE(edge::test::fails_with(make_tokenizer(none), {"tokenizer", "the model carries no tokenizer"}));
}

}  // namespace
}  // namespace edge

namespace edge {
namespace {

// Arbitrary bytes go through byte fallback and come back unchanged (a literal "▁" would come
// back as a space, as in SentencePiece, so it is kept out).
TEST(SentencePiece, RandomBytesRoundTrip) {
    EDGE_REQUIRE_SHARED(test::shared(kTok512));
    auto t = tok512();
    ASSERT_TRUE(t);
    uint32_t state = 777;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (int n = 0; n < 300; ++n) {
        std::string s(next() % 64, '\0');
        for (auto& c : s) c = static_cast<char>(n % 2 ? next() >> 24 : 'a' + (next() >> 24) % 40);
        if (s.find("\xE2\x96\x81") != std::string::npos) continue;
        ASSERT_EQ(t->decode(t->encode(s, true)), s) << n;
        ASSERT_EQ(t->decode(t->encode(s, false)), s) << n;
    }
}

}  // namespace
}  // namespace edge
