// SentencePiece-style tokenizer with llama2.c semantics: dummy-prefix space, code points looked
// up as pieces, byte fallback for the rest, then score-ordered merges.
#include "engine/tokenizer/front_ends.h"
#include "engine/tokenizer/pipeline.h"
#include "engine/tokenizer/text_util.h"

namespace edge::tokenizer {

Result<std::unique_ptr<Tokenizer>> make_sentencepiece(const TokenizerSpec& spec) {
    const std::string src = spec.source.empty() ? std::string("tokenizer") : spec.source;
    const size_t n = spec.tokens.size();
    if (!spec.scores.empty() && spec.scores.size() != n)
        return err(src, ": ", spec.scores.size(), " scores for ", n, " tokens");
    if (!spec.token_types.empty() && spec.token_types.size() != n)
        return err(src, ": ", spec.token_types.size(), " token types for ", n, " tokens");

    PipelineConfig c;
    c.source = src;
    c.mode = MergeMode::Score;
    c.byte_fallback = true;
    c.unk_id = spec.unk_id;
    c.bos_id = spec.bos_id;
    c.eos_id = spec.eos_id;
    c.scores = spec.scores;
    c.display = spec.tokens;
    c.byte_ids.fill(-1);
    c.tokens.resize(n);
    c.raw.resize(n);
    c.types.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const std::string& t = spec.tokens[i];
        const auto id = static_cast<int32_t>(i);
        int32_t type = spec.token_types.empty() ? kTypeUndefined : spec.token_types[i];
        const int byte = parse_byte_token(t);
        if (type == kTypeUndefined) {
            // llama2.c files carry no types: recover them the way run.c treats the ids.
            if (id == spec.unk_id)
                type = kTypeUnknown;
            else if (id == spec.bos_id || id == spec.eos_id)
                type = kTypeControl;
            else if (byte >= 0)
                type = kTypeByte;
            else
                type = kTypeNormal;
        }
        c.types[i] = type;
        if (type == kTypeByte && byte >= 0) {
            c.tokens[i] = t;
            c.raw[i] = std::string(1, static_cast<char>(byte));
            if (c.byte_ids[byte] < 0) c.byte_ids[byte] = id;
            continue;
        }
        // GGUF vocabularies write spaces as "▁", llama2.c ones as ' '. Matching happens in the
        // "▁" form (the input's spaces are mapped too), so both files give identical ids.
        c.tokens[i] = replace_all(t, " ", kSpaceMark);
        c.raw[i] = replace_all(t, kSpaceMark, " ");
        if (type == kTypeUserDefined) c.specials.push_back(id);
    }
    c.normalizers.push_back({NormStep::Replace, " ", std::string(kSpaceMark), nullptr, false});
    if (spec.add_space_prefix) {
        c.normalizers.push_back({NormStep::Prepend, std::string(kSpaceMark), "", nullptr, true});
        c.strip_first_space = true;
    }
    return build_pipeline(std::move(c));
}

}  // namespace edge::tokenizer
