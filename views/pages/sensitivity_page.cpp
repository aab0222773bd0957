#include "views/pages/sensitivity_page.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

#include "views/models/job.h"
#include "views/models/model_document.h"
#include "views/models/validation_run.h"
#include "views/style.h"

namespace edge::views {
namespace {
void styleAxes(QCustomPlot* p) {
    p->setBackground(QBrush(Qt::white));
    p->xAxis->setTickLabelFont(monoFont());
    p->yAxis->setTickLabelFont(monoFont());
    p->yAxis->grid()->setPen(QPen(QColor(0xe4, 0xe7, 0xeb)));
    p->xAxis->grid()->setVisible(false);
}
}  // namespace

SensitivityPage::SensitivityPage(ModelDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      model_(new SensitivityModel(this)),
      job_(new JobSlot(this)),
      title_(new QLabel(this)),
      subtitle_(new QLabel(this)),
      textLabel_(new QLabel(this)),
      text_(new QLineEdit(this)),
      run_(new QPushButton(this)),
      cancel_(new QPushButton(this)),
      load_(new QPushButton(this)),
      progress_(new QProgressBar(this)),
      stage_(new QLabel(this)),
      message_(new QLabel(this)),
      metricLabel_(new QLabel(this)),
      metricBox_(new QComboBox(this)),
      hover_(new QLabel(this)),
      bars_(new QCustomPlot(this)),
      heatTitle_(new QLabel(this)),
      heat_(new QCustomPlot(this)),
      spectrumTitle_(new QLabel(this)),
      spectrum_(new QCustomPlot(this)),
      rankProxy_(new QSortFilterProxyModel(this)),
      rankTable_(new QTableView(this)) {
    rankProxy_->setSourceModel(model_);
    rankProxy_->setSortRole(SensitivityModel::ValueRole);
    rankTable_->setModel(rankProxy_);
    rankTable_->setSortingEnabled(true);
    rankTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    rankTable_->setSelectionMode(QAbstractItemView::SingleSelection);
    rankTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    rankTable_->setAlternatingRowColors(true);
    rankTable_->setShowGrid(false);
    rankTable_->verticalHeader()->hide();
    rankTable_->verticalHeader()->setDefaultSectionSize(rankTable_->fontMetrics().height() + 8);
    rankTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    rankTable_->horizontalHeader()->setHighlightSections(false);
    connect(rankTable_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        const QString layer = i.data(SensitivityModel::LayerNameRole).toString();
        selectLayer(layer);
        emit layerClicked(layer);
    });
    connect(rankTable_, &QTableView::clicked, this,
            [this](const QModelIndex& i) { selectLayer(i.data(SensitivityModel::LayerNameRole).toString()); });
    title_->setFont(titleFont());
    subtitle_->setObjectName(QStringLiteral("hint"));
    subtitle_->setWordWrap(true);
    text_->setText(defaultEvaluationText());
    text_->setMinimumWidth(360);
    run_->setObjectName(QStringLiteral("primary"));
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(200);
    progress_->setVisible(false);
    stage_->setObjectName(QStringLiteral("hint"));
    message_->setWordWrap(true);
    message_->setStyleSheet(QStringLiteral("color: #c01c28;"));
    hover_->setObjectName(QStringLiteral("hint"));
    hover_->setFont(monoFont());
    metricBox_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    heatTitle_->setObjectName(QStringLiteral("sectionTitle"));
    spectrumTitle_->setObjectName(QStringLiteral("sectionTitle"));

    styleAxes(bars_);
    bars_->setMouseTracking(true);
    bars_->setInteractions(QCP::iSelectPlottables);
    barData_ = new QCPBars(bars_->xAxis, bars_->yAxis);
    barData_->setWidth(0.8);
    barData_->setPen(Qt::NoPen);
    barData_->setBrush(accentColor());
    barData_->setSelectable(QCP::stSingleData);
    barData_->selectionDecorator()->setBrush(QColor(0x11, 0x18, 0x27));
    connect(bars_, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable*, int dataIndex, QMouseEvent*) {
        if (dataIndex < 0 || dataIndex >= barData_->data()->size()) return;
        const int row = int(std::lround(barData_->data()->at(dataIndex)->key));
        if (row < 0 || row >= model_->layerCount()) return;
        selectLayer(model_->layer(row));
        emit layerClicked(model_->layer(row));
    });
    connect(bars_, &QCustomPlot::mouseMove, this, &SensitivityPage::showHover);

