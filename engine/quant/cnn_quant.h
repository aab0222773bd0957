// CNN quantization through the same plans as the LLM path (engine/quant/plan.h): the Conv2d and
// Linear layers a plan selects get INT8 or INT4 weights, symmetric per output channel, and (by
// default) static per-tensor INT8 activations at their inputs, calibrated on sample images; the
// runtime runs them with integer kernels (engine/runtime/cnn/cnn.h CnnQuantLayer). Metrics against
// FP32: top-1, agreement of the predicted class, KL(FP32 || quantized) of the softmax.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/plan.h"
#include "engine/runtime/cnn/cnn.h"

namespace edge::quant {

struct CnnQuantOptions {
    bool int8_activations = true;  // false: weight-only (inputs of the layers stay float)
    int64_t calib_images = 256;    // the first N images of the calibration set
};

// A plan for every Conv2d / Linear layer at `p` (INT8 / INT4), per output channel, symmetric.
QuantPlan cnn_uniform_plan(Precision p);

// Quantizes the layers the plan selects. A rule asking for grouping other than "channel" or for
// asymmetric weights is an error naming the layer. `calib_pixels` holds calib_count images of the
// model's input size, scaled like its input.
Result<runtime::CnnQuantization> quantize_cnn(const model::Model& m, const QuantPlan& plan,
                                              const std::vector<float>& calib_pixels, int64_t calib_count,
                                              const CnnQuantOptions& o = {}, Progress* progress = nullptr);

// A copy of `m` whose quantized layers hold their dequantized weights (F32), for LibTorch
// (QAT, sensitivity) and for comparisons; other tensors share their buffers with `m`.
model::Model dequantized_cnn(const model::Model& m, const runtime::CnnQuantization& q);

struct CnnComparison {
    int64_t images = 0;
    double top1_ref = 0, top1 = 0;   // against the labels
    double agreement = 0;            // fraction of images where both predict the same class
    double kl_mean = 0, kl_max = 0;  // KL(softmax ref || softmax test), nats
    double nll_ref = 0, nll = 0;     // mean cross-entropy of the labels, nats
};
Result<CnnComparison> compare_cnn(const runtime::CnnExecutor& ref, const runtime::CnnExecutor& test,
                                  const std::vector<float>& pixels, const std::vector<uint8_t>& labels,
                                  int64_t batch = 500, Progress* progress = nullptr);

// Empirical per-layer sensitivity: each Conv2d / Linear layer alone quantized to `p` (weight-only,
// per channel), compared with FP32 on the labelled images. In graph order.
struct CnnLayerLoss {
    std::string layer;
    int64_t params = 0;
    double top1_ref = 0, top1 = 0, agreement = 0, kl_mean = 0, kl_max = 0, nll_delta = 0;
};
Result<std::vector<CnnLayerLoss>> cnn_layer_losses(const model::Model& m, Precision p, const std::vector<float>& pixels,
                                                   const std::vector<uint8_t>& labels, Progress* progress = nullptr);

}  // namespace edge::quant
