// Choosing a calibration set out of a text pool: the pool's paragraphs embedded by the model
// (embed.h), weighted for the target (weighting.h, optional) and chosen by k-means representatives
// or at random (select.h). What `calib-select` does for text and what the studio's Validation page
// does when a configuration asks for a selection; both call this one function.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/calib/embed.h"
#include "engine/calib/select.h"
#include "engine/calib/weighting.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::calib {

struct TextSelectOptions {
    SelectOptions select;   // n, method, seed, threads (weights are filled in here)
    LlmEmbedOptions embed;  // tokens per sample the embedding reads
    bool hardware_weights = true;
    // preferred_tokens 0: embed.max_tokens (the length the samples are cut at).
    HardwareProfile hardware = [] {
        HardwareProfile h;
        h.preferred_tokens = 0;
        return h;
    }();
};

struct TextSelection {
    Selection selection;
    int64_t pool_size = 0;
    int embed_dim = 0;
    std::vector<std::string> chosen;  // the chosen paragraphs, in pool order
    std::vector<int> tokens;          // tokens of each chosen paragraph (BOS included)
    int64_t stream_tokens = 0;        // what quantize reads of them (no BOS per paragraph)
    std::string text() const { return join_paragraphs(chosen); }
};

// Errors: an empty pool, more samples asked for than the pool holds (both counts named), a
// paragraph that encodes to nothing. `where` names the pool in messages (a file name).
Result<TextSelection> select_paragraphs(const std::shared_ptr<const model::Model>& model,
                                        const tokenizer::Tokenizer& tok, const std::vector<std::string>& pool,
                                        const TextSelectOptions& opts, const std::string& where,
                                        const Progress* progress = nullptr);

}  // namespace edge::calib
