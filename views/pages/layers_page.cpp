#include "views/pages/layers_page.h"

#include <QAction>
#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <set>

#include "views/models/format.h"
#include "views/models/layer_filter_model.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/pages/layer_delegate.h"
#include "views/style.h"

namespace edge::views {

LayersPage::LayersPage(ModelDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), model_(new LayerPlanModel(this)), proxy_(new LayerFilterModel(this)) {
    proxy_->setSourceModel(model_);
    // Own actions rather than QUndoStack::createUndoAction(): their text stays in the studio's
    // translations; the step's description goes to the tooltip.
    QUndoStack* stack = model_->undoStack();
    undo_ = new QAction(this);
    redo_ = new QAction(this);
    undo_->setEnabled(false);
    redo_->setEnabled(false);
    connect(undo_, &QAction::triggered, stack, &QUndoStack::undo);
    connect(redo_, &QAction::triggered, stack, &QUndoStack::redo);
    connect(stack, &QUndoStack::canUndoChanged, undo_, &QAction::setEnabled);
    connect(stack, &QUndoStack::canRedoChanged, redo_, &QAction::setEnabled);
    connect(stack, &QUndoStack::undoTextChanged, undo_, &QAction::setToolTip);
    connect(stack, &QUndoStack::redoTextChanged, redo_, &QAction::setToolTip);
    undo_->setShortcut(QKeySequence::Undo);
    redo_->setShortcut(QKeySequence::Redo);

    title_ = new QLabel(this);
    title_->setFont(titleFont());
    subtitle_ = new QLabel(this);
    subtitle_->setObjectName(QStringLiteral("hint"));

    table_ = new QTableView(this);
    table_->setModel(proxy_);
    table_->setItemDelegate(new LayerDelegate(table_));
    table_->setSortingEnabled(true);
    table_->sortByColumn(LayerPlanModel::NameColumn, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::SelectedClicked |
                            QAbstractItemView::EditKeyPressed);
    table_->setAlternatingRowColors(true);
    table_->setShowGrid(false);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 10);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setSectionResizeMode(LayerPlanModel::NameColumn, QHeaderView::Stretch);
    table_->horizontalHeader()->setHighlightSections(false);

    empty_ = new QLabel(this);
    empty_->setObjectName(QStringLiteral("hint"));
    empty_->setAlignment(Qt::AlignCenter);
    empty_->setWordWrap(true);
    stack_ = new QStackedWidget(this);
    stack_->addWidget(empty_);
    stack_->addWidget(table_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(20, 16, 20, 12);
    layout->setSpacing(8);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addWidget(buildToolbar());
    layout->addWidget(buildBulkBar());
    layout->addWidget(stack_, 1);
    layout->addWidget(buildFooter());

    connect(document_, &ModelDocument::modelChanged, this, &LayersPage::showModel);
    connect(model_, &LayerPlanModel::totalsChanged, this, &LayersPage::updateTotals);
    connect(model_, &LayerPlanModel::editRefused, this, &LayersPage::showError);
    connect(model_->undoStack(), &QUndoStack::indexChanged, this, [this] { message_->clear(); });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &LayersPage::updateSelection);
    retranslate();
    showModel();
}

QWidget* LayersPage::buildToolbar() {
    auto* bar = new QWidget(this);
    filter_ = new QLineEdit(bar);
    filter_->setClearButtonEnabled(true);
    filter_->setMinimumWidth(260);
    kind_ = new QComboBox(bar);
    kind_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    block_ = new QComboBox(bar);
    block_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    undoButton_ = new QToolButton(bar);
    undoButton_->setDefaultAction(undo_);
    undoButton_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    redoButton_ = new QToolButton(bar);
    redoButton_->setDefaultAction(redo_);
    redoButton_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    openPlan_ = new QPushButton(bar);
    savePlan_ = new QPushButton(bar);
    autoplan_ = new QPushButton(bar);
    autoplan_->setObjectName(QStringLiteral("autoplan"));
    connect(filter_, &QLineEdit::textChanged, proxy_, &LayerFilterModel::setFilterText);
    connect(kind_, &QComboBox::currentIndexChanged, this,
            [this] { proxy_->setKindFilter(kind_->currentData().toString()); });
    connect(block_, &QComboBox::currentIndexChanged, this, [this] {
        proxy_->setBlockFilter(block_->currentData().isValid() ? block_->currentData().toInt()
                                                               : LayerFilterModel::kAllBlocks);
    });
    connect(openPlan_, &QPushButton::clicked, this, &LayersPage::openPlanDialog);
    connect(savePlan_, &QPushButton::clicked, this, &LayersPage::savePlanDialog);
    connect(autoplan_, &QPushButton::clicked, this, &LayersPage::autoplanRequested);
    auto* row = new QHBoxLayout(bar);
    row->setContentsMargins(0, 4, 0, 0);
    row->addWidget(filter_);
    row->addWidget(kind_);
    row->addWidget(block_);
    row->addStretch(1);
    row->addWidget(undoButton_);
    row->addWidget(redoButton_);
    row->addSpacing(12);
    row->addWidget(openPlan_);
    row->addWidget(savePlan_);
    row->addWidget(autoplan_);
    return bar;
}

