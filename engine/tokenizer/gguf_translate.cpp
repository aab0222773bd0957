#include "engine/tokenizer/gguf_translate.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/core/json_util.h"
#include "engine/tokenizer/regex_split.h"
#include "engine/tokenizer/text_util.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::tokenizer {

namespace {

using json = nlohmann::json;

constexpr int32_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6;
constexpr const char* kSpaceMark = "\xe2\x96\x81";  // U+2581, SentencePiece's space

bool is_type(const json& o, std::string_view t) {
    return o.is_object() && o.contains("type") && o["type"].is_string() && o["type"].get<std::string>() == t;
}

// The GGUF pre name of a byte-level pre-tokenizer, or an error text naming what is not one.
std::string pre_name(const json& pt, std::string& why) {
    auto byte_level = [&](const json& b, bool want_regex) {
        if (!is_type(b, "ByteLevel")) return false;
        if (b.value("add_prefix_space", false)) {
            why = "ByteLevel with add_prefix_space true has no GGUF equivalent";
            return false;
        }
        return b.value("use_regex", true) == want_regex;
    };
    if (byte_level(pt, true)) return "gpt-2";
    if (is_type(pt, "Sequence") && pt.contains("pretokenizers") && pt["pretokenizers"].is_array() &&
        pt["pretokenizers"].size() == 2) {
        const json& a = pt["pretokenizers"][0];
        const json& b = pt["pretokenizers"][1];
        if (is_type(a, "Split") && byte_level(b, false) && a.value("behavior", std::string()) == "Isolated" &&
            !a.value("invert", false) && a.contains("pattern") && a["pattern"].is_object() &&
            a["pattern"].contains("Regex") && a["pattern"]["Regex"].is_string()) {
            const std::string p = a["pattern"]["Regex"].get<std::string>();
            for (const tokenizer::PreTokenizerPatterns& e : tokenizer::gguf_pre_tokenizers())
                if (e.patterns.size() == 1 && p == e.patterns[0]) return e.name;
            why = "its Split regex is none of the word regexes llama.cpp names (gpt2, llama-bpe, qwen2)";
            return "";
        }
        if (is_type(a, "Digits") && a.value("individual_digits", false) && byte_level(b, true)) return "smollm";
    }
    if (why.empty()) why = "it is not a byte-level pre-tokenizer llama.cpp names (GPT-2, Llama 3, Qwen2, SmolLM)";
    return "";
}

// A SentencePiece-style tokenizer.json's normalizer: spaces replaced by U+2581, optionally one
// prepended first (add_space_prefix), no pre-tokenizer - what llama.cpp's "llama" tokenizer does.
Status sentencepiece_normalizer(const json& j, const std::string& src, bool& space_prefix) {
    if (j.contains("pre_tokenizer") && !j["pre_tokenizer"].is_null())
        return err(src, ": pre_tokenizer ", json_excerpt(j["pre_tokenizer"]),
                   " with byte_fallback: only the normalizer form (Prepend + Replace) is translated");
    const json nz = j.value("normalizer", json());
    std::vector<json> steps;
    if (is_type(nz, "Sequence") && nz.contains("normalizers") && nz["normalizers"].is_array())
        steps.assign(nz["normalizers"].begin(), nz["normalizers"].end());
    else if (!nz.is_null())
        steps.push_back(nz);
    bool replaced = false;
    for (const json& st : steps) {
        if (is_type(st, "Prepend") && st.value("prepend", std::string()) == kSpaceMark && !replaced && !space_prefix) {
            space_prefix = true;
        } else if (is_type(st, "Replace") && st.contains("pattern") && st["pattern"].is_object() &&
                   st["pattern"].value("String", std::string()) == " " &&
                   st.value("content", std::string()) == kSpaceMark) {
            replaced = true;
        } else {
            return err(src, ": normalizer step ", json_excerpt(st), " has no GGUF equivalent");
        }
    }
    if (!replaced) return err(src, ": the normalizer does not replace spaces by U+2581 as SentencePiece does");
    return {};
}

// Scores that make SentencePiece's merge order (highest-scoring pair first) the BPE merge order:
// the token a merge of rank r makes scores -r (its first merge); tokens no merge makes score
// below every merge. Byte tokens <0xXX> and the unknown token get their types.
void sentencepiece_scores(TokenizerSpec& s, const std::string& unk) {
    std::map<std::string, size_t> id;
    for (size_t i = 0; i < s.tokens.size(); ++i)
        if (s.token_types[i] == kNormal) id.emplace(s.tokens[i], i);
    s.scores.assign(s.tokens.size(), 0.0f);
    std::vector<char> made(s.tokens.size(), 0);
    for (size_t r = 0; r < s.merges.size(); ++r) {
        const std::string& m = s.merges[r];
        const size_t sp = m.find(' ');
        if (sp == std::string::npos) continue;
        auto it = id.find(m.substr(0, sp) + m.substr(sp + 1));
        if (it == id.end() || made[it->second]) continue;
        made[it->second] = 1;
        s.scores[it->second] = -float(r);
    }
    const float never = -float(s.merges.size()) - 1.0f;
    for (size_t i = 0; i < s.tokens.size(); ++i) {
        if (!unk.empty() && s.tokens[i] == unk)
            s.token_types[i] = kUnknown;  // an added special token in tokenizer.json, UNKNOWN in GGUF
        else if (s.token_types[i] != kNormal)
            continue;
        else if (tokenizer::parse_byte_token(s.tokens[i]) >= 0)
            s.token_types[i] = kByte;
        else if (!made[i])
            s.scores[i] = never;
    }
}

}  // namespace

