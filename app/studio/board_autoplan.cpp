#include "app/studio/board_autoplan.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QMessageBox>

#include "views/models/autoplan_run.h"
#include "views/models/board_costs.h"
#include "views/models/job.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/sensitivity_model.h"

namespace edge::studio {

BoardAutoplan::BoardAutoplan(views::ModelDocument* document, views::LayerPlanModel* plan,
                             views::SensitivityModel* sensitivity, views::BoardCostModels* costModels, QObject* parent)
    : QObject(parent),
      document_(document),
      plan_(plan),
      sensitivity_(sensitivity),
      costModels_(costModels),
      job_(new views::JobSlot(this)) {}

bool BoardAutoplan::start(const QString& board, double budgetMs) {
    const edge::runtime::BoardCostModel* cm = costModels_->find(board);
    auto model = document_->current();
    QString why;
    if (!model)
        why = tr("Open a model first.");
    else if (!cm)
        why = tr("%1 has no cost model yet: deploy to it with \"Measure cost model\" ticked on the Boards page.")
                  .arg(board);
    else if (sensitivity_->empirical().empty())
        why = tr("Autoplan needs each layer's sensitivity: run the Sensitivity page first.");
    if (!why.isEmpty()) {
        emit finished(false, why);
        return false;
    }
    const auto sensitivity = sensitivity_->empirical();
    const edge::runtime::BoardCostModel costs = *cm;
    job_->start<views::AutoplanOutcome>(
        [model, sensitivity, costs, budgetMs](edge::Progress* p) {
            return views::autoplanForBoard(model, sensitivity, costs, budgetMs, p);
        },
        [this, board](edge::Result<views::AutoplanOutcome> r) {
            if (!r.ok()) {
                emit finished(false, QString::fromStdString(r.message()));
                return;
            }
            std::vector<views::LayerSetting> settings = r->settings;
            const auto& current = plan_->settings();
            for (size_t i = 0; i < settings.size() && i < current.size(); ++i) settings[i].pruning = current[i].pruning;
            const QString what =
                tr("predicted %1 ms per token on %2: %3 INT4, %4 INT8, %5 FP16 layers, %6 bits per weight")
                    .arg(r->predictedTpotMs, 0, 'f', 3)
                    .arg(board)
                    .arg(r->int4)
                    .arg(r->int8)
                    .arg(r->fp16)
                    .arg(r->bitsPerWeight, 0, 'f', 2);
            if (!plan_->setSettings(settings, tr("Autoplan for %1").arg(board))) {
                emit finished(false, plan_->lastError());
                return;
            }
            emit finished(true, what);
        });
    return true;
}

void BoardAutoplan::ask(QWidget* parent) {
    if (costModels_->boards().isEmpty()) {
        QMessageBox::information(parent, tr("Autoplan for a board"),
                                 tr("No board has a cost model yet. On the Boards page, tick \"Measure cost model\" "
                                    "and deploy: the agent times the board on the engine it receives."));
        return;
    }
    QDialog dialog(parent);
    dialog.setObjectName(QStringLiteral("autoplanDialog"));
    dialog.setWindowTitle(tr("Autoplan for a board"));
    auto* form = new QFormLayout(&dialog);
    auto* board = new QComboBox(&dialog);
    board->addItems(costModels_->boards());
    auto* budget = new QDoubleSpinBox(&dialog);
    budget->setDecimals(3);
    budget->setRange(0.001, 1e6);
    budget->setSuffix(tr(" ms"));
    auto* note = new QLabel(&dialog);
    note->setWordWrap(true);
    auto describe = [this, board, budget, note] {
        const edge::runtime::BoardCostModel* cm = costModels_->find(board->currentText());
        if (!cm) return;
        budget->setValue(cm->engine_tpot_ms);
        note->setText(tr("%1 ran its engine (%2) at %3 ms per token; %4 of it outside the layers' products.")
                          .arg(QString::fromStdString(cm->cpu), QString::fromStdString(cm->engine))
                          .arg(cm->engine_tpot_ms, 0, 'f', 3)
                          .arg(cm->rest_ms, 0, 'f', 3));
    };
    QObject::connect(board, &QComboBox::currentIndexChanged, &dialog, describe);
    describe();
    form->addRow(tr("Board"), board);
    form->addRow(tr("Time per token at most"), budget);
    form->addRow(note);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() == QDialog::Accepted) start(board->currentText(), budget->value());
}

}  // namespace edge::studio
