// Perplexity evaluation with the three protocols of ../shared/ASSETS.md:
//   story  : split on <|endoftext|>, strip, skip empty; each part = BOS + encode(part), cut to 512
//            tokens, fresh KV cache, every token after BOS scored.
//   para   : the same, splitting on blank lines ("\n\n").
//   stream : every non-empty stripped line encoded without BOS (with the dummy-prefix space),
//            lines joined by the '\n' byte token, cut into windows of 511 tokens, each window
//            scored after a prepended BOS.
// PPL = exp(mean natural-log NLL over the scored tokens).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::validate {

enum class PplProtocol { Story, Para, Stream };

Result<PplProtocol> parse_ppl_protocol(std::string_view name);
const char* ppl_protocol_name(PplProtocol p);

struct PplOptions {
    PplProtocol protocol = PplProtocol::Story;
    int max_parts = -1;    // score only the first N parts (stories, paragraphs, windows)
    int max_tokens = 512;  // per part, BOS included
};

struct PplResult {
    double perplexity = 0.0;
    double nll_sum = 0.0;  // natural log
    int64_t tokens = 0;    // scored tokens
    int parts = 0;
};

// Token sequences (each starting with BOS) the protocol scores, in order.
Result<std::vector<std::vector<int32_t>>> ppl_sequences(const tokenizer::Tokenizer& tok, std::string_view text,
                                                        const PplOptions& opts);

// The text the protocol scores under `opts` (its first max_parts parts; for stream, the lines its
// windows cover), parts separated by blank lines: what a calibration set must not contain
// (quant::remove_evaluation_paragraphs).
Result<std::string> ppl_scored_text(const tokenizer::Tokenizer& tok, std::string_view text, const PplOptions& opts);

// Negative log-likelihood (natural log) of `target` under logits of size n.
double token_nll(const float* logits, int n, int32_t target);

// Every part scored as one sequence through the executor interface (runtime::Scorer: batch steps
// asking for all logits; LlamaCpu in llama.cpp numerics, which has none, through its prefill).
Result<PplResult> evaluate_perplexity(runtime::Executor& rt, const tokenizer::Tokenizer& tok, std::string_view text,
                                      const PplOptions& opts, Progress* progress = nullptr);

}  // namespace edge::validate
