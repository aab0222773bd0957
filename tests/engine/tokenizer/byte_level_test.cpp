// Byte-level BPE ("gpt2" specs): the pre-tokenizer regexes, hand-built merges, round trips.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/tokenizer/bpe_trainer.h"
#include "engine/tokenizer/regex_split.h"
#include "engine/tokenizer/text_util.h"
#include "engine/tokenizer/tokenizer.h"
#include "tok_test_util.h"

using edge::tokenizer::BpeTrainOptions;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::TokenizerSpec;
using edge::tokenizer::train_bpe;

namespace edge {
namespace {

std::vector<std::string> split_with(const char* pattern, const std::string& s) {
    auto re = tokenizer::Regex::compile(pattern, false, "test");
    EXPECT_TRUE(re.ok());
    std::vector<std::string_view> parts;
    (*re)->split(s, tokenizer::SplitBehavior::Isolated, false, parts);
    return {parts.begin(), parts.end()};
}

using Strs = std::vector<std::string>;

TEST(ByteLevel, Llama3PreTokenizerSplits) {
    EXPECT_EQ(split_with(tokenizer::kLlama3Pattern, "Hello world's 12345!!\n\nok"),
              (Strs{"Hello", " world", "'s", " ", "123", "45", "!!\n\n", "ok"}));
    // Case-insensitive contractions; a leading non-letter joins the word; spaces before a
    // newline stay with it; trailing spaces before a word leave one for the word.
    EXPECT_EQ(split_with(tokenizer::kLlama3Pattern, "I'M here  \n  (yes)"),
              (Strs{"I", "'M", " here", "  \n", " ", " (", "yes", ")"}));
    EXPECT_EQ(split_with(tokenizer::kLlama3Pattern, "“Wow,” 3.14159 café"),
              (Strs{"“Wow", ",”", " ", "3", ".", "141", "59", " café"}));
}

TEST(ByteLevel, Gpt2PreTokenizerSplits) {
    EXPECT_EQ(split_with(tokenizer::kGpt2Pattern, "Hello world's 12345!!\n\nok"),
              (Strs{"Hello", " world", "'s", " 12345", "!!", "\n", "\n", "ok"}));
    EXPECT_EQ(split_with(tokenizer::kGpt2Pattern, "a  b"), (Strs{"a", " ", " b"}));
    // Invalid UTF-8 never reaches PCRE2; it is left in the gaps.
    EXPECT_EQ(split_with(tokenizer::kGpt2Pattern, "ab\xff cd"), (Strs{"ab", "\xff", " cd"}));
}

TEST(ByteLevel, ByteToUnicodeTable) {
    EXPECT_EQ(tokenizer::byte_to_unicode(' '), "\xC4\xA0");   // Ġ
    EXPECT_EQ(tokenizer::byte_to_unicode('\n'), "\xC4\x8A");  // Ċ
    EXPECT_EQ(tokenizer::byte_to_unicode('A'), "A");
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    EXPECT_EQ(tokenizer::unicode_to_bytes(tokenizer::bytes_to_unicode(all)), all);
}

// 256 byte tokens (id = byte) plus a few hand-written merges.
TokenizerSpec hand_built(const std::string& pre) {
    TokenizerSpec s;
    s.model = "gpt2";
    s.pre = pre;
    for (int b = 0; b < 256; ++b) s.tokens.push_back(tokenizer::byte_to_unicode(static_cast<uint8_t>(b)));
    const char* merged[] = {"he", "ll", "hell", "hello", "\xC4\xA0w", "or", "\xC4\xA0wor"};
    for (const char* m : merged) s.tokens.push_back(m);
    s.merges = {"h e", "l l", "he ll", "hell o", "\xC4\xA0 w", "o r", "\xC4\xA0w or"};
    s.tokens.push_back("<|eot|>");
    s.token_types.assign(s.tokens.size(), 1);
    s.token_types.back() = 3;
    s.eos_id = 263;
    s.source = "hand-built";
    return s;
}

TEST(ByteLevel, HandBuiltMergesGiveExactIds) {
    auto t = make_tokenizer(hand_built("gpt2"));
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ((*t)->encode("hello world", false), (std::vector<int32_t>{259, 262, 'l', 'd'}));
    // "he" + "ll" only after both halves formed: ranks 0, 1, then 2.
    EXPECT_EQ((*t)->encode("hell", false), (std::vector<int32_t>{258}));
    EXPECT_EQ((*t)->encode("hello<|eot|> world", false), (std::vector<int32_t>{259, 263, 262, 'l', 'd'}));
    EXPECT_EQ((*t)->decode({259, 263, 262, 'l', 'd'}), "hello world");
    EXPECT_EQ((*t)->piece(262, 259), " wor");
    EXPECT_EQ((*t)->byte_token(' '), ' ');
    EXPECT_EQ((*t)->encode("hello", true), (std::vector<int32_t>{259}));  // no BOS in this vocab
    const std::string odd = "x\xff\xfe “q” 日本";
    EXPECT_EQ((*t)->decode((*t)->encode(odd, false)), odd);
}

TEST(ByteLevel, BadSpecsAreRejectedWithWhere) {
    auto s = hand_built("gpt2");
    s.merges.push_back("nope");
    auto t = make_tokenizer(s);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("hand-built: merge 7"), std::string::npos) << t.message();
    s = hand_built("qwen9");
    t = make_tokenizer(s);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("qwen9"), std::string::npos);
}

