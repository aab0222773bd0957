#include "views/layer_chart.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "views/models/format.h"
#include "views/style.h"

namespace edge::views {

namespace {
const QColor kFamilyColors[] = {QColor(0x1f, 0x6f, 0xd1), QColor(0x2e, 0x9e, 0x6a), QColor(0xd9, 0x82, 0x2b)};
}

LayerChart::LayerChart(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      hover_(new QLabel(this)),
      metricBox_(new QComboBox(this)),
      plot_(new QCustomPlot(this)) {
    title_->setObjectName(QStringLiteral("sectionTitle"));
    hover_->setObjectName(QStringLiteral("hint"));
    hover_->setFont(monoFont());
    metricBox_->addItem(QString(), int(Parameters));
    metricBox_->addItem(QString(), int(Bytes));
    connect(metricBox_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setMetric(Metric(metricBox_->itemData(i).toInt())); });

    auto* header = new QHBoxLayout;
    header->addWidget(title_);
    header->addSpacing(12);
    header->addWidget(hover_, 1);
    header->addWidget(metricBox_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(header);
    layout->addWidget(plot_, 1);

    plot_->setMinimumHeight(180);
    plot_->setMouseTracking(true);
    plot_->setInteractions(QCP::iSelectPlottables);
    plot_->setBackground(QBrush(Qt::white));
    plot_->axisRect()->setupFullAxesBox(false);
    plot_->xAxis2->setVisible(false);
    plot_->yAxis2->setVisible(false);
    plot_->yAxis->setNumberFormat(QStringLiteral("f"));
    plot_->yAxis->setTickLabelFont(monoFont());
    plot_->yAxis->grid()->setPen(QPen(QColor(0xe4, 0xe7, 0xeb)));
    plot_->xAxis->grid()->setVisible(false);
    plot_->xAxis->setTickLabelFont(monoFont());
    plot_->legend->setVisible(true);
    plot_->legend->setBorderPen(QPen(QColor(0xd0, 0xd7, 0xde)));
    plot_->legend->setBrush(QBrush(QColor(255, 255, 255, 230)));
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    for (int f = 0; f < FamilyCount; ++f) {
        auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
        bars->setWidth(0.8);
        bars->setPen(Qt::NoPen);
        bars->setBrush(kFamilyColors[f]);
        bars->setSelectable(QCP::stSingleData);
        QCPSelectionDecorator* deco = bars->selectionDecorator();
        deco->setBrush(QColor(0x11, 0x18, 0x27));
        deco->setPen(QPen(QColor(0x11, 0x18, 0x27)));
        bars_[f] = bars;
    }
    connect(plot_, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable* p, int dataIndex, QMouseEvent*) {
        const int layer = layerAt(qobject_cast<QCPBars*>(p), dataIndex);
        if (layer < 0 || !model_) return;
        const QString name = QString::fromStdString(model_->layers[size_t(layer)].name);
        selectLayer(name);
        emit layerClicked(name);
    });
    connect(plot_, &QCustomPlot::mouseMove, this, &LayerChart::showHover);
    retranslate();
}

int LayerChart::layerAt(QCPBars* bars, int dataIndex) const {
    if (!bars || dataIndex < 0 || dataIndex >= bars->data()->size()) return -1;
    const int layer = int(std::lround(bars->data()->at(dataIndex)->key));
    return model_ && layer >= 0 && layer < int(model_->layers.size()) ? layer : -1;
}

void LayerChart::setModel(std::shared_ptr<const LoadedModel> model) {
    model_ = std::move(model);
    selected_ = -1;
    family_.clear();
    if (model_) {
        for (const edge::model::LayerInfo& li : model_->layers) {
            const QString kind = QString::fromStdString(li.kind);
            family_.push_back(kind.startsWith(QLatin1String("attn"))  ? Attention
                              : kind.startsWith(QLatin1String("ffn")) ? FeedForward
                                                                      : Other);
        }
    }
    rebuild();
}

void LayerChart::setMetric(Metric metric) {
    if (metric_ == metric) return;
    metric_ = metric;
    metricBox_->setCurrentIndex(metricBox_->findData(int(metric)));
    rebuild();
}

int LayerChart::barCount() const {
    int n = 0;
    for (auto* b : bars_) n += b->data()->size();
    return n;
}

double LayerChart::barValue(const QString& layer) const {
    for (auto* b : bars_)
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) {
            const int i = int(std::lround(it->key));
            if (model_ && QString::fromStdString(model_->layers[size_t(i)].name) == layer) return it->value * scale_;
        }
    return -1;
}

QString LayerChart::selectedLayer() const {
    return model_ && selected_ >= 0 ? QString::fromStdString(model_->layers[size_t(selected_)].name) : QString();
}

