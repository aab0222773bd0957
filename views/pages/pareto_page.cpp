#include "views/pages/pareto_page.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "views/models/format.h"
#include "views/models/job.h"
#include "views/models/model_document.h"
#include "views/style.h"

namespace edge::views {
namespace {
QColor mix(const QColor& a, const QColor& b, double t) {
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                            float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
}
const QColor kSmall(0x2e, 0x9e, 0x6a), kLarge(0xd9, 0x48, 0x2b);

void setupTable(QTableView* t) {
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setAlternatingRowColors(true);
    t->setShowGrid(false);
    t->setWordWrap(false);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 10);
    t->horizontalHeader()->setHighlightSections(false);
}
}  // namespace

ParetoPage::ParetoPage(ConfigurationModel* configurations, QWidget* parent)
    : QWidget(parent),
      configurations_(configurations),
      diff_(new PlanDiffModel(this)),
      title_(new QLabel(this)),
      subtitle_(new QLabel(this)),
      axisLabel_(new QLabel(this)),
      axis_(new QComboBox(this)),
      hover_(new QLabel(this)),
      plot_(new QCustomPlot(this)),
      table_(new QTableView(this)),
      diffTable_(new QTableView(this)),
      diffTitle_(new QLabel(this)),
      open_(new QPushButton(this)),
      target_(new QComboBox(this)),
      compile_(new QPushButton(this)),
      cancelCompile_(new QPushButton(this)),
      compileProgress_(new QProgressBar(this)),
      compileStage_(new QLabel(this)),
      compileJob_(new JobSlot(this)),
      empty_(new QLabel(this)) {
    qualityLabel_ = new QLabel(this);
    qualityAxis_ = new QComboBox(this);
    for (auto q : {ConfigurationModel::Perplexity, ConfigurationModel::KlMean, ConfigurationModel::Top1})
        qualityAxis_->addItem(QString(), int(q));
    qualityAxis_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(qualityAxis_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setQuality(ConfigurationModel::Quality(qualityAxis_->itemData(i).toInt())); });
    target_->addItem(QStringLiteral("CPU"), QStringLiteral("cpu"));
    target_->addItem(QStringLiteral("CUDA sm_87 (Orin)"), QStringLiteral("cuda-sm87"));
    target_->addItem(QStringLiteral("CUDA sm_90"), QStringLiteral("cuda-sm90"));
    target_->setObjectName(QStringLiteral("compileTarget"));
    compileProgress_->setRange(0, 1000);
    compileProgress_->setTextVisible(false);
    compileProgress_->setMaximumWidth(200);
    compileProgress_->setVisible(false);
    compileStage_->setObjectName(QStringLiteral("hint"));
    compileStage_->setWordWrap(true);
    cancelCompile_->setVisible(false);
    connect(compile_, &QPushButton::clicked, this, [this] {
        const auto rows = table_->selectionModel()->selectedRows();
        if (rows.size() == 1) compileConfiguration(sourceRow(rows.front()), target_->currentData().toString());
    });
    connect(cancelCompile_, &QPushButton::clicked, compileJob_, &JobSlot::cancel);
    connect(compileJob_, &JobSlot::progress, this, [this](double f, const QString& stage) {
        compileProgress_->setValue(int(f * 1000));
        compileStage_->setText(stage);
    });
    connect(compileJob_, &JobSlot::runningChanged, this, [this](bool running) {
        compileProgress_->setVisible(running);
        cancelCompile_->setVisible(running);
        updateDiff();
    });
    connect(compileJob_, &JobSlot::cancelled, this, [this] { compileStage_->setText(tr("Compile cancelled")); });
    title_->setFont(titleFont());
    subtitle_->setObjectName(QStringLiteral("hint"));
    subtitle_->setWordWrap(true);
    hover_->setObjectName(QStringLiteral("hint"));
    hover_->setFont(monoFont());
    empty_->setObjectName(QStringLiteral("hint"));
    diffTitle_->setObjectName(QStringLiteral("sectionTitle"));
    axis_->addItem(QString(), int(ConfigurationModel::Latency));
    axis_->addItem(QString(), int(ConfigurationModel::Size));
    for (auto c : {ConfigurationModel::BoardTpot, ConfigurationModel::BoardTtft, ConfigurationModel::BoardTokensPerS,
                   ConfigurationModel::BoardPeakMemory})
        axis_->addItem(QString(), int(c));
    axis_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(axis_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setCost(ConfigurationModel::Cost(axis_->itemData(i).toInt())); });

    plot_->setMinimumHeight(300);
    plot_->setMouseTracking(true);
    plot_->setBackground(QBrush(Qt::white));
    plot_->xAxis->setTickLabelFont(monoFont());
    plot_->yAxis->setTickLabelFont(monoFont());
    plot_->yAxis->grid()->setPen(QPen(QColor(0xe4, 0xe7, 0xeb)));
    plot_->xAxis->grid()->setPen(QPen(QColor(0xe4, 0xe7, 0xeb)));
    plot_->legend->setVisible(false);  // the subtitle explains the dashed frontier; no legend over points
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { hover(e->position()); });
    connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
        const int row = rowAt(e->position());
        if (row < 0) return;
        selectRows({row});
        emit configurationActivated(row);
    });

    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(configurations_);
    proxy->setSortRole(ConfigurationModel::SortRole);
    table_->setModel(proxy);
    setupTable(table_);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setSortingEnabled(true);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->horizontalHeader()->setMinimumSectionSize(90);
    diffTable_->setModel(diff_);
    setupTable(diffTable_);
    diffTable_->setSelectionMode(QAbstractItemView::NoSelection);
    diffTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ParetoPage::updateDiff);
    connect(open_, &QPushButton::clicked, this, [this] {
        const auto rows = table_->selectionModel()->selectedRows();
        if (rows.size() == 1) emit configurationActivated(sourceRow(rows.front()));
    });

    auto* header = new QHBoxLayout;
    header->addWidget(axisLabel_);
    header->addWidget(axis_);
    header->addSpacing(12);
    header->addWidget(qualityLabel_);
    header->addWidget(qualityAxis_);
    header->addSpacing(16);
    header->addWidget(hover_, 1);
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(table_, 1);
    auto* actions = new QHBoxLayout;
    actions->addWidget(open_);
    actions->addSpacing(12);
    actions->addWidget(target_);
    actions->addWidget(compile_);
    actions->addWidget(cancelCompile_);
    actions->addWidget(compileProgress_);
    actions->addStretch(1);
    leftLayout->addLayout(actions);
    leftLayout->addWidget(compileStage_);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(diffTitle_);
    rightLayout->addWidget(diffTable_, 1);
    auto* bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(left);
    bottom->addWidget(right);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(plot_);
    split->addWidget(bottom);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(20, 16, 20, 12);
    layout->setSpacing(8);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addLayout(header);
    layout->addWidget(empty_);
    layout->addWidget(split, 1);

    connect(configurations_, &QAbstractItemModel::rowsInserted, this, &ParetoPage::rebuild);
    connect(configurations_, &QAbstractItemModel::rowsRemoved, this, &ParetoPage::rebuild);
    connect(configurations_, &QAbstractItemModel::modelReset, this, &ParetoPage::rebuild);
    connect(configurations_, &ConfigurationModel::artifactsChanged, this, &ParetoPage::rebuild);
    retranslate();
}

