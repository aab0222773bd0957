// Filter and sort for the Layers table (QtCore only): text (matches the layer name or kind, case
// insensitive), kind (exact, empty = all) and block (-1 = layers outside blocks, kAllBlocks = all).
// Sorting reads LayerPlanModel::SortRole, so parameters and bytes sort as numbers and names in
// model order.
#pragma once
#include <QSortFilterProxyModel>

namespace edge::views {

class LayerFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    static constexpr int kAllBlocks = -2;

    explicit LayerFilterModel(QObject* parent = nullptr);

    void setFilterText(const QString& text);
    void setKindFilter(const QString& kind);
    void setBlockFilter(int block);
    QString filterText() const { return text_; }
    QString kindFilter() const { return kind_; }
    int blockFilter() const { return block_; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    QString text_;
    QString kind_;
    int block_ = kAllBlocks;
};

}  // namespace edge::views
