// The studio's autoplan against a board (QtCore only): the per-layer FP16 / INT8 / INT4 plan of
// least predicted quality loss whose predicted time per output token on the board stays within a
// budget (engine/quant/autoplan.h autoplan_for_board). Quality loss per layer comes from the
// Sensitivity page's measurements (each layer's KL at INT4 RTN g32, scaled to the other precisions
// by their weight error); time from the board's cost model, measured by its agent on deploy
// (views/models/board_costs.h). Runs on a JobSlot worker.
#pragma once
#include <QString>

#include <memory>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/quant/sensitivity.h"
#include "engine/runtime/cost_model.h"
#include "views/models/layer_plan.h"
#include "views/models/model_document.h"

namespace edge::views {

struct AutoplanOutcome {
    std::vector<LayerSetting> settings;  // one per layer of the model, in order
    double predictedTpotMs = 0;          // on the board
    double fastestMs = 0;                // the fastest plan's predicted time (the least budget)
    double bitsPerWeight = 0;            // of the planned layers
    int int4 = 0, int8 = 0, fp16 = 0;    // layers at each precision
};

// Errors: no sensitivity (run the Sensitivity page first; it must be INT4's), a layer the cost
// model cannot price, a budget below the fastest plan (giving its time).
edge::Result<AutoplanOutcome> autoplanForBoard(const std::shared_ptr<const LoadedModel>& model,
                                               const std::vector<edge::quant::LayerSensitivity>& sensitivity,
                                               const edge::runtime::BoardCostModel& board, double budgetMs,
                                               edge::Progress* progress = nullptr);

}  // namespace edge::views
