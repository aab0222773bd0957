// The layer tree (QtCore/QtGui only): model → decoder blocks → layers, built from
// edge::list_layers. Columns: name, kind, shape, parameters, bytes, type. Block and model rows
// carry the sums of their layers.
#pragma once
#include <QAbstractItemModel>

#include <memory>
#include <vector>

#include "views/models/model_document.h"

namespace edge::views {

class LayerTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, ShapeColumn, ParamsColumn, BytesColumn, TypeColumn, ColumnCount };
    enum Role {
        LayerNameRole = Qt::UserRole + 1,  // canonical layer name (blk.3.attn_q); empty for groups
        SortRole,                          // raw number for numeric columns, text otherwise
        NodeKindRole,                      // NodeKind
    };
    enum NodeKind { ModelNode, BlockNode, LayerNode };

    explicit LayerTreeModel(QObject* parent = nullptr);
    ~LayerTreeModel() override;

    void setModel(std::shared_ptr<const LoadedModel> model);
    std::shared_ptr<const LoadedModel> loadedModel() const { return model_; }
    // The index (column 0) of a layer by canonical name; invalid when unknown.
    QModelIndex indexOfLayer(const QString& name) const;
    // Re-reads every translated string (after a language switch).
    void retranslate();

    QModelIndex index(int row, int column, const QModelIndex& parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node;
    const Node* nodeOf(const QModelIndex& index) const;
    QVariant displayText(const Node& node, int column) const;
    QVariant sortValue(const Node& node, int column) const;

    std::shared_ptr<const LoadedModel> model_;
    std::unique_ptr<Node> root_;
};

}  // namespace edge::views
