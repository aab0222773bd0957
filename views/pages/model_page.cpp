#include "views/pages/model_page.h"

#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include "views/layer_chart.h"
#include "views/models/layer_tree_model.h"
#include "views/models/model_document.h"
#include "views/models/summary_model.h"
#include "views/style.h"

namespace edge::views {

ModelPage::ModelPage(ModelDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), summary_(new SummaryModel(this)), layers_(new LayerTreeModel(this)) {
    title_ = new QLabel(this);
    title_->setFont(titleFont());
    subtitle_ = new QLabel(this);
    subtitle_->setObjectName(QStringLiteral("hint"));
    subtitle_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    stack_ = new QStackedWidget(this);
    stack_->addWidget(buildEmptyState());
    stack_->addWidget(buildContent());

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(20, 16, 20, 12);
    layout->setSpacing(8);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addWidget(buildLoadBar());
    layout->addWidget(stack_, 1);

    connect(document_, &ModelDocument::modelChanged, this, &ModelPage::showModel);
    connect(document_, &ModelDocument::loadingChanged, this, &ModelPage::setLoading);
    connect(document_, &ModelDocument::loadProgress, this, [this](double fraction, const QString& stage) {
        progress_->setRange(0, 1000);
        progress_->setValue(int(fraction * 1000.0));
        loadingStage_ = stage;
        retranslate();
    });
    connect(cancel_, &QPushButton::clicked, document_, &ModelDocument::cancel);
    retranslate();
    showModel();
    setLoading(document_->isLoading());
}

QWidget* ModelPage::buildLoadBar() {
    loadBar_ = new QWidget(this);
    loadLabel_ = new QLabel(loadBar_);
    progress_ = new QProgressBar(loadBar_);
    progress_->setTextVisible(false);
    progress_->setFixedHeight(10);
    cancel_ = new QPushButton(loadBar_);
    auto* row = new QHBoxLayout(loadBar_);
    row->setContentsMargins(0, 4, 0, 4);
    row->addWidget(loadLabel_);
    row->addWidget(progress_, 1);
    row->addWidget(cancel_);
    return loadBar_;
}

QWidget* ModelPage::buildEmptyState() {
    auto* w = new QWidget(this);
    emptyTitle_ = new QLabel(w);
    emptyTitle_->setFont(titleFont());
    emptyTitle_->setAlignment(Qt::AlignCenter);
    emptyHint_ = new QLabel(w);
    emptyHint_->setObjectName(QStringLiteral("hint"));
    emptyHint_->setAlignment(Qt::AlignCenter);
    emptyHint_->setWordWrap(true);
    emptyOpen_ = new QPushButton(w);
    emptyOpen_->setObjectName(QStringLiteral("primary"));
    emptyFolder_ = new QPushButton(w);
    connect(emptyOpen_, &QPushButton::clicked, this, &ModelPage::openRequested);
    connect(emptyFolder_, &QPushButton::clicked, this, &ModelPage::openFolderRequested);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(emptyOpen_);
    buttons->addWidget(emptyFolder_);
    buttons->addStretch();
    auto* v = new QVBoxLayout(w);
    v->addStretch(2);
    v->addWidget(emptyTitle_);
    v->addWidget(emptyHint_);
    v->addSpacing(12);
    v->addLayout(buttons);
    v->addStretch(3);
    return w;
}

QWidget* ModelPage::buildContent() {
    summaryView_ = new QTableView(this);
    summaryView_->setModel(summary_);
    summaryView_->verticalHeader()->hide();
    summaryView_->horizontalHeader()->setSectionResizeMode(SummaryModel::PropertyColumn, QHeaderView::Interactive);
    summaryView_->horizontalHeader()->resizeSection(SummaryModel::PropertyColumn, 190);
    summaryView_->horizontalHeader()->setStretchLastSection(true);
    summaryView_->setShowGrid(false);
    summaryView_->setAlternatingRowColors(true);
    summaryView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    summaryView_->setWordWrap(false);
    summaryView_->setTextElideMode(Qt::ElideMiddle);
    summaryView_->verticalHeader()->setDefaultSectionSize(summaryView_->fontMetrics().height() + 8);

    tree_ = new QTreeView(this);
    tree_->setModel(layers_);
    tree_->setAlternatingRowColors(true);
    tree_->setUniformRowHeights(true);
    tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
    tree_->header()->setStretchLastSection(false);
    tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
    tree_->header()->setSectionResizeMode(LayerTreeModel::NameColumn, QHeaderView::Stretch);
    // Text columns left, numbers right-aligned at the edge: Name, Kind, Type, Shape, Params, Bytes.
    tree_->header()->moveSection(tree_->header()->visualIndex(LayerTreeModel::TypeColumn),
                                 tree_->header()->visualIndex(LayerTreeModel::KindColumn) + 1);
    connect(tree_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
        chart_->selectLayer(current.sibling(current.row(), 0).data(LayerTreeModel::LayerNameRole).toString());
    });

