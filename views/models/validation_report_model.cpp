#include "views/models/validation_report_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>

#include "views/models/validation_run.h"

namespace edge::views {
namespace {
QString num(double v, int digits) { return QString::number(v, 'f', digits); }
}  // namespace

ValidationReportModel::ValidationReportModel(QObject* parent) : QAbstractTableModel(parent) {}

void ValidationReportModel::setReport(const edge::validate::ValidationReport& report) {
    beginResetModel();
    report_ = report;
    endResetModel();
    emit verdictChanged();
}

void ValidationReportModel::clear() {
    beginResetModel();
    report_.reset();
    endResetModel();
    emit verdictChanged();
}

void ValidationReportModel::setThresholds(const edge::validate::Thresholds& t) {
    thresholds_ = t;
    if (rowCount() > 0) emit dataChanged(index(0, ThresholdColumn), index(CheckCount - 1, VerdictColumn));
    emit thresholdsChanged();
    emit verdictChanged();
}

void ValidationReportModel::retranslate() {
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    emit dataChanged(index(0, 0), index(CheckCount - 1, ColumnCount - 1));
}

int ValidationReportModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : CheckCount; }
int ValidationReportModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

std::optional<double> ValidationReportModel::threshold(int check) const {
    switch (check) {
        case KlMean: return thresholds_.kl_mean_max;
        case Scales: return thresholds_.scale_ratio_warn;
        case BitFlip: return thresholds_.bitflip_conf_drop_max * 100.0;  // shown in percent
        case Jitter: return thresholds_.jitter_ms_max;
        default: return std::nullopt;
    }
}

ValidationReportModel::Verdict ValidationReportModel::verdict(int check) const {
    if (!report_) return NotJudged;
    const edge::validate::ValidationReport& r = *report_;
    switch (check) {
        case KlMean: return r.consistency.kl_mean < thresholds_.kl_mean_max ? Pass : Fail;
        case Health:
            return std::all_of(r.health.begin(), r.health.end(), [](const auto& h) { return h.nan + h.inf == 0; })
                       ? Pass
                       : Fail;
        case Scales:
            return std::all_of(r.scales.begin(), r.scales.end(),
                               [&](const auto& s) { return s.ratio <= thresholds_.scale_ratio_warn; })
                       ? Pass
                       : Warn;
        case BitFlip:
            if (!r.bitflip_ran) return NotJudged;
            return r.bitflip_conf_drop > thresholds_.bitflip_conf_drop_max ? Fail : Pass;
        case Jitter: return r.jitter.p99_ms - r.jitter.p50_ms < thresholds_.jitter_ms_max ? Pass : Fail;
        default: return NotJudged;
    }
}

bool ValidationReportModel::passed() const { return report_ && failures().isEmpty(); }

QStringList ValidationReportModel::failures() const {
    return report_ ? validationFailures(*report_, thresholds_) : QStringList();
}

QString ValidationReportModel::checkName(int check) const {
    switch (check) {
        case Perplexity: return tr("Perplexity (FP32 → quantized)");
        case KlMean: return tr("Mean KL divergence");
        case KlP99: return tr("KL divergence, p99");
        case Top1: return tr("Top-1 agreement");
        case Health: return tr("Numeric health (NaN / Inf)");
        case Scales: return tr("Scale dynamic range");
        case BitFlip: return tr("Bit flips: top-1 confidence drop");
        case Jitter: return tr("Decode jitter (p99 − p50)");
        default: return QString();
    }
}

QString ValidationReportModel::valueText(int check) const {
    if (!report_) return QStringLiteral("—");
    const edge::validate::ValidationReport& r = *report_;
    const auto& c = r.consistency;
    switch (check) {
        case Perplexity: return tr("%1 → %2 (%3 tokens)").arg(num(c.ppl_ref, 4), num(c.ppl_test, 4)).arg(c.tokens);
        case KlMean: return num(c.kl_mean, 5);
        case KlP99: return num(c.kl_p99, 5);
        case Top1: return tr("%1 %").arg(num(100.0 * c.top1_agreement, 2));
        case Health: {
            int64_t bad = 0, values = 0;
            for (const auto& h : r.health) {
                bad += h.nan + h.inf;
                values += h.values;
            }
            return tr("%1 non-finite of %2 activations in %3 layers").arg(bad).arg(values).arg(r.health.size());
        }
        case Scales: {
            double worst = 0;
            for (const auto& s : r.scales) worst = std::max(worst, s.ratio);
            return r.scales.empty()
                       ? tr("no quantized scales")
                       : tr("max %1 over %2 tensors").arg(QString::number(worst, 'g', 3)).arg(r.scales.size());
        }
        case BitFlip:
            if (!r.bitflip_ran) return tr("not run");
            return tr("%1 % (%2 codes flipped, top-1 agreement %3 %)")
                .arg(num(100.0 * r.bitflip_conf_drop, 2))
                .arg(r.bitflip_count)
                .arg(num(100.0 * r.bitflip.top1_agreement, 1));
        case Jitter:
            return tr("%1 ms (p50 %2 ms, p99 %3 ms, %4 tokens/s)")
                .arg(num(r.jitter.p99_ms - r.jitter.p50_ms, 3), num(r.jitter.p50_ms, 3), num(r.jitter.p99_ms, 3),
                     num(r.jitter.tokens_per_s, 0));
        default: return QString();
    }
}

