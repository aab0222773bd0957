// The Pareto page: every validated configuration as a point — perplexity against the host's decode
// latency, weight size, or the time per token a board measured (one marker shape per board; only
// configurations profiled on a board) — the weights' size also as the point's size and colour — with the frontier drawn
// as a staircase. Hover names a point; a click opens that configuration (its plan goes to the
// Layers page); picking two rows of the table shows their plans side by side.
#pragma once
#include <QWidget>

#include <functional>
#include <vector>

#include "views/models/configuration_model.h"
#include "views/models/validation_run.h"

class QComboBox;
class QProgressBar;
class QCustomPlot;
class QLabel;
class QPushButton;
class QTableView;

namespace edge::views {

class JobSlot;
class ModelDocument;

class ParetoPage : public QWidget {
    Q_OBJECT
public:
    explicit ParetoPage(ConfigurationModel* configurations, QWidget* parent = nullptr);

    QCustomPlot* plot() const { return plot_; }
    QTableView* table() const { return table_; }
    PlanDiffModel* diffModel() const { return diff_; }
    ConfigurationModel::Cost cost() const { return cost_; }
    void setCost(ConfigurationModel::Cost cost);
    ConfigurationModel::Quality quality() const { return quality_; }
    void setQuality(ConfigurationModel::Quality quality);
    // Points drawn (tests) and the rows on the frontier line.
    int pointCount() const;
    // On the board axis: configurations with a predicted time on the board (its cost model) get a
    // hollow marker there, joined to the measured point when there is one.
    int predictedCount() const;
    QPointF predictedPosition(int row) const;
    std::vector<int> frontRows() const { return front_; }
    // Pixel position of a configuration's point (tests drive hover / click with it).
    QPointF pointPosition(int row) const;
    QString hoverText() const;
    // Selects rows in the table (two rows fill the diff).
    void selectRows(const QList<int>& rows);

    // What Compile needs: the open model, the calibration/evaluation settings (the Validation
    // page's) and the folder engines are written to.
    struct CompileContext {
        ModelDocument* document = nullptr;
        std::function<ValidationSettings()> settings;
        std::function<QString()> engineDir;
    };
    void setCompileContext(CompileContext context);
    JobSlot* compileJob() const { return compileJob_; }
    // Compiles the engine of configuration `row` for `target` ("cpu", "cuda-sm87", "cuda-sm90") as
    // a job; false (and the reason shown) when it cannot start.
    bool compileConfiguration(int row, const QString& target);
    QString compileMessage() const;

signals:
    // The user clicked a point or pressed "Open in Layers".
    void configurationActivated(int row);
    // An engine was compiled for `row` (recorded in the configuration).
    void engineCompiled(int row, const QString& path);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void rebuild();
    int rowAt(const QPointF& pos) const;
    void hover(const QPointF& pos);
    void updateDiff();
    int sourceRow(const QModelIndex& index) const;

    ConfigurationModel* configurations_;
    PlanDiffModel* diff_;
    ConfigurationModel::Cost cost_ = ConfigurationModel::Latency;
    ConfigurationModel::Quality quality_ = ConfigurationModel::Perplexity;
    QLabel* qualityLabel_;
    QComboBox* qualityAxis_;
    QLabel* title_;
    QLabel* subtitle_;
    QLabel* axisLabel_;
    QComboBox* axis_;
    QLabel* hover_;
    QCustomPlot* plot_;
    QTableView* table_;
    QTableView* diffTable_;
    QLabel* diffTitle_;
    QPushButton* open_;
    QComboBox* target_;
    QPushButton* compile_;
    QPushButton* cancelCompile_;
    QProgressBar* compileProgress_;
    QLabel* compileStage_;
    JobSlot* compileJob_;
    CompileContext context_;
    QLabel* empty_;
    std::vector<QPointF> points_;     // per row, in plot coordinates
    std::vector<QPointF> predicted_;  // per row: (predicted ms, perplexity) on the board axis, or NaN
    std::vector<QString> predictedBoard_;
    std::vector<int> front_;
};

}  // namespace edge::views