int ParetoPage::sourceRow(const QModelIndex& index) const {
    auto* proxy = static_cast<QSortFilterProxyModel*>(table_->model());
    return proxy->mapToSource(index).row();
}

void ParetoPage::selectRows(const QList<int>& rows) {
    auto* proxy = static_cast<QSortFilterProxyModel*>(table_->model());
    QItemSelection sel;
    for (int r : rows) {
        const QModelIndex i = proxy->mapFromSource(configurations_->index(r, 0));
        sel.select(i, i.siblingAtColumn(ConfigurationModel::ColumnCount - 1));
    }
    table_->selectionModel()->select(sel, QItemSelectionModel::ClearAndSelect);
}

void ParetoPage::updateDiff() {
    QList<int> rows;
    for (const QModelIndex& i : table_->selectionModel()->selectedRows()) rows << sourceRow(i);
    std::sort(rows.begin(), rows.end());
    open_->setEnabled(rows.size() == 1);
    compile_->setEnabled(rows.size() == 1 && !compileJob_->isRunning() && context_.document &&
                         context_.document->current());
    if (rows.size() == 2) {
        diff_->setPair(&configurations_->at(rows[0]), &configurations_->at(rows[1]));
        diffTitle_->setText(tr("%1 vs %2: %n layer(s) differ", nullptr, diff_->differences())
                                .arg(configurations_->at(rows[0]).name, configurations_->at(rows[1]).name));
    } else {
        diff_->setPair(nullptr, nullptr);
        diffTitle_->setText(tr("Select two configurations to compare their plans"));
    }
}

