#include "views/models/layer_filter_model.h"

#include "views/models/layer_plan_model.h"

namespace edge::views {

LayerFilterModel::LayerFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(LayerPlanModel::SortRole);
}

void LayerFilterModel::setFilterText(const QString& text) {
    if (text.trimmed() == text_) return;
    text_ = text.trimmed();
    invalidateFilter();
}

void LayerFilterModel::setKindFilter(const QString& kind) {
    if (kind == kind_) return;
    kind_ = kind;
    invalidateFilter();
}

void LayerFilterModel::setBlockFilter(int block) {
    if (block == block_) return;
    block_ = block;
    invalidateFilter();
}

bool LayerFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QModelIndex idx = sourceModel()->index(sourceRow, 0, sourceParent);
    const QString kind = idx.data(LayerPlanModel::KindRole).toString();
    if (!kind_.isEmpty() && kind != kind_) return false;
    if (block_ != kAllBlocks && idx.data(LayerPlanModel::BlockRole).toInt() != block_) return false;
    if (text_.isEmpty()) return true;
    return idx.data(LayerPlanModel::LayerNameRole).toString().contains(text_, Qt::CaseInsensitive) ||
           kind.contains(text_, Qt::CaseInsensitive);
}

bool LayerFilterModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant a = left.data(sortRole()), b = right.data(sortRole());
    const int c = QVariant::compare(a, b) == QPartialOrdering::Less      ? -1
                  : QVariant::compare(a, b) == QPartialOrdering::Greater ? 1
                                                                         : 0;
    if (c != 0) return c < 0;
    return left.row() < right.row();  // stable: ties keep model order
}

}  // namespace edge::views
