// tokenizer.json ("hf") tokenizers: a Llama-2-style file rebuilt from tok512.bin must agree with
// the SentencePiece tokenizer id for id; ByteLevel and Llama-3-style files; errors name paths.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "engine/tokenizer/bpe_trainer.h"
#include "engine/tokenizer/gguf_translate.h"
#include "engine/tokenizer/regex_split.h"
#include "engine/tokenizer/text_util.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"
#include "tok_test_util.h"

using edge::tokenizer::BpeTrainOptions;
using edge::tokenizer::load_llama2c_tokenizer;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::Tokenizer;
using edge::tokenizer::TokenizerSpec;
using edge::tokenizer::train_bpe;

namespace edge {
namespace {

using json = nlohmann::json;
const char* kTok512 = "models/stories260K/tok512.bin";
const std::string kMark = "\xE2\x96\x81";

std::unique_ptr<Tokenizer> make_hf(const json& j, std::string* error = nullptr) {
    TokenizerSpec s;
    s.model = "hf";
    s.hf_json = j.dump();
    s.source = "test/tokenizer.json";
    auto t = make_tokenizer(s);
    if (!t) {
        if (error) *error = t.message();
        return nullptr;
    }
    return std::move(t.value());
}

// tok512's vocabulary as a Llama-2 tokenizer.json: merges are every pair of vocabulary pieces
// whose concatenation is a piece, ranked by the merged piece's score (descending).
json llama2_json(const TokenizerSpec& spec, bool metaspace, bool merges_as_arrays) {
    json vocab = json::object();
    std::map<std::string, float> normal;  // ordinary pieces (not control or byte tokens)
    for (size_t i = 0; i < spec.tokens.size(); ++i) {
        std::string name = tokenizer::replace_all(spec.tokens[i], " ", kMark);
        if (i == 0) name = "<unk>";
        if (i == 1) name = "<s>";
        if (i == 2) name = "</s>";
        vocab[name] = i;
        if (i >= 3 && tokenizer::parse_byte_token(name) < 0) normal.emplace(name, spec.scores[i]);
    }
    struct M {
        std::string a, b;
        float score;
    };
    std::vector<M> ms;
    for (auto& [piece, score] : normal)
        for (size_t k = 1; k < piece.size(); ++k)  // splits inside a character never match
            if (normal.count(piece.substr(0, k)) && normal.count(piece.substr(k)))
                ms.push_back({piece.substr(0, k), piece.substr(k), score});
    std::stable_sort(ms.begin(), ms.end(), [](const M& x, const M& y) { return x.score > y.score; });
    json merges = json::array();
    for (auto& m : ms) {
        if (merges_as_arrays)
            merges.push_back(json::array({m.a, m.b}));
        else
            merges.push_back(m.a + " " + m.b);
    }
    json added = json::array();
    for (int i = 0; i < 3; ++i)
        added.push_back({{"id", i},
                         {"content", i == 0   ? "<unk>"
                                     : i == 1 ? "<s>"
                                              : "</s>"},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    json j;
    j["version"] = "1.0";
    j["truncation"] = nullptr;
    j["added_tokens"] = added;
    if (metaspace) {
        j["normalizer"] = nullptr;
        j["pre_tokenizer"] = {
            {"type", "Metaspace"}, {"replacement", kMark}, {"prepend_scheme", "first"}, {"split", false}};
        j["decoder"] = {{"type", "Metaspace"}, {"replacement", kMark}, {"prepend_scheme", "first"}, {"split", false}};
    } else {
        j["normalizer"] = {{"type", "Sequence"},
                           {"normalizers",
                            {{{"type", "Prepend"}, {"prepend", kMark}},
                             {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMark}}}}};
        j["pre_tokenizer"] = nullptr;
        j["decoder"] = {{"type", "Sequence"},
                        {"decoders",
                         {{{"type", "Replace"}, {"pattern", {{"String", kMark}}}, {"content", " "}},
                          {{"type", "ByteFallback"}},
                          {{"type", "Fuse"}},
                          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
    }
    j["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}};
    j["model"] = {{"type", "BPE"},
                  {"dropout", nullptr},
                  {"unk_token", "<unk>"},
                  {"continuing_subword_prefix", nullptr},
                  {"end_of_word_suffix", nullptr},
                  {"fuse_unk", true},
                  {"byte_fallback", true},
                  {"ignore_merges", false},
                  {"vocab", vocab},
                  {"merges", merges}};
    return j;
}

TEST(HfJson, Llama2StyleMatchesSentencePieceOnValParagraphs) {
    EDGE_REQUIRE_SHARED(test::shared(kTok512));
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    auto spec = load_llama2c_tokenizer(test::shared(kTok512), 512);
    ASSERT_TRUE(spec.ok());
    auto sp = make_tokenizer(*spec);
    ASSERT_TRUE(sp.ok());
    auto paras = test::split_parts(test::read_shared("data/tinystories_val.txt"), "\n\n");
    ASSERT_GE(paras.size(), 200u);
    for (bool metaspace : {false, true}) {
        std::string e;
        auto hf = make_hf(llama2_json(*spec, metaspace, metaspace), &e);
        ASSERT_TRUE(hf) << e;
        EXPECT_EQ(hf->bos_id(), 1);
        EXPECT_EQ(hf->eos_id(), 2);
        EXPECT_EQ(hf->byte_token('\n'), 13);
        EXPECT_EQ(hf->encode("Once upon a time", true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
        for (size_t i = 0; i < 200; ++i) {
            const auto want = (*sp)->encode(paras[i], true);
            ASSERT_EQ(hf->encode(paras[i], true), want) << "metaspace=" << metaspace << " paragraph " << i;
            ASSERT_EQ(hf->decode(want), paras[i]);
        }
        const std::string odd = "“Hi!” said 日本 😀.";
        EXPECT_EQ(hf->encode(odd, true), (*sp)->encode(odd, true));
        // Added (special) tokens are matched whole in the input.
        EXPECT_EQ(hf->encode("<s>", false), (std::vector<int32_t>{1}));
    }
}

// The hand-built byte-level vocabulary of byte_level_test.cpp, as a tokenizer.json.
json byte_level_json(bool add_prefix_space) {
    json vocab = json::object();
    for (int b = 0; b < 256; ++b) vocab[tokenizer::byte_to_unicode(static_cast<uint8_t>(b))] = b;
    const char* merged[] = {"he", "ll", "hell", "hello", "\xC4\xA0w", "or", "\xC4\xA0wor"};
    for (int i = 0; i < 7; ++i) vocab[merged[i]] = 256 + i;
    // Built explicitly: nlohmann would read a braced list of string pairs as an object.
    json merges = json::array();
    const char* pairs[][2] = {{"h", "e"},        {"l", "l"}, {"he", "ll"},       {"hell", "o"},
                              {"\xC4\xA0", "w"}, {"o", "r"}, {"\xC4\xA0w", "or"}};
    for (auto& p : pairs) merges.push_back(json::array({p[0], p[1]}));
    json j;
    j["added_tokens"] = {{{"id", 263}, {"content", "<|eot|>"}, {"special", true}}};
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {
        {"type", "ByteLevel"}, {"add_prefix_space", add_prefix_space}, {"trim_offsets", true}, {"use_regex", true}};
    j["post_processor"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}};
    j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}};
    j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
    return j;
}

TEST(HfJson, ByteLevelFile) {
    std::string e;
    auto t = make_hf(byte_level_json(false), &e);
    ASSERT_TRUE(t) << e;
    EXPECT_EQ(t->encode("hello world", true), (std::vector<int32_t>{259, 262, 'l', 'd'}));
    EXPECT_EQ(t->encode("hello<|eot|>", false), (std::vector<int32_t>{259, 263}));
    EXPECT_EQ(t->decode({259, 262, 'l', 'd', 263}), "hello world");
    EXPECT_EQ(t->bos_id(), -1);
    const std::string odd = "tab\t“quote” 日本 \xff";
    EXPECT_EQ(t->decode(t->encode(odd, false)), odd);
    auto p = make_hf(byte_level_json(true), &e);
    ASSERT_TRUE(p) << e;
    EXPECT_EQ(p->encode("hello", false), (std::vector<int32_t>{' ', 259}));
}

TEST(HfJson, Llama3StyleSplitThenByteLevel) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const std::string val = test::read_shared("data/tinystories_val.txt");
    BpeTrainOptions o;
    o.vocab_size = 700;
    o.byte_level = true;
    auto spec = train_bpe(std::string_view(val).substr(0, 60000), o);
    ASSERT_TRUE(spec.ok()) << spec.message();
    TokenizerSpec gs = *spec;
    gs.pre = "llama-bpe";
    gs.tokens.push_back("<|begin_of_text|>");
    gs.token_types.push_back(3);
    gs.bos_id = static_cast<int>(gs.tokens.size()) - 1;
    auto ref = make_tokenizer(gs);
    ASSERT_TRUE(ref.ok()) << ref.message();

    json vocab = json::object();
    const size_t n_model = spec->tokens.size() - 1;  // all but <|endoftext|>
    for (size_t i = 0; i < n_model; ++i) vocab[spec->tokens[i]] = i;
    json j;
    j["added_tokens"] = {{{"id", n_model}, {"content", "<|endoftext|>"}, {"special", true}},
                         {{"id", n_model + 1}, {"content", "<|begin_of_text|>"}, {"special", true}}};
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern", {{"Regex", tokenizer::kLlama3Pattern}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
    j["decoder"] = {{"type", "ByteLevel"}};
    j["model"] = {{"type", "BPE"}, {"ignore_merges", true}, {"vocab", vocab}, {"merges", spec->merges}};
    std::string e;
    auto hf = make_hf(j, &e);
    ASSERT_TRUE(hf) << e;
    EXPECT_EQ(hf->bos_id(), gs.bos_id);
    auto paras = test::split_parts(val, "\n\n");
    for (size_t i = 2000; i < 2300 && i < paras.size(); ++i) {
        auto ids = hf->encode(paras[i], true);
        ASSERT_EQ(ids, (*ref)->encode(paras[i], true)) << i;
        ASSERT_EQ(hf->decode(ids), paras[i]);
    }
}

TEST(HfJson, ErrorsNameTheJsonPath) {
    std::string e;
    TokenizerSpec s;
    s.model = "hf";
    s.source = "folder/tokenizer.json";
    s.hf_json = "{ not json";
    auto r = make_tokenizer(s);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("folder/tokenizer.json"), std::string::npos) << r.message();

    json j = byte_level_json(false);
    j["model"]["merges"] = json::array({json::array({"h", "zz"})});
    EXPECT_FALSE(make_hf(j, &e));
    EXPECT_NE(e.find("model.merges[0]"), std::string::npos) << e;

    j = byte_level_json(false);
    j["model"]["type"] = "Unigram";
    EXPECT_FALSE(make_hf(j, &e));
    EXPECT_NE(e.find("model.type"), std::string::npos) << e;

    j = byte_level_json(false);
    j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Whitespace"}}}}};
    EXPECT_FALSE(make_hf(j, &e));
    EXPECT_NE(e.find("pre_tokenizer.pretokenizers[0].type"), std::string::npos) << e;

    j = byte_level_json(false);
    j["model"]["vocab"]["h"] = "seven";
    EXPECT_FALSE(make_hf(j, &e));
    EXPECT_NE(e.find("model.vocab[\"h\"]"), std::string::npos) << e;

    j = byte_level_json(false);
    j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
    EXPECT_FALSE(make_hf(j, &e));
    EXPECT_NE(e.find("pre_tokenizer.pattern"), std::string::npos) << e;

    j = byte_level_json(false);
    j["normalizer"] = {{"type", "NFC"}};
    auto t = make_hf(j, &e);
    ASSERT_TRUE(t) << e;
    ASSERT_EQ(t->notes().size(), 1u);
    EXPECT_NE(t->notes()[0].find("NFC"), std::string::npos);
}

// A byte-level BPE tokenizer.json as Llama 3 / Qwen2 ship one: a Split regex then ByteLevel
// without regex, the trained vocabulary plus two special added tokens.
json split_byte_level_json(const TokenizerSpec& trained, const char* pattern, bool nfc) {
    json vocab = json::object();
    const size_t n_model = trained.tokens.size() - 1;  // all but <|endoftext|>
    for (size_t i = 0; i < n_model; ++i) vocab[trained.tokens[i]] = i;
    json j;
    j["added_tokens"] = {{{"id", n_model}, {"content", "<|endoftext|>"}, {"special", true}},
                         {{"id", n_model + 1}, {"content", "<|im_start|>"}, {"special", true}}};
    j["normalizer"] = nfc ? json{{"type", "NFC"}} : json(nullptr);
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
    j["decoder"] = {{"type", "ByteLevel"}};
    j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", trained.merges}};
    return j;
}

// GGUF export's translation of tokenizer.json: the pre name found from the regex, and the
// translated tokenizer encodes every paragraph as the tokenizer.json one does.
// Fuzz finding (fuzz_tokenizer_json, 2026-12-06): one added token with an id of 60 million made
// the id table gigabytes before anything checked it.
TEST(HfJson, SparseIdsAreRefusedBeforeTheTableIsAllocated) {
    std::string e;
    json j = byte_level_json(false);
    j["added_tokens"] = json::array({{{"id", 60000000}, {"content", "<big>"}, {"special", true}}});
    EXPECT_FALSE(make_hf(j, &e));
    EXPECT_NE(e.find("added_tokens[0].id: token id 60000000 for"), std::string::npos) << e;
    j = byte_level_json(false);
    j["model"]["vocab"]["far"] = 5000000;
    EXPECT_FALSE(make_hf(j, &e));
    EXPECT_NE(e.find("model.vocab[\"far\"]: token id 5000000 for"), std::string::npos) << e;
}

TEST(HfJson, ByteLevelTokenizerJsonTranslatesToTheGgufTokenizer) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const std::string val = test::read_shared("data/tinystories_val.txt");
    BpeTrainOptions o;
    o.vocab_size = 700;
    o.byte_level = true;
    auto trained = train_bpe(std::string_view(val).substr(0, 60000), o);
    ASSERT_TRUE(trained.ok()) << trained.message();
    const auto paras = test::split_parts(val, "\n\n");
    for (const char* name : {"qwen2", "llama-bpe"}) {
        const bool qwen = std::string(name) == "qwen2";
        TokenizerSpec hf;
        hf.model = "hf";
        hf.source = "q/tokenizer.json";
        hf.hf_json = split_byte_level_json(*trained, tokenizer::find_pre_tokenizer(name)->patterns[0], qwen).dump();
        auto g = tokenizer::gguf_from_tokenizer_json(hf);
        ASSERT_TRUE(g.ok()) << g.message();
        EXPECT_EQ(g->spec.model, "gpt2");
        EXPECT_EQ(g->spec.pre, name);
        EXPECT_EQ(g->spec.token_types.back(), 3) << "added special tokens are control tokens";
        EXPECT_EQ(g->notes.size(), qwen ? 1u : 0u) << "the NFC normalizer is named";
        auto a = make_tokenizer(hf);
        auto b = make_tokenizer(g->spec);
        ASSERT_TRUE(a.ok() && b.ok());
        for (size_t i = 3000; i < 3300 && i < paras.size(); ++i)
            ASSERT_EQ((*b)->encode(paras[i] + "<|im_start|>", false), (*a)->encode(paras[i] + "<|im_start|>", false))
                << name << " paragraph " << i;
    }
    // What GGUF cannot carry is refused by name.
    json j = split_byte_level_json(*trained, "\\s+", false);
    TokenizerSpec bad;
    bad.model = "hf";
    bad.source = "q/tokenizer.json";
    bad.hf_json = j.dump();
    EXPECT_TRUE(test::fails_with(tokenizer::gguf_from_tokenizer_json(bad),
                                 {"q/tokenizer.json", "pre_tokenizer", "Split regex"}));
    j["model"]["byte_fallback"] = true;
    bad.hf_json = j.dump();
    EXPECT_TRUE(test::fails_with(tokenizer::gguf_from_tokenizer_json(bad), {"q/tokenizer.json", "byte_fallback"}));
    j = split_byte_level_json(*trained, tokenizer::kLlama3Pattern, false);
    j["normalizer"] = {{"type", "Lowercase"}};
    bad.hf_json = j.dump();
    EXPECT_TRUE(
        test::fails_with(tokenizer::gguf_from_tokenizer_json(bad), {"q/tokenizer.json", "normalizer", "Lowercase"}));
}

}  // namespace
}  // namespace edge
