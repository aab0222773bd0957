// The Sensitivity page: per-layer bar chart of one metric (the empirical INT4 KL and ΔNLL of
// quantizing each layer alone, computed on evaluation text as a job; metrics loaded from analysis
// JSON), a layer × metric heatmap of every metric normalised to its maximum, and the Hessian
// eigenvalue spectrum of the selected layer when an analysis file provides one. Clicking a bar
// or a heatmap cell selects that layer (layerClicked).
#pragma once
#include <QWidget>

#include "views/models/sensitivity_model.h"

class QComboBox;
class QCPBars;
class QCPColorMap;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace edge::views {

class JobSlot;
class ModelDocument;

class SensitivityPage : public QWidget {
    Q_OBJECT
public:
    explicit SensitivityPage(ModelDocument* document, QWidget* parent = nullptr);

    SensitivityModel* model() const { return model_; }
    JobSlot* job() const { return job_; }
    QCustomPlot* barPlot() const { return bars_; }
    QCustomPlot* heatmapPlot() const { return heat_; }
    QCustomPlot* spectrumPlot() const { return spectrum_; }
    // Every layer and metric, sorted by the chosen metric (most sensitive first).
    QTableView* rankTable() const { return rankTable_; }
    int metric() const { return metric_; }
    void setMetric(int metric);
    QString selectedLayer() const { return selected_; }
    void selectLayer(const QString& layer);
    void setTextPath(const QString& path);
    // Bars drawn (tests) and the value of a layer's bar; NaN when none.
    int barCount() const;
    double barValue(const QString& layer) const;
    // Loads an analysis JSON file; false (message shown) on error.
    bool loadAnalysisFile(const QString& path);

public slots:
    void run();
    void cancel();

signals:
    void layerClicked(const QString& layer);

protected:
    using QWidget::metric;  // metric() overloads QWidget::metric(PaintDeviceMetric) instead of hiding it
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void rebuild();
    void rebuildSpectrum();
    void refillMetrics();
    void showHover(QMouseEvent* event);

    ModelDocument* document_;
    SensitivityModel* model_;
    JobSlot* job_;
    int metric_ = 0;
    QString selected_;
    QLabel* title_;
    QLabel* subtitle_;
    QLabel* textLabel_;
    QLineEdit* text_;
    QPushButton* run_;
    QPushButton* cancel_;
    QPushButton* load_;
    QProgressBar* progress_;
    QLabel* stage_;
    QLabel* message_;
    QLabel* metricLabel_;
    QComboBox* metricBox_;
    QLabel* hover_;
    QCustomPlot* bars_;
    QCPBars* barData_;
    QLabel* heatTitle_;
    QCustomPlot* heat_;
    QCPColorMap* map_;
    QLabel* spectrumTitle_;
    QCustomPlot* spectrum_;
    QSortFilterProxyModel* rankProxy_;
    QTableView* rankTable_;
};

}  // namespace edge::views
