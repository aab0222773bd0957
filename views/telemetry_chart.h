// One live chart of the Boards page: a title, a QCustomPlot with one line per telemetry column,
// drawn from the TelemetryStore's ring over a time window through min/max decimation. A column
// the agent never reported is named under the plot ("not reported by this agent") instead of
// being drawn as an empty line.
#pragma once
#include <QColor>
#include <QString>
#include <QVector>
#include <QWidget>

#include "views/models/telemetry_store.h"

class QCustomPlot;
class QCPGraph;
class QLabel;

namespace edge::views {

class TelemetryChart : public QWidget {
    Q_OBJECT
public:
    static constexpr int kBuckets = 300;  // at most ~600 points per line, whatever the window

    explicit TelemetryChart(QWidget* parent = nullptr);

    // A line for `column`; `dots`: scatter points instead of a line (raw per-token latency).
    void addSeries(TelemetryColumn column, const QColor& color, bool dots = false);
    void setTexts(const QString& title, const QString& unit, const QStringList& seriesNames, const QString& absentNote);
    // Redraws [t0, t1] of the store (t1 - t0 = the window); the y range fits the visible data.
    void refresh(const TelemetryStore& store, double t0, double t1);
    // Lets the user drag and zoom the time axis (while the page is paused).
    void setInteractive(bool on);

    QCustomPlot* plot() const { return plot_; }
    int seriesCount() const { return int(series_.size()); }
    int pointCount(int series) const;
    // Every point drawn, over all series.
    int totalPoints() const;
    QString absentText() const;
    bool savePng(const QString& path, int width, int height);
    bool savePdf(const QString& path, int width, int height);

private:
    struct Series {
        TelemetryColumn column;
        QCPGraph* graph;
    };
    QLabel* title_;
    QLabel* absent_;
    QCustomPlot* plot_;
    QVector<Series> series_;
    QStringList names_;
    QString absentNote_;
    QVector<double> keys_, values_;
};

}  // namespace edge::views