void ParetoPage::setCompileContext(CompileContext context) {
    context_ = std::move(context);
    if (context_.document) connect(context_.document, &ModelDocument::modelChanged, this, &ParetoPage::updateDiff);
    updateDiff();
}

QString ParetoPage::compileMessage() const { return compileStage_->text(); }

bool ParetoPage::compileConfiguration(int row, const QString& target) {
    if (row < 0 || row >= configurations_->rowCount()) return false;
    const Configuration c = configurations_->at(row);
    auto model = context_.document ? context_.document->current() : nullptr;
    if (!model) {
        compileStage_->setText(tr("Open the configuration's model first."));
        return false;
    }
    // The configuration's plan, matched to the open model's layers by name.
    int matched = 0;
    const std::vector<LayerSetting> settings = settingsByName(model->layers, c.layers, c.settings, &matched);
    if (matched != int(c.layers.size())) {
        compileStage_->setText(tr("%1 was validated on another model: open that model to compile it.").arg(c.name));
        return false;
    }
    // Calibrated as the configuration was validated (its text, calibration file and their cuts).
    const ValidationSettings options =
        validatedSettings(c, context_.settings ? context_.settings() : ValidationSettings());
    const QString dir = context_.engineDir ? context_.engineDir() : QDir::tempPath();
    if (!QDir().mkpath(dir)) {
        compileStage_->setText(tr("Cannot create the engine folder %1").arg(dir));
        return false;
    }
    const QString out = QDir(dir).filePath(QStringLiteral("%1-%2.edge").arg(c.name, target));
    compileProgress_->setValue(0);
    compileStage_->setText(tr("Compiling %1 for %2…").arg(c.name, target));
    const QString name = c.name;
    compileJob_->start<EngineArtifact>(
        [model, settings, options, target, out](edge::Progress* p) {
            return buildEngine(model, settings, options, target, out, p);
        },
        [this, name, out](edge::Result<EngineArtifact> r) {
            if (!r.ok()) {
                compileStage_->setText(userErrorText(tr("Compiling %1 failed.").arg(name), r.error()));
                return;
            }
            // The row may have moved (a configuration removed meanwhile): found again by name.
            int row = -1;
            for (int i = 0; i < configurations_->rowCount(); ++i)
                if (configurations_->at(i).name == name) row = i;
            if (row < 0) return;
            configurations_->setEngine(row, r.value());
            compileStage_->setText(tr("%1: %2 (%3), SHA-256 %4…")
                                       .arg(name, QFileInfo(out).fileName(), humanBytes(r->bytes), r->sha256.left(12)));
            emit engineCompiled(row, r->path);
        });
    return true;
}

void ParetoPage::setCost(ConfigurationModel::Cost cost) {
    if (cost_ == cost) return;
    cost_ = cost;
    axis_->setCurrentIndex(axis_->findData(int(cost)));
    rebuild();
}

void ParetoPage::setQuality(ConfigurationModel::Quality quality) {
    if (quality_ == quality) return;
    quality_ = quality;
    qualityAxis_->setCurrentIndex(qualityAxis_->findData(int(quality)));
    rebuild();
}

int ParetoPage::pointCount() const {
    return int(std::count_if(points_.begin(), points_.end(), [](const QPointF& p) { return !std::isnan(p.x()); }));
}

