// The Pareto page: every validated configuration as a point — perplexity against decode latency
// or weight size, the weights' size also as the point's size and colour — with the frontier drawn
// as a staircase. Hover names a point; a click opens that configuration (its plan goes to the
// Layers page); picking two rows of the table shows their plans side by side.
#pragma once
#include <QWidget>

#include <vector>

#include "views/models/configuration_model.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QTableView;

namespace edge::views {

class ParetoPage : public QWidget {
    Q_OBJECT
public:
    explicit ParetoPage(ConfigurationModel* configurations, QWidget* parent = nullptr);

    QCustomPlot* plot() const { return plot_; }
    QTableView* table() const { return table_; }
    PlanDiffModel* diffModel() const { return diff_; }
    ConfigurationModel::Cost cost() const { return cost_; }
    void setCost(ConfigurationModel::Cost cost);
    // Points drawn (tests) and the rows on the frontier line.
    int pointCount() const { return int(points_.size()); }
    std::vector<int> frontRows() const { return front_; }
    // Pixel position of a configuration's point (tests drive hover / click with it).
    QPointF pointPosition(int row) const;
    QString hoverText() const;
    // Selects rows in the table (two rows fill the diff).
    void selectRows(const QList<int>& rows);

signals:
    // The user clicked a point or pressed "Open in Layers".
    void configurationActivated(int row);

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
    QLabel* empty_;
    std::vector<QPointF> points_;  // per row, in plot coordinates
    std::vector<int> front_;
};

}  // namespace edge::views
