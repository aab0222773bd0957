// PCRE2-backed splitting for pre-tokenizers (GPT-2 / Llama-3 word regexes, tokenizer.json
// "Split"). Compiled once per tokenizer; matching is thread-safe (match data per call).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/result.h"

namespace edge::tokenizer {

// GPT-2's word regex (also what tokenizer.json ByteLevel use_regex means).
extern const char* const kGpt2Pattern;
// The Llama-3 word regex (GGUF pre "llama-bpe").
extern const char* const kLlama3Pattern;

// The word splitting a GGUF tokenizer.ggml.pre name stands for (the names llama.cpp writes):
// each pattern in turn splits every piece the previous one left, matches isolated; the last is
// the byte-level word regex. ignore_merges: a piece that is itself a vocabulary token is taken
// whole (Llama 3's tokenizer.json says so).
struct PreTokenizerPatterns {
    const char* name;
    std::vector<const char*> patterns;
    bool ignore_merges = false;
};
const std::vector<PreTokenizerPatterns>& gguf_pre_tokenizers();
// The entry for `name` ("" and "default" are GPT-2's), or nullptr.
const PreTokenizerPatterns* find_pre_tokenizer(std::string_view name);

// HF tokenizers' SplitDelimiterBehavior.
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

class Regex {
public:
    // literal: the pattern is a plain string (tokenizer.json {"String": ...}), not a regex.
    // `where` names the pattern's origin for the error message.
    static Result<std::shared_ptr<const Regex>> compile(std::string_view pattern, bool literal, std::string_view where);
    ~Regex();
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Byte ranges [begin, end) of the non-empty, non-overlapping matches in s, left to right.
    // Invalid UTF-8 in s never matches (it is left to the gaps) instead of failing.
    void find_all(std::string_view s, std::vector<std::pair<size_t, size_t>>& out) const;

    // Splits s as HF's Split pre-tokenizer does; appends the non-empty pieces.
    void split(std::string_view s, SplitBehavior behavior, bool invert, std::vector<std::string_view>& out) const;

private:
    Regex() = default;
    void find_in_valid(std::string_view s, size_t base, std::vector<std::pair<size_t, size_t>>& out) const;
    void* code_ = nullptr;  // pcre2_code_8*, kept opaque so that pcre2.h stays out of headers
};

}  // namespace edge::tokenizer
