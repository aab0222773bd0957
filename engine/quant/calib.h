// Calibration data for AWQ and GPTQ: token sequences cut from text, and the inputs of each
// linear layer of one decoder block captured through the FP32/quantized CPU executor.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::quant {

struct CalibSet {
    std::vector<std::vector<int32_t>> sequences;  // each starts with BOS
    std::string warning;                          // e.g. fewer sequences than asked for
};

// Paragraphs (blank-line separated) encoded without BOS, concatenated, cut into n_seq windows of
// seq_len tokens (BOS + seq_len-1). Too little text for even one window is an error.
Result<CalibSet> calib_from_text(const tokenizer::Tokenizer& tok, std::string_view text, int n_seq, int seq_len);

// Calibration and evaluation never share a paragraph. Paragraphs are the blocks of a text between
// blank lines or <|endoftext|> markers; two are the same when their normalized forms (whitespace
// runs as one space, trimmed) hash alike (xxh64). A calibration paragraph is removed when it equals
// an evaluation paragraph, or when one of its lines (20 bytes or more) equals an evaluation line.
struct DisjointCalib {
    std::string text;           // the calibration paragraphs kept, blank-line separated
    size_t paragraphs = 0;      // paragraphs in the calibration source
    size_t removed = 0;         // of them, found in the evaluation text and removed
    std::vector<size_t> lines;  // the 1-based line in the calibration source where each removed one began
};
DisjointCalib remove_evaluation_paragraphs(std::string_view calibration, std::string_view evaluation);
// What `d` did, for the user: "kept 40 of 46 paragraphs; 6 also in the evaluation text were removed
// (lines 1, 5, 9, ...)".
std::string describe(const DisjointCalib& d);

// Inputs of a block's linears, one row per calibration token: "attn" (input of attn_q/k/v),
// "attn_output", "ffn" (input of ffn_gate/up), "ffn_down"; block -1: "output".
struct Captured {
    int dim = 0;
    int64_t rows = 0;
    std::vector<float> x;  // rows x dim
};
using BlockInputs = std::map<std::string, Captured>;
std::string capture_key(std::string_view kind);  // attn_q -> "attn", ffn_up -> "ffn", ...

Result<BlockInputs> capture_block_inputs(const std::shared_ptr<const model::Model>& m, const CalibSet& calib, int block,
                                         int threads = 0, const Progress* progress = nullptr);

}  // namespace edge::quant
