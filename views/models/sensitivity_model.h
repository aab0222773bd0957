// Per-layer sensitivity for the Sensitivity page (QtCore/QtGui only): rows are the model's layers,
// columns the metrics. The empirical metrics come from engine/quant layer_sensitivity (the KL and
// NLL cost of quantizing one layer alone to INT4 on evaluation text, computed by
// runSensitivity() on a JobSlot); analysis files add more metrics and eigenvalue spectra.
//
// Analysis JSON accepted by loadAnalysisJson(): `edgestudio-cli analyze --out` (docs/analysis.md,
// version 1) — every numeric per-layer key becomes a metric named by its key (importance,
// eig_mean_abs, grad_norm_std, int4_kl, ...; block, params, rank and int4_bytes are not metrics),
// and "eigenvalues" (or "spectrum") is the layer's Hessian eigenvalue spectrum:
//   {"version": 1, "layers": [{"layer": "blk.0.attn_q", "eigenvalues": [0.91, 0.42, -0.12],
//                              "importance": 0.294, "int4_kl": 0.0012, ...}, ...]}
// "layers" may also be an object keyed by layer name. Names the open model lacks are an error.
#pragma once
#include <QAbstractTableModel>
#include <QStringList>

#include <map>
#include <memory>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/quant/sensitivity.h"
#include "views/models/model_document.h"
#include "views/models/result.h"

namespace edge::views {

struct SensitivitySettings {
    QString textPath;
    int maxParts = 4;
    int maxTokens = 96;
};

// layer_sensitivity over the first parts of the text (story protocol), INT4 RTN group 32.
edge::Result<std::vector<edge::quant::LayerSensitivity>> runSensitivity(const std::shared_ptr<const LoadedModel>& model,
                                                                        const SensitivitySettings& s,
                                                                        edge::Progress* progress);

class SensitivityModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role {
        ValueRole = Qt::UserRole,  // double; NaN when the metric has no value for the layer
        NormalizedRole,            // value / max over layers of the metric, in [0,1]
        LayerNameRole,
    };

    explicit SensitivityModel(QObject* parent = nullptr);

    // Clears every metric and lists the model's layers.
    void setModel(const std::shared_ptr<const LoadedModel>& model);
    void setEmpirical(const std::vector<edge::quant::LayerSensitivity>& s);
    const std::vector<edge::quant::LayerSensitivity>& empirical() const { return empirical_; }
    Result loadAnalysisJson(const QByteArray& json, const QString& source);

    int layerCount() const { return int(layers_.size()); }
    QString layer(int row) const { return layers_.at(size_t(row)); }
    int rowOfLayer(const QString& name) const;
    int metricCount() const { return int(metrics_.size()); }
    QString metricKey(int metric) const { return metrics_.at(size_t(metric)).key; }
    QString metricLabel(int metric) const;
    double value(int row, int metric) const;
    double normalized(int row, int metric) const;
    std::vector<double> spectrum(const QString& layer) const;
    bool hasSpectra() const { return !spectra_.empty(); }
    // Layers by decreasing value of `metric` (layers without a value last).
    QStringList ranked(int metric) const;
    void retranslate();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    void metricsChanged();

private:
    struct Metric {
        QString key;
        std::vector<double> values;  // per layer, NaN = none
        double max = 0;
    };
    void setMetric(const QString& key, std::vector<double> values);

    std::vector<QString> layers_;
    std::vector<Metric> metrics_;
    std::vector<edge::quant::LayerSensitivity> empirical_;
    std::map<QString, std::vector<double>> spectra_;
};

}  // namespace edge::views
