// GGUF export of what EdgeStudio made (a quantized .edgeq, or any model): tensors in the types
// llama.cpp runs, with the metadata and tokenizer it needs.
//
//   QI8 / QI4, symmetric, groups of 32 along rows of whole blocks, half scales  ->  Q8_0 / Q4_0,
//       byte for byte (the same numbers: engine/core/quant_format.h, engine/core/ggml_blocks.h)
//   other QI8 / QI4 (asymmetric, other groups, float scales)  ->  F16 of their dequantized values
//   F16 / BF16  ->  as stored;   F32 matrices  ->  float_type;   vectors (norms)  ->  F32
//   token_embd.weight  ->  `embedding`: as the rules above, or re-quantized from its values by
//       ggml's own Q8_0 / Q4_0 rule (llama.cpp quantizes the embedding; EdgeStudio's plans do not)
// Every conversion that changes numbers is listed in the report's notes.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

struct GgufExportOptions {
    DType float_type = DType::F16;  // F32 matrices: F32, F16 or BF16
    // token_embd.weight: F32 = by the rules above (float_type for F32 data), or F16, Q8_0, Q4_0.
    DType embedding = DType::F32;
    bool embedding_given = false;  // false: by the rules above
};

struct GgufExportReport {
    std::string architecture;                                  // "llama", or "phi3" for Phi-3 longrope
    std::vector<std::pair<std::string, std::string>> tensors;  // name, GGUF type written
    std::vector<std::string> notes;                            // conversions that change numbers
};

// Writes `m` (weights read, or read one tensor at a time when lazily opened) to `path` as a
// GGUF v3 'llama' file - or, for Phi-3 longrope (which llama.cpp reads only there), a 'phi3' file
// as llama.cpp's converter lays one out: fused blk.N.attn_qkv (Q, K, V rows; Q and K in
// rotate-half order) and blk.N.ffn_up (gate rows, then up rows), rope_factors_short/long.weight,
// phi3.rope.scaling.original_context_length / attn_factor. Parts of a fused tensor share one type
// (theirs, or the float type when they differ, noted). Refuses, naming what, a model the format
// cannot carry or an embedding type its rows do not fit; a tokenizer.json tokenizer is left out,
// said in a note.
Result<GgufExportReport> export_gguf(const Model& m, const std::string& path, const GgufExportOptions& o,
                                     Progress* progress = nullptr);

}  // namespace edge::model
