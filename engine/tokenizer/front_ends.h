// Format front ends: each turns one kind of tokenizer description into a working tokenizer.
#pragma once
#include <memory>

#include "engine/core/result.h"
#include "engine/tokenizer/spec.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::tokenizer {

// spec.model == "llama": SentencePiece-style, llama2.c semantics (sentencepiece.cpp).
Result<std::unique_ptr<Tokenizer>> make_sentencepiece(const TokenizerSpec& spec);
// spec.model == "gpt2": byte-level BPE with rank-ordered merges (byte_level.cpp).
Result<std::unique_ptr<Tokenizer>> make_byte_level_bpe(const TokenizerSpec& spec);
// spec.model == "hf": tokenizer.json in spec.hf_json (hf_json.cpp).
Result<std::unique_ptr<Tokenizer>> make_hf_tokenizer(const TokenizerSpec& spec);

}  // namespace edge::tokenizer
