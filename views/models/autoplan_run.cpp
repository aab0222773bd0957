#include "views/models/autoplan_run.h"

#include <QCoreApplication>

#include "engine/quant/autoplan.h"

namespace edge::views {

namespace {
class AutoplanText {
    Q_DECLARE_TR_FUNCTIONS(Autoplan)
};
edge::Error error(const QString& text) { return edge::Error{text.toStdString()}; }
}  // namespace

edge::Result<AutoplanOutcome> autoplanForBoard(const std::shared_ptr<const LoadedModel>& model,
                                               const std::vector<edge::quant::LayerSensitivity>& sensitivity,
                                               const edge::runtime::BoardCostModel& board, double budgetMs,
                                               edge::Progress* progress) {
    if (!model) return error(AutoplanText::tr("Autoplan: no model is open"));
    if (sensitivity.empty())
        return error(AutoplanText::tr("Autoplan needs each layer's sensitivity: run the Sensitivity page first"));
    std::vector<edge::quant::LayerScore> scores;
    scores.reserve(sensitivity.size());
    for (const auto& s : sensitivity) scores.push_back({s.layer, s.kl_mean, 0.0});
    edge::report(progress, 0.0, AutoplanText::tr("Each layer's error at FP16, INT8 and INT4").toStdString());
    auto cands = edge::quant::plan_candidates(model->model, scores);
    if (!cands.ok()) return cands.error();
    if (edge::is_cancelled(progress)) return error(AutoplanText::tr("Autoplan cancelled"));
    // The least budget: each layer at its fastest precision on the board.
    auto fastest = edge::quant::fastest_tpot_ms(*cands, model->model, board);
    if (!fastest.ok()) return fastest.error();
    edge::report(progress, 0.8, AutoplanText::tr("Choosing precisions within the budget").toStdString());
    auto plan = edge::quant::autoplan_for_board(*cands, model->model, board, budgetMs);
    if (!plan.ok()) return plan.error();
    AutoplanOutcome out;
    out.predictedTpotMs = plan->predicted_tpot_ms;
    out.fastestMs = *fastest;
    out.bitsPerWeight = plan->bits_per_weight;
    out.settings.assign(model->layers.size(), LayerSetting{});
    for (size_t i = 0; i < cands->size(); ++i) {
        const auto it = std::find_if(model->layers.begin(), model->layers.end(),
                                     [&](const auto& l) { return l.name == (*cands)[i].layer; });
        if (it == model->layers.end()) continue;
        LayerSetting& s = out.settings[size_t(it - model->layers.begin())];
        s.precision = plan->choice[i];
        // What autoplan priced: RTN, symmetric, groups of 32 for the integer precisions.
        s.method = s.quantized() ? PlanMethod::RTN : s.method;
        s.group = 32;
        s.symmetric = true;
        ++(s.precision == edge::quant::Precision::INT4   ? out.int4
           : s.precision == edge::quant::Precision::INT8 ? out.int8
                                                         : out.fp16);
    }
    edge::report(progress, 1.0, AutoplanText::tr("Done").toStdString());
    return out;
}

}  // namespace edge::views
