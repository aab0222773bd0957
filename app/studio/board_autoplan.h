// "Autoplan for a board…" (the Layers page's button): asks for a board with a measured cost model
// and a time budget per token, runs views/models/autoplan_run.h on a job, and puts the plan into
// the Layers page as one undoable step (the plan's pruning kept). Validating it makes a
// configuration whose predicted time on the board (board_costs.h) the board's measurement then
// checks on the Pareto page.
#pragma once
#include <QObject>
#include <QString>

namespace edge::views {
class BoardCostModels;
class JobSlot;
class LayerPlanModel;
class ModelDocument;
class SensitivityModel;
struct AutoplanOutcome;
}  // namespace edge::views

class QWidget;

namespace edge::studio {

class BoardAutoplan : public QObject {
    Q_OBJECT
public:
    BoardAutoplan(views::ModelDocument* document, views::LayerPlanModel* plan, views::SensitivityModel* sensitivity,
                  views::BoardCostModels* costModels, QObject* parent = nullptr);

    views::JobSlot* job() const { return job_; }
    // Starts autoplan against `board` within `budgetMs` per token; false (and finished(false, why))
    // when it cannot start.
    bool start(const QString& board, double budgetMs);
    // The dialog: board and budget, then start().
    void ask(QWidget* parent);

signals:
    // `message`: what was planned ("predicted 0.84 ms per token on orin: 12 INT4, 3 INT8, 1 FP16
    // layers, 4.9 bits per weight") or why not.
    void finished(bool ok, const QString& message);

private:
    views::ModelDocument* document_;
    views::LayerPlanModel* plan_;
    views::SensitivityModel* sensitivity_;
    views::BoardCostModels* costModels_;
    views::JobSlot* job_;
};

}  // namespace edge::studio