TEST(ByteLevel, TrainedVocabularyRoundTripsTinyStories) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_sample.txt"));
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const std::string sample = test::read_shared("data/tinystories_sample.txt");
    const std::string val = test::read_shared("data/tinystories_val.txt");
    BpeTrainOptions o;
    o.vocab_size = 600;
    o.byte_level = true;
    auto spec = train_bpe(std::string_view(val).substr(0, 100000), o);
    ASSERT_TRUE(spec.ok()) << spec.message();
    auto paras = test::split_parts(val, "\n\n");
    for (const char* pre : {"gpt2", "llama-bpe"}) {
        TokenizerSpec s = *spec;
        s.pre = pre;
        auto t = make_tokenizer(s);
        ASSERT_TRUE(t.ok()) << t.message();
        size_t tokens = 0, bytes = 0;
        for (size_t i = 1000; i < 1500 && i < paras.size(); ++i) {
            auto ids = (*t)->encode(paras[i], false);
            ASSERT_EQ((*t)->decode(ids), paras[i]) << pre << " paragraph " << i;
            tokens += ids.size();
            bytes += paras[i].size();
        }
        EXPECT_LT(tokens, bytes / 2) << pre;
        const auto t0 = std::chrono::steady_clock::now();
        size_t all = 0;
        for (const auto& p : paras) all += (*t)->encode(p, false).size();
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("[ speed    ] %s byte-level: %zu tokens in %.3f s: %.0f tokens/s\n", pre, all, sec, all / sec);
        // The sample's "<|endoftext|>" separators are the control token, which decode drops.
        const auto ids = (*t)->encode(sample, false);
        EXPECT_EQ(std::count(ids.begin(), ids.end(), (*t)->eos_id()), 5);
        EXPECT_EQ((*t)->decode(ids), tokenizer::replace_all(sample, "<|endoftext|>", ""));
        EXPECT_EQ((*t)->encode("<|endoftext|>", false), (std::vector<int32_t>{(*t)->eos_id()}));
    }
}

}  // namespace
}  // namespace edge

namespace edge {
namespace {

// Arbitrary bytes (invalid UTF-8, NULs, controls) must neither crash nor lose anything.
TEST(ByteLevel, RandomBytesRoundTrip) {
    auto t = make_tokenizer(hand_built("llama-bpe"));
    ASSERT_TRUE(t.ok()) << t.message();
    uint32_t state = 12345;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (int n = 0; n < 300; ++n) {
        std::string s(next() % 64, '\0');
        for (auto& c : s) c = static_cast<char>(next() >> 24);
        if (s.find("<|eot|>") != std::string::npos) continue;
        ASSERT_EQ((*t)->decode((*t)->encode(s, false)), s) << n;
    }
}

}  // namespace
}  // namespace edge
