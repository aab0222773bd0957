#include "views/models/configuration_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "views/models/format.h"

namespace edge::views {

std::vector<int> paretoFront(const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<int> order(x.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return x[a] != x[b] ? x[a] < x[b] : y[a] < y[b]; });
    std::vector<int> front;
    double best = std::numeric_limits<double>::infinity();
    for (int i : order)
        if (y[size_t(i)] < best) {
            best = y[size_t(i)];
            front.push_back(i);
        }
    return front;
}

ConfigurationModel::ConfigurationModel(QObject* parent) : QAbstractTableModel(parent) {}

int ConfigurationModel::add(Configuration c) {
    const int row = int(list_.size());
    beginInsertRows(QModelIndex(), row, row);
    list_.push_back(std::move(c));
    endInsertRows();
    // The frontier flags of earlier rows may change.
    if (row > 0) emit dataChanged(index(0, 0), index(row - 1, ColumnCount - 1));
    return row;
}

void ConfigurationModel::removeLast() {
    if (list_.empty()) return;
    const int row = int(list_.size()) - 1;
    beginRemoveRows(QModelIndex(), row, row);
    list_.pop_back();
    endRemoveRows();
    if (row > 0) emit dataChanged(index(0, 0), index(row - 1, ColumnCount - 1));
}

void ConfigurationModel::setConfigurations(std::vector<Configuration> list) {
    beginResetModel();
    list_ = std::move(list);
    endResetModel();
}

void ConfigurationModel::setEngine(int row, const EngineArtifact& engine) {
    if (row < 0 || row >= rowCount()) return;
    auto& engines = list_[size_t(row)].engines;
    engines.erase(std::remove_if(engines.begin(), engines.end(),
                                 [&](const EngineArtifact& e) { return e.target == engine.target; }),
                  engines.end());
    engines.push_back(engine);
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    emit artifactsChanged(row);
}

int ConfigurationModel::rowOfEngine(const QString& sha256) const {
    if (sha256.isEmpty()) return -1;
    for (int r = 0; r < rowCount(); ++r)
        for (const auto& e : list_[size_t(r)].engines)
            if (e.sha256.compare(sha256, Qt::CaseInsensitive) == 0) return r;
    return -1;
}

int ConfigurationModel::addMeasurement(const BoardMeasurement& m) {
    const int row = rowOfEngine(m.engineSha256);
    if (row < 0) return -1;
    list_[size_t(row)].measurements.push_back(m);
    emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));  // the board frontier may move
    emit artifactsChanged(row);
    return row;
}

void ConfigurationModel::setPredictions(int row, std::map<QString, double> predictedTpotMs) {
    if (row < 0 || row >= rowCount() || list_[size_t(row)].predictedTpotMs == predictedTpotMs) return;
    list_[size_t(row)].predictedTpotMs = std::move(predictedTpotMs);
    emit artifactsChanged(row);
}

QString ConfigurationModel::nextName() const { return QStringLiteral("C%1").arg(list_.size() + 1); }

double ConfigurationModel::cost(const Configuration& c, Cost cost) {
    switch (cost) {
        case Latency: return c.decodeMs;
        case Size: return double(c.bytes);
        case BoardTpot:
        case BoardTtft:
        case BoardTokensPerS:
        case BoardPeakMemory: {
            const BoardMeasurement* m = c.measurement();
            if (!m) return std::numeric_limits<double>::quiet_NaN();
            return cost == BoardTpot         ? m->tpotP50Ms
                   : cost == BoardTtft       ? m->ttftMs
                   : cost == BoardTokensPerS ? m->tokensPerS
                                             : m->peakRssMiB;
        }
    }
    return 0;
}

double ConfigurationModel::quality(const Configuration& c, Quality quality) {
    switch (quality) {
        case Perplexity: return c.ppl;
        case KlMean: return c.klMean;
        case Top1: return 100.0 * c.top1;
    }
    return c.ppl;
}

