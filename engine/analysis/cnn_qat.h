// Quantization-aware fine-tuning of a CNN (LibTorch through engine/analysis/torch_cnn.h): the
// layers a plan quantizes are trained with fake-quantized weights (the plan's bits, symmetric per
// output channel: exactly the codes engine/quant/cnn_quant.h produces afterwards) and a
// straight-through estimator; every other trainable tensor adapts in FP32.
#pragma once
#include "engine/analysis/torch_cnn.h"
#include "engine/calib/image_sets.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/plan.h"

namespace edge::analysis {

struct CnnQatOptions {
    CnnTrainOptions train;          // optimizer, steps, batch ... (fake_quant is filled from the plan)
    std::vector<std::string> only;  // non-empty: fake-quantize only these layers (those that lose too much)
};

// Fine-tunes `m` in place; quantize it with quant::quantize_cnn (same plan) afterwards.
Status qat_finetune_cnn(model::Model& m, const quant::QuantPlan& plan, const calib::LabelledImages& data,
                        const CnnQatOptions& o, Progress* progress = nullptr, CnnTrainReport* report = nullptr);

}  // namespace edge::analysis
