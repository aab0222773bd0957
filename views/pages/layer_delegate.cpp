#include "views/pages/layer_delegate.h"

#include <QComboBox>
#include <QSpinBox>
#include <cmath>

#include "views/models/layer_plan_model.h"

namespace edge::views {

QWidget* LayerDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                                     const QModelIndex& index) const {
    if (index.column() == LayerPlanModel::PruningColumn) {
        auto* spin = new QSpinBox(parent);
        spin->setRange(0, int(std::lround(kMaxPruning * 100.0)));
        spin->setSingleStep(5);
        spin->setSuffix(QStringLiteral(" %"));
        spin->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        return spin;
    }
    const QVariantList values = index.data(LayerPlanModel::ChoiceValuesRole).toList();
    if (values.isEmpty()) return QStyledItemDelegate::createEditor(parent, option, index);
    const QStringList labels = index.data(LayerPlanModel::ChoiceLabelsRole).toStringList();
    auto* combo = new QComboBox(parent);
    for (int i = 0; i < values.size(); ++i)
        combo->addItem(i < labels.size() ? labels.at(i) : values.at(i).toString(), values.at(i));
    // Commit as soon as a choice is made, so one pick is one undo step.
    connect(combo, &QComboBox::activated, this, [this, combo] {
        auto* self = const_cast<LayerDelegate*>(this);
        emit self->commitData(combo);
        emit self->closeEditor(combo);
    });
    return combo;
}

void LayerDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
    if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
        spin->setValue(int(std::lround(index.data(Qt::EditRole).toDouble() * 100.0)));
        return;
    }
    if (auto* combo = qobject_cast<QComboBox*>(editor)) {
        const int i = combo->findData(index.data(Qt::EditRole));
        combo->setCurrentIndex(i < 0 ? 0 : i);
        return;
    }
    QStyledItemDelegate::setEditorData(editor, index);
}

void LayerDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const {
    if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
        model->setData(index, double(spin->value()) / 100.0);
        return;
    }
    if (auto* combo = qobject_cast<QComboBox*>(editor)) {
        model->setData(index, combo->currentData());
        return;
    }
    QStyledItemDelegate::setModelData(editor, model, index);
}

}  // namespace edge::views