void LayerChart::selectLayer(const QString& layer) {
    selected_ = -1;
    for (auto* b : bars_) b->setSelection(QCPDataSelection());
    if (model_) {
        const std::string wanted = layer.toStdString();
        for (int i = 0; i < int(model_->layers.size()); ++i)
            if (model_->layers[size_t(i)].name == wanted) selected_ = i;
    }
    if (selected_ >= 0) {
        QCPBars* bars = bars_[family_[size_t(selected_)]];
        const int idx = int(bars->findBegin(selected_, false));
        if (idx < bars->data()->size()) bars->setSelection(QCPDataSelection(QCPDataRange(idx, idx + 1)));
    }
    plot_->replot();
}

void LayerChart::rebuild() {
    QVector<double> keys[FamilyCount], values[FamilyCount];
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int n = model_ ? int(model_->layers.size()) : 0;
    double maxValue = 0;
    for (int i = 0; i < n; ++i) {
        const edge::model::LayerInfo& li = model_->layers[size_t(i)];
        maxValue = std::max(maxValue, metric_ == Parameters ? double(li.params) : double(li.bytes));
    }
    // Plain numbers on the axis: scale into K/M/B (or KiB/MiB/GiB) instead of 3.5×10⁴.
    scale_ = 1.0;
    unit_.clear();
    if (metric_ == Parameters) {
        const char* units[] = {"K", "M", "B"};
        for (int u = 0; u < 3 && maxValue / scale_ >= 1e4; ++u) {
            scale_ *= 1e3;
            unit_ = QLatin1String(units[u]);
        }
    } else {
        const char* units[] = {"KiB", "MiB", "GiB"};
        for (int u = 0; u < 3 && maxValue / scale_ >= 1e4; ++u) {
            scale_ *= 1024.0;
            unit_ = QLatin1String(units[u]);
        }
    }
    maxValue /= scale_;
    for (int i = 0; i < n; ++i) {
        const edge::model::LayerInfo& li = model_->layers[size_t(i)];
        const double v = (metric_ == Parameters ? double(li.params) : double(li.bytes)) / scale_;
        keys[family_[size_t(i)]] << i;
        values[family_[size_t(i)]] << v;
        // One tick per block (at its first layer) keeps labels readable for 100+ layers.
        const bool firstOfBlock = li.block >= 0 && (i == 0 || model_->layers[size_t(i - 1)].block != li.block);
        const int every = std::max(1, int(model_->model.config.n_layers) / 16);
        if (firstOfBlock && li.block % every == 0) ticker->addTick(i, QString::number(li.block));
        if (li.block < 0) ticker->addTick(i, QString::fromStdString(li.kind));
    }
    for (int f = 0; f < FamilyCount; ++f) bars_[f]->setData(keys[f], values[f], true);
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setRange(-1, std::max(n, 1));
    plot_->yAxis->setRange(0, maxValue > 0 ? maxValue * 1.3 : 1);  // headroom for the legend
    plot_->yAxis->setNumberPrecision(maxValue >= 10 ? 0 : 1);
    retranslate();
    if (selected_ >= 0) selectLayer(selectedLayer());
    plot_->replot();
}

void LayerChart::showHover(QMouseEvent* event) {
    if (!model_) return;
    const int i = int(std::lround(plot_->xAxis->pixelToCoord(event->pos().x())));
    if (i < 0 || i >= int(model_->layers.size())) {
        hover_->setText(tr("Click a bar to select its layer"));
        return;
    }
    const edge::model::LayerInfo& li = model_->layers[size_t(i)];
    hover_->setText(tr("%1  ·  %2 parameters  ·  %3")
                        .arg(QString::fromStdString(li.name), groupedCount(li.params), humanBytes(li.bytes)));
}

void LayerChart::retranslate() {
    title_->setText(tr("Size per layer"));
    metricBox_->setItemText(0, tr("Parameters"));
    metricBox_->setItemText(1, tr("Bytes"));
    metricBox_->setToolTip(tr("What the bars measure"));
    bars_[Attention]->setName(tr("Attention"));
    bars_[FeedForward]->setName(tr("Feed-forward"));
    bars_[Other]->setName(tr("Embedding / output"));
    plot_->xAxis->setLabel(tr("Decoder block (bars in execution order)"));
    const QString what = metric_ == Parameters ? tr("Parameters") : tr("Bytes");
    plot_->yAxis->setLabel(unit_.isEmpty() ? what : tr("%1 (%2)").arg(what, unit_));
    hover_->setText(model_ ? tr("Click a bar to select its layer") : QString());
    plot_->replot();
}

void LayerChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace edge::views
