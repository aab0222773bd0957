#include "views/models/layer_tree_model.h"

#include <QFileInfo>
#include <QFont>
#include <QFontDatabase>
#include <QHash>

#include "views/models/format.h"

namespace edge::views {

struct LayerTreeModel::Node {
    NodeKind kind = ModelNode;
    Node* parent = nullptr;
    int row = 0;
    int block = -1;
    int layer = -1;  // index into LoadedModel::layers for LayerNode
    int64_t params = 0;
    uint64_t bytes = 0;
    std::vector<std::unique_ptr<Node>> children;

    Node* add(std::unique_ptr<Node> child) {
        child->parent = this;
        child->row = int(children.size());
        children.push_back(std::move(child));
        return children.back().get();
    }
};

LayerTreeModel::LayerTreeModel(QObject* parent) : QAbstractItemModel(parent) {}
LayerTreeModel::~LayerTreeModel() = default;

void LayerTreeModel::setModel(std::shared_ptr<const LoadedModel> model) {
    beginResetModel();
    model_ = std::move(model);
    root_.reset();
    if (model_) {
        root_ = std::make_unique<Node>();
        Node* top = root_->add(std::make_unique<Node>());
        top->kind = ModelNode;
        QHash<int, Node*> blocks;
        const auto& layers = model_->layers;
        for (int i = 0; i < int(layers.size()); ++i) {
            const edge::model::LayerInfo& li = layers[size_t(i)];
            Node* parent = top;
            if (li.block >= 0) {
                Node*& b = blocks[li.block];
                if (!b) {
                    auto n = std::make_unique<Node>();
                    n->kind = BlockNode;
                    n->block = li.block;
                    b = top->add(std::move(n));
                }
                parent = b;
            }
            auto n = std::make_unique<Node>();
            n->kind = LayerNode;
            n->block = li.block;
            n->layer = i;
            n->params = li.params;
            n->bytes = li.bytes;
            parent->add(std::move(n));
            for (Node* up = parent; up && up != root_.get(); up = up->parent) {
                up->params += li.params;
                up->bytes += li.bytes;
            }
        }
    }
    endResetModel();
}

QModelIndex LayerTreeModel::indexOfLayer(const QString& name) const {
    if (!model_ || !root_) return {};
    const std::string wanted = name.toStdString();
    const Node* top = root_->children.front().get();
    for (const auto& child : top->children) {
        if (child->kind == LayerNode && model_->layers[size_t(child->layer)].name == wanted)
            return createIndex(child->row, 0, child.get());
        for (const auto& leaf : child->children)
            if (model_->layers[size_t(leaf->layer)].name == wanted) return createIndex(leaf->row, 0, leaf.get());
    }
    return {};
}

void LayerTreeModel::retranslate() {
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!root_) return;
    // Group names ("Block 3"), kinds and type notes are translated: refresh every row.
    std::vector<const Node*> parents{root_.get()};
    while (!parents.empty()) {
        const Node* p = parents.back();
        parents.pop_back();
        if (p->children.empty()) continue;
        emit dataChanged(createIndex(0, 0, p->children.front().get()),
                         createIndex(int(p->children.size()) - 1, ColumnCount - 1, p->children.back().get()));
        for (const auto& c : p->children) parents.push_back(c.get());
    }
}

const LayerTreeModel::Node* LayerTreeModel::nodeOf(const QModelIndex& index) const {
    if (!index.isValid()) return root_.get();
    return static_cast<const Node*>(index.internalPointer());
}

QModelIndex LayerTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    const Node* p = nodeOf(parent);
    if (!p || row >= int(p->children.size())) return {};
    return createIndex(row, column, p->children[size_t(row)].get());
}

QModelIndex LayerTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const Node* n = nodeOf(child);
    const Node* p = n->parent;
    if (!p || p == root_.get()) return {};
    return createIndex(p->row, 0, p);
}

int LayerTreeModel::rowCount(const QModelIndex& parent) const {
    if (parent.column() > 0) return 0;
    const Node* n = nodeOf(parent);
    return n ? int(n->children.size()) : 0;
}

int LayerTreeModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant LayerTreeModel::displayText(const Node& node, int column) const {
    const LoadedModel& m = *model_;
    switch (column) {
        case NameColumn:
            if (node.kind == ModelNode) {
                const QString name = QString::fromStdString(m.model.name);
                return name.isEmpty() ? QFileInfo(QString::fromStdString(m.model.source_path)).fileName() : name;
            }
            if (node.kind == BlockNode) return tr("Block %1").arg(node.block);
            return QString::fromStdString(m.layers[size_t(node.layer)].name);
        case KindColumn:
            if (node.kind == ModelNode) return QString::fromStdString(m.model.architecture);
            if (node.kind == BlockNode) return tr("decoder block");
            return QString::fromStdString(m.layers[size_t(node.layer)].kind);
        case ShapeColumn:
            if (node.kind != LayerNode)
                return tr("%n layer(s)", nullptr,
                          node.kind == BlockNode ? int(node.children.size()) : int(m.layers.size()));
            return shapeText(m.layers[size_t(node.layer)].shape);
        case ParamsColumn: return groupedCount(node.params);
        case BytesColumn: return humanBytes(node.bytes);
        case TypeColumn: {
            if (node.kind != LayerNode) return {};
            const edge::model::LayerInfo& li = m.layers[size_t(node.layer)];
            const QString now = QString::fromLatin1(edge::dtype_name(li.type));
            if (li.source_type == li.type) return now;
            return tr("%1 (from %2)").arg(now, QString::fromLatin1(edge::dtype_name(li.source_type)));
        }
        default: return {};
    }
}

QVariant LayerTreeModel::sortValue(const Node& node, int column) const {
    switch (column) {
        case ParamsColumn: return qlonglong(node.params);
        case BytesColumn: return qulonglong(node.bytes);
        case NameColumn: return node.kind == LayerNode ? node.layer : node.block;
        default: return displayText(node, column);
    }
}

QVariant LayerTreeModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !model_) return {};
    const Node& node = *nodeOf(index);
    const int column = index.column();
    switch (role) {
        case Qt::DisplayRole:
        case Qt::ToolTipRole: return displayText(node, column);
        case SortRole: return sortValue(node, column);
        case LayerNameRole:
            return node.kind == LayerNode ? QString::fromStdString(model_->layers[size_t(node.layer)].name) : QString();
        case NodeKindRole: return int(node.kind);
        case Qt::TextAlignmentRole:
            if (column == ParamsColumn || column == BytesColumn)
                return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
            return {};
        case Qt::FontRole: {
            if (column == ShapeColumn || column == ParamsColumn || column == BytesColumn || column == TypeColumn) {
                if (node.kind == LayerNode || column != ShapeColumn)
                    return QFontDatabase::systemFont(QFontDatabase::FixedFont);
            }
            if (node.kind != LayerNode && column == NameColumn) {
                QFont f;
                f.setBold(true);
                return f;
            }
            return {};
        }
        default: return {};
    }
}

QVariant LayerTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case NameColumn: return tr("Name");
        case KindColumn: return tr("Kind");
        case ShapeColumn: return tr("Shape");
        case ParamsColumn: return tr("Parameters");
        case BytesColumn: return tr("Bytes");
        case TypeColumn: return tr("Type");
        default: return {};
    }
}

}  // namespace edge::views