    chart_ = new LayerChart(this);
    connect(chart_, &LayerChart::layerClicked, this, &ModelPage::selectLayer);

    summaryTitle_ = new QLabel(this);
    summaryTitle_->setObjectName(QStringLiteral("sectionTitle"));
    layersTitle_ = new QLabel(this);
    layersTitle_->setObjectName(QStringLiteral("sectionTitle"));

    auto* left = new QWidget(this);
    auto* lv = new QVBoxLayout(left);
    lv->setContentsMargins(0, 0, 6, 0);
    lv->addWidget(summaryTitle_);
    lv->addWidget(summaryView_, 1);

    auto* treeBox = new QWidget(this);
    auto* tv = new QVBoxLayout(treeBox);
    tv->setContentsMargins(6, 0, 0, 6);
    tv->addWidget(layersTitle_);
    tv->addWidget(tree_, 1);
    auto* chartBox = new QWidget(this);
    auto* cv = new QVBoxLayout(chartBox);
    cv->setContentsMargins(6, 6, 0, 0);
    cv->addWidget(chart_);

    auto* right = new QSplitter(Qt::Vertical, this);
    right->addWidget(treeBox);
    right->addWidget(chartBox);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 2);
    right->setChildrenCollapsible(false);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setSizes({560, 1000});
    split->setChildrenCollapsible(false);
    return split;
}

QString ModelPage::selectedLayer() const {
    const QModelIndex i = tree_->currentIndex();
    return i.sibling(i.row(), 0).data(LayerTreeModel::LayerNameRole).toString();
}

void ModelPage::selectLayer(const QString& layer) {
    const QModelIndex i = layers_->indexOfLayer(layer);
    if (!i.isValid()) return;
    tree_->setCurrentIndex(i);
    tree_->scrollTo(i);
}

void ModelPage::showModel() {
    auto loaded = document_->current();
    summary_->setModel(loaded);
    layers_->setModel(loaded);
    chart_->setModel(loaded);
    if (loaded) {
        tree_->expandToDepth(0);
        const int w = tree_->fontMetrics().horizontalAdvance(QLatin1Char('0'));
        tree_->setColumnWidth(LayerTreeModel::KindColumn, 13 * w);
        tree_->setColumnWidth(LayerTreeModel::TypeColumn, 15 * w);
        tree_->setColumnWidth(LayerTreeModel::ShapeColumn, 13 * w);
        tree_->setColumnWidth(LayerTreeModel::ParamsColumn, 13 * w);
        tree_->setColumnWidth(LayerTreeModel::BytesColumn, 13 * w);
    }
    stack_->setCurrentIndex(loaded ? 1 : 0);
    retranslate();
}

void ModelPage::setLoading(bool loading) {
    loadBar_->setVisible(loading);
    if (loading) {
        progress_->setRange(0, 0);  // busy until the engine reports a fraction
        loadingStage_.clear();
    }
    retranslate();
}

void ModelPage::retranslate() {
    auto loaded = document_->current();
    if (loaded) {
        const QFileInfo file(document_->path());
        title_->setText(file.isDir() ? file.fileName() : file.completeBaseName());
        subtitle_->setText(tr("%1  ·  %2 format  ·  %3")
                               .arg(QString::fromStdString(loaded->model.architecture),
                                    QString::fromStdString(loaded->model.source_format), document_->path()));
    } else {
        title_->setText(tr("Model"));
        subtitle_->setText(tr("Nothing loaded yet"));
    }
    const QString file = QFileInfo(document_->loadingPath()).fileName();
    loadLabel_->setText(loadingStage_.isEmpty() ? tr("Loading %1…").arg(file)
                                                : tr("Loading %1: %2").arg(file, loadingStage_));
    cancel_->setText(tr("Cancel"));
    emptyTitle_->setText(tr("No model loaded"));
    emptyHint_->setText(
        tr("Open a GGUF file, a llama2.c checkpoint (.bin) or a Hugging Face folder "
           "(safetensors + config.json + tokenizer.json) to see its architecture and layers."));
    emptyOpen_->setText(tr("Open model…"));
    emptyFolder_->setText(tr("Open folder…"));
    summaryTitle_->setText(tr("Summary"));
    layersTitle_->setText(tr("Layers"));
}

void ModelPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
        summary_->retranslate();
        layers_->retranslate();
    }
    QWidget::changeEvent(event);
}

}  // namespace edge::views