std::vector<int> ConfigurationModel::front(Cost which, Quality q) const {
    std::vector<double> x, y;
    std::vector<int> rows;  // configurations that have this cost
    for (int r = 0; r < rowCount(); ++r) {
        const double v = cost(list_[size_t(r)], which);
        if (std::isnan(v)) continue;
        // Both minimised: what is better higher enters negated.
        x.push_back(higherIsBetter(which) ? -v : v);
        y.push_back(higherIsBetter(q) ? -quality(list_[size_t(r)], q) : quality(list_[size_t(r)], q));
        rows.push_back(r);
    }
    std::vector<int> f = paretoFront(x, y);
    for (int& i : f) i = rows[size_t(i)];
    return f;
}

void ConfigurationModel::retranslate() {
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!list_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int ConfigurationModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(list_.size()); }
int ConfigurationModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ConfigurationModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Configuration& c = list_[size_t(index.row())];
    if (role == FrontRole) {
        const auto f = front(Latency);
        return std::find(f.begin(), f.end(), index.row()) != f.end();
    }
    if (role == SortRole) {
        switch (index.column()) {
            case NameColumn: return c.name;
            case PerplexityColumn: return c.ppl;
            case KlColumn: return c.klMean;
            case LatencyColumn: return c.decodeMs;
            case SizeColumn: return double(c.bytes);
            case VerdictColumn: return c.passed;
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case NameColumn: return c.name;
            case PerplexityColumn: return QString::number(c.ppl, 'f', 4);
            case KlColumn: return QString::number(c.klMean, 'f', 5);
            case LatencyColumn: return tr("%1 ms").arg(c.decodeMs, 0, 'f', 3);
            case SizeColumn: return humanBytes(c.bytes);
            case VerdictColumn: return c.passed ? tr("pass") : tr("FAIL");
        }
    }
    if (role == Qt::ToolTipRole && index.column() == VerdictColumn && !c.failures.isEmpty())
        return c.failures.join(QLatin1Char('\n'));
    if (role == Qt::ForegroundRole && index.column() == VerdictColumn)
        return QBrush(c.passed ? QColor(0x1b, 0x7f, 0x3b) : QColor(0xc0, 0x1c, 0x28));
    if (role == Qt::TextAlignmentRole && index.column() != NameColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant ConfigurationModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case NameColumn: return tr("Configuration");
        case PerplexityColumn: return tr("Perplexity");
        case KlColumn: return tr("Mean KL");
        case LatencyColumn: return tr("Decode / token");
        case SizeColumn: return tr("Weights");
        case VerdictColumn: return tr("Validation");
        default: return {};
    }
}

PlanDiffModel::PlanDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

QString PlanDiffModel::settingText(const LayerSetting& s) {
    QString t = precisionKey(s.precision).toUpper();
    if (s.quantized()) {
        t += QStringLiteral(" ") + methodKey(s.method).toUpper();
        t += s.group > 0 ? QStringLiteral(" g%1").arg(s.group) : QStringLiteral(" ch");
        if (!s.symmetric) t += QStringLiteral(" asym");
    }
    if (s.pruning > 0) t += QStringLiteral(" −%1%").arg(s.pruning * 100.0, 0, 'f', 0);
    return t;
}

