// The one tokenizer engine behind every format: split out special tokens, normalise, pre-tokenize
// into words, then BPE each word with a priority queue over a linked list of symbols.
// The format front ends (SentencePiece spec, GGUF gpt2 spec, tokenizer.json) only translate
// their description into a PipelineConfig.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"
#include "engine/tokenizer/regex_split.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::tokenizer {

// GGUF token types (llama.cpp's LLAMA_TOKEN_TYPE_*), used for every format.
enum TokenType : int32_t {
    kTypeUndefined = 0,
    kTypeNormal = 1,
    kTypeUnknown = 2,
    kTypeControl = 3,
    kTypeUserDefined = 4,
    kTypeUnused = 5,
    kTypeByte = 6,
};

// Score: merge the adjacent pair whose concatenation is the highest-scoring vocabulary piece
// (SentencePiece / llama2.c). Rank: merge the pair with the lowest merge rank (GPT-2 / HF BPE).
enum class MergeMode { Score, Rank };

struct NormStep {
    enum Kind { Prepend, Replace } kind = Prepend;
    std::string text;                    // Prepend: what; Replace: the literal to find
    std::string with;                    // Replace: replacement
    std::shared_ptr<const Regex> regex;  // Replace: a regex pattern instead of `text`
    bool first_only = false;             // Prepend only to the segment at the start of the input
};

struct PreStep {
    enum Kind { Metaspace, ByteLevel, Split } kind = Split;
    // Metaspace
    std::string replacement;
    enum Scheme { Always, First, Never } scheme = Always;
    bool split = true;
    // ByteLevel
    bool add_prefix_space = false;
    // ByteLevel (word regex, may be null) and Split (pattern)
    std::shared_ptr<const Regex> regex;
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
};

struct PipelineConfig {
    std::vector<std::string> tokens;   // strings as the model matches them (vocabulary space)
    std::vector<std::string> display;  // token_text(): strings as the file wrote them
    std::vector<std::string> raw;      // bytes each token decodes to
    std::vector<float> scores;         // MergeMode::Score
    std::vector<int32_t> types;        // TokenType per id
    MergeMode mode = MergeMode::Score;
    std::vector<std::pair<int32_t, int32_t>> merges;  // MergeMode::Rank, in rank order
    std::vector<int32_t> specials;                    // ids matched as whole strings in input
    std::vector<NormStep> normalizers;                // per non-special segment
    std::vector<PreStep> pre;
    bool byte_fallback = false;
    bool fuse_unk = false;
    bool ignore_merges = false;  // a word that is itself a token is not split (Llama-3)
    int32_t unk_id = -1, bos_id = -1, eos_id = -1;
    bool strip_first_space = false;       // decode drops one leading space at the start / after BOS
    std::array<int32_t, 256> byte_ids{};  // byte_token(); filled by the front end, -1 = none
    std::vector<std::string> notes;       // approximations the user should know about
    std::string source;
};

// Builds the tokenizer; checks the config's internal consistency (sizes, ids in range).
Result<std::unique_ptr<Tokenizer>> build_pipeline(PipelineConfig cfg);

}  // namespace edge::tokenizer
