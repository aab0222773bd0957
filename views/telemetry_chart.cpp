#include "views/telemetry_chart.h"

#include <qcustomplot.h>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

#include "views/style.h"

namespace edge::views {

TelemetryChart::TelemetryChart(QWidget* parent)
    : QWidget(parent), title_(new QLabel(this)), absent_(new QLabel(this)), plot_(new QCustomPlot(this)) {
    title_->setObjectName(QStringLiteral("sectionTitle"));
    absent_->setObjectName(QStringLiteral("hint"));
    absent_->setWordWrap(false);
    absent_->hide();
    plot_->setBackground(QBrush(Qt::white));
    plot_->setMinimumHeight(150);
    plot_->setNoAntialiasingOnDrag(true);
    plot_->setPlottingHint(QCP::phCacheLabels, true);
    plot_->setPlottingHint(QCP::phFastPolylines, true);
    for (QCPAxis* a : {plot_->xAxis, plot_->yAxis}) {
        a->setTickLabelFont(monoFont());
        a->setBasePen(QPen(QColor(0xb0, 0xb6, 0xbe)));
        a->setTickPen(QPen(QColor(0xb0, 0xb6, 0xbe)));
        a->setSubTickPen(Qt::NoPen);
    }
    plot_->yAxis->grid()->setPen(QPen(QColor(0xe4, 0xe7, 0xeb)));
    plot_->xAxis->grid()->setPen(QPen(QColor(0xf0, 0xf2, 0xf4)));
    plot_->xAxis->setRange(0, 60);
    plot_->yAxis->setRange(0, 1);
    plot_->legend->setVisible(true);
    plot_->legend->setFont(font());
    plot_->legend->setBrush(QBrush(QColor(255, 255, 255, 220)));
    plot_->legend->setBorderPen(QPen(QColor(0xd8, 0xdc, 0xe0)));
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* head = new QHBoxLayout;
    head->addWidget(title_);
    head->addStretch(1);
    head->addWidget(absent_);
    layout->addLayout(head);
    layout->addWidget(plot_, 1);
}

void TelemetryChart::addSeries(TelemetryColumn column, const QColor& color, bool dots) {
    QCPGraph* g = plot_->addGraph();
    if (dots) {
        g->setLineStyle(QCPGraph::lsNone);
        QColor c = color;
        c.setAlpha(110);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 3.5));
        g->setPen(QPen(c));
    } else {
        g->setPen(QPen(color, 1.8));
    }
    g->setAdaptiveSampling(true);
    series_.append({column, g});
}

void TelemetryChart::setTexts(const QString& title, const QString& unit, const QStringList& seriesNames,
                              const QString& absentNote) {
    title_->setText(title);
    plot_->yAxis->setLabel(unit);
    plot_->xAxis->setLabel(tr("time (s)"));
    names_ = seriesNames;
    absentNote_ = absentNote;
    for (int i = 0; i < series_.size() && i < names_.size(); ++i) series_[i].graph->setName(names_[i]);
}

void TelemetryChart::refresh(const TelemetryStore& store, double t0, double t1) {
    double lo = 0, hi = 0;
    bool any = false;
    QStringList absent;
    for (int i = 0; i < series_.size(); ++i) {
        Series& s = series_[i];
        const bool present = store.has(s.column);
        s.graph->setVisible(present);
        if (present)
            s.graph->addToLegend();
        else
            s.graph->removeFromLegend();
        if (!present) {
            s.graph->data()->clear();
            if (i < names_.size()) absent << names_[i];
            continue;
        }
        decimate(store.rows(), s.column, t0, t1, kBuckets, keys_, values_);
        s.graph->setData(keys_, values_, true);
        for (double v : values_) {
            if (!any) lo = hi = v, any = true;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (absent.isEmpty() || absentNote_.isEmpty()) {
        absent_->hide();
    } else {
        absent_->setText(absentNote_.arg(absent.join(QStringLiteral(", "))));
        absent_->show();
    }
    plot_->xAxis->setRange(t0, t1 > t0 ? t1 : t0 + 1.0);
    if (any) {
        const double bottom = lo >= 0 ? 0.0 : lo * 1.1;
        const double top = hi > bottom ? hi + (hi - bottom) * 0.15 : bottom + 1.0;
        plot_->yAxis->setRange(bottom, top);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void TelemetryChart::setInteractive(bool on) {
    plot_->setInteractions(on ? QCP::iRangeDrag | QCP::iRangeZoom : QCP::Interactions());
}

int TelemetryChart::pointCount(int series) const {
    if (series < 0 || series >= series_.size()) return 0;
    const QCPGraph* g = series_[series].graph;
    return g->visible() ? g->dataCount() : 0;
}

int TelemetryChart::totalPoints() const {
    int n = 0;
    for (int i = 0; i < series_.size(); ++i) n += pointCount(i);
    return n;
}

QString TelemetryChart::absentText() const { return absent_->isHidden() ? QString() : absent_->text(); }

bool TelemetryChart::savePng(const QString& path, int width, int height) { return plot_->savePng(path, width, height); }

bool TelemetryChart::savePdf(const QString& path, int width, int height) {
    return plot_->savePdf(path, width, height, QCP::epNoCosmetic, tr("EdgeStudio"), title_->text());
}

}  // namespace edge::views
