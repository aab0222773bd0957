// The architecture summary of the loaded model (QtCore/QtGui only): a two-column table
// (property, value) grouped under section rows: model, architecture, tokenizer, file metadata.
#pragma once
#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <vector>

#include "views/models/model_document.h"

namespace edge::views {

class SummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { PropertyColumn, ValueColumn, ColumnCount };
    enum Role { IsSectionRole = Qt::UserRole + 1 };

    explicit SummaryModel(QObject* parent = nullptr);

    void setModel(std::shared_ptr<const LoadedModel> model);
    // Rebuilds every translated label (after a language switch).
    void retranslate();
    // The value shown for a property label (tests, tooltips); empty when absent.
    QString value(const QString& property) const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString property;
        QString value;
        bool section = false;
        bool mono = false;
    };
    std::vector<Row> buildRows() const;

    std::shared_ptr<const LoadedModel> model_;
    std::vector<Row> rows_;
};

}  // namespace edge::views