    styleAxes(heat_);
    heat_->axisRect()->setupFullAxesBox(false);
    heat_->xAxis2->setVisible(false);
    heat_->yAxis2->setVisible(false);
    map_ = new QCPColorMap(heat_->xAxis, heat_->yAxis);
    // Light (insensitive) to red (most sensitive); no white end that would vanish on the background.
    QCPColorGradient gradient;
    gradient.setColorStops({{0.0, QColor(0xea, 0xf1, 0xfb)},
                            {0.35, QColor(0x8f, 0xb8, 0xe8)},
                            {0.7, QColor(0xd9, 0x82, 0x2b)},
                            {1.0, QColor(0xb3, 0x26, 0x1e)}});
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    map_->setGradient(gradient);
    map_->setInterpolate(false);
    map_->setDataRange(QCPRange(0, 1));
    connect(heat_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        const int row = int(std::lround(heat_->xAxis->pixelToCoord(e->position().x())));
        if (row < 0 || row >= model_->layerCount() || model_->metricCount() == 0) return;
        selectLayer(model_->layer(row));
        emit layerClicked(model_->layer(row));
    });

    styleAxes(spectrum_);
    spectrum_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    spectrum_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    spectrum_->yAxis->setNumberFormat(QStringLiteral("eb"));

    auto* tools = new QHBoxLayout;
    tools->addWidget(textLabel_);
    tools->addWidget(text_, 1);
    tools->addWidget(run_);
    tools->addWidget(cancel_);
    tools->addWidget(progress_);
    tools->addWidget(stage_);
    tools->addSpacing(12);
    tools->addWidget(load_);
    auto* chartHeader = new QHBoxLayout;
    chartHeader->addWidget(metricLabel_);
    chartHeader->addWidget(metricBox_);
    chartHeader->addSpacing(12);
    chartHeader->addWidget(hover_, 1);
    auto* lower = new QGridLayout;
    auto* spectrumBox = new QVBoxLayout;
    spectrumBox->addWidget(spectrumTitle_);
    spectrumBox->addWidget(spectrum_, 1);
    spectrumBox->addWidget(rankTable_, 1);
    lower->addWidget(heatTitle_, 0, 0);
    lower->addWidget(heat_, 1, 0);
    lower->addLayout(spectrumBox, 0, 1, 2, 1);
    lower->setColumnStretch(0, 3);
    lower->setColumnStretch(1, 2);
    lower->setRowStretch(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(20, 16, 20, 12);
    layout->setSpacing(8);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addLayout(tools);
    layout->addWidget(message_);
    layout->addLayout(chartHeader);
    layout->addWidget(bars_, 3);
    layout->addLayout(lower, 2);

    connect(run_, &QPushButton::clicked, this, &SensitivityPage::run);
    connect(cancel_, &QPushButton::clicked, this, &SensitivityPage::cancel);
    connect(load_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Load analysis"), QString(),
                                                          tr("Analysis JSON (*.json);;All files (*)"));
        if (!path.isEmpty()) loadAnalysisFile(path);
    });
    connect(metricBox_, &QComboBox::activated, this, [this](int i) { setMetric(i); });
    connect(job_, &JobSlot::progress, this, [this](double f, const QString& stage) {
        progress_->setValue(int(f * 1000));
        stage_->setText(stage);
    });
    connect(job_, &JobSlot::runningChanged, this, [this](bool running) {
        run_->setEnabled(!running);
        cancel_->setEnabled(running);
        progress_->setVisible(running);
        if (!running && stage_->text().isEmpty()) stage_->clear();
    });
    connect(job_, &JobSlot::cancelled, this, [this] { stage_->setText(tr("Cancelled")); });
    connect(model_, &SensitivityModel::metricsChanged, this, [this] {
        refillMetrics();
        rebuild();
    });
    connect(document_, &ModelDocument::modelChanged, this, [this] {
        job_->cancel();
        message_->clear();
        selected_.clear();
        model_->setModel(document_->current());
    });
    cancel_->setEnabled(false);
    model_->setModel(document_->current());
    retranslate();
}

