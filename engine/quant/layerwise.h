// Layer-wise GPTQ for models larger than memory: one decoder block at a time, weights read in
// place from the model's mapping (an F32 GGUF aliases its file), the calibration hidden states
// carried from block to block through the already quantized blocks.
//
// For each block l: run block l in FP32 on the hidden states (which came through the quantized
// blocks < l) and capture the inputs of its linears; GPTQ each linear from H = 2XᵀX/N; hand the
// quantized tensors to the sink; run block l again with the quantized weights to get the hidden
// states for block l+1; then release block l's pages of the mapping (madvise DONTNEED) so the
// resident set holds about one block of FP32 weights, never the whole model. Finally the output
// head, from the final-norm of the hidden states.
//
// The block forward repeats LlamaCpu::prefill op for op with the same kernels (RMSNorm, rotary
// tables, attention, SwiGLU, qkernels::matmul), so the captured inputs, and therefore the GPTQ
// results, are identical to apply_plan's (tests/engine/quant/test_layerwise.cpp checks byte
// equality on stories260K).
#pragma once
#include <functional>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/calib.h"
#include "engine/quant/plan.h"
#include "engine/quant/rtn.h"

namespace edge::quant {

struct LayerwiseOptions {
    QuantSpec spec{4, true, QGrouping::Group, 32, QMethod::GPTQ};  // every linear and the head
    GptqOptions gptq;
    int threads = 0;
    int max_blocks = -1;        // < 0: every block, then the head; else only the first max_blocks blocks
    bool release_pages = true;  // madvise(DONTNEED) each finished block's mapped weights
};

// Receives each quantized tensor as soon as it is made (it owns it from then on).
using TensorSink = std::function<Status(Tensor&&)>;

struct LayerwiseStats {
    int blocks_done = 0;
    bool head_done = false;
    double seconds = 0.0;
    // Where the time went (wall seconds, all blocks and the head together): the FP32 calibration
    // forwards that capture the linears' inputs, the Hessians, GPTQ, the forwards through the
    // quantized blocks.
    double seconds_capture = 0.0, seconds_hessian = 0.0, seconds_gptq = 0.0, seconds_requant_forward = 0.0;
};

Result<LayerwiseStats> gptq_layerwise(const model::Model& model, const CalibSet& calib, const TensorSink& sink,
                                      const LayerwiseOptions& opts = {}, Progress* progress = nullptr);

}  // namespace edge::quant
