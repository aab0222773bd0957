// Editors for the Layers table (Widgets, so it lives in views/, not views/models): a combo box for
// the columns whose model offers choices (LayerPlanModel::ChoiceValuesRole / ChoiceLabelsRole:
// precision, method, group, symmetry) and a percent spin box for the pruning ratio.
#pragma once
#include <QStyledItemDelegate>

namespace edge::views {

class LayerDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
};

}  // namespace edge::views