void PlanDiffModel::setPair(const Configuration* a, const Configuration* b) {
    beginResetModel();
    rows_.clear();
    nameA_ = a ? a->name : QString();
    nameB_ = b ? b->name : QString();
    if (a && b) {
        const size_t n = std::max(a->layers.size(), b->layers.size());
        for (size_t i = 0; i < n; ++i) {
            Row r;
            r.layer = i < a->layers.size() ? a->layers[i] : b->layers[i];
            r.a = i < a->settings.size() ? settingText(a->settings[i]) : QStringLiteral("—");
            r.b = i < b->settings.size() ? settingText(b->settings[i]) : QStringLiteral("—");
            r.differs = r.a != r.b;
            rows_.push_back(r);
        }
        auto figure = [this](const QString& what, const QString& va, const QString& vb) {
            rows_.push_back(Row{what, va, vb, va != vb, true});
        };
        const QString none = QStringLiteral("—");
        figure(tr("perplexity"), QString::number(a->ppl, 'f', 4), QString::number(b->ppl, 'f', 4));
        figure(tr("mean KL"), QString::number(a->klMean, 'f', 5), QString::number(b->klMean, 'f', 5));
        figure(tr("top-1 agreement"), QString::number(100 * a->top1, 'f', 2) + QStringLiteral(" %"),
               QString::number(100 * b->top1, 'f', 2) + QStringLiteral(" %"));
        figure(tr("weights"), humanBytes(a->bytes), humanBytes(b->bytes));
        figure(tr("host ms/token"), QString::number(a->decodeMs, 'f', 3), QString::number(b->decodeMs, 'f', 3));
        auto calib = [&](const Configuration& c) {
            return c.calibration.isEmpty()
                       ? none
                       : (c.calibSelect.isEmpty() ? QStringLiteral("all") : c.calibSelect) +
                             (c.calibSamples > 0 ? QStringLiteral(" %1").arg(c.calibSamples) : QString());
        };
        figure(tr("calibration"), calib(*a), calib(*b));
        QStringList boards;
        for (const Configuration* c : {a, b}) {
            for (const auto& m : c->measurements)
                if (!boards.contains(m.board)) boards << m.board;
            for (const auto& [board, ms] : c->predictedTpotMs)
                if (!boards.contains(board)) boards << board;
        }
        for (const QString& board : boards) {
            auto measured = [&](const Configuration& c, auto field, int digits) {
                const BoardMeasurement* m = c.measurement(board);
                return m ? QString::number(field(*m), 'f', digits) : none;
            };
            auto predicted = [&](const Configuration& c) {
                auto it = c.predictedTpotMs.find(board);
                return it == c.predictedTpotMs.end() ? none : QString::number(it->second, 'f', 3);
            };
            const auto tpot = [](const BoardMeasurement& m) { return m.tpotP50Ms; };
            const auto ttft = [](const BoardMeasurement& m) { return m.ttftMs; };
            const auto tps = [](const BoardMeasurement& m) { return m.tokensPerS; };
            const auto rss = [](const BoardMeasurement& m) { return m.peakRssMiB; };
            figure(tr("%1: TPOT p50, ms").arg(board), measured(*a, tpot, 3), measured(*b, tpot, 3));
            figure(tr("%1: predicted TPOT, ms").arg(board), predicted(*a), predicted(*b));
            figure(tr("%1: TTFT, ms").arg(board), measured(*a, ttft, 1), measured(*b, ttft, 1));
            figure(tr("%1: tokens/s").arg(board), measured(*a, tps, 1), measured(*b, tps, 1));
            figure(tr("%1: peak memory, MiB").arg(board), measured(*a, rss, 1), measured(*b, rss, 1));
        }
    }
    endResetModel();
}

int PlanDiffModel::differences() const {
    return int(std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.differs && !r.figure; }));
}

int PlanDiffModel::figureRows() const {
    return int(std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.figure; }));
}

int PlanDiffModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int PlanDiffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PlanDiffModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Row& r = rows_[size_t(index.row())];
    if (role == DiffRole) return r.differs;
    if (role == FigureRole) return r.figure;
    if (role == Qt::ForegroundRole && r.figure && index.column() == LayerColumn)
        return QBrush(QColor(0x5a, 0x61, 0x6b));
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case LayerColumn: return r.layer;
            case AColumn: return r.a;
            case BColumn: return r.b;
        }
    }
    if (role == Qt::FontRole && r.differs) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::BackgroundRole && r.differs && index.column() != LayerColumn)
        return QBrush(QColor(0xff, 0xf1, 0xc7));
    return {};
}

QVariant PlanDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case LayerColumn: return tr("Layer");
        case AColumn: return nameA_.isEmpty() ? tr("A") : nameA_;
        case BColumn: return nameB_.isEmpty() ? tr("B") : nameB_;
        default: return {};
    }
}

}  // namespace edge::views