int ParetoPage::predictedCount() const {
    return int(
        std::count_if(predicted_.begin(), predicted_.end(), [](const QPointF& p) { return !std::isnan(p.x()); }));
}

QPointF ParetoPage::predictedPosition(int row) const {
    if (row < 0 || row >= int(predicted_.size()) || std::isnan(predicted_[size_t(row)].x())) return {};
    return {plot_->xAxis->coordToPixel(predicted_[size_t(row)].x()),
            plot_->yAxis->coordToPixel(predicted_[size_t(row)].y())};
}

QPointF ParetoPage::pointPosition(int row) const {
    if (row < 0 || row >= int(points_.size())) return {};
    return {plot_->xAxis->coordToPixel(points_[size_t(row)].x()), plot_->yAxis->coordToPixel(points_[size_t(row)].y())};
}

int ParetoPage::rowAt(const QPointF& pos) const {
    int best = -1;
    double bestD = 14.0 * 14.0;
    for (int r = 0; r < int(points_.size()); ++r) {
        for (const QPointF& p : {pointPosition(r), predictedPosition(r)}) {
            if (p.isNull()) continue;
            const double d = (p.x() - pos.x()) * (p.x() - pos.x()) + (p.y() - pos.y()) * (p.y() - pos.y());
            if (d < bestD) {
                bestD = d;
                best = r;
            }
        }
    }
    return best;
}

QString ParetoPage::hoverText() const { return hover_->text(); }

void ParetoPage::hover(const QPointF& pos) {
    const int row = rowAt(pos);
    if (row < 0) {
        hover_->setText(points_.empty() ? QString() : tr("Hover a point for details; click it to open its plan"));
        return;
    }
    const Configuration& c = configurations_->at(row);
    if (ConfigurationModel::isBoardCost(cost_)) {
        const QString board = predictedBoard_[size_t(row)];
        const auto p = c.predictedTpotMs.find(board);
        const bool predicted = !board.isEmpty() && p != c.predictedTpotMs.end();
        if (const BoardMeasurement* m = c.measurement()) {
            QString text =
                tr("%1 on %2 · perplexity %3 · TPOT p50 %4 ms, p99 %5 ms · TTFT %6 ms · %7 tokens/s · "
                   "peak %8 MiB")
                    .arg(c.name, m->board, QString::number(c.ppl, 'f', 4), QString::number(m->tpotP50Ms, 'f', 3),
                         QString::number(m->tpotP99Ms, 'f', 3), QString::number(m->ttftMs, 'f', 1),
                         QString::number(m->tokensPerS, 'f', 1), QString::number(m->peakRssMiB, 'f', 1));
            if (predicted && p->second > 0)
                text += tr(" · predicted %1 ms (measured %2%3 %)")
                            .arg(QString::number(p->second, 'f', 3),
                                 m->tpotP50Ms >= p->second ? QStringLiteral("+") : QString())
                            .arg(100.0 * (m->tpotP50Ms - p->second) / p->second, 0, 'f', 1);
            if (!m->workload.isEmpty()) text += tr(" · workload %1").arg(m->workload);
            hover_->setText(text);
            return;
        }
        if (predicted) {
            hover_->setText(
                tr("%1 · perplexity %2 · predicted %3 ms per token on %4 (its cost model); not measured "
                   "there yet: compile, deploy and profile it")
                    .arg(c.name, QString::number(c.ppl, 'f', 4), QString::number(p->second, 'f', 3), board));
            return;
        }
    }
    hover_->setText(tr("%1 · perplexity %2 (FP32 %3) · KL %4 · %5 ms/token · %6 · %7")
                        .arg(c.name, QString::number(c.ppl, 'f', 4), QString::number(c.pplRef, 'f', 4),
                             QString::number(c.klMean, 'f', 4), QString::number(c.decodeMs, 'f', 3),
                             humanBytes(c.bytes),
                             c.passed ? tr("passed") : tr("failed: %1").arg(c.failures.join(QStringLiteral("; ")))));
}