QWidget* LayersPage::buildBulkBar() {
    auto* bar = new QWidget(this);
    bulkLabel_ = new QLabel(bar);
    bulkPrecision_ = new QComboBox(bar);
    for (const char* p : {"int8", "int4", "fp16", "fp32"})
        bulkPrecision_->addItem(QString::fromLatin1(p).toUpper(), QString::fromLatin1(p));
    bulkPrecision_->setCurrentIndex(1);
    bulkMethod_ = new QComboBox(bar);
    for (const char* m : {"rtn", "awq", "gptq"})
        bulkMethod_->addItem(QString::fromLatin1(m).toUpper(), QString::fromLatin1(m));
    bulkGroup_ = new QComboBox(bar);
    for (qint64 g : {32, 64, 128}) bulkGroup_->addItem(QString::number(g), g);
    bulkGroup_->addItem(QString(), qint64(0));
    bulkGroup_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bulkApply_ = new QPushButton(bar);
    bulkApply_->setObjectName(QStringLiteral("primary"));
    connect(bulkApply_, &QPushButton::clicked, this, &LayersPage::applyBulkEdit);
    connect(bulkPrecision_, &QComboBox::currentIndexChanged, this, [this] {
        const bool quantized = bulkPrecision_->currentData().toString().startsWith(QLatin1String("int"));
        bulkMethod_->setEnabled(quantized);
        bulkGroup_->setEnabled(quantized);
    });
    auto* row = new QHBoxLayout(bar);
    row->setContentsMargins(0, 0, 0, 4);
    row->addWidget(bulkLabel_);
    row->addWidget(bulkPrecision_);
    row->addWidget(bulkMethod_);
    row->addWidget(bulkGroup_);
    row->addWidget(bulkApply_);
    row->addStretch(1);
    return bar;
}

QWidget* LayersPage::buildFooter() {
    auto* bar = new QWidget(this);
    sizeCaption_ = new QLabel(bar);
    sizeValue_ = new QLabel(bar);
    sizeValue_->setFont(monoFont());
    sizeValue_->setObjectName(QStringLiteral("layersSize"));
    bitsCaption_ = new QLabel(bar);
    bitsValue_ = new QLabel(bar);
    bitsValue_->setFont(monoFont());
    bitsValue_->setObjectName(QStringLiteral("layersBits"));
    message_ = new QLabel(bar);
    message_->setObjectName(QStringLiteral("layersMessage"));
    message_->setStyleSheet(QStringLiteral("color: #b3261e;"));
    auto* row = new QHBoxLayout(bar);
    row->setContentsMargins(0, 4, 0, 0);
    row->addWidget(sizeCaption_);
    row->addWidget(sizeValue_);
    row->addSpacing(24);
    row->addWidget(bitsCaption_);
    row->addWidget(bitsValue_);
    row->addSpacing(24);
    row->addWidget(message_, 1);
    return bar;
}

QList<int> LayersPage::selectedRows() const {
    QList<int> rows;
    for (const QModelIndex& i : table_->selectionModel()->selectedRows()) rows << proxy_->mapToSource(i).row();
    std::sort(rows.begin(), rows.end());
    return rows;
}

