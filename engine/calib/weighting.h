// Hardware-aware sample weights for calibration-set selection (select.h uses them in k-means and
// to pick each cluster's representative; they are also written to the selection JSON).
//
// A sample's weight is the product of three factors in (0, 1], each raised to a configurable
// strength (0 switches a factor off), then scaled so the pool's weights average 1:
//
//   length    (LLM "input resolution") min(L, preferred_tokens) / preferred_tokens, L = the
//             sample's tokens (BOS included). A sample shorter than the length the target
//             calibrates / prefills at fills fewer rows of each tile and shows fewer positions.
//             CNN: the same with pixels, min(H*W, H0*W0) / max(H*W, H0*W0) against the model's
//             declared input H0 x W0 (1 when the sample already has the model's resolution).
//   alignment L / (ceil(L / m) * m), m = token_multiple (default 16 = the runtime's KV block;
//             set it to the target's GEMM tile): the share of the last KV block / tile that holds
//             real tokens (1 when L is a multiple of m). Only for L <= preferred_tokens: a longer
//             sample is cut at preferred_tokens, which should itself be a multiple of m. CNN: the
//             same on each spatial side against spatial_multiple (the conv tile), multiplied.
//   channel   (CNN) exp(-z / 2), z = mean over input channels of ((mu_c - M_c) / S_c)^2, where
//             mu_c is the sample's channel mean and M_c, S_c the mean and standard deviation of
//             mu_c over the pool: a sample whose channel distribution is far from the pool's pulls
//             per-tensor activation ranges (INT8 static scales on the target) towards itself, so
//             it counts less. Text has no input channels: factor 1.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/result.h"

namespace edge::calib {

struct HardwareProfile {
    int token_multiple = 16;           // KV block / tile along the sequence
    int preferred_tokens = 128;        // calibration / prefill length of the target
    int spatial_multiple = 8;          // conv tile along H and W
    int64_t input_h = 0, input_w = 0;  // the model's input (CNN); 0: the samples' own size
    double length_strength = 1.0;
    double alignment_strength = 1.0;
    double channel_strength = 1.0;
};

// What weighting sees of one sample: tokens for text, H, W and per-channel means for images.
struct SampleShape {
    int64_t tokens = 0;
    int64_t height = 0, width = 0;
    std::vector<double> channel_mean;
};

struct SampleWeights {
    std::vector<double> weight;                      // mean 1 over the pool
    std::vector<double> length, alignment, channel;  // the factors (before the strengths)
};

// Errors: an empty pool, a non-positive multiple / preferred length, negative strengths, a
// sample with no tokens and no pixels, channel counts that differ between samples.
Result<SampleWeights> hardware_weights(const std::vector<SampleShape>& samples, const HardwareProfile& hw);

}  // namespace edge::calib
