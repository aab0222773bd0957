// A small BPE trainer (standard pair-frequency BPE over words) for the project's demo model.
#pragma once
#include <string_view>

#include "engine/core/result.h"
#include "engine/tokenizer/spec.h"

namespace edge::tokenizer {

struct BpeTrainOptions {
    int vocab_size = 512;     // total, including control and byte tokens
    bool byte_level = false;  // false: SentencePiece-style "llama" spec; true: GPT-2 "gpt2" spec
    int min_pair_count = 2;   // stop merging when the best pair is rarer than this
};

// SentencePiece-style result (model "llama"): <unk>, <s>, </s>, the 256 byte tokens <0xXX> at
// id byte+3, then the learned pieces with descending scores (so that score-ordered merging
// replays the learned merges), then the single characters; spaces are written "▁".
// Byte-level result (model "gpt2", pre "gpt2"): the 256 byte symbols, learned tokens and their
// merges in rank order, then <|endoftext|> as BOS/EOS.
// The vocabulary may come out smaller than asked when the text runs out of repeated pairs.
Result<TokenizerSpec> train_bpe(std::string_view text, const BpeTrainOptions& options);

}  // namespace edge::tokenizer