QString ValidationReportModel::thresholdText(int check) const {
    const auto t = threshold(check);
    if (!t) return QStringLiteral("—");
    switch (check) {
        case KlMean: return tr("< %1").arg(num(*t, 4));
        case Scales: return tr("≤ %1").arg(QString::number(*t, 'g', 3));
        case BitFlip: return tr("≤ %1 %").arg(num(*t, 1));
        case Jitter: return tr("< %1 ms").arg(num(*t, 2));
        default: return QString();
    }
}

QVariant ValidationReportModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= CheckCount) return {};
    const int check = index.row();
    const Verdict v = verdict(check);
    if (role == VerdictRole) return int(v);
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
            case CheckColumn: return checkName(check);
            case ValueColumn: return valueText(check);
            case ThresholdColumn: return thresholdText(check);
            case VerdictColumn:
                switch (v) {
                    case Pass: return tr("pass");
                    case Fail: return tr("FAIL");
                    case Warn: return tr("warning");
                    default: return report_ ? tr("info") : QStringLiteral("—");
                }
        }
    }
    if (role == Qt::EditRole && index.column() == ThresholdColumn) {
        if (auto t = threshold(check)) return *t;
        return {};
    }
    if (role == Qt::ForegroundRole && index.column() == VerdictColumn) {
        if (v == Pass) return QBrush(QColor(0x1b, 0x7f, 0x3b));
        if (v == Fail) return QBrush(QColor(0xc0, 0x1c, 0x28));
        if (v == Warn) return QBrush(QColor(0xb3, 0x6b, 0x00));
    }
    if (role == Qt::FontRole && index.column() == VerdictColumn && v == Fail) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

bool ValidationReportModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::EditRole || index.column() != ThresholdColumn) return false;
    bool ok = false;
    const double v = value.toDouble(&ok);
    if (!ok || !(v > 0)) return false;
    edge::validate::Thresholds t = thresholds_;
    switch (index.row()) {
        case KlMean: t.kl_mean_max = v; break;
        case Scales: t.scale_ratio_warn = v; break;
        case BitFlip: t.bitflip_conf_drop_max = v / 100.0; break;
        case Jitter: t.jitter_ms_max = v; break;
        default: return false;
    }
    setThresholds(t);
    return true;
}

Qt::ItemFlags ValidationReportModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == ThresholdColumn && threshold(index.row())) f |= Qt::ItemIsEditable;
    return f;
}

QVariant ValidationReportModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case CheckColumn: return tr("Check");
        case ValueColumn: return tr("Measured");
        case ThresholdColumn: return tr("Threshold");
        case VerdictColumn: return tr("Result");
        default: return {};
    }
}

ValidationLayerModel::ValidationLayerModel(QObject* parent) : QAbstractTableModel(parent) {}

void ValidationLayerModel::setReport(const edge::validate::ValidationReport* report) {
    beginResetModel();
    rows_.clear();
    if (report) {
        auto rowOf = [&](const QString& layer) -> Row& {
            for (Row& r : rows_)
                if (r.layer == layer) return r;
            rows_.push_back(Row{layer});
            return rows_.back();
        };
        for (const auto& h : report->health) {
            Row& r = rowOf(QString::fromStdString(h.layer));
            r.values = h.values;
            r.nan = h.nan;
            r.inf = h.inf;
        }
        for (const auto& sc : report->scales) {
            QString name = QString::fromStdString(sc.tensor);
            if (name.endsWith(QLatin1String(".weight"))) name.chop(7);
            Row& r = rowOf(name);
            r.scaleMin = sc.min_abs;
            r.scaleMax = sc.max_abs;
            r.ratio = sc.ratio;
        }
    }
    endResetModel();
}

void ValidationLayerModel::retranslate() { emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1); }

int ValidationLayerModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int ValidationLayerModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ValidationLayerModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Row& r = rows_[size_t(index.row())];
    const bool hasScales = r.ratio >= 0;
    if (role == SortRole) {
        switch (index.column()) {
            case LayerColumn: return index.row();  // execution order
            case ValuesColumn: return qlonglong(r.values);
            case NanColumn: return qlonglong(r.nan);
            case InfColumn: return qlonglong(r.inf);
            case ScaleMinColumn: return r.scaleMin;
            case ScaleMaxColumn: return r.scaleMax;
            case RatioColumn: return r.ratio;
        }
    }
    if (role == Qt::DisplayRole) {
        const QString none = QStringLiteral("—");
        switch (index.column()) {
            case LayerColumn: return r.layer;
            case ValuesColumn: return r.values >= 0 ? QString::number(r.values) : none;
            case NanColumn: return r.values >= 0 ? QString::number(r.nan) : none;
            case InfColumn: return r.values >= 0 ? QString::number(r.inf) : none;
            case ScaleMinColumn: return hasScales ? QString::number(r.scaleMin, 'g', 4) : none;
            case ScaleMaxColumn: return hasScales ? QString::number(r.scaleMax, 'g', 4) : none;
            case RatioColumn: return hasScales ? QString::number(r.ratio, 'g', 4) : none;
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() != LayerColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && (r.nan + r.inf) > 0) return QBrush(QColor(0xc0, 0x1c, 0x28));
    return {};
}

QVariant ValidationLayerModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case LayerColumn: return tr("Layer");
        case ValuesColumn: return tr("Activations checked");
        case NanColumn: return tr("NaN");
        case InfColumn: return tr("Inf");
        case ScaleMinColumn: return tr("Smallest scale");
        case ScaleMaxColumn: return tr("Largest scale");
        case RatioColumn: return tr("Scale range");
        default: return {};
    }
}

}  // namespace edge::views
