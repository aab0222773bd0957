// Bar chart of parameters (or bytes) per layer of the loaded model, one bar per layer in execution
// order, coloured by family (attention, feed-forward, other). Clicking a bar selects that layer;
// hovering names it.
#pragma once
#include <QWidget>

#include <memory>
#include <vector>

#include "views/models/model_document.h"

class QCPBars;
class QCustomPlot;
class QComboBox;
class QLabel;

namespace edge::views {

class LayerChart : public QWidget {
    Q_OBJECT
public:
    enum Metric { Parameters, Bytes };

    explicit LayerChart(QWidget* parent = nullptr);

    void setModel(std::shared_ptr<const LoadedModel> model);
    void setMetric(Metric metric);
    Metric metric() const { return metric_; }
    // Highlights the bar of `layer` (canonical name); an unknown name clears the highlight.
    void selectLayer(const QString& layer);
    QString selectedLayer() const;
    QCustomPlot* plot() const { return plot_; }
    // Number of bars drawn (tests).
    int barCount() const;
    // The value drawn for `layer` in the current metric (tests); -1 when unknown.
    double barValue(const QString& layer) const;

signals:
    void layerClicked(const QString& layer);

protected:
    using QWidget::metric;  // metric() overloads QWidget::metric(PaintDeviceMetric) instead of hiding it
    void changeEvent(QEvent* event) override;

private:
    enum Family { Attention, FeedForward, Other, FamilyCount };
    void retranslate();
    void rebuild();
    void showHover(QMouseEvent* event);
    int layerAt(QCPBars* bars, int dataIndex) const;

    std::shared_ptr<const LoadedModel> model_;
    Metric metric_ = Parameters;
    int selected_ = -1;
    double scale_ = 1.0;  // bars are drawn in units of scale_ (K, M, KiB, ...)
    QString unit_;
    QLabel* title_;
    QLabel* hover_;
    QComboBox* metricBox_;
    QCustomPlot* plot_;
    QCPBars* bars_[FamilyCount] = {};
    std::vector<int> family_;  // per layer
};

}  // namespace edge::views
