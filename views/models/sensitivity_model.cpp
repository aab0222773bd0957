#include "views/models/sensitivity_model.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/tokenizer/tokenizer.h"
#include "engine/validate/perplexity.h"
#include "views/models/validation_run.h"

namespace edge::views {
namespace {
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
}

edge::Result<std::vector<edge::quant::LayerSensitivity>> runSensitivity(const std::shared_ptr<const LoadedModel>& model,
                                                                        const SensitivitySettings& s,
                                                                        edge::Progress* progress) {
    if (!model) return edge::Error{SensitivityModel::tr("Sensitivity: no model is open").toStdString()};
    QFile file(s.textPath);
    if (!file.open(QIODevice::ReadOnly))
        return edge::Error{
            SensitivityModel::tr("Sensitivity: cannot read the evaluation text %1").arg(s.textPath).toStdString()};
    const std::string text = file.readAll().toStdString();
    auto tok = edge::tokenizer::make_tokenizer(model->model.tokenizer);
    if (!tok.ok()) return tok.error();
    edge::validate::PplOptions po;
    po.protocol = edge::validate::PplProtocol::Story;
    po.max_parts = s.maxParts;
    po.max_tokens = s.maxTokens;
    auto seqs = edge::validate::ppl_sequences(**tok, text, po);
    if (!seqs.ok()) return seqs.error();
    edge::quant::SensitivityOptions so;
    so.threads = workerThreads();
    // Block-streamed: a lazily opened model is read one block at a time (no FP32 copy of it).
    return edge::quant::layer_sensitivity(model->model, *seqs, so, progress);
}

SensitivityModel::SensitivityModel(QObject* parent) : QAbstractTableModel(parent) {}

void SensitivityModel::setModel(const std::shared_ptr<const LoadedModel>& model) {
    beginResetModel();
    layers_.clear();
    metrics_.clear();
    empirical_.clear();
    spectra_.clear();
    if (model)
        for (const auto& l : model->layers) layers_.push_back(QString::fromStdString(l.name));
    endResetModel();
    emit metricsChanged();
}

void SensitivityModel::setMetric(const QString& key, std::vector<double> values) {
    Metric m{key, std::move(values), 0.0};
    for (double v : m.values)
        if (std::isfinite(v)) m.max = std::max(m.max, std::abs(v));
    auto it = std::find_if(metrics_.begin(), metrics_.end(), [&](const Metric& x) { return x.key == key; });
    if (it != metrics_.end())
        *it = std::move(m);
    else
        metrics_.push_back(std::move(m));
}

void SensitivityModel::setEmpirical(const std::vector<edge::quant::LayerSensitivity>& s) {
    beginResetModel();
    empirical_ = s;
    std::vector<double> kl(layers_.size(), kNone), klMax(layers_.size(), kNone), nll(layers_.size(), kNone);
    for (const auto& e : s) {
        const int row = rowOfLayer(QString::fromStdString(e.layer));
        if (row < 0) continue;
        kl[size_t(row)] = e.kl_mean;
        klMax[size_t(row)] = e.kl_max;
        nll[size_t(row)] = e.nll_delta;
    }
    setMetric(QStringLiteral("kl_mean"), kl);
    setMetric(QStringLiteral("kl_max"), klMax);
    setMetric(QStringLiteral("nll_delta"), nll);
    endResetModel();
    emit metricsChanged();
}

Result SensitivityModel::loadAnalysisJson(const QByteArray& json, const QString& source) {
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (doc.isNull() || !doc.isObject()) {
        return Result::failure(tr("%1: not a JSON object (%2)").arg(source, pe.errorString()));
    }
    const QJsonValue layersValue = doc.object().value(QStringLiteral("layers"));
    std::vector<std::pair<QString, QJsonObject>> entries;
    if (layersValue.isArray()) {
        for (const auto& v : layersValue.toArray()) {
            const QJsonObject o = v.toObject();
            entries.emplace_back(o.value(QStringLiteral("layer")).toString(), o);
        }
    } else if (layersValue.isObject()) {
        const QJsonObject o = layersValue.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) entries.emplace_back(it.key(), it.value().toObject());
    } else {
        return Result::failure(tr("%1: no \"layers\" array or object").arg(source));
    }
    std::map<QString, std::vector<double>> metrics;
    std::map<QString, std::vector<double>> spectra;
    QStringList order;
    for (const auto& [name, o] : entries) {
        const int row = rowOfLayer(name);
        if (row < 0) {
            return Result::failure(tr("%1: layer '%2' is not in the open model").arg(source, name));
        }
        for (auto it = o.begin(); it != o.end(); ++it) {
            static const QStringList kNotMetrics{QStringLiteral("block"), QStringLiteral("params"),
                                                 QStringLiteral("rank"), QStringLiteral("int4_bytes")};
            if (it.value().isDouble() && !kNotMetrics.contains(it.key())) {
                auto& v = metrics[it.key()];
                if (v.empty()) {
                    v.assign(layers_.size(), kNone);
                    order << it.key();
                }
                v[size_t(row)] = it.value().toDouble();
            } else if (it.value().isArray() &&
                       (it.key() == QStringLiteral("spectrum") || it.key() == QStringLiteral("eigenvalues"))) {
                std::vector<double> s;
                for (const auto& x : it.value().toArray()) s.push_back(x.toDouble());
                spectra[name] = std::move(s);
            }
        }
    }
    if (metrics.empty() && spectra.empty()) {
        return Result::failure(tr("%1: no numeric per-layer values").arg(source));
    }
    beginResetModel();
    for (const QString& key : order) setMetric(key, metrics[key]);
    for (auto& [k, v] : spectra) spectra_[k] = std::move(v);
    endResetModel();
    emit metricsChanged();
    return {};
}

