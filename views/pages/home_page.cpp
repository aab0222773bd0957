#include "views/pages/home_page.h"
#include "engine/model/weights.h"

#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QListView>
#include <QPushButton>
#include <QVBoxLayout>

#include "views/models/format.h"
#include "views/models/model_document.h"
#include "views/models/recent_files_model.h"
#include "views/style.h"

namespace edge::views {

namespace {
QFrame* card(QWidget* parent) {
    auto* f = new QFrame(parent);
    f->setObjectName(QStringLiteral("card"));
    return f;
}
QLabel* sectionTitle(QWidget* parent) {
    auto* l = new QLabel(parent);
    l->setObjectName(QStringLiteral("sectionTitle"));
    return l;
}
QLabel* wrapped(QWidget* parent) {
    auto* l = new QLabel(parent);
    l->setWordWrap(true);
    l->setTextFormat(Qt::RichText);
    l->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    return l;
}
}  // namespace

HomePage::HomePage(ModelDocument* document, RecentFilesModel* recent, QWidget* parent)
    : QWidget(parent), document_(document), recent_(recent) {
    title_ = new QLabel(this);
    QFont big = titleFont();
    big.setPointSizeF(big.pointSizeF() * 1.4);
    title_->setFont(big);
    tagline_ = new QLabel(this);
    tagline_->setObjectName(QStringLiteral("hint"));
    tagline_->setWordWrap(true);
    open_ = new QPushButton(this);
    open_->setObjectName(QStringLiteral("primary"));
    openFolder_ = new QPushButton(this);
    connect(open_, &QPushButton::clicked, this, &HomePage::openRequested);
    connect(openFolder_, &QPushButton::clicked, this, &HomePage::openFolderRequested);

    // Recent models.
    QFrame* recentCard = card(this);
    recentTitle_ = sectionTitle(recentCard);
    recentView_ = new QListView(recentCard);
    recentView_->setObjectName(QStringLiteral("recentList"));
    recentView_->setModel(recent_);
    recentView_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    recentView_->setSpacing(2);
    recentView_->setTextElideMode(Qt::ElideMiddle);
    recentEmpty_ = new QLabel(recentCard);
    recentEmpty_->setObjectName(QStringLiteral("hint"));
    recentEmpty_->setWordWrap(true);
    connect(recentView_, &QListView::activated, this,
            [this](const QModelIndex& i) { emit recentActivated(i.data(RecentFilesModel::PathRole).toString()); });
    connect(recent_, &QAbstractItemModel::modelReset, this, &HomePage::updateRecentState);
    connect(recent_, &QAbstractItemModel::rowsRemoved, this, &HomePage::updateRecentState);
    auto* rv = new QVBoxLayout(recentCard);
    rv->setContentsMargins(16, 14, 16, 16);
    rv->addWidget(recentTitle_);
    rv->addWidget(recentEmpty_);
    rv->addWidget(recentView_, 1);

    // What the studio reads and does.
    QFrame* infoCard = card(this);
    formatsTitle_ = sectionTitle(infoCard);
    formats_ = wrapped(infoCard);
    workflowTitle_ = sectionTitle(infoCard);
    workflow_ = wrapped(infoCard);
    auto* iv = new QVBoxLayout(infoCard);
    iv->setContentsMargins(16, 14, 16, 16);
    iv->addWidget(formatsTitle_);
    iv->addWidget(formats_);
    iv->addSpacing(12);
    iv->addWidget(workflowTitle_);
    iv->addWidget(workflow_);
    iv->addStretch();

    // The model loaded now, at a glance.
    QFrame* currentCard = card(this);
    currentTitle_ = sectionTitle(currentCard);
    currentFacts_ = new QLabel(currentCard);
    currentFacts_->setFont(monoFont());
    currentFacts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    showModel_ = new QPushButton(currentCard);
    connect(showModel_, &QPushButton::clicked, this, &HomePage::showModelRequested);
    auto* cv = new QHBoxLayout(currentCard);
    cv->setContentsMargins(16, 14, 16, 14);
    auto* facts = new QVBoxLayout;
    facts->addWidget(currentTitle_);
    facts->addWidget(currentFacts_);
    cv->addLayout(facts, 1);
    cv->addWidget(showModel_, 0, Qt::AlignBottom);
    connect(document_, &ModelDocument::modelChanged, this, &HomePage::updateCurrent);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(open_);
    buttons->addWidget(openFolder_);
    buttons->addStretch();

    auto* cards = new QHBoxLayout;
    cards->setSpacing(16);
    cards->addWidget(recentCard, 3);
    cards->addWidget(infoCard, 2);
    auto* cardRow = new QWidget(this);  // bounded height: a tall window gets space below, not
    cardRow->setLayout(cards);          // a tall empty list
    cardRow->setMaximumHeight(520);
    cards->setContentsMargins(0, 0, 0, 0);

    auto* column = new QVBoxLayout;
    column->setSpacing(10);
    column->addWidget(title_);
    column->addWidget(tagline_);
    column->addSpacing(6);
    column->addLayout(buttons);
    column->addSpacing(14);
    column->addWidget(currentCard);
    column->addSpacing(6);
    column->addWidget(cardRow);
    column->addStretch(1);

    // Centred column of bounded width: a wide window gets margins, not stretched text.
    auto* center = new QWidget(this);
    center->setMaximumWidth(1180);
    center->setLayout(column);
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(32, 28, 32, 28);
    outer->addStretch(1);
    outer->addWidget(center, 100);
    outer->addStretch(1);

    retranslate();
    updateRecentState();
}

void HomePage::updateRecentState() {
    const bool empty = recent_->rowCount() == 0;
    recentEmpty_->setVisible(empty);
    recentView_->setVisible(!empty);
}

void HomePage::updateCurrent() {
    auto loaded = document_->current();
    showModel_->setVisible(loaded != nullptr);
    if (!loaded) {
        currentFacts_->setText(tr("No model loaded yet. Open one to see its architecture, layers and sizes."));
        currentFacts_->setFont(font());
        return;
    }
    const edge::model::Model& m = loaded->model;
    currentFacts_->setFont(monoFont());
    currentFacts_->setText(tr("%1\n%2 parameters  ·  %3 weights  ·  %4 layers in %5 blocks  ·  %6")
                               .arg(QDir::toNativeSeparators(document_->path()), compactCount(m.parameter_count()),
                                    humanBytes(edge::model::shown_weight_bytes(m)))
                               .arg(loaded->layers.size())
                               .arg(m.config.n_layers)
                               .arg(QString::fromStdString(m.source_format)));
}

void HomePage::retranslate() {
    currentTitle_->setText(tr("Current model"));
    showModel_->setText(tr("Show model page"));
    updateCurrent();
    title_->setText(tr("EdgeStudio"));
    tagline_->setText(
        tr("Fit neural networks onto small boards: inspect a model, choose per-layer precision "
           "and pruning, compile, deploy to a Jetson and measure."));
    open_->setText(tr("Open model…"));
    openFolder_->setText(tr("Open Hugging Face folder…"));
    recentTitle_->setText(tr("Recent models"));
    recentEmpty_->setText(tr("Models you open appear here. Double-click one to open it again."));
    recentView_->setToolTip(tr("Double-click to open"));
    formatsTitle_->setText(tr("Formats"));
    formats_->setText(
        tr("<p><b>GGUF</b> (.gguf): weights, config and tokenizer in one file.</p>"
           "<p><b>llama2.c</b> (.bin) with its tokenizer (.bin).</p>"
           "<p><b>Hugging Face folder</b>: *.safetensors, config.json, tokenizer.json.</p>"));
    workflowTitle_->setText(tr("Workflow"));
    workflow_->setText(
        tr("<ol style=\"margin-left:-20px\"><li>Model: architecture, layers, sizes</li>"
           "<li>Sensitivity and per-layer plan</li><li>Quantize, prune, calibrate, validate</li>"
           "<li>Compile and deploy to the board</li><li>Compare configurations</li></ol>"));
}

void HomePage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace edge::views
