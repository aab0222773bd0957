// make_tokenizer: dispatch on spec.model to the format front ends, which translate the spec into
// a PipelineConfig (pipeline.h).
#include "engine/tokenizer/tokenizer.h"

#include "engine/tokenizer/front_ends.h"

namespace edge::tokenizer {

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
    std::string out;
    int32_t prev = -1;
    for (int32_t id : ids) {
        out += piece(id, prev);
        prev = id;
    }
    return out;
}

Result<std::unique_ptr<Tokenizer>> make_tokenizer(const TokenizerSpec& spec) {
    const std::string src = spec.source.empty() ? std::string("tokenizer") : spec.source;
    if (spec.model == "llama") return tokenizer::make_sentencepiece(spec);
    if (spec.model == "gpt2") return tokenizer::make_byte_level_bpe(spec);
    if (spec.model == "hf") return tokenizer::make_hf_tokenizer(spec);
    if (spec.model.empty()) return err(src, ": the model carries no tokenizer");
    return err(src, ": unsupported tokenizer model \"", spec.model, "\" (supported: llama, gpt2, hf)");
}

}  // namespace edge::tokenizer
