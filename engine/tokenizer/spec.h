// The tokenizer as a model file describes it (data only). Importers fill it; engine/tokenizer
// builds a working tokenizer from it (make_tokenizer in tokenizer.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace edge::tokenizer {

// What a tokenizer needs, as the model file describes it. engine/tokenizer builds the tokenizer.
// Sampling defaults a model ships (Hugging Face generation_config.json); < 0 = not given.
struct GenerationDefaults {
    float temperature = -1, top_p = -1;
    int top_k = -1;
    std::string source;  // the file they came from, for `info`
    bool any() const { return temperature >= 0 || top_p >= 0 || top_k >= 0; }
};

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
    // Every id that ends generation when a model lists several (instruct models: Llama 3's
    // <|eot_id|> beside <|end_of_text|>); eos_id is always one of them when set.
    std::vector<int32_t> eos_ids;
    GenerationDefaults generation;
    // The chat template the model ships (a Jinja template: tokenizer_config.json's chat_template,
    // GGUF tokenizer.chat_template), as text; "" when none. Where it came from is `source` for
    // GGUF, chat_template_source otherwise.
    std::string chat_template;
    std::string chat_template_source;
    bool add_bos = true;
    bool add_space_prefix = true;
    std::string hf_json;  // whole tokenizer.json for model "hf"
    std::string source;   // where it came from, for messages

    bool empty() const { return model.empty(); }
    // True for eos_id and every id of eos_ids.
    bool ends_generation(int32_t id) const {
        if (id == eos_id && id >= 0) return true;
        for (int32_t e : eos_ids)
            if (e == id) return true;
        return false;
    }
    // Adds id to eos_ids (once), and makes it eos_id when none is set.
    void add_eos(int32_t id) {
        if (id < 0) return;
        if (eos_id < 0) eos_id = id;
        for (int32_t e : eos_ids)
            if (e == id) return;
        eos_ids.push_back(id);
    }
};

}  // namespace edge::tokenizer