void LayersPage::selectLayers(const QStringList& layers) {
    QItemSelection selection;
    for (const QString& name : layers) {
        const int r = model_->rowOfLayer(name);
        const QModelIndex i = proxy_->mapFromSource(model_->index(r, 0));
        if (i.isValid()) selection.select(i, i.siblingAtColumn(LayerPlanModel::ColumnCount - 1));
    }
    table_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void LayersPage::setBulkChoice(const QString& precision, const QString& method, qint64 group) {
    bulkPrecision_->setCurrentIndex(std::max(0, bulkPrecision_->findData(precision)));
    bulkMethod_->setCurrentIndex(std::max(0, bulkMethod_->findData(method)));
    bulkGroup_->setCurrentIndex(std::max(0, bulkGroup_->findData(group)));
}

bool LayersPage::applyBulkEdit() {
    const QList<int> rows = selectedRows();
    if (rows.isEmpty()) return false;
    SettingPatch patch;
    patch.precision = precisionFromKey(bulkPrecision_->currentData().toString());
    if (patch.precision == edge::quant::Precision::INT8 || patch.precision == edge::quant::Precision::INT4) {
        patch.method = methodFromKey(bulkMethod_->currentData().toString());
        patch.group = bulkGroup_->currentData().toLongLong();
    }
    const QString what = bulkPrecision_->currentText();
    return model_->applyToRows(rows, patch, tr("Set %n layer(s) to %1", nullptr, int(rows.size())).arg(what));
}

void LayersPage::openPlanDialog() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open plan"), planDir_, tr("Quantization plans (*.plan.json *.json)"));
    if (path.isEmpty()) return;
    planDir_ = QFileInfo(path).absolutePath();
    if (!model_->loadPlan(path)) {
        auto* box = new QMessageBox(QMessageBox::Critical, tr("Open plan"), model_->lastError(), QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->setObjectName(QStringLiteral("planError"));
        box->open();
    }
}

void LayersPage::savePlanDialog() {
    QString path =
        QFileDialog::getSaveFileName(this, tr("Save plan"), planDir_, tr("Quantization plans (*.plan.json)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1String(".json"))) path += QStringLiteral(".plan.json");
    planDir_ = QFileInfo(path).absolutePath();
    if (!model_->savePlan(path)) QMessageBox::critical(this, tr("Save plan"), model_->lastError());
}

void LayersPage::showModel() {
    auto loaded = document_->current();
    model_->setModel(loaded);
    refillFilters();
    if (loaded) {
        const int w = table_->fontMetrics().horizontalAdvance(QLatin1Char('0'));
        const int widths[LayerPlanModel::ColumnCount] = {0, 12, 12, 12, 11, 9, 10, 12, 10, 12};
        for (int c = 1; c < LayerPlanModel::ColumnCount; ++c) table_->setColumnWidth(c, widths[c] * w + 16);
    }
    stack_->setCurrentIndex(loaded ? 1 : 0);
    openPlan_->setEnabled(bool(loaded));
    savePlan_->setEnabled(bool(loaded));
    autoplan_->setEnabled(bool(loaded));
    updateSelection();
    updateTotals();
}

void LayersPage::refillFilters() {
    const QSignalBlocker a(kind_), b(block_);
    kind_->clear();
    block_->clear();
    kind_->addItem(tr("All kinds"), QString());
    block_->addItem(tr("All blocks"));
    block_->addItem(tr("Outside blocks"), -1);
    proxy_->setKindFilter(QString());
    proxy_->setBlockFilter(LayerFilterModel::kAllBlocks);
    auto loaded = document_->current();
    if (!loaded) return;
    std::set<int> blocks;
    QStringList kinds;
    for (const edge::model::LayerInfo& l : loaded->layers) {
        if (!kinds.contains(QString::fromStdString(l.kind))) kinds << QString::fromStdString(l.kind);
        if (l.block >= 0) blocks.insert(l.block);
    }
    for (const QString& k : kinds) kind_->addItem(k, k);
    for (int b : blocks) block_->addItem(tr("Block %1").arg(b), b);
}

void LayersPage::updateSelection() {
    const int n = int(table_->selectionModel()->selectedRows().size());
    bulkApply_->setEnabled(n > 0);
    bulkLabel_->setText(n > 0 ? tr("%n selected layer(s):", nullptr, n) : tr("Select layers to edit them together:"));
}

void LayersPage::updateTotals() {
    const uint64_t fp32 = model_->fp32Bytes();
    const uint64_t est = model_->estimatedBytes();
    const double pct = fp32 > 0 ? 100.0 * double(est) / double(fp32) : 0.0;
    sizeValue_->setText(tr("%1 of %2 (%3 %)").arg(humanBytes(est), humanBytes(fp32)).arg(pct, 0, 'f', 1));
    sizeValue_->setToolTip(tr("%1 bytes").arg(groupedCount(int64_t(est))));
    bitsValue_->setText(QString::number(model_->averageBits(), 'f', 2));
}

void LayersPage::showError(const QString& message) { message_->setText(message); }

void LayersPage::retranslate() {
    title_->setText(tr("Layers"));
    subtitle_->setText(
        tr("Choose the precision, method and group size of each layer: double-click a cell, "
           "or select several rows and set them together."));
    empty_->setText(tr("Open a model to plan how each of its layers is quantized."));
    filter_->setPlaceholderText(tr("Filter by layer or kind…"));
    undo_->setText(tr("Undo"));
    redo_->setText(tr("Redo"));
    openPlan_->setText(tr("Open plan…"));
    savePlan_->setText(tr("Save plan…"));
    autoplan_->setText(tr("Autoplan for a board…"));
    autoplan_->setToolTip(
        tr("FP16 / INT8 / INT4 per layer: the least quality loss (the Sensitivity page's "
           "measurements) within a time per token on a board (its measured cost model)"));
    bulkGroup_->setItemText(bulkGroup_->findData(qint64(0)), tr("channel"));
    bulkApply_->setText(tr("Apply to selected"));
    sizeCaption_->setText(tr("Estimated size:"));
    bitsCaption_->setText(tr("Average bits per weight:"));
    const int kindIndex = kind_->currentIndex(), blockIndex = block_->currentIndex();
    refillFilters();
    kind_->setCurrentIndex(kindIndex);
    block_->setCurrentIndex(blockIndex);
    updateSelection();
    updateTotals();
}

void LayersPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
        model_->retranslate();
    }
    QWidget::changeEvent(event);
}

}  // namespace edge::views