void ParetoPage::rebuild() {
    plot_->clearGraphs();
    plot_->clearItems();
    points_.clear();
    predicted_.assign(configurations_->configurations().size(), QPointF(qQNaN(), qQNaN()));
    predictedBoard_.assign(configurations_->configurations().size(), QString());
    const auto& list = configurations_->configurations();
    const double scale = cost_ == ConfigurationModel::Size ? 1024.0 : 1.0;
    quint64 minB = ~quint64(0), maxB = 0;
    for (const auto& c : list) {
        minB = std::min(minB, c.bytes);
        maxB = std::max(maxB, c.bytes);
    }
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    QStringList boards;  // on the board axis each board has its own marker shape
    int drawn = 0;
    for (int r = 0; r < int(list.size()); ++r) {
        const Configuration& c = list[size_t(r)];
        const double x = ConfigurationModel::cost(c, cost_) / scale, y = ConfigurationModel::quality(c, quality_);
        points_.emplace_back(x, y);
        if (cost_ == ConfigurationModel::BoardTpot) {
            // The prediction for the board it was measured on (or, not measured yet, its first board).
            const BoardMeasurement* m = c.measurement();
            const auto p = m ? c.predictedTpotMs.find(m->board) : c.predictedTpotMs.begin();
            if (p != c.predictedTpotMs.end()) {
                predicted_[size_t(r)] = QPointF(p->second, y);
                predictedBoard_[size_t(r)] = p->first;
                x0 = std::min(x0, p->second), x1 = std::max(x1, p->second), y0 = std::min(y0, y), y1 = std::max(y1, y);
                ++drawn;
                QCPGraph* g = plot_->addGraph();
                g->setLineStyle(QCPGraph::lsNone);
                g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(accentColor(), 1.5), QBrush(), 12));
                g->addData(p->second, y);
                g->removeFromLegend();
                if (m) {  // predicted -> measured
                    auto* line = new QCPItemLine(plot_);
                    line->start->setCoords(p->second, y);
                    line->end->setCoords(x, y);
                    line->setPen(QPen(accentColor(), 1, Qt::DotLine));
                } else {
                    auto* label = new QCPItemText(plot_);
                    label->position->setCoords(p->second, y);
                    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
                    label->setPadding(QMargins(10, 0, 0, 8));
                    label->setText(tr("%1 · %2 (predicted)").arg(c.name, p->first));
                    label->setFont(monoFont());
                }
            }
        }
        if (std::isnan(x)) continue;  // never measured on a board
        ++drawn;
        x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
        QCPScatterStyle::ScatterShape shape = QCPScatterStyle::ssCircle;
        QString name = c.name;
        if (ConfigurationModel::isBoardCost(cost_)) {
            const QString board = c.measurement()->board;
            if (!boards.contains(board)) boards << board;
            static const QCPScatterStyle::ScatterShape shapes[] = {
                QCPScatterStyle::ssCircle, QCPScatterStyle::ssDiamond, QCPScatterStyle::ssSquare,
                QCPScatterStyle::ssTriangle, QCPScatterStyle::ssTriangleInverted};
            shape = shapes[boards.indexOf(board) % 5];
            name += QStringLiteral(" · ") + board;
        }
        const double t = maxB > minB ? double(c.bytes - minB) / double(maxB - minB) : 0.5;
        QCPGraph* g = plot_->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(shape, QPen(mix(kSmall, kLarge, t).darker(130), 1.5),
                                           QBrush(mix(kSmall, kLarge, t)), 10 + 14 * t));
        g->addData(x, y);
        g->removeFromLegend();
        auto* label = new QCPItemText(plot_);
        label->position->setCoords(x, y);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setPadding(QMargins(10, 0, 0, 8));
        label->setText(name);
        label->setFont(monoFont());
    }
    front_ = configurations_->front(cost_, quality_);
    if (!front_.empty()) {
        QCPGraph* f = plot_->addGraph();
        f->setName(tr("Pareto frontier"));
        f->setLineStyle(QCPGraph::lsStepLeft);
        f->setPen(QPen(accentColor(), 2, Qt::DashLine));
        QVector<double> fx, fy;
        for (int r : front_) {
            fx << points_[size_t(r)].x();
            fy << points_[size_t(r)].y();
        }
        f->setData(fx, fy);  // sorted by cost (a maximised axis lists the frontier the other way)
    }
    if (drawn > 0) {
        const double dx = std::max((x1 - x0) * 0.15, std::abs(x1) * 0.05 + 1e-6);
        const double dy = std::max((y1 - y0) * 0.25, std::abs(y1) * 0.01 + 1e-6);
        plot_->xAxis->setRange(x0 - dx, x1 + dx);
        plot_->yAxis->setRange(y0 - dy, y1 + dy);
    }
    plot_->setVisible(drawn > 0);
    empty_->setVisible(drawn == 0);
    retranslate();
}

