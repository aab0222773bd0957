#include "views/models/configuration_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>
#include <limits>
#include <numeric>

#include "views/models/format.h"

namespace edge::views {

QJsonObject settingsToJson(const std::vector<QString>& layers, const std::vector<LayerSetting>& settings) {
    QJsonArray arr;
    for (size_t i = 0; i < layers.size() && i < settings.size(); ++i) {
        const LayerSetting& s = settings[i];
        arr.append(QJsonObject{{QStringLiteral("layer"), layers[i]},
                               {QStringLiteral("precision"), precisionKey(s.precision)},
                               {QStringLiteral("method"), methodKey(s.method)},
                               {QStringLiteral("group"), double(s.group)},
                               {QStringLiteral("symmetric"), s.symmetric},
                               {QStringLiteral("pruning"), s.pruning}});
    }
    return QJsonObject{{QStringLiteral("layers"), arr}};
}

bool settingsFromJson(const QJsonObject& o, std::vector<QString>* layers, std::vector<LayerSetting>* settings,
                      QString* error) {
    const QJsonValue v = o.value(QStringLiteral("layers"));
    if (!v.isArray()) {
        *error = ConfigurationModel::tr("a plan has no \"layers\" array");
        return false;
    }
    std::vector<QString> names;
    std::vector<LayerSetting> out;
    for (const QJsonValue& e : v.toArray()) {
        const QJsonObject l = e.toObject();
        const QString name = l.value(QStringLiteral("layer")).toString();
        const auto p = precisionFromKey(l.value(QStringLiteral("precision")).toString());
        const auto m = methodFromKey(l.value(QStringLiteral("method")).toString());
        if (name.isEmpty() || !p || !m) {
            *error = ConfigurationModel::tr("plan entry %1 is malformed").arg(names.size());
            return false;
        }
        LayerSetting s;
        s.precision = *p;
        s.method = *m;
        s.group = int64_t(l.value(QStringLiteral("group")).toDouble(32));
        s.symmetric = l.value(QStringLiteral("symmetric")).toBool(true);
        s.pruning = l.value(QStringLiteral("pruning")).toDouble(0);
        names.push_back(name);
        out.push_back(s);
    }
    *layers = std::move(names);
    *settings = std::move(out);
    return true;
}

QJsonObject configurationToJson(const Configuration& c) {
    QJsonObject o{{QStringLiteral("name"), c.name},
                  {QStringLiteral("ppl_ref"), c.pplRef},
                  {QStringLiteral("ppl"), c.ppl},
                  {QStringLiteral("kl_mean"), c.klMean},
                  {QStringLiteral("top1"), c.top1},
                  {QStringLiteral("decode_ms"), c.decodeMs},
                  {QStringLiteral("tokens_per_s"), c.tokensPerS},
                  {QStringLiteral("bytes"), double(c.bytes)},
                  {QStringLiteral("fp32_bytes"), double(c.fp32Bytes)},
                  {QStringLiteral("passed"), c.passed},
                  {QStringLiteral("failures"), QJsonArray::fromStringList(c.failures)},
                  {QStringLiteral("when"), c.when.toString(Qt::ISODate)}};
    o.insert(QStringLiteral("plan"), settingsToJson(c.layers, c.settings));
    return o;
}

bool configurationFromJson(const QJsonObject& o, Configuration* c, QString* error) {
    Configuration r;
    r.name = o.value(QStringLiteral("name")).toString();
    if (r.name.isEmpty() || !o.value(QStringLiteral("ppl")).isDouble()) {
        *error = ConfigurationModel::tr("a configuration has no name or perplexity");
        return false;
    }
    r.pplRef = o.value(QStringLiteral("ppl_ref")).toDouble();
    r.ppl = o.value(QStringLiteral("ppl")).toDouble();
    r.klMean = o.value(QStringLiteral("kl_mean")).toDouble();
    r.top1 = o.value(QStringLiteral("top1")).toDouble();
    r.decodeMs = o.value(QStringLiteral("decode_ms")).toDouble();
    r.tokensPerS = o.value(QStringLiteral("tokens_per_s")).toDouble();
    r.bytes = quint64(o.value(QStringLiteral("bytes")).toDouble());
    r.fp32Bytes = quint64(o.value(QStringLiteral("fp32_bytes")).toDouble());
    r.passed = o.value(QStringLiteral("passed")).toBool();
    for (const QJsonValue& f : o.value(QStringLiteral("failures")).toArray()) r.failures << f.toString();
    r.when = QDateTime::fromString(o.value(QStringLiteral("when")).toString(), Qt::ISODate);
    if (!settingsFromJson(o.value(QStringLiteral("plan")).toObject(), &r.layers, &r.settings, error)) return false;
    *c = std::move(r);
    return true;
}

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

QString ConfigurationModel::nextName() const { return QStringLiteral("C%1").arg(list_.size() + 1); }

double ConfigurationModel::cost(const Configuration& c, Cost cost) {
    return cost == Latency ? c.decodeMs : double(c.bytes);
}

std::vector<int> ConfigurationModel::front(Cost which) const {
    std::vector<double> x, y;
    for (const auto& c : list_) {
        x.push_back(cost(c, which));
        y.push_back(c.ppl);
    }
    return paretoFront(x, y);
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
    }
    endResetModel();
}

int PlanDiffModel::differences() const {
    return int(std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.differs; }));
}

int PlanDiffModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int PlanDiffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PlanDiffModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Row& r = rows_[size_t(index.row())];
    if (role == DiffRole) return r.differs;
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
