#include "views/models/board_costs.h"

#include "engine/quant/autoplan.h"

namespace edge::views {

std::map<QString, double> predictTpot(const CostModelMap& models, const LoadedModel& model,
                                      const std::vector<LayerSetting>& settings) {
    std::map<QString, double> out;
    if (settings.size() != model.layers.size()) return out;
    const edge::quant::QuantPlan plan = settingsToPlan(model.layers, settings);
    for (const auto& [board, cm] : models) {
        auto t = edge::quant::predict_tpot_ms(model.model, plan, cm);
        if (t.ok()) out[board] = *t;
    }
    return out;
}

void BoardCostModels::set(const QString& board, const edge::runtime::BoardCostModel& model) {
    models_[board] = model;
    emit changed();
}

const edge::runtime::BoardCostModel* BoardCostModels::find(const QString& board) const {
    auto it = models_.find(board);
    return it == models_.end() ? nullptr : &it->second;
}

QStringList BoardCostModels::boards() const {
    QStringList out;
    for (const auto& [board, cm] : models_) out << board;
    return out;
}

void BoardCostModels::setAll(CostModelMap models) {
    models_ = std::move(models);
    emit changed();
}

}  // namespace edge::views
