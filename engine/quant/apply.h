// apply_plan: Model -> quantized Model (IR -> IR). Decoder blocks are processed one at a time:
// calibration inputs of block l are captured with blocks < l already quantized, AWQ scales are
// searched and folded (into the RMSNorm weight, or the previous linear), then every layer of the
// block is converted (FP16, RTN, or GPTQ). Layers a plan leaves at FP32 are shared, not copied.
#pragma once
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
    Model model;
    std::vector<LayerReport> layers;
    std::vector<std::string> warnings;
};

struct ApplyOptions {
    int threads = 0;
};

// calib may be null when every quantized layer uses RTN.
Result<QuantizeResult> apply_plan(const Model& model, const QuantPlan& plan, const CalibSet* calib,
                                  Progress* progress = nullptr, const ApplyOptions& opts = {});

}  // namespace edge::quant
