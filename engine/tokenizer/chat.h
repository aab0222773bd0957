// Chat prompts of instruct models: the model's own chat template (tokenizer_config.json's
// chat_template, GGUF tokenizer.chat_template) rendered over a conversation as Hugging Face
// transformers renders it, and the result encoded with the special tokens it writes.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/tokenizer/spec.h"

namespace edge::tokenizer {
class Tokenizer;
}  // namespace edge::tokenizer

namespace edge::tokenizer {

struct ChatMessage {
    std::string role;  // "system", "user", "assistant", ...
    std::string content;
};

// A conversation from JSON text: [{"role": "...", "content": "..."}, ...]. `origin` (a file
// name) prefixes every error, which names the message and the field.
Result<std::vector<ChatMessage>> parse_chat_messages(std::string_view json_text, const std::string& origin);

struct ChatPrompt {
    std::string text;          // the rendered template
    std::vector<int32_t> ids;  // its tokens
};

// Renders spec.chat_template over `messages` with the context transformers gives a template
// (messages, add_generation_prompt, bos_token, eos_token and the other special tokens' texts,
// strftime_now as the local clock),
// then encodes the text: special tokens written in it become their ids, and nothing is added
// that the template did not write (no extra BOS, as apply_chat_template's tokenization).
// A model without a chat template is an error naming the model and where a template comes from.
Result<ChatPrompt> render_chat_prompt(const TokenizerSpec& spec, const Tokenizer& tok,
                                      const std::vector<ChatMessage>& messages, bool add_generation_prompt = true);

// Encodes text in which special tokens appear as their strings (a rendered chat template): each
// control or user-defined token's text becomes its id, the text between is encoded without BOS.
// SentencePiece vocabularies start each text piece with their dummy-prefix space, as llama.cpp
// does after a special token.
std::vector<int32_t> encode_with_specials(const TokenizerSpec& spec, const Tokenizer& tok, std::string_view text);

}  // namespace edge::tokenizer
