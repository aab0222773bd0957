// Layer sensitivity of a CNN, in the same report (and JSON) as the LLM analysis
// (engine/analysis/sensitivity.h): per Conv2d / Linear layer, top-k Hessian eigenvalues of the mean
// cross-entropy on the first `hessian_sequences` images, the spread (std) of gradient norms over
// `batches` sampled batches of `batch_size` images, their fused importance, and the empirical
// INT4 cost: the layer alone at INT4 (per output channel, weight-only) on the first
// `quant_sequences` images: int4_kl (mean KL vs FP32), int4_kl_max, int4_nll_delta and
// int4_top1_delta. seq_len is unused (0).
#pragma once
#include "engine/analysis/sensitivity.h"
#include "engine/calib/image_sets.h"

namespace edge::analysis {

Result<AnalysisReport> analyze_cnn_sensitivity(const model::Model& m, const calib::LabelledImages& data,
                                               const AnalysisOptions& opts, Progress* progress = nullptr);

}  // namespace edge::analysis
