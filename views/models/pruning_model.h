// The Pruning page's table (QtCore only): one row per prune group of the open model (an LLM
// block's attention KV heads or MLP channels, a CNN conv's output channels) from
// engine/prune/structured.h, with the units kept, the ratio (editable in place, in %) and the
// parameters before and after. Editing a ratio records a rule for that group and emits
// specChanged(); the page re-plans (a job) and hands the new report back with setReport().
#pragma once
#include <QAbstractTableModel>
#include <QMap>
#include <QString>

#include "engine/prune/structured.h"

namespace edge::views {

class PruningModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { LayerColumn, KindColumn, UnitsColumn, KeptColumn, RatioColumn, ParamsColumn, ColumnCount };

    explicit PruningModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The masks to show (a new plan's report); keeps the per-group ratios of the spec.
    void setReport(const edge::prune::PruneReport& report);
    void clear();
    bool hasReport() const { return has_; }
    const edge::prune::PruneReport& report() const { return report_; }
    const edge::prune::LayerMask& mask(int row) const { return report_.layers[size_t(row)]; }
    int rowOfLayer(const QString& layer) const;

    // The spec the next plan runs with: the global ratio for the kinds ticked, plus one rule per
    // group whose ratio was edited.
    edge::prune::PruneSpec spec() const;
    void setGlobalRatio(double ratio);  // 0..1
    double globalRatio() const { return global_; }
    void setKinds(bool heads, bool mlp);
    // A per-group ratio (0..1); false when the row cannot be pruned.
    bool setLayerRatio(int row, double ratio);
    // Drops the rule of one group (after the engine refused it).
    void dropRule(const QString& layer);
    void clearRules();
    QMap<QString, double> rules() const { return rules_; }
    void retranslate();

signals:
    void specChanged();

private:
    edge::prune::PruneReport report_;
    bool has_ = false;
    double global_ = 0.0;
    bool heads_ = true, mlp_ = true;
    QMap<QString, double> rules_;
};

QString unitKindText(edge::prune::UnitKind kind);

}  // namespace edge::views
