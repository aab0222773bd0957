// Layer sensitivity (docs/analysis.md): Hessian spectrum and gradient-norm spread from LibTorch
// autograd (torch_llama.h), their fused importance, and the empirical INT4 cost of each layer from
// engine/quant. Plain C++; the JSON written here is what the studio's Sensitivity page reads.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/autoplan.h"

namespace edge::analysis {

struct AnalysisOptions {
    int topk = 5;
    double alpha = 0.6;  // weight of the Hessian term in the fused importance
    int batches = 8;     // T gradient batches
    int batch_size = 4;
    int seq_len = 64;
    int hessian_sequences = 8;
    int lanczos_steps = 30;
    bool quant = true;         // the empirical INT4 pass (engine/quant layer_sensitivity)
    int quant_sequences = 16;  // first N calibration sequences for it
    uint64_t seed = 1;
    int threads = 0;
};

struct LayerAnalysis {
    std::string layer, kind;
    int block = -1;
    std::vector<int64_t> shape;
    int64_t params = 0;
    std::vector<double> eigenvalues;  // decreasing |lambda|
    double eig_mean_abs = 0.0;
    double grad_norm_mean = 0.0, grad_norm_std = 0.0;
    double hessian_term = 0.0, gradient_term = 0.0, importance = 0.0;  // in [0, 1]
    int rank = 0;                                                      // 1 = most important
    std::optional<double> int4_kl, int4_kl_max, int4_nll_delta;
    std::optional<int64_t> int4_bytes;
    std::optional<double> int4_top1_delta;  // CNNs: top-1 change with the layer alone at INT4
};

struct AnalysisReport {
    std::string model, calib;  // names for the JSON
    AnalysisOptions options;
    std::string quant_spec = "int4 sym g32";
    double seconds = 0.0;
    std::vector<LayerAnalysis> layers;
};

// What autoplan reads of a report: each layer's INT4 KL and mean absolute eigenvalue.
std::vector<quant::LayerScore> autoplan_scores(const AnalysisReport& report);

// Runs the LibTorch pass (every layer) then, unless opts.quant is off, the empirical INT4 pass.
// `seqs` are calibration token sequences (each starting with BOS). Progress covers both passes;
// cancellation returns an error.
Result<AnalysisReport> analyze_sensitivity(const model::Model& m, const std::vector<std::vector<int32_t>>& seqs,
                                           const AnalysisOptions& opts = {}, Progress* progress = nullptr);

// Fills eig_mean_abs (from eigenvalues), the normalised terms (each divided by its maximum over the
// layers; all zero when that maximum is 0), importance and rank, from eigenvalues and grad_norm_std
// (exposed for tests and for re-fusing a saved report with another alpha).
void fuse_importance(std::vector<LayerAnalysis>& layers, double alpha);

std::string analysis_to_json(const AnalysisReport& r);
Result<AnalysisReport> analysis_from_json(std::string_view json, const std::string& source = "<json>");

}  // namespace edge::analysis
