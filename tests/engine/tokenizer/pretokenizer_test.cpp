// Pre-tokenizer word splitting for every GGUF tokenizer.ggml.pre name we accept, checked against
// Debian's python3-regex running the same published patterns (tests/engine/tokenizer/reference/
// pre_split.py) on real text and on a hand-written multilingual sample; and what a name changes
// in a tokenizer built from it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/tokenizer/bpe_trainer.h"
#include "engine/tokenizer/regex_split.h"
#include "engine/tokenizer/tokenizer.h"
#include "tok_test_util.h"

using edge::tokenizer::make_tokenizer;
using edge::tokenizer::TokenizerSpec;
using edge::tokenizer::train_bpe;

namespace edge {
namespace {

namespace fs = std::filesystem;

// Contractions in both cases, digit runs, CJK, Arabic, Devanagari with combining marks, emoji
// with a zero-width joiner, tabs, CR/LF runs, trailing spaces, punctuation runs.
const char* const kMultilingual =
    "I'M sure they'll say it's 12345 or 3.14159... DON'T!\n\n"
    "  Tabs\there  and   spaces   \r\n\r\nnew lines\n"
    "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c 2024\xe5\xb9\xb4 "
    "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xd8\xa8\xd8\xa7\xd9\x84\xd8\xb9\xd8\xa7\xd9\x84\xd9\x85 "
    "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87 "
    "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb x\xc2\xb2+y\xc2\xb2 \xe2\x85\xa7 caf\xc3\xa9 na\xc3\xafve ---==>> "
    "(a)[b]{c} \"quoted\" 'single' you've we'd I'll \xc2\xa0nbsp end   ";

std::vector<std::string> ours(const tokenizer::PreTokenizerPatterns& pre, const std::string& text) {
    std::vector<std::string> pieces{text};
    for (const char* pattern : pre.patterns) {
        auto re = tokenizer::Regex::compile(pattern, false, pre.name);
        EXPECT_TRUE(re.ok()) << re.message();
        if (!re.ok()) return {};
        std::vector<std::string> next;
        for (const std::string& p : pieces) {
            std::vector<std::string_view> parts;
            (*re)->split(p, tokenizer::SplitBehavior::Isolated, false, parts);
            for (auto part : parts) next.emplace_back(part);
        }
        pieces = std::move(next);
    }
    return pieces;
}

std::vector<std::string> reference(const tokenizer::PreTokenizerPatterns& pre, const std::string& text,
                                   const fs::path& dir) {
    const fs::path in = dir / (std::string(pre.name) + ".in.json"), out = dir / (std::string(pre.name) + ".out.json");
    nlohmann::json job{{"patterns", pre.patterns}, {"text", text}};
    std::ofstream(in) << job.dump();
    const std::string cmd = "/usr/bin/python3 " + std::string(EDGE_SOURCE_DIR) +
                            "/tests/engine/tokenizer/reference/pre_split.py '" + in.string() + "' '" + out.string() +
                            "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        ADD_FAILURE() << "the python3-regex reference failed (Debian's python3 with python3-regex, which "
                         "scripts/install-deps.sh installs): "
                      << cmd;
        return {};
    }
    std::ifstream f(out);
    std::stringstream ss;
    ss << f.rdbuf();
    return nlohmann::json::parse(ss.str()).get<std::vector<std::string>>();
}

TEST(PreTokenizer, EveryGgufPreNameSplitsAsPython3RegexDoes) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_sample.txt"));
    const std::string text = test::read_shared("data/tinystories_sample.txt") + kMultilingual;
    const fs::path dir = test::temp_dir("pre_split");
    ASSERT_GE(tokenizer::gguf_pre_tokenizers().size(), 6u);
    for (const auto& pre : tokenizer::gguf_pre_tokenizers()) {
        const std::vector<std::string> want = reference(pre, text, dir), got = ours(pre, text);
        ASSERT_FALSE(want.empty()) << pre.name;
        ASSERT_EQ(got.size(), want.size()) << pre.name;
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << pre.name << " piece " << i;
        std::printf("%-10s %zu pieces, identical to python3-regex\n", pre.name, got.size());
    }
    // The names really differ where they should: digits one by one (qwen2, smollm) or by three.
    auto pieces_of = [&](const char* name, const std::string& s) {
        return ours(*tokenizer::find_pre_tokenizer(name), s);
    };
    EXPECT_EQ(pieces_of("qwen2", " 12345"), (std::vector<std::string>{" ", "1", "2", "3", "4", "5"}));
    EXPECT_EQ(pieces_of("llama-bpe", " 12345"), (std::vector<std::string>{" ", "123", "45"}));
    EXPECT_EQ(pieces_of("smollm", " 12345"), (std::vector<std::string>{" ", "1", "2", "3", "4", "5"}));
    EXPECT_EQ(pieces_of("gpt2", " 12345"), (std::vector<std::string>{" 12345"}));
}

// A byte-level vocabulary trained here, run under each name: the digit split decides the ids.
TEST(PreTokenizer, TheGgufPreNameDecidesHowDigitsAreEncoded) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const std::string val = test::read_shared("data/tinystories_val.txt");
    std::string text = val.substr(0, 100000);
    for (int i = 0; i < 400; ++i) text += " " + std::to_string(1000 + i * 7);  // digit runs to merge
    auto spec = train_bpe(text, {768, true, 2});
    ASSERT_TRUE(spec.ok()) << spec.message();
    auto encode = [&](const char* pre, const std::string& s) {
        TokenizerSpec t = *spec;
        t.pre = pre;
        auto tok = make_tokenizer(t);
        EXPECT_TRUE(tok.ok()) << tok.message();
        return tok.ok() ? (*tok)->encode(s, false) : std::vector<int32_t>{};
    };
    const std::string s = "The year 1007 and 2024.";
    for (const char* pre : {"gpt2", "smollm", "qwen2", "llama-bpe"}) {
        auto t = make_tokenizer([&] {
            TokenizerSpec x = *spec;
            x.pre = pre;
            return x;
        }());
        ASSERT_TRUE(t.ok()) << t.message();
        EXPECT_EQ((*t)->decode((*t)->encode(s, false)), s) << pre;
    }
    // One token per digit under smollm and qwen2; fewer where runs may merge.
    const auto smollm = encode("smollm", " 1007"), gpt2 = encode("gpt2", " 1007");
    EXPECT_EQ(smollm.size(), 5u);
    EXPECT_LT(gpt2.size(), smollm.size());
    EXPECT_EQ(encode("qwen2", " 1007").size(), 5u);

    TokenizerSpec bad = *spec;
    bad.pre = "tekken-9";
    EXPECT_TRUE(test::fails_with(make_tokenizer(bad), {"unsupported pre-tokenizer \"tekken-9\"", "smollm", "qwen2"}));
}

}  // namespace
}  // namespace edge
