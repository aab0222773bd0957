// Test-only writer of Hugging Face model folders from an IR Llama model (the importer's tests
// write their own fixtures): config.json, model.safetensors or two shards + index,
// tokenizer.json (Llama-2-style BPE built from the model's vocabulary) and tokenizer_config.json.
// Q/K rows are permuted into HF's rotate-half layout exactly as HF's conversion script does. A
// model with Q/K/V biases (LlamaConfig::attn_qkv_bias) is written as Qwen2ForCausalLM.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "engine/model/ir.h"

namespace edge::test {

enum class HfTie {
    Untied,      // embed_tokens + lm_head, tie_word_embeddings false
    EmbedOnly,   // tie_word_embeddings true, only model.embed_tokens.weight stored
    LmHeadOnly,  // tie_word_embeddings true, only lm_head.weight stored
};

struct HfFixtureOptions {
    bool sharded = false;  // model-00001-of-00002.safetensors + ...-00002 + index
    HfTie tie = HfTie::Untied;
    bool phi3 = false;           // Phi3ForCausalLM: fused qkv_proj and gate_up_proj
    DType storage = DType::F32;  // F32, F16 or BF16
    bool tokenizer = true;       // write tokenizer.json + tokenizer_config.json
    std::string rope_scaling;    // config.json's rope_scaling as JSON text ("": null)
    std::string extra_config;    // a JSON object whose keys are added to config.json ("": none)
};

// HF's conversion permutation of one Q or K projection: IR rows (interleaved RoPE pairs) ->
// rotate-half rows: w.view(heads, head_dim/2, 2, cols).transpose(1, 2).reshape(heads*head_dim, cols).
std::vector<float> permute_to_hf(const float* w, int heads, int head_dim, int cols);

// A Llama-2-style tokenizer.json for a "llama" TokenizerSpec (vocab with U+2581, merges derived
// from the scores as HF's SentencePiece converter does, Prepend+Replace normalizer, byte fallback).
std::string make_llama_tokenizer_json(const tokenizer::TokenizerSpec& spec);

// "" when every tensor of `want` exists in `got` with the same shape and bit-identical values
// (after `round` when given: the storage precision of the written copy), else what differs.
// A tied output head is compared through Model::output_head().
std::string compare_models(const model::Model& want, const model::Model& got, DType round = DType::F32);

// Writes the folder (created if needed); returns "" or an error message.
std::string write_hf_folder(const model::Model& m, const std::filesystem::path& dir, const HfFixtureOptions& o);

}  // namespace edge::test
