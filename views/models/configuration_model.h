// The validated configurations of a project (QtCore/QtGui only): each validation run adds one —
// its per-layer plan, perplexity, KL, top-1 agreement, decode latency and weight bytes — and the
// Pareto page draws them. paretoFront() marks the configurations no other one beats on both
// perplexity and the chosen cost (decode latency or size). PlanDiffModel shows two configurations'
// plans side by side.
#pragma once
#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

#include <vector>

#include "views/models/layer_plan.h"

namespace edge::views {

struct Configuration {
    QString name;
    std::vector<QString> layers;  // canonical names, in model order
    std::vector<LayerSetting> settings;
    double pplRef = 0, ppl = 0, klMean = 0, top1 = 0;
    double decodeMs = 0, tokensPerS = 0;  // mean per-token decode latency of the quantized model
    quint64 bytes = 0, fp32Bytes = 0;
    bool passed = false;
    QStringList failures;  // why it failed, as the Validation page said it
    QDateTime when;
};

QJsonObject settingsToJson(const std::vector<QString>& layers, const std::vector<LayerSetting>& settings);
// false (and `error`) on a malformed object.
bool settingsFromJson(const QJsonObject& o, std::vector<QString>* layers, std::vector<LayerSetting>* settings,
                      QString* error);
QJsonObject configurationToJson(const Configuration& c);
bool configurationFromJson(const QJsonObject& o, Configuration* c, QString* error);

// Indices of the points not dominated (both coordinates minimised), sorted by x.
std::vector<int> paretoFront(const std::vector<double>& x, const std::vector<double>& y);

class ConfigurationModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, PerplexityColumn, KlColumn, LatencyColumn, SizeColumn, VerdictColumn, ColumnCount };
    enum Cost { Latency, Size };
    enum Role { FrontRole = Qt::UserRole, SortRole };

    explicit ConfigurationModel(QObject* parent = nullptr);

    int add(Configuration c);  // returns its row
    void removeLast();
    void setConfigurations(std::vector<Configuration> list);
    const std::vector<Configuration>& configurations() const { return list_; }
    const Configuration& at(int row) const { return list_.at(size_t(row)); }
    QString nextName() const;
    static double cost(const Configuration& c, Cost cost);
    // Rows on the frontier for `cost`.
    std::vector<int> front(Cost cost) const;
    void retranslate();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<Configuration> list_;
};

// Layer × {A, B}: the settings of two configurations; DiffRole is true where they differ.
class PlanDiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { LayerColumn, AColumn, BColumn, ColumnCount };
    enum Role { DiffRole = Qt::UserRole };
    explicit PlanDiffModel(QObject* parent = nullptr);
    void setPair(const Configuration* a, const Configuration* b);
    int differences() const;
    static QString settingText(const LayerSetting& s);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString layer;
        QString a, b;
        bool differs = false;
    };
    std::vector<Row> rows_;
    QString nameA_, nameB_;
};

}  // namespace edge::views
