// Byte-level BPE as GGUF "gpt2" vocabularies describe it: regex pre-tokenizer chosen by
// tokenizer.ggml.pre, GPT-2 byte<->unicode mapping, rank-ordered merges.
#include <unordered_map>

#include "engine/tokenizer/front_ends.h"
#include "engine/tokenizer/pipeline.h"
#include "engine/tokenizer/text_util.h"

namespace edge::tokenizer {

Result<std::unique_ptr<Tokenizer>> make_byte_level_bpe(const TokenizerSpec& spec) {
    const std::string src = spec.source.empty() ? std::string("tokenizer") : spec.source;
    const size_t n = spec.tokens.size();
    if (!spec.token_types.empty() && spec.token_types.size() != n)
        return err(src, ": ", spec.token_types.size(), " token types for ", n, " tokens");

    PipelineConfig c;
    c.source = src;
    c.mode = MergeMode::Rank;
    c.unk_id = spec.unk_id;
    c.bos_id = spec.bos_id;
    c.eos_id = spec.eos_id;
    c.tokens = spec.tokens;
    c.display = spec.tokens;
    c.raw.resize(n);
    c.types.resize(n);
    c.byte_ids.fill(-1);
    std::unordered_map<std::string, int32_t> index;
    index.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const auto id = static_cast<int32_t>(i);
        int32_t type = spec.token_types.empty() ? kTypeNormal : spec.token_types[i];
        if (type == kTypeUndefined) type = kTypeNormal;
        c.types[i] = type;
        if (type == kTypeControl || type == kTypeUserDefined) {
            // Added tokens are written as plain text, not in the byte alphabet.
            c.raw[i] = spec.tokens[i];
            if (!spec.tokens[i].empty()) c.specials.push_back(id);
            continue;
        }
        c.raw[i] = unicode_to_bytes(spec.tokens[i]);
        index.emplace(spec.tokens[i], id);
    }
    for (int b = 0; b < 256; ++b) {
        auto it = index.find(byte_to_unicode(static_cast<uint8_t>(b)));
        if (it != index.end()) c.byte_ids[b] = it->second;
    }
    c.merges.reserve(spec.merges.size());
    for (size_t r = 0; r < spec.merges.size(); ++r) {
        const std::string& m = spec.merges[r];
        const size_t sp = m.find(' ');
        if (sp == std::string::npos || sp == 0 || sp + 1 >= m.size())
            return err(src, ": merge ", r, " \"", m, "\" is not of the form \"a b\"");
        auto a = index.find(m.substr(0, sp));
        auto b = index.find(m.substr(sp + 1));
        if (a == index.end() || b == index.end())
            return err(src, ": merge ", r, " \"", m, "\" names a token not in the vocabulary");
        if (!index.count(a->first + b->first))
            return err(src, ": merge ", r, " \"", m, "\" produces a token not in the vocabulary");
        c.merges.emplace_back(a->second, b->second);
    }

    const PreTokenizerPatterns* pre = find_pre_tokenizer(spec.pre);
    if (!pre) {
        std::string names;
        for (const auto& p : gguf_pre_tokenizers()) names += (names.empty() ? "" : ", ") + std::string(p.name);
        return err(src, ": unsupported pre-tokenizer \"", spec.pre, "\" (supported: ", names, ", default)");
    }
    c.ignore_merges = pre->ignore_merges;
    for (size_t i = 0; i < pre->patterns.size(); ++i) {
        // Every step but the last splits the raw text; the last is the byte-level word regex.
        PreStep step;
        step.kind = i + 1 == pre->patterns.size() ? PreStep::ByteLevel : PreStep::Split;
        auto re = Regex::compile(pre->patterns[i], false, src + " pre-tokenizer " + spec.pre);
        if (!re) return re.error();
        step.regex = std::move(re.value());
        c.pre.push_back(std::move(step));
    }
    return build_pipeline(std::move(c));
}

}  // namespace edge::tokenizer
