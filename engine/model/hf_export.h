// Writing Hugging Face model folders: the JSON files beside the weights (config.json,
// generation_config.json, tokenizer_config.json) from a Llama configuration and its tokenizer,
// the IR -> HF tensor names, and the rotate-half row order HF keeps Q/K projections in. The
// importer (hf.h) reads what these write; `synth --format hf` streams weights through them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/model/ir.h"

namespace edge::model {

// config.json: LlamaForCausalLM, or Qwen2ForCausalLM when the configuration has Q/K/V biases;
// torch_dtype from `dtype` (F32, F16, BF16); BOS/EOS ids from the tokenizer.
std::string hf_config_json(const LlamaConfig& c, const tokenizer::TokenizerSpec& tok, DType dtype);
// generation_config.json: bos_token_id and eos_token_id (a list when the tokenizer has several).
std::string hf_generation_config_json(const tokenizer::TokenizerSpec& tok);
// tokenizer_config.json: the BOS/EOS token texts, add_bos_token, the chat template if any.
std::string hf_tokenizer_config_json(const tokenizer::TokenizerSpec& tok);

// The HF name of an IR tensor of a Llama/Qwen2 model ("blk.3.attn_q.weight" ->
// "model.layers.3.self_attn.q_proj.weight", "output.weight" -> "lm_head.weight"); "" if none.
std::string hf_tensor_name(const std::string& ir_name);

// For a Q or K projection (or its bias) of `heads` heads: the IR row that HF row s holds, for
// every s (the inverse of rotate_half_source_row). Empty for every other tensor (rows in place).
std::vector<int64_t> hf_rows_from_ir(const std::string& ir_name, const LlamaConfig& c);

}  // namespace edge::model