void SensitivityPage::setTextPath(const QString& path) {
    text_->setText(path);
    rememberEvaluationText(path);
}

void SensitivityPage::run() {
    message_->clear();
    auto model = document_->current();
    if (!model) {
        message_->setText(tr("Open a model first."));
        return;
    }
    SensitivitySettings s;
    s.textPath = text_->text();
    stage_->setText(tr("Quantizing each layer alone…"));
    job_->start<std::vector<edge::quant::LayerSensitivity>>(
        [model, s](edge::Progress* p) { return runSensitivity(model, s, p); },
        [this](edge::Result<std::vector<edge::quant::LayerSensitivity>> r) {
            if (!r.ok()) {
                stage_->clear();
                message_->setText(userErrorText(tr("Sensitivity analysis failed"), r.error()));
                return;
            }
            stage_->setText(tr("Done"));
            model_->setEmpirical(*r);
        });
}

void SensitivityPage::cancel() { job_->cancel(); }

bool SensitivityPage::loadAnalysisFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        message_->setText(tr("Cannot read %1").arg(path));
        return false;
    }
    if (const auto r = model_->loadAnalysisJson(f.readAll(), QFileInfo(path).fileName()); !r) {
        message_->setText(r.message());
        return false;
    }
    message_->clear();
    return true;
}

void SensitivityPage::refillMetrics() {
    metricBox_->clear();
    for (int m = 0; m < model_->metricCount(); ++m) metricBox_->addItem(model_->metricLabel(m));
    if (metric_ >= model_->metricCount()) metric_ = 0;
    metricBox_->setCurrentIndex(model_->metricCount() > 0 ? metric_ : -1);
    metricBox_->setEnabled(model_->metricCount() > 0);
}

void SensitivityPage::setMetric(int metric) {
    if (metric < 0 || metric >= model_->metricCount()) return;
    metric_ = metric;
    metricBox_->setCurrentIndex(metric);
    rebuild();
}

int SensitivityPage::barCount() const { return barData_->data()->size(); }

double SensitivityPage::barValue(const QString& layer) const {
    const int row = model_->rowOfLayer(layer);
    for (auto it = barData_->data()->constBegin(); it != barData_->data()->constEnd(); ++it)
        if (int(std::lround(it->key)) == row) return it->value;
    return std::nan("");
}

void SensitivityPage::selectLayer(const QString& layer) {
    selected_ = model_->rowOfLayer(layer) >= 0 ? layer : QString();
    barData_->setSelection(QCPDataSelection());
    const int row = model_->rowOfLayer(selected_);
    for (int i = 0; i < barData_->data()->size(); ++i)
        if (int(std::lround(barData_->data()->at(i)->key)) == row)
            barData_->setSelection(QCPDataSelection(QCPDataRange(i, i + 1)));
    bars_->replot();
    if (row >= 0) {
        const QModelIndex i = rankProxy_->mapFromSource(model_->index(row, 0));
        if (rankTable_->currentIndex().row() != i.row()) rankTable_->setCurrentIndex(i);
    }
    rebuildSpectrum();
}

