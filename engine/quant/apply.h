// apply_plan: Model -> quantized Model (IR -> IR). Decoder blocks are processed one at a time:
// calibration inputs of block l are captured with blocks < l already quantized, AWQ scales are
// searched and folded (into the RMSNorm weight, or the previous linear), then every layer of the
// block is converted (FP16, RTN, or GPTQ). Layers a plan leaves at FP32 are shared, not copied.
// Block-streamed: a lazily opened model's block is read as F32 when its turn comes and let go
// after it; calibrated plans carry the hidden states of the calibration tokens from block to
// block (block_runner.h) - the only state besides the block in hand.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/calib.h"
#include "engine/quant/plan.h"
#include "engine/quant/rtn.h"

namespace edge::quant {

struct LayerReport {
    std::string layer;
    std::string format;  // "fp32", "fp16", "int4 sym g32 gptq", ...
    size_t bytes_before = 0, bytes_after = 0;
    ErrorReport error;       // vs the FP32 weight (after AWQ folding, the folded weight)
    float scale_min = 0.0f;  // smallest non-zero / largest group scale
    float scale_max = 0.0f;
    double awq_alpha = -1.0;  // -1 when no AWQ search
};

struct QuantizeResult {
    model::Model model;
    std::vector<LayerReport> layers;
    std::vector<std::string> warnings;
};

struct ApplyOptions {
    int threads = 0;
    // When set, every tensor of the result goes to `sink` once its block is done - blocks in
    // order, then the tensors outside blocks, each group in model order - and the result keeps
    // only the tensors' descriptions (no data): compile streams into its EdgeWriter this way,
    // holding one block at a time, AWQ and GPTQ plans included (their calibration runs block by
    // block, below).
    std::function<Status(const Tensor&)> sink;
    // Tests only: the earlier whole-model calibrated path - every weight read as F32 first, the
    // model run from the first block for every block's capture (capture_block_inputs), nothing
    // emitted before the end - the oracle the block-streamed path is checked against.
    bool whole_model_reference = false;
};

// What apply_plan holds at its peak: the converted layers, the tensors that stay resident as
// they are, and the F32 working copies (one tensor at a time for a lazily opened model with RTN
// or FP16 layers; every weight when AWQ or GPTQ run the model over calibration text).
struct ApplyEstimate {
    uint64_t converted = 0, resident = 0, f32_working = 0;
    uint64_t total() const { return converted + resident + f32_working; }
};
// `streaming`: the converted tensors leave block by block (ApplyOptions::sink), so only the
// largest block's count. Calibrated plans (AWQ, GPTQ) hold one block's weights as F32 besides the
// embedding or head read for the calibration, and the calibration activations of `calib`.
ApplyEstimate estimate_apply(const model::Model& model, const std::vector<LayerChoice>& choices, bool streaming = false,
                             const CalibSet* calib = nullptr);

// calib may be null when every quantized layer uses RTN. Before converting anything it checks what
// it will allocate (converted + f32_working; resident tensors are already held) against
// memory_budget() (engine/core/memory_budget.h) and refuses, with the figures,
// a plan that would not fit.
Result<QuantizeResult> apply_plan(const model::Model& model, const QuantPlan& plan, const CalibSet* calib,
                                  Progress* progress = nullptr, const ApplyOptions& opts = {});

}  // namespace edge::quant
