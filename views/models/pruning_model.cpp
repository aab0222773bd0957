#include "views/models/pruning_model.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

#include "views/models/format.h"

namespace edge::views {

QString unitKindText(edge::prune::UnitKind kind) {
    switch (kind) {
        case edge::prune::UnitKind::AttentionHeads: return QCoreApplication::translate("PruningModel", "KV heads");
        case edge::prune::UnitKind::MlpChannels: return QCoreApplication::translate("PruningModel", "MLP channels");
        case edge::prune::UnitKind::ConvChannels: return QCoreApplication::translate("PruningModel", "conv channels");
    }
    return QString();
}

PruningModel::PruningModel(QObject* parent) : QAbstractTableModel(parent) {}

int PruningModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !has_ ? 0 : int(report_.layers.size());
}
int PruningModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

void PruningModel::setReport(const edge::prune::PruneReport& report) {
    beginResetModel();
    report_ = report;
    has_ = true;
    endResetModel();
}

void PruningModel::clear() {
    beginResetModel();
    report_ = {};
    has_ = false;
    rules_.clear();
    endResetModel();
}

int PruningModel::rowOfLayer(const QString& layer) const {
    for (size_t i = 0; i < report_.layers.size(); ++i)
        if (QString::fromStdString(report_.layers[i].layer) == layer) return int(i);
    return -1;
}

edge::prune::PruneSpec PruningModel::spec() const {
    edge::prune::PruneSpec s;
    s.importance = edge::prune::Importance::Magnitude;
    s.ratio = global_;
    s.heads = heads_;
    s.mlp = mlp_;
    s.conv = true;
    for (auto it = rules_.cbegin(); it != rules_.cend(); ++it) s.rules.emplace_back(it.key().toStdString(), it.value());
    return s;
}

void PruningModel::setGlobalRatio(double ratio) {
    ratio = std::clamp(ratio, 0.0, 0.95);
    if (ratio == global_) return;
    global_ = ratio;
    emit specChanged();
}

void PruningModel::setKinds(bool heads, bool mlp) {
    if (heads == heads_ && mlp == mlp_) return;
    heads_ = heads;
    mlp_ = mlp;
    emit specChanged();
}

bool PruningModel::setLayerRatio(int row, double ratio) {
    if (!has_ || row < 0 || row >= rowCount() || !mask(row).prunable) return false;
    rules_[QString::fromStdString(mask(row).layer)] = std::clamp(ratio, 0.0, 1.0);
    emit specChanged();
    return true;
}

void PruningModel::dropRule(const QString& layer) { rules_.remove(layer); }

void PruningModel::clearRules() {
    if (rules_.isEmpty()) return;
    rules_.clear();
    emit specChanged();
}

void PruningModel::retranslate() {
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

Qt::ItemFlags PruningModel::flags(const QModelIndex& index) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == RatioColumn && mask(index.row()).prunable) f |= Qt::ItemIsEditable;
    return f;
}

QVariant PruningModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const edge::prune::LayerMask& m = mask(index.row());
    if (role == Qt::EditRole && index.column() == RatioColumn) return m.ratio() * 100.0;
    if (role == Qt::ToolTipRole && !m.prunable) return QString::fromStdString(m.pinned_reason);
    if (role == Qt::TextAlignmentRole && index.column() >= UnitsColumn)
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    switch (index.column()) {
        case LayerColumn: return QString::fromStdString(m.layer);
        case KindColumn: return unitKindText(m.kind);
        case UnitsColumn: return QString::number(m.units);
        case KeptColumn: return QString::number(m.kept());
        case RatioColumn:
            if (!m.prunable) return tr("pinned");
            return QString(QString::number(m.ratio() * 100.0, 'f', 1) + QStringLiteral(" %"));
        case ParamsColumn:
            return QString(compactCount(m.params_before) + QStringLiteral(" → ") + compactCount(m.params_after));
        default: return {};
    }
}

bool PruningModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || index.column() != RatioColumn) return false;
    bool ok = false;
    const double percent = value.toDouble(&ok);
    if (!ok || percent < 0 || percent > 100) return false;
    return setLayerRatio(index.row(), percent / 100.0);
}

QVariant PruningModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case LayerColumn: return tr("Group");
        case KindColumn: return tr("Units");
        case UnitsColumn: return tr("Count");
        case KeptColumn: return tr("Kept");
        case RatioColumn: return tr("Pruned");
        case ParamsColumn: return tr("Parameters");
        default: return {};
    }
}

}  // namespace edge::views
