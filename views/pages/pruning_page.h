// The Pruning page: structured pruning of the open model (engine/prune/structured.h) -
// one row per group (an LLM block's KV heads or MLP channels, a CNN conv's output channels) with
// its ratio editable in place, a mask view showing which heads / channels are kept, and the
// parameter and node counts before and after. Every change re-plans as a job (magnitude
// importance); a ratio the engine refuses (it would remove a whole group) is shown and undone.
#pragma once
#include <QMap>
#include <QString>
#include <QWidget>

class QCheckBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableView;

namespace edge::views {

class JobSlot;
class ModelDocument;
class PruningMaskView;
class PruningModel;

class PruningPage : public QWidget {
    Q_OBJECT
public:
    explicit PruningPage(ModelDocument* document, QWidget* parent = nullptr);

    PruningModel* model() const { return model_; }
    PruningMaskView* maskView() const { return maskView_; }
    JobSlot* job() const { return job_; }
    QTableView* table() const { return table_; }
    QLabel* countsLabel() const { return counts_; }
    QLabel* detailLabel() const { return detail_; }
    QLabel* messageLabel() const { return message_; }
    // The ratio for every group of the ticked kinds, in percent.
    void setGlobalPercent(int percent);
    void selectRow(int row);
    QPushButton* usePlanButton() const { return usePlan_; }

signals:
    // "Use in the plan": the ratio each LLM group's mask removes, by group ("blk.3.ffn" -> 0.25),
    // every group listed (0 where nothing is removed), for the Layers plan to take.
    void ratiosChosen(const QMap<QString, double>& ratios);

public slots:
    void replan();
    // Emits ratiosChosen for the masks shown (nothing while no plan is shown).
    void useInPlan();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void updateCounts();
    void updateDetail();

    ModelDocument* document_;
    PruningModel* model_;
    JobSlot* job_;
    QLabel* title_;
    QLabel* subtitle_;
    QLabel* ratioLabel_;
    QSpinBox* ratio_;
    QCheckBox* heads_;
    QCheckBox* mlp_;
    QPushButton* reset_;
    QPushButton* usePlan_;
    QLabel* counts_;
    QLabel* message_;
    QTableView* table_;
    PruningMaskView* maskView_;
    QLabel* legend_;
    QLabel* detail_;
    QString lastRule_;  // the group whose edit started the running plan (undone when refused)
};

}  // namespace edge::views
