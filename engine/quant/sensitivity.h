// Per-layer sensitivity (issue 3, acceptance 3): the KL cost of quantizing one layer alone (every
// other layer left as it is) on calibration sequences, and plans that keep the most (or least)
// sensitive layers at a higher precision.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/plan.h"
#include "engine/quant/rtn.h"

namespace edge::quant {

struct LayerSensitivity {
    std::string layer;  // blk.3.attn_q, output
    std::string kind;
    int block = -1;
    std::vector<int64_t> shape;
    double kl_mean = 0.0;  // mean KL(P_model || P_layer-quantized) per token, natural log
    double kl_max = 0.0;
    double nll_delta = 0.0;  // mean NLL (next token) change, natural log
    size_t bytes = 0;        // the layer's bytes under `spec`
};

struct SensitivityOptions {
    QuantSpec spec{4, true, QGrouping::Group, 32, QMethod::RTN};  // RTN only (no calibration per layer)
    int threads = 0;
    // Tests only: the earlier whole-model path - every layer's variant of the model run from the
    // first token through LlamaCpu (the weights must be resident) - the oracle the block-streamed
    // path is checked against.
    bool whole_model_reference = false;
    // The block-streamed path carries the variants of several blocks through the later blocks at
    // once, as many as their hidden states fit here (at least one block's): each pass over the
    // blocks reads every block once. Smaller: less memory, more passes.
    size_t variant_state_bytes = size_t(1) << 30;
};

// One entry per layer of list_layers(m) whose weight is F32 (or unread: a lazily opened model),
// in that order. `seqs` are token sequences (each starting with BOS); every next-token position is
// scored.
//
// Block-streamed: the calibration tokens' hidden states are carried through the blocks once (the
// state before each block kept), then each layer's quantized variant starts from the state before
// its block, and the variants are carried together through the later blocks, one block read at a
// time (in as few passes as variant_state_bytes allows).
// A lazily opened model never holds more than one block and the head as F32 weights.
Result<std::vector<LayerSensitivity>> layer_sensitivity(const model::Model& m,
                                                        const std::vector<std::vector<int32_t>>& seqs,
                                                        const SensitivityOptions& opts = {},
                                                        Progress* progress = nullptr);

std::string sensitivity_to_json(const std::vector<LayerSensitivity>& s);
Result<std::vector<LayerSensitivity>> sensitivity_from_json(std::string_view json);

// The k most sensitive layers (by kl_mean) and a same-size counterpart: for each of them, in
// order, the least sensitive not yet chosen layer of the same shape outside the most-sensitive
// set (so both sets hold the same bytes at any precision); for a layer with no such counterpart
// (the output head), the least sensitive unchosen layers whose element counts add up to exactly
// its count. No exact match is an error naming the layer.
struct SensitivitySplit {
    std::vector<std::string> most, least;
};
Result<SensitivitySplit> split_by_sensitivity(const std::vector<LayerSensitivity>& s, int k);

// A plan quantizing every layer to `base` except `layers`, which get `high`.
QuantPlan mixed_plan(const std::vector<std::string>& layers, Precision high, const QuantSpec& high_spec,
                     const QuantSpec& base_spec);

}  // namespace edge::quant