int SensitivityModel::rowOfLayer(const QString& name) const {
    auto it = std::find(layers_.begin(), layers_.end(), name);
    return it == layers_.end() ? -1 : int(it - layers_.begin());
}

QString SensitivityModel::metricLabel(int metric) const {
    QString key = metricKey(metric);
    if (key == QStringLiteral("kl_mean")) return tr("INT4 KL, mean");
    if (key == QStringLiteral("kl_max")) return tr("INT4 KL, max");
    if (key == QStringLiteral("nll_delta")) return tr("INT4 ΔNLL");
    return key;
}

double SensitivityModel::value(int row, int metric) const {
    if (metric < 0 || metric >= metricCount() || row < 0 || row >= layerCount()) return kNone;
    return metrics_[size_t(metric)].values[size_t(row)];
}

double SensitivityModel::normalized(int row, int metric) const {
    const double v = value(row, metric);
    if (!std::isfinite(v)) return kNone;
    const double m = metrics_[size_t(metric)].max;
    return m > 0 ? std::abs(v) / m : 0.0;
}

std::vector<double> SensitivityModel::spectrum(const QString& layer) const {
    auto it = spectra_.find(layer);
    return it == spectra_.end() ? std::vector<double>{} : it->second;
}

QStringList SensitivityModel::ranked(int metric) const {
    std::vector<int> rows(layers_.size());
    std::iota(rows.begin(), rows.end(), 0);
    auto key = [&](int r) {
        const double v = value(r, metric);
        return std::isfinite(v) ? v : -std::numeric_limits<double>::infinity();
    };
    std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) { return key(a) > key(b); });
    QStringList out;
    for (int r : rows) out << layers_[size_t(r)];
    return out;
}

void SensitivityModel::retranslate() {
    if (columnCount() > 0) emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
}

int SensitivityModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : layerCount(); }
int SensitivityModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : 1 + metricCount(); }

QVariant SensitivityModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const int row = index.row();
    if (role == LayerNameRole) return layers_[size_t(row)];
    if (index.column() == 0) return role == Qt::DisplayRole ? QVariant(layers_[size_t(row)]) : QVariant();
    const int metric = index.column() - 1;
    const double v = value(row, metric);
    switch (role) {
        case Qt::DisplayRole: return std::isfinite(v) ? QString::number(v, 'g', 4) : QStringLiteral("—");
        case ValueRole: return v;
        case NormalizedRole: return normalized(row, metric);
        case Qt::TextAlignmentRole: return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        default: return {};
    }
}

QVariant SensitivityModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == 0) return tr("Layer");
    if (section - 1 < metricCount()) return metricLabel(section - 1);
    return {};
}

}  // namespace edge::views
