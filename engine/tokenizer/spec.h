// The tokenizer as a model file describes it (data only). Importers fill it; engine/tokenizer
// builds a working tokenizer from it (make_tokenizer in tokenizer.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace edge {

// What a tokenizer needs, as the model file describes it. engine/tokenizer builds the tokenizer.
struct TokenizerSpec {
    // "llama" (SentencePiece-style, score-ordered merges + byte fallback),
    // "gpt2" (byte-level BPE with rank-ordered merges), "hf" (tokenizer.json text in hf_json),
    // or "" when the model carries no tokenizer.
    std::string model;
    std::string pre;  // GGUF tokenizer.ggml.pre ("llama-bpe", "default", ...)
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> token_types;  // GGUF token types (1 normal, 2 unknown, 3 control, 6 byte)
    std::vector<std::string> merges;   // "a b" pairs, rank order
    int bos_id = -1, eos_id = -1, unk_id = -1, pad_id = -1;
    bool add_bos = true;
    bool add_space_prefix = true;
    std::string hf_json;  // whole tokenizer.json for model "hf"
    std::string source;   // where it came from, for messages

    bool empty() const { return model.empty(); }
};

}  // namespace edge
