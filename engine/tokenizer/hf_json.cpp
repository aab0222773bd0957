// tokenizer.json (HF tokenizers) front end: BPE models with their normalizer, pre-tokenizer,
// decoder, added tokens and post-processor, translated into a PipelineConfig.
#include <nlohmann/json.hpp>

#include "engine/core/json_util.h"

#include <unordered_map>

#include "engine/tokenizer/front_ends.h"
#include "engine/tokenizer/pipeline.h"
#include "engine/tokenizer/text_util.h"

namespace edge::tokenizer {
namespace {

using json = nlohmann::json;

// Thrown inside this file only (caught in make_hf_tokenizer): a problem at a JSON path.
struct Bad {
    std::string msg;
};

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw Bad{path + ": " + what}; }

const json* opt(const json& o, const char* key) {
    if (!o.is_object()) return nullptr;
    auto it = o.find(key);
    return (it == o.end() || it->is_null()) ? nullptr : &*it;
}
std::string str(const json& o, const char* key, const std::string& path, const char* def) {
    const json* v = opt(o, key);
    if (!v) {
        if (def) return def;
        bad(path + "." + key, "missing");
    }
    if (!v->is_string()) bad(path + "." + key, "expected a string");
    return v->get<std::string>();
}
bool flag(const json& o, const char* key, const std::string& path, bool def) {
    const json* v = opt(o, key);
    if (!v) return def;
    if (!v->is_boolean()) bad(path + "." + key, "expected true or false");
    return v->get<bool>();
}
std::string type_of(const json& o, const std::string& path) {
    if (!o.is_object()) bad(path, "expected an object");
    return str(o, "type", path, nullptr);
}

// {"String": "x"} or {"Regex": "..."} -> compiled pattern.
std::shared_ptr<const Regex> pattern(const json& o, const std::string& path) {
    const json* p = opt(o, "pattern");
    if (!p || !p->is_object()) bad(path + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
    const bool literal = p->contains("String");
    const std::string key = literal ? "String" : "Regex";
    const std::string text = str(*p, key.c_str(), path + ".pattern", nullptr);
    auto re = Regex::compile(text, literal, path + ".pattern");
    if (!re) throw Bad{re.message()};
    return std::move(re.value());
}

struct Builder {
    PipelineConfig c;
    std::unordered_map<std::string, int32_t> model_vocab;
    std::unordered_map<std::string, int32_t> added;
    // Decoder as per-token rewrites (applied when computing each token's raw bytes).
    struct DecOp {
        enum Kind { ByteLevel, Replace, ByteFallback } kind;
        std::string a, b;
    };
    std::vector<DecOp> dec;

    void normalizer(const json& n, const std::string& path) {
        const std::string t = type_of(n, path);
        if (t == "Sequence") {
            const json* list = opt(n, "normalizers");
            if (!list || !list->is_array()) bad(path + ".normalizers", "expected an array");
            for (size_t i = 0; i < list->size(); ++i)
                normalizer((*list)[i], path + ".normalizers[" + std::to_string(i) + "]");
        } else if (t == "Prepend") {
            c.normalizers.push_back({NormStep::Prepend, str(n, "prepend", path, nullptr), "", nullptr, false});
        } else if (t == "Replace") {
            NormStep s{NormStep::Replace, "", str(n, "content", path, nullptr), nullptr, false};
            const json* p = opt(n, "pattern");
            if (p && p->is_object() && p->contains("String"))
                s.text = str(*p, "String", path + ".pattern", nullptr);
            else
                s.regex = pattern(n, path);
            c.normalizers.push_back(std::move(s));
        } else if (t == "NFC" || t == "NFKC" || t == "NFD" || t == "NFKD") {
            // Unicode normalisation tables are not carried; text that is already in that form
            // (the usual case) tokenizes identically.
            c.notes.push_back(path + ": " + t + " normalizer applied as identity");
        } else {
            bad(path + ".type", "normalizer \"" + t + "\" is not supported");
        }
    }

    void pre_tokenizer(const json& p, const std::string& path) {
        const std::string t = type_of(p, path);
        if (t == "Sequence") {
            const json* list = opt(p, "pretokenizers");
            if (!list || !list->is_array()) bad(path + ".pretokenizers", "expected an array");
            for (size_t i = 0; i < list->size(); ++i)
                pre_tokenizer((*list)[i], path + ".pretokenizers[" + std::to_string(i) + "]");
            return;
        }
        PreStep s;
        if (t == "Metaspace") {
            s.kind = PreStep::Metaspace;
            s.replacement = str(p, "replacement", path, "\xE2\x96\x81");
            if (s.replacement.empty()) bad(path + ".replacement", "must not be empty");
            const std::string scheme =
                str(p, "prepend_scheme", path, flag(p, "add_prefix_space", path, true) ? "always" : "never");
            if (scheme == "always")
                s.scheme = PreStep::Always;
            else if (scheme == "first")
                s.scheme = PreStep::First;
            else if (scheme == "never")
                s.scheme = PreStep::Never;
            else
                bad(path + ".prepend_scheme", "unknown scheme \"" + scheme + "\"");
            s.split = flag(p, "split", path, true);
            auto re = Regex::compile(s.replacement, true, path + ".replacement");
            if (!re) throw Bad{re.message()};
            s.regex = std::move(re.value());
        } else if (t == "ByteLevel") {
            s.kind = PreStep::ByteLevel;
            s.add_prefix_space = flag(p, "add_prefix_space", path, true);
            if (flag(p, "use_regex", path, true)) {
                auto re = Regex::compile(kGpt2Pattern, false, path);
                if (!re) throw Bad{re.message()};
                s.regex = std::move(re.value());
            }
        } else if (t == "Digits") {
            // Digits apart from the rest: one by one (individual_digits) or as runs.
            s.kind = PreStep::Split;
            auto re = Regex::compile(flag(p, "individual_digits", path, false) ? R"(\p{N})" : R"(\p{N}+)", false, path);
            if (!re) throw Bad{re.message()};
            s.regex = std::move(re.value());
        } else if (t == "Split") {
            s.kind = PreStep::Split;
            s.regex = pattern(p, path);
            s.invert = flag(p, "invert", path, false);
            const std::string b = str(p, "behavior", path, "Isolated");
            if (b == "Removed")
                s.behavior = SplitBehavior::Removed;
            else if (b == "Isolated")
                s.behavior = SplitBehavior::Isolated;
            else if (b == "MergedWithPrevious")
                s.behavior = SplitBehavior::MergedWithPrevious;
            else if (b == "MergedWithNext")
                s.behavior = SplitBehavior::MergedWithNext;
            else if (b == "Contiguous")
                s.behavior = SplitBehavior::Contiguous;
            else
                bad(path + ".behavior", "unknown behavior \"" + b + "\"");
        } else {
            bad(path + ".type", "pre-tokenizer \"" + t + "\" is not supported");
        }
        c.pre.push_back(std::move(s));
    }

    void decoder(const json& d, const std::string& path) {
        const std::string t = type_of(d, path);
        if (t == "Sequence") {
            const json* list = opt(d, "decoders");
            if (!list || !list->is_array()) bad(path + ".decoders", "expected an array");
            for (size_t i = 0; i < list->size(); ++i)
                decoder((*list)[i], path + ".decoders[" + std::to_string(i) + "]");
        } else if (t == "ByteLevel") {
            dec.push_back({DecOp::ByteLevel, "", ""});
        } else if (t == "ByteFallback") {
            dec.push_back({DecOp::ByteFallback, "", ""});
        } else if (t == "Fuse") {
            // Joining pieces is what decode does anyway.
        } else if (t == "Replace") {
            const json* p = opt(d, "pattern");
            if (!p || !p->is_object() || !p->contains("String"))
                bad(path + ".pattern", "only {\"String\": ...} patterns are supported in decoders");
            dec.push_back(
                {DecOp::Replace, str(*p, "String", path + ".pattern", nullptr), str(d, "content", path, nullptr)});
        } else if (t == "Strip") {
            const std::string content = str(d, "content", path, " ");
            const int start = opt(d, "start") ? (*opt(d, "start")).get<int>() : 0;
            const int stop = opt(d, "stop") ? (*opt(d, "stop")).get<int>() : 0;
            if (content == " " && start >= 1) c.strip_first_space = true;
            if (start > 1 || stop > 0 || (content != " " && start > 0))
                c.notes.push_back(path + ": Strip decoder applied as \"drop one leading space\"");
        } else if (t == "Metaspace") {
            const std::string r = str(d, "replacement", path, "\xE2\x96\x81");
            dec.push_back({DecOp::Replace, r, " "});
            const std::string scheme =
                str(d, "prepend_scheme", path, flag(d, "add_prefix_space", path, true) ? "always" : "never");
            if (scheme != "never") c.strip_first_space = true;
        } else {
            bad(path + ".type", "decoder \"" + t + "\" is not supported");
        }
    }

    std::string decode_token(const std::string& t) const {
        std::string s = t;
        for (const auto& op : dec) {
            if (op.kind == DecOp::ByteFallback) {
                const int b = parse_byte_token(s);
                // A byte is final: later string rewrites must not touch it.
                if (b >= 0) return std::string(1, static_cast<char>(b));
            } else if (op.kind == DecOp::ByteLevel) {
                s = unicode_to_bytes(s);
            } else if (!op.a.empty()) {
                s = replace_all(s, op.a, op.b);
            }
        }
        return s;
    }

    // The special token a TemplateProcessing puts before the sequence, if any.
    void find_bos(const json& p, const std::string& path, std::string& bos_name, int32_t& bos_id) {
        const std::string t = type_of(p, path);
        if (t == "Sequence") {
            const json* list = opt(p, "processors");
            if (!list || !list->is_array()) bad(path + ".processors", "expected an array");
            for (size_t i = 0; i < list->size(); ++i)
                find_bos((*list)[i], path + ".processors[" + std::to_string(i) + "]", bos_name, bos_id);
            return;
        }
        if (t != "TemplateProcessing") return;
        const json* single = opt(p, "single");
        if (!single || !single->is_array()) bad(path + ".single", "expected an array");
        bos_name = "";  // a template without a leading special token means: no BOS
        for (const auto& item : *single) {
            if (item.contains("Sequence")) break;
            if (const json* st = opt(item, "SpecialToken")) {
                bos_name = str(*st, "id", path + ".single[].SpecialToken", nullptr);
                break;
            }
        }
        if (const json* sp = opt(p, "special_tokens"); sp && !bos_name.empty()) {
            if (const json* e = opt(*sp, bos_name.c_str());
                e && e->contains("ids") && (*e)["ids"].is_array() && !(*e)["ids"].empty())
                bos_id = (*e)["ids"][0].get<int32_t>();
        }
    }

    int32_t find_token(const std::string& name) const {
        if (auto it = added.find(name); it != added.end()) return it->second;
        if (auto it = model_vocab.find(name); it != model_vocab.end()) return it->second;
        return -1;
    }
};

std::unique_ptr<Tokenizer> build(const json& j, const TokenizerSpec& spec, const std::string& src,
                                 Result<std::unique_ptr<Tokenizer>>& fail) {
    Builder b;
    b.c.source = src;
    b.c.mode = MergeMode::Rank;
    if (!j.is_object()) bad("(root)", "expected an object");
    const json* model = opt(j, "model");
    if (!model || !model->is_object()) bad("model", "missing or not an object");
    const std::string mtype = str(*model, "type", "model", "BPE");
    if (mtype != "BPE") bad("model.type", "model \"" + mtype + "\" is not supported (only BPE)");
    if (!str(*model, "continuing_subword_prefix", "model", "").empty() ||
        !str(*model, "end_of_word_suffix", "model", "").empty())
        bad("model", "continuing_subword_prefix / end_of_word_suffix are not supported");
    const json* vocab = opt(*model, "vocab");
    if (!vocab || !vocab->is_object()) bad("model.vocab", "missing or not an object");

    // Ids may be sparse and added tokens may extend past the model vocabulary.
    int64_t max_id = -1;
    std::string max_path;  // where the largest id is, for the error below
    for (auto it = vocab->begin(); it != vocab->end(); ++it) {
        if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > (1 << 26))
            bad("model.vocab[\"" + it.key() + "\"]", "expected a non-negative token id");
        if (it.value().get<int64_t>() > max_id) {
            max_id = it.value().get<int64_t>();
            max_path = "model.vocab[\"" + it.key() + "\"]";
        }
        b.model_vocab.emplace(it.key(), it.value().get<int32_t>());
    }
    const json* added = opt(j, "added_tokens");
    if (added && !added->is_array()) bad("added_tokens", "expected an array");
    if (added)
        for (size_t i = 0; i < added->size(); ++i) {
            const json& a = (*added)[i];
            const std::string path = "added_tokens[" + std::to_string(i) + "]";
            const json* id = opt(a, "id");
            if (!id || !id->is_number_integer() || id->get<int64_t>() < 0 || id->get<int64_t>() > (1 << 26))
                bad(path + ".id", "expected a non-negative token id");
            if (id->get<int64_t>() > max_id) {
                max_id = id->get<int64_t>();
                max_path = path + ".id";
            }
        }
    // Ids index a table of max_id + 1 entries: a few gaps are fine, a file whose ids are mostly
    // holes (one id of 60 million) would make it gigabytes.
    const int64_t given = int64_t(vocab->size()) + int64_t(added ? added->size() : 0);
    if (max_id >= 2 * given + 1024)
        bad(max_path, "token id " + std::to_string(max_id) + " for " + std::to_string(given) +
                          " tokens (ids must be nearly dense)");
    const auto n = static_cast<size_t>(max_id + 1);
    auto& c = b.c;
    c.tokens.assign(n, "");
    c.types.assign(n, kTypeUnused);
    c.byte_ids.fill(-1);
    for (auto& [text, id] : b.model_vocab) {
        c.tokens[id] = text;
        c.types[id] = kTypeNormal;
    }
    if (added)
        for (size_t i = 0; i < added->size(); ++i) {
            const json& a = (*added)[i];
            const std::string path = "added_tokens[" + std::to_string(i) + "]";
            const auto id = a["id"].get<int32_t>();
            c.tokens[id] = str(a, "content", path, nullptr);
            c.types[id] = flag(a, "special", path, false) ? kTypeControl : kTypeUserDefined;
            b.added.emplace(c.tokens[id], id);
            if (!c.tokens[id].empty()) c.specials.push_back(id);
        }

    c.byte_fallback = flag(*model, "byte_fallback", "model", false);
    c.fuse_unk = flag(*model, "fuse_unk", "model", false);
    c.ignore_merges = flag(*model, "ignore_merges", "model", false);
    if (const json* d = opt(*model, "dropout"); d && d->is_number() && d->get<double>() > 0)
        c.notes.push_back("model.dropout ignored (encoding is deterministic)");
    if (const json* u = opt(*model, "unk_token")) {
        if (!u->is_string()) bad("model.unk_token", "expected a string");
        c.unk_id = b.find_token(u->get<std::string>());
        if (c.unk_id < 0) bad("model.unk_token", "\"" + u->get<std::string>() + "\" is not in the vocabulary");
    }
    if (c.byte_fallback)
        for (size_t i = 0; i < n; ++i) {
            const int byte = c.types[i] == kTypeNormal ? parse_byte_token(c.tokens[i]) : -1;
            if (byte < 0) continue;
            c.types[i] = kTypeByte;
            if (c.byte_ids[byte] < 0) c.byte_ids[byte] = static_cast<int32_t>(i);
        }

    const json* merges = opt(*model, "merges");
    if (merges && !merges->is_array()) bad("model.merges", "expected an array");
    if (merges)
        for (size_t r = 0; r < merges->size(); ++r) {
            const json& m = (*merges)[r];
            const std::string path = "model.merges[" + std::to_string(r) + "]";
            std::string l, rt;
            if (m.is_string()) {
                const std::string s = m.get<std::string>();
                const size_t sp = s.find(' ', 1);
                if (sp == std::string::npos) bad(path, "\"" + s + "\" is not of the form \"a b\"");
                l = s.substr(0, sp);
                rt = s.substr(sp + 1);
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                l = m[0].get<std::string>();
                rt = m[1].get<std::string>();
            } else {
                bad(path, "expected \"a b\" or [\"a\", \"b\"]");
            }
            auto li = b.model_vocab.find(l), ri = b.model_vocab.find(rt);
            if (li == b.model_vocab.end() || ri == b.model_vocab.end()) {
                std::string pair = l;
                pair += "\" + \"";
                pair += rt;
                bad(path, "\"" + pair + "\" names a token not in model.vocab");
            }
            const std::string merged = l + rt;
            if (!b.model_vocab.count(merged)) bad(path, "\"" + merged + "\" (the merged token) is not in model.vocab");
            c.merges.emplace_back(li->second, ri->second);
        }

    if (const json* nz = opt(j, "normalizer")) b.normalizer(*nz, "normalizer");
    if (const json* pt = opt(j, "pre_tokenizer")) b.pre_tokenizer(*pt, "pre_tokenizer");
    if (const json* dc = opt(j, "decoder")) b.decoder(*dc, "decoder");

    bool byte_level = false;
    for (const auto& s : c.pre) byte_level |= s.kind == PreStep::ByteLevel;
    if (byte_level)
        for (int x = 0; x < 256; ++x)
            if (auto it = b.model_vocab.find(byte_to_unicode(static_cast<uint8_t>(x))); it != b.model_vocab.end())
                c.byte_ids[x] = it->second;

    c.display = c.tokens;
    c.raw.resize(n);
    for (size_t i = 0; i < n; ++i)
        c.raw[i] =
            (c.types[i] == kTypeControl || c.types[i] == kTypeUserDefined) ? c.tokens[i] : b.decode_token(c.tokens[i]);

    std::string bos_name = "\x01";  // sentinel: no template seen
    int32_t bos = -1;
    if (const json* pp = opt(j, "post_processor")) b.find_bos(*pp, "post_processor", bos_name, bos);
    if (bos_name == "\x01") {
        for (const char* name : {"<s>", "<|begin_of_text|>", "<bos>"})
            if (bos < 0) bos = b.find_token(name);
    } else if (bos < 0 && !bos_name.empty()) {
        bos = b.find_token(bos_name);
    }
    c.bos_id = spec.bos_id >= 0 ? spec.bos_id : bos;
    c.eos_id = spec.eos_id;
    for (const char* name : {"</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>"})
        if (c.eos_id < 0) c.eos_id = b.find_token(name);

    auto t = build_pipeline(std::move(c));
    if (!t) {
        fail = t.error();
        return nullptr;
    }
    return std::move(t.value());
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> make_hf_tokenizer(const TokenizerSpec& spec) {
    const std::string src = spec.source.empty() ? std::string("tokenizer.json") : spec.source;
    // Every nlohmann exception and every Bad stays inside this function.
    try {
        auto parsed = parse_json(spec.hf_json, src);
        if (!parsed) return parsed.error();
        const json& j = *parsed;
        Result<std::unique_ptr<Tokenizer>> fail = err("");
        auto t = build(j, spec, src, fail);
        if (!t) return fail.error();
        return t;
    } catch (const Bad& e) {
        return err(src, ": ", e.msg);
    } catch (const json::exception& e) {
        return err(src, ": ", e.what());
    } catch (const std::exception& e) {
        return err(src, ": ", e.what());
    }
}

}  // namespace edge::tokenizer
