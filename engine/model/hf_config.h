// Hugging Face config.json for Llama-family decoders (internal to engine/model).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

struct HfConfig {
    std::string architecture;  // architectures[0] (or derived from model_type)
    bool phi3 = false;         // fused qkv_proj / gate_up_proj
    LlamaConfig llama;
    int bos_id = -1, eos_id = -1;
    std::vector<int32_t> eos_ids;  // every id of eos_token_id when it is a list
    std::vector<std::pair<std::string, std::string>> metadata;
};

// Architectures this importer reads (LlamaForCausalLM, MistralForCausalLM, Phi3ForCausalLM).
const std::vector<std::string>& hf_supported_architectures();

// Parses config.json text; `origin` (the file path) prefixes every error. Unsupported features
// (rope_scaling other than llama3/linear, biases, non-SiLU activations) are refused with a message
// naming the key.
Result<HfConfig> parse_hf_config(const std::string& text, const std::string& origin);

// generation_config.json text: its eos_token_id (int or list) added to t's EOS ids, bos_token_id
// when t has none, and the sampling defaults (temperature, top_p, top_k; do_sample absent or false
// = greedy) into t.generation. Ids must lie below vocab_size; `origin` prefixes every error.
Status parse_generation_config(const std::string& text, const std::string& origin, int vocab_size,
                               tokenizer::TokenizerSpec& t);

// tokenizer_config.json text: add_bos_token (true / false) and chat_template (a string, or a
// list of {"name", "template"} of which the one named "default" is taken, else the first) into
// t. Other fields are left to tokenizer.json. `origin` prefixes every error, which names the field.
Status parse_tokenizer_config(const std::string& text, const std::string& origin, tokenizer::TokenizerSpec& t);

}  // namespace edge::model