Result<GgufTokenizer> gguf_from_tokenizer_json(const TokenizerSpec& hf) {
    const std::string src = hf.source.empty() ? std::string("tokenizer.json") : hf.source;
    if (hf.model != "hf") return err(src, ": not a tokenizer.json tokenizer (model '", hf.model, "')");
    auto parsed = parse_json(hf.hf_json, src);
    if (!parsed) return parsed.error();
    const json& j = *parsed;
    GgufTokenizer out;
    try {
        if (!j.is_object() || !j.contains("model") || !is_type(j["model"], "BPE"))
            return err(src, ": model is not a BPE model; GGUF export translates byte-level BPE tokenizers only");
        const json& model = j["model"];
        // A SentencePiece-style BPE (Llama 2, TinyLlama, Mistral): GGUF model "llama" with scores.
        const bool sentencepiece = model.value("byte_fallback", false);
        std::string pre;
        bool space_prefix = false;
        if (sentencepiece) {
            EDGE_TRY(sentencepiece_normalizer(j, src, space_prefix));
        } else {
            if (const auto nz = j.find("normalizer"); nz != j.end() && !nz->is_null()) {
                if (!is_type(*nz, "NFC"))
                    return err(src, ": normalizer ", json_excerpt(*nz), " has no GGUF equivalent");
                out.notes.push_back(src + ": its NFC normalizer is not carried (llama.cpp does not apply one either)");
            }
            std::string why;
            pre = j.contains("pre_tokenizer") ? pre_name(j["pre_tokenizer"], why) : "";
            if (pre.empty())
                return err(src, ": pre_tokenizer ",
                           j.contains("pre_tokenizer") ? json_excerpt(j["pre_tokenizer"]) : std::string("(none)"), ": ",
                           why.empty() ? "missing" : why);
        }

        // Tokens by id: the model vocabulary, then the added tokens; unused ids as llama.cpp's
        // converter fills them.
        if (!model.contains("vocab") || !model["vocab"].is_object())
            return err(src, ": model.vocab is missing or not an object");
        int64_t max_id = -1;
        for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
            if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
                it.value().get<int64_t>() > (1 << 26))
                return err(src, ": model.vocab[", json_excerpt(json(it.key())), "] is not a token id");
            max_id = std::max(max_id, it.value().get<int64_t>());
        }
        const json added = j.value("added_tokens", json::array());
        if (!added.is_array()) return err(src, ": added_tokens is not an array");
        for (const json& a : added) {
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || a["id"].get<int64_t>() < 0 ||
                a["id"].get<int64_t>() > (1 << 26) || !a.contains("content") || !a["content"].is_string())
                return err(src, ": added token ", json_excerpt(a), " needs an id and a content");
            max_id = std::max(max_id, a["id"].get<int64_t>());
        }
        TokenizerSpec& s = out.spec;
        const auto n = size_t(max_id + 1);
        s.tokens.assign(n, "");
        s.token_types.assign(n, kUnused);
        for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
            s.tokens[size_t(it.value().get<int64_t>())] = it.key();
            s.token_types[size_t(it.value().get<int64_t>())] = kNormal;
        }
        for (const json& a : added) {
            const auto id = size_t(a["id"].get<int64_t>());
            s.tokens[id] = a["content"].get<std::string>();
            s.token_types[id] = a.value("special", false) ? kControl : kUserDefined;
        }
        for (size_t i = 0; i < n; ++i)
            if (s.token_types[i] == kUnused) s.tokens[i] = "[PAD" + std::to_string(i) + "]";
        for (const json& m : model.value("merges", json::array())) {
            if (m.is_string())
                s.merges.push_back(m.get<std::string>());
            else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
                s.merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
            else
                return err(src, ": merge ", json_excerpt(m), " is not \"a b\" or [\"a\", \"b\"]");
        }
        if (sentencepiece) {
            sentencepiece_scores(s, model.value("unk_token", std::string()));
            s.merges.clear();
            s.model = "llama";
            s.add_space_prefix = space_prefix;
        } else {
            s.model = "gpt2";
            s.pre = pre;
        }
    } catch (const json::exception& e) {
        return err(src, ": ", e.what());
    }

    // The ids the tokenizer.json tokenizer resolved (BOS from its post-processor), then a probe
    // encoded both ways: the translation must not tokenize differently.
    auto reference = make_tokenizer(hf);
    if (!reference) return reference.error();
    TokenizerSpec& s = out.spec;
    s.bos_id = (*reference)->bos_id();
    s.eos_id = (*reference)->eos_id();
    s.eos_ids = hf.eos_ids;
    if (s.eos_id >= 0) s.add_eos(s.eos_id);
    s.unk_id = hf.unk_id;
    s.pad_id = hf.pad_id;
    s.add_bos = hf.add_bos && s.bos_id >= 0;
    if (s.model == "gpt2") s.add_space_prefix = false;
    s.chat_template = hf.chat_template;
    s.chat_template_source = hf.chat_template_source;
    s.generation = hf.generation;
    s.source = src + " (as GGUF tokenizer.ggml.*)";
    auto translated = make_tokenizer(s);
    if (!translated) return err(src, ": the GGUF translation does not build: ", translated.message());
    std::string probe =
        "Hello world! It's 2024: 12345 apples, 3.14 pies.\n\n  Tabs\there\r\nand \"quotes\" -- "
        "caf\xc3\xa9 na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e   end";
    // Control tokens written in the text: byte-level files split them out as tokenizer.json does;
    // llama.cpp's SentencePiece tokenizer reads text as text, so the "llama" form is not probed
    // with one (chat prompts insert them by id: tokenizer/chat.h).
    for (size_t i = 0; i < s.tokens.size() && s.model == "gpt2"; ++i)
        if (s.token_types[i] == kControl && !s.tokens[i].empty()) {
            probe += s.tokens[i] + "after";
            break;
        }
    if ((*reference)->encode(probe, false) != (*translated)->encode(probe, false))
        return err(src, ": the GGUF translation (model '", s.model, "'", s.pre.empty() ? "" : ", pre '" + s.pre + "'",
                   ") tokenizes a probe text differently from tokenizer.json; not exported");
    return out;
}