void ParetoPage::retranslate() {
    title_->setText(tr("Pareto"));
    subtitle_->setText(
        tr("Each validated configuration is a point: better quality and lower cost (more tokens/s) win; "
           "the point's size and colour grow with its weights (green small, red large). The dashed line "
           "is the frontier no other configuration beats on both. On a board's time per token, hollow "
           "markers are the times its cost model predicts."));
    axisLabel_->setText(tr("Cost axis"));
    axis_->setItemText(0, tr("Decode latency (ms / token)"));
    axis_->setItemText(1, tr("Weight size (KiB)"));
    axis_->setItemText(2, tr("Board time per token (ms, p50)"));
    axis_->setItemText(3, tr("Board time to first token (ms)"));
    axis_->setItemText(4, tr("Board tokens/s (higher is better)"));
    axis_->setItemText(5, tr("Board peak memory (MiB)"));
    qualityLabel_->setText(tr("Quality axis"));
    qualityAxis_->setItemText(0, tr("Perplexity"));
    qualityAxis_->setItemText(1, tr("Mean KL divergence"));
    qualityAxis_->setItemText(2, tr("Top-1 agreement (%, higher is better)"));
    switch (cost_) {
        case ConfigurationModel::Latency:
            plot_->xAxis->setLabel(tr("Decode latency on this host, ms per token (mean)"));
            break;
        case ConfigurationModel::Size: plot_->xAxis->setLabel(tr("Weights, KiB")); break;
        case ConfigurationModel::BoardTpot:
            plot_->xAxis->setLabel(tr("Time per output token on the board, ms (p50)"));
            break;
        case ConfigurationModel::BoardTtft: plot_->xAxis->setLabel(tr("Time to first token on the board, ms")); break;
        case ConfigurationModel::BoardTokensPerS: plot_->xAxis->setLabel(tr("Tokens per second on the board")); break;
        case ConfigurationModel::BoardPeakMemory:
            plot_->xAxis->setLabel(tr("Peak memory on the board (agent RSS), MiB"));
            break;
    }
    plot_->yAxis->setLabel(quality_ == ConfigurationModel::Perplexity ? tr("Perplexity (quantized)")
                           : quality_ == ConfigurationModel::KlMean   ? tr("Mean KL divergence from FP32")
                                                                      : tr("Top-1 agreement with FP32, %"));
    if (plot_->graphCount() > 0 && !front_.empty())
        plot_->graph(plot_->graphCount() - 1)->setName(tr("Pareto frontier"));
    open_->setText(tr("Open in Layers"));
    compile_->setText(tr("Compile engine"));
    compile_->setToolTip(
        tr("Quantize the selected configuration's plan (calibrated as it was validated) and "
           "compile it into a .edge engine for the chosen target"));
    cancelCompile_->setText(tr("Cancel"));
    empty_->setText(ConfigurationModel::isBoardCost(cost_) && !configurations_->configurations().empty()
                        ? tr("No configuration measured on a board yet: compile one, deploy it on the Boards "
                             "page and profile it.")
                        : tr("No configuration yet: run a validation — each run adds a point here."));
    configurations_->retranslate();
    diff_->setPair(nullptr, nullptr);
    updateDiff();
    hover({-1e6, -1e6});
    plot_->replot();
}

void ParetoPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace edge::views
