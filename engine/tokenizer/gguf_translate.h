// A tokenizer.json (TokenizerSpec model "hf") as the GGUF tokenizer llama.cpp reads, for GGUF
// export: byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM word splitting) becomes model "gpt2" with
// the tokenizer.ggml.pre name of its pre-tokenizer, the tokens by id, their types and the merges;
// SentencePiece-style BPE (byte_fallback, the Prepend/Replace U+2581 normalizer: Llama 2,
// TinyLlama, Mistral) becomes model "llama" with scores that order its merges as the merge list
// does (rank r scores -r), byte tokens typed BYTE and add_space_prefix from the normalizer.
// Before it is returned, the translation and the tokenizer.json tokenizer must encode a probe
// text (words, digits, punctuation, whitespace runs, accents, CJK, a special token) to the same
// ids. Errors name the file and the part of tokenizer.json that GGUF cannot carry.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/tokenizer/spec.h"

namespace edge::tokenizer {

struct GgufTokenizer {
    TokenizerSpec spec;              // model "gpt2" or "llama", ready for the GGUF writer
    std::vector<std::string> notes;  // what the translation drops knowingly (an NFC normalizer)
};

Result<GgufTokenizer> gguf_from_tokenizer_json(const TokenizerSpec& hf);

// The other way, for writing Hugging Face folders: a byte-level BPE GGUF tokenizer (model
// "gpt2" with a one-regex pre-tokenizer: gpt2, llama-bpe, llama3, qwen2) as tokenizer.json text:
// model BPE (vocab, rank-ordered merges, ignore_merges as the pre name says), the word regex as
// a Split before a ByteLevel without regex (GPT-2's: ByteLevel with its own), control and
// user-defined tokens as added tokens, a TemplateProcessing that puts BOS first when add_bos.
// gguf_from_tokenizer_json of the result gives the same tokens, types and merges back.
Result<std::string> tokenizer_json_from_gguf(const TokenizerSpec& gpt2);

// tokenizer.json's post_processor that puts the special token `bos` (id `bos_id`) before each
// sequence, as JSON text (a TemplateProcessing with "single" and "pair" templates).
std::string bos_post_processor_json(const std::string& bos, int32_t bos_id);

}  // namespace edge::tokenizer
