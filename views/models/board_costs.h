// The boards' decode cost models of a project (QtCore only): board name -> the model its agent
// measured on deploy (engine/runtime/cost_model.h), saved with the project, and what they predict
// for a plan - the time per output token a configuration should take on each board
// (engine/quant/autoplan.h predict_tpot_ms), shown against what the board then measures.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>

#include <map>
#include <vector>

#include "engine/runtime/cost_model.h"
#include "views/models/layer_plan.h"
#include "views/models/model_document.h"

namespace edge::views {

using CostModelMap = std::map<QString, edge::runtime::BoardCostModel>;

// Predicted time per output token (ms) of `settings` on every board of `models` whose cost model
// prices the open model's layers; boards that cannot price it are left out.
std::map<QString, double> predictTpot(const CostModelMap& models, const LoadedModel& model,
                                      const std::vector<LayerSetting>& settings);

class BoardCostModels : public QObject {
    Q_OBJECT
public:
    explicit BoardCostModels(QObject* parent = nullptr) : QObject(parent) {}

    void set(const QString& board, const edge::runtime::BoardCostModel& model);
    const edge::runtime::BoardCostModel* find(const QString& board) const;
    QStringList boards() const;
    const CostModelMap& all() const { return models_; }
    void setAll(CostModelMap models);

signals:
    void changed();

private:
    CostModelMap models_;
};

}  // namespace edge::views
