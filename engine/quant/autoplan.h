// Automatic mixed precision (docs/analysis.md): per-layer FP16 / INT8 / INT4 under a size budget,
// minimising the predicted loss increase sum(s_layer * ||W - Q_p(W)||^2) by an exact multiple-choice
// knapsack (dynamic programming over bytes). Plain C++ (no LibTorch).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/plan.h"
#include "engine/runtime/cost_model.h"

namespace edge::quant {

enum class Predictor { KL, Hessian };
Result<Predictor> parse_predictor(std::string_view name);  // "kl", "hessian"
const char* predictor_name(Predictor p);

struct AutoplanOptions {
    Predictor predictor = Predictor::KL;
    int64_t group_size = 32;                 // INT8 and INT4: RTN, symmetric, this group size (the INT4 pass's spec)
    int64_t max_columns = int64_t(1) << 19;  // knapsack table width (see docs/analysis.md)
};

struct Candidate {
    Precision precision = Precision::FP16;
    size_t bytes = 0;
    double sq_error = 0.0;  // ||W - Q(W)||_F^2
    double cost = 0.0;      // predicted loss increase
};

struct LayerCandidates {
    std::string layer;
    int64_t params = 0;
    std::vector<Candidate> options;  // FP16, INT8, INT4
};

// What autoplan knows of a layer's sensitivity: the KL divergence the layer alone at INT4 RTN
// causes (engine/quant/sensitivity.h measures it; so does `analyze` without --no-quant) and/or the
// mean absolute Hessian eigenvalue (`analyze`'s LibTorch pass) for the hessian predictor.
struct LayerScore {
    std::string layer;
    std::optional<double> int4_kl;
    double eig_mean_abs = 0.0;
};

// One entry per scored layer (which must name layers of `m` with F32 weights).
Result<std::vector<LayerCandidates>> plan_candidates(const model::Model& m, const std::vector<LayerScore>& scores,
                                                     const AutoplanOptions& opts = {});

struct AutoplanResult {
    QuantPlan plan;                  // one rule per layer (RTN for INT8/INT4)
    std::vector<Precision> choice;   // per candidate layer, in order
    size_t bytes = 0;                // exact bytes of the chosen layers
    double bits_per_weight = 0.0;    // 8 * bytes / params of those layers
    double predicted = 0.0;          // sum of the chosen costs
    size_t unit = 1;                 // knapsack byte unit (docs/analysis.md)
    size_t slack = 0;                // optimal among plans within budget - slack
    double predicted_tpot_ms = 0.0;  // autoplan_for_board: the board's predicted time per token
};

// The minimum-predicted-cost plan whose layers take at most `budget_bytes`. A budget below the
// all-INT4 size is an error giving that size.
Result<AutoplanResult> autoplan(const std::vector<LayerCandidates>& cands, size_t budget_bytes,
                                const AutoplanOptions& opts = {});

// Predicted time per output token of `plan` on the board `cm` describes (engine/runtime/cost_model.h):
// the rest of a decode step plus each layer's product at the precision the plan gives it (FP32
// where it leaves a layer). An error names a layer whose shape or precision the model lacks.
Result<double> predict_tpot_ms(const model::Model& m, const QuantPlan& plan, const runtime::BoardCostModel& cm);

// The least predicted time per token on the board any plan of `cands` can have: the rest of a
// step plus each layer at its fastest precision there (not always INT4: tiny products are
// dominated by their overheads).
Result<double> fastest_tpot_ms(const std::vector<LayerCandidates>& cands, const model::Model& m,
                               const runtime::BoardCostModel& cm);

// The minimum-predicted-loss plan whose predicted time per token on the board is at most
// `budget_ms` (the same knapsack, over the layers' measured product times instead of bytes).
// A budget below the fastest plan's predicted time is an error giving that time.
Result<AutoplanResult> autoplan_for_board(const std::vector<LayerCandidates>& cands, const model::Model& m,
                                          const runtime::BoardCostModel& cm, double budget_ms,
                                          const AutoplanOptions& opts = {});

// A plan with every candidate layer at precision p (for comparisons), with its bytes and cost.
AutoplanResult uniform_autoplan(const std::vector<LayerCandidates>& cands, Precision p,
                                const AutoplanOptions& opts = {});

// "4.5bpw" (average bits per weight of the candidate layers), "300000" (bytes), "300KB",
// "1.5MiB" (KB/MB = 1000, KiB/MiB = 1024).
Result<size_t> parse_budget(std::string_view text, int64_t params);

// Spearman rank correlation (ties get their average rank); 0 when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace edge::quant