namespace {

nlohmann::ordered_json bos_post_processor(const std::string& bos, int32_t bos_id) {
    return {
        {"type", "TemplateProcessing"},
        {"single", {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", bos}, {"type_id", 1}}}},
          {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{bos, {{"id", bos}, {"ids", {bos_id}}, {"tokens", {bos}}}}}}};
}

}  // namespace

std::string bos_post_processor_json(const std::string& bos, int32_t bos_id) {
    return bos_post_processor(bos, bos_id).dump();
}

Result<std::string> tokenizer_json_from_gguf(const TokenizerSpec& s) {
    const std::string src = s.source.empty() ? std::string("tokenizer") : s.source;
    if (s.model != "gpt2")
        return err(src,
                   ": only a byte-level BPE tokenizer (GGUF model \"gpt2\") is written as tokenizer.json; this "
                   "one is \"",
                   s.model, "\"");
    const PreTokenizerPatterns* pre = find_pre_tokenizer(s.pre);
    if (!pre || pre->patterns.size() != 1)
        return err(src, ": pre-tokenizer '", s.pre,
                   "' has no one-regex tokenizer.json form (gpt2, llama-bpe, llama3, qwen2 have)");
    if (!s.token_types.empty() && s.token_types.size() != s.tokens.size())
        return err(src, ": ", s.token_types.size(), " token types for ", s.tokens.size(), " tokens");
    using ojson = nlohmann::ordered_json;
    ojson vocab = ojson::object(), added = ojson::array();
    for (size_t id = 0; id < s.tokens.size(); ++id) {
        const int32_t type = s.token_types.empty() ? kNormal : s.token_types[id];
        if (type == kControl || type == kUserDefined) {
            added.push_back({{"id", id},
                             {"content", s.tokens[id]},
                             {"single_word", false},
                             {"lstrip", false},
                             {"rstrip", false},
                             {"normalized", type == kUserDefined},
                             {"special", type == kControl}});
        } else {
            if (vocab.contains(s.tokens[id])) return err(src, ": token ", id, " repeats an earlier token's text");
            vocab[s.tokens[id]] = id;
        }
    }
    const ojson byte_level = {
        {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    ojson pre_tok;
    if (std::string_view(pre->patterns[0]) == kGpt2Pattern) {
        pre_tok = byte_level;
    } else {
        ojson bl = byte_level;
        bl["use_regex"] = false;
        pre_tok = {{"type", "Sequence"},
                   {"pretokenizers",
                    {{{"type", "Split"},
                      {"pattern", {{"Regex", pre->patterns[0]}}},
                      {"behavior", "Isolated"},
                      {"invert", false}},
                     bl}}};
    }
    ojson post = nullptr;
    if (s.add_bos && s.bos_id >= 0 && size_t(s.bos_id) < s.tokens.size())
        post = bos_post_processor(s.tokens[size_t(s.bos_id)], s.bos_id);
    ojson j = ojson::object();
    j["version"] = "1.0";
    j["truncation"] = nullptr;
    j["padding"] = nullptr;
    j["added_tokens"] = added;
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = pre_tok;
    j["post_processor"] = post;
    j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
    j["model"] = {{"type", "BPE"},
                  {"dropout", nullptr},
                  {"unk_token", nullptr},
                  {"continuing_subword_prefix", nullptr},
                  {"end_of_word_suffix", nullptr},
                  {"fuse_unk", false},
                  {"byte_fallback", false},
                  {"ignore_merges", pre->ignore_merges},
                  {"vocab", vocab},
                  {"merges", s.merges}};
    try {
        return j.dump(1);
    } catch (const std::exception& ex) {
        return err(src, ": cannot write tokenizer.json: ", ex.what());
    }
}

}  // namespace edge::tokenizer
