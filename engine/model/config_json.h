// LlamaConfig and the tokenizer's scalar fields <-> JSON: one definition for every file that
// stores them (.edgeq, .edge) and for `edgestudio-cli info --json`.
#pragma once
#include <nlohmann/json.hpp>

#include "engine/model/ir.h"

namespace edge::model {

nlohmann::json llama_config_to_json(const LlamaConfig& c);
// Throws nlohmann::json exceptions on missing keys or wrong types; callers parse inside their
// own try block and turn the exception into an error naming their file.
LlamaConfig llama_config_from_json(const nlohmann::json& j);

// Everything of a TokenizerSpec but the token and merge strings (the files keep those in a
// separate length-prefixed blob): model, pre, scores, types, special ids, flags, hf_json, and the
// counts n_tokens / n_merges. from_json leaves tokens/merges/source untouched; it throws like
// llama_config_from_json.
nlohmann::json tokenizer_header_to_json(const tokenizer::TokenizerSpec& t);
void tokenizer_header_from_json(const nlohmann::json& j, tokenizer::TokenizerSpec& t);

// A quantized tensor's parameters (bits, symmetric, grouping, group_size, method, scales) for
// the tensor tables of .edgeq and .edge. "scales" is "f32" or "f16"; files written before it
// existed have no key and float32 scales. from_json checks the enumerations and returns a
// description of what is wrong (nullptr when usable); the layout is left to quant_layout().
nlohmann::json quant_info_to_json(const QuantInfo& q);
const char* quant_info_from_json(const nlohmann::json& j, QuantInfo& q);

// One row of the .edgeq / .edge tensor table: name, type, source_type, shape, offset, nbytes
// (and quant for QI8/QI4).
nlohmann::json tensor_entry_to_json(const Tensor& t, uint64_t offset);

}  // namespace edge::model
