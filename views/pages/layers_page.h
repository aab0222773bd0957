// The Layers page: the quantization plan as a table. Per-layer precision, method, group, symmetry
// and pruning ratio edited in place (LayerDelegate), a bulk-edit bar for the selected rows, filter
// by text / kind / block, sortable columns, undo/redo, plan files, and a footer with the estimated
// size against FP32 and the average bits per weight. The data lives in LayerPlanModel.
#pragma once
#include <QList>
#include <QWidget>

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QTableView;
class QToolButton;

namespace edge::views {

class LayerFilterModel;
class LayerPlanModel;
class ModelDocument;

class LayersPage : public QWidget {
    Q_OBJECT
public:
    explicit LayersPage(ModelDocument* document, QWidget* parent = nullptr);

    LayerPlanModel* planModel() const { return model_; }
    LayerFilterModel* filterModel() const { return proxy_; }
    QTableView* table() const { return table_; }
    QAction* undoAction() const { return undo_; }
    QAction* redoAction() const { return redo_; }
    QLineEdit* filterEdit() const { return filter_; }
    QLabel* footer() const { return sizeValue_; }
    // Source-model rows of the selected table rows, ascending.
    QList<int> selectedRows() const;
    void selectLayers(const QStringList& layers);
    // Applies the bulk bar's precision / method / group to the selected rows (one undo step).
    bool applyBulkEdit();
    // Bulk bar choices (keys as in LayerPlanModel's EditRole: "int4", "awq", group 0 = channel).
    void setBulkChoice(const QString& precision, const QString& method, qint64 group);

public slots:
    void openPlanDialog();
    void savePlanDialog();

signals:
    // "Autoplan for a board…": the window asks for the board and the time budget.
    void autoplanRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    QWidget* buildToolbar();
    QWidget* buildBulkBar();
    QWidget* buildFooter();
    void retranslate();
    void showModel();
    void refillFilters();
    void updateTotals();
    void updateSelection();
    void showError(const QString& message);

    ModelDocument* document_;
    LayerPlanModel* model_;
    LayerFilterModel* proxy_;
    QTableView* table_ = nullptr;
    QStackedWidget* stack_ = nullptr;
    QAction* undo_ = nullptr;
    QAction* redo_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* subtitle_ = nullptr;
    QLabel* empty_ = nullptr;
    QLineEdit* filter_ = nullptr;
    QComboBox* kind_ = nullptr;
    QComboBox* block_ = nullptr;
    QToolButton* undoButton_ = nullptr;
    QToolButton* redoButton_ = nullptr;
    QPushButton* openPlan_ = nullptr;
    QPushButton* savePlan_ = nullptr;
    QPushButton* autoplan_ = nullptr;
    QLabel* bulkLabel_ = nullptr;
    QComboBox* bulkPrecision_ = nullptr;
    QComboBox* bulkMethod_ = nullptr;
    QComboBox* bulkGroup_ = nullptr;
    QPushButton* bulkApply_ = nullptr;
    QLabel* sizeCaption_ = nullptr;
    QLabel* sizeValue_ = nullptr;
    QLabel* bitsCaption_ = nullptr;
    QLabel* bitsValue_ = nullptr;
    QLabel* message_ = nullptr;
    QString planDir_;
};

}  // namespace edge::views