void SensitivityPage::rebuild() {
    const int n = model_->layerCount();
    const int metrics = model_->metricCount();
    QVector<double> keys, values;
    double maxValue = 0, minValue = 0;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    int lastBlock = -2;
    for (int r = 0; r < n && metrics > 0; ++r) {
        const double v = model_->value(r, metric_);
        const QString name = model_->layer(r);
        const int block = name.startsWith(QLatin1String("blk.")) ? name.section(QLatin1Char('.'), 1, 1).toInt() : -1;
        if (block != lastBlock) ticker->addTick(r, block >= 0 ? tr("blk %1").arg(block) : name);
        lastBlock = block;
        if (!std::isfinite(v)) continue;
        keys << r;
        values << v;
        maxValue = std::max(maxValue, v);
        minValue = std::min(minValue, v);
    }
    barData_->setData(keys, values, true);
    bars_->xAxis->setTicker(ticker);
    bars_->xAxis->setRange(-1, std::max(n, 1));
    bars_->yAxis->setRange(minValue * 1.1, maxValue > 0 ? maxValue * 1.1 : 1);
    bars_->yAxis->setLabel(metrics > 0 ? model_->metricLabel(metric_) : QString());
    bars_->xAxis->setLabel(tr("Layer (execution order)"));

    map_->data()->setSize(std::max(n, 1), std::max(metrics, 1));
    map_->data()->setRange(QCPRange(0, std::max(n - 1, 1)), QCPRange(0, std::max(metrics - 1, 1)));
    for (int r = 0; r < n; ++r)
        for (int m = 0; m < metrics; ++m) map_->data()->setCell(r, m, model_->normalized(r, m));
    auto yTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int m = 0; m < metrics; ++m) yTicks->addTick(m, model_->metricLabel(m));
    heat_->yAxis->setTicker(yTicks);
    heat_->xAxis->setTicker(ticker);
    heat_->xAxis->setRange(-0.5, std::max(n, 1) - 0.5);
    heat_->yAxis->setRange(-0.5, std::max(metrics, 1) - 0.5);
    map_->setVisible(metrics > 0);
    bars_->replot();
    heat_->replot();
    if (metrics > 0) rankTable_->sortByColumn(1 + metric_, Qt::DescendingOrder);
    if (!selected_.isEmpty()) selectLayer(selected_);
    rebuildSpectrum();
}

void SensitivityPage::rebuildSpectrum() {
    spectrum_->clearGraphs();
    const std::vector<double> s = model_->spectrum(selected_);
    if (!s.empty()) {
        QCPGraph* g = spectrum_->addGraph();
        g->setPen(QPen(accentColor(), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        double lo = 1e300, hi = 0;
        for (size_t i = 0; i < s.size(); ++i) {
            const double v = std::max(std::abs(s[i]), 1e-12);
            g->addData(double(i + 1), v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        spectrum_->xAxis->setRange(0, double(s.size()) + 1);
        spectrum_->yAxis->setRange(lo / 2, hi * 2);
    }
    spectrum_->setVisible(!s.empty());
    spectrumTitle_->setWordWrap(true);
    spectrumTitle_->setText(s.empty() ? tr("Layers by sensitivity (an analysis file adds eigenvalue spectra)")
                                      : tr("Hessian eigenvalue spectrum of %1").arg(selected_));
    spectrum_->replot();
}

void SensitivityPage::showHover(QMouseEvent* event) {
    const int r = int(std::lround(bars_->xAxis->pixelToCoord(event->position().x())));
    if (r < 0 || r >= model_->layerCount() || model_->metricCount() == 0) {
        hover_->setText(model_->metricCount() > 0 ? tr("Click a bar to select its layer in the Layers table")
                                                  : QString());
        return;
    }
    QStringList parts{model_->layer(r)};
    for (int m = 0; m < model_->metricCount(); ++m)
        parts << QStringLiteral("%1 %2").arg(model_->metricLabel(m), QString::number(model_->value(r, m), 'g', 4));
    hover_->setText(parts.join(QStringLiteral("  ·  ")));
}

void SensitivityPage::retranslate() {
    title_->setText(tr("Sensitivity"));
    subtitle_->setText(
        tr("How much each layer hurts when it alone is quantized to INT4 (RTN, group 32): the KL "
           "divergence from the FP32 model and the change in next-token loss on the evaluation text. "
           "Analysis files add Hessian and gradient metrics."));
    textLabel_->setText(tr("Evaluation text"));
    run_->setText(tr("Analyse"));
    cancel_->setText(tr("Cancel"));
    if (!job_->isRunning())
        stage_->setText(model_->metricCount() > 0 ? tr("Done") : QString());  // stage texts were in the old language
    load_->setText(tr("Load analysis JSON…"));
    metricLabel_->setText(tr("Metric"));
    heatTitle_->setText(tr("Layer × metric (each metric scaled to its maximum)"));
    if (model_->metricCount() == 0 && document_->current()) hover_->setText(tr("No sensitivity yet: press Analyse."));
    refillMetrics();
    rebuild();
}

void SensitivityPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace edge::views
