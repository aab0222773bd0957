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

Result settingsFromJson(const QJsonObject& o, std::vector<QString>* layers, std::vector<LayerSetting>* settings) {
    const QJsonValue v = o.value(QStringLiteral("layers"));
    if (!v.isArray()) {
        return Result::failure(ConfigurationModel::tr("a plan has no \"layers\" array"));
    }
    std::vector<QString> names;
    std::vector<LayerSetting> out;
    for (const QJsonValue& e : v.toArray()) {
        const QJsonObject l = e.toObject();
        const QString name = l.value(QStringLiteral("layer")).toString();
        const auto p = precisionFromKey(l.value(QStringLiteral("precision")).toString());
        const auto m = methodFromKey(l.value(QStringLiteral("method")).toString());
        if (name.isEmpty() || !p || !m) {
            return Result::failure(ConfigurationModel::tr("plan entry %1 is malformed").arg(names.size()));
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
    return {};
}

const EngineArtifact* Configuration::engine(const QString& target) const {
    for (auto it = engines.rbegin(); it != engines.rend(); ++it)
        if (it->target == target) return &*it;
    return nullptr;
}

const BoardMeasurement* Configuration::measurement(const QString& board) const {
    for (auto it = measurements.rbegin(); it != measurements.rend(); ++it)
        if (board.isEmpty() || it->board == board) return &*it;
    return nullptr;
}

namespace {

QJsonObject engineToJson(const EngineArtifact& e) {
    return {{QStringLiteral("target"), e.target},
            {QStringLiteral("path"), e.path},
            {QStringLiteral("sha256"), e.sha256},
            {QStringLiteral("bytes"), double(e.bytes)},
            {QStringLiteral("when"), e.when.toString(Qt::ISODate)}};
}

EngineArtifact engineFromJson(const QJsonObject& o) {
    EngineArtifact e;
    e.target = o.value(QStringLiteral("target")).toString();
    e.path = o.value(QStringLiteral("path")).toString();
    e.sha256 = o.value(QStringLiteral("sha256")).toString();
    e.bytes = quint64(o.value(QStringLiteral("bytes")).toDouble());
    e.when = QDateTime::fromString(o.value(QStringLiteral("when")).toString(), Qt::ISODate);
    return e;
}

QJsonObject measurementToJson(const BoardMeasurement& m) {
    return {{QStringLiteral("board"), m.board},
            {QStringLiteral("machine"), m.machine},
            {QStringLiteral("engine_sha256"), m.engineSha256},
            {QStringLiteral("prompts"), m.prompts},
            {QStringLiteral("tokens"), m.tokens},
            {QStringLiteral("tpot_p50_ms"), m.tpotP50Ms},
            {QStringLiteral("tpot_p99_ms"), m.tpotP99Ms},
            {QStringLiteral("ttft_ms"), m.ttftMs},
            {QStringLiteral("tokens_per_s"), m.tokensPerS},
            {QStringLiteral("peak_rss_mib"), m.peakRssMiB},
            {QStringLiteral("kv_hit_rate"), m.kvHitRate},
            {QStringLiteral("when"), m.when.toString(Qt::ISODate)}};
}

BoardMeasurement measurementFromJson(const QJsonObject& o) {
    BoardMeasurement m;
    m.board = o.value(QStringLiteral("board")).toString();
    m.machine = o.value(QStringLiteral("machine")).toString();
    m.engineSha256 = o.value(QStringLiteral("engine_sha256")).toString();
    m.prompts = o.value(QStringLiteral("prompts")).toInt();
    m.tokens = o.value(QStringLiteral("tokens")).toInt();
    m.tpotP50Ms = o.value(QStringLiteral("tpot_p50_ms")).toDouble();
    m.tpotP99Ms = o.value(QStringLiteral("tpot_p99_ms")).toDouble();
    m.ttftMs = o.value(QStringLiteral("ttft_ms")).toDouble();
    m.tokensPerS = o.value(QStringLiteral("tokens_per_s")).toDouble();
    m.peakRssMiB = o.value(QStringLiteral("peak_rss_mib")).toDouble();
    m.kvHitRate = o.value(QStringLiteral("kv_hit_rate")).toDouble(-1);
    m.when = QDateTime::fromString(o.value(QStringLiteral("when")).toString(), Qt::ISODate);
    return m;
}

}  // namespace

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
    if (!c.evaluationPath.isEmpty() || !c.calibration.isEmpty())
        o.insert(QStringLiteral("calibration"), QJsonObject{{QStringLiteral("file"), c.calibPath},
                                                            {QStringLiteral("note"), c.calibration},
                                                            {QStringLiteral("evaluation"), c.evaluationPath}});
    QJsonArray engines, measurements;
    for (const auto& e : c.engines) engines.append(engineToJson(e));
    for (const auto& m : c.measurements) measurements.append(measurementToJson(m));
    if (!engines.isEmpty()) o.insert(QStringLiteral("engines"), engines);
    if (!measurements.isEmpty()) o.insert(QStringLiteral("measurements"), measurements);
    return o;
}

Result configurationFromJson(const QJsonObject& o, Configuration* c) {
    Configuration r;
    r.name = o.value(QStringLiteral("name")).toString();
    if (r.name.isEmpty() || !o.value(QStringLiteral("ppl")).isDouble()) {
        return Result::failure(ConfigurationModel::tr("a configuration has no name or perplexity"));
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
    const QJsonObject calib = o.value(QStringLiteral("calibration")).toObject();
    r.calibPath = calib.value(QStringLiteral("file")).toString();
    r.calibration = calib.value(QStringLiteral("note")).toString();
    r.evaluationPath = calib.value(QStringLiteral("evaluation")).toString();
    for (const QJsonValue& e : o.value(QStringLiteral("engines")).toArray())
        r.engines.push_back(engineFromJson(e.toObject()));
    for (const QJsonValue& m : o.value(QStringLiteral("measurements")).toArray())
        r.measurements.push_back(measurementFromJson(m.toObject()));
    if (auto plan = settingsFromJson(o.value(QStringLiteral("plan")).toObject(), &r.layers, &r.settings); !plan)
        return plan;
    *c = std::move(r);
    return {};
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

QString ConfigurationModel::nextName() const { return QStringLiteral("C%1").arg(list_.size() + 1); }

double ConfigurationModel::cost(const Configuration& c, Cost cost) {
    switch (cost) {
        case Latency: return c.decodeMs;
        case Size: return double(c.bytes);
        case BoardTpot: {
            const BoardMeasurement* m = c.measurement();
            return m ? m->tpotP50Ms : std::numeric_limits<double>::quiet_NaN();
        }
    }
    return 0;
}

std::vector<int> ConfigurationModel::front(Cost which) const {
    std::vector<double> x, y;
    std::vector<int> rows;  // configurations that have this cost
    for (int r = 0; r < rowCount(); ++r) {
        const double v = cost(list_[size_t(r)], which);
        if (std::isnan(v)) continue;
        x.push_back(v);
        y.push_back(list_[size_t(r)].ppl);
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
