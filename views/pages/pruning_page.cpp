#include "views/pages/pruning_page.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "views/models/format.h"
#include "views/models/job.h"
#include "views/models/model_document.h"
#include "views/models/pruning_model.h"
#include "views/pages/pruning_mask_view.h"
#include "views/style.h"

namespace edge::views {
namespace {
QString unitList(const std::vector<int64_t>& units) {
    QStringList parts;
    for (size_t i = 0; i < units.size();) {
        size_t j = i;
        while (j + 1 < units.size() && units[j + 1] == units[j] + 1) ++j;
        parts << (j == i ? QString::number(units[i])
                         : QString::number(units[i]) + QLatin1Char('-') + QString::number(units[j]));
        i = j + 1;
    }
    return parts.isEmpty() ? QStringLiteral("–") : parts.join(QStringLiteral(", "));
}
}  // namespace

PruningPage::PruningPage(ModelDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      model_(new PruningModel(this)),
      job_(new JobSlot(this)),
      title_(new QLabel(this)),
      subtitle_(new QLabel(this)),
      ratioLabel_(new QLabel(this)),
      ratio_(new QSpinBox(this)),
      heads_(new QCheckBox(this)),
      mlp_(new QCheckBox(this)),
      reset_(new QPushButton(this)),
      usePlan_(new QPushButton(this)),
      counts_(new QLabel(this)),
      message_(new QLabel(this)),
      table_(new QTableView(this)),
      maskView_(new PruningMaskView(this)),
      legend_(new QLabel(this)),
      detail_(new QLabel(this)) {
    title_->setFont(titleFont());
    subtitle_->setObjectName(QStringLiteral("hint"));
    subtitle_->setWordWrap(true);
    ratio_->setRange(0, 90);
    ratio_->setSingleStep(5);
    ratio_->setSuffix(QStringLiteral(" %"));
    heads_->setChecked(true);
    mlp_->setChecked(true);
    counts_->setFont(monoFont());
    counts_->setWordWrap(true);
    counts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->setWordWrap(true);
    message_->setStyleSheet(QStringLiteral("color: #c01c28;"));
    legend_->setObjectName(QStringLiteral("hint"));
    detail_->setWordWrap(true);
    detail_->setFont(monoFont());
    detail_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::SelectedClicked |
                            QAbstractItemView::EditKeyPressed);
    table_->setAlternatingRowColors(true);
    table_->setShowGrid(false);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 10);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setHighlightSections(false);

    auto* controls = new QHBoxLayout;
    controls->addWidget(ratioLabel_);
    controls->addWidget(ratio_);
    controls->addSpacing(12);
    controls->addWidget(heads_);
    controls->addWidget(mlp_);
    controls->addSpacing(12);
    controls->addWidget(reset_);
    controls->addStretch(1);
    controls->addWidget(usePlan_);

    auto* scroll = new QScrollArea(this);
    scroll->setWidget(maskView_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(legend_);
    rightLayout->addWidget(scroll, 1);
    rightLayout->addWidget(detail_);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(table_);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({660, 740});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(20, 16, 20, 12);
    layout->setSpacing(8);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addLayout(controls);
    layout->addWidget(counts_);
    layout->addWidget(message_);
    layout->addWidget(split, 1);

    connect(ratio_, &QSpinBox::valueChanged, this, [this](int v) { model_->setGlobalRatio(v / 100.0); });
    connect(heads_, &QCheckBox::toggled, this, [this] { model_->setKinds(heads_->isChecked(), mlp_->isChecked()); });
    connect(mlp_, &QCheckBox::toggled, this, [this] { model_->setKinds(heads_->isChecked(), mlp_->isChecked()); });
    connect(reset_, &QPushButton::clicked, model_, &PruningModel::clearRules);
    connect(usePlan_, &QPushButton::clicked, this, &PruningPage::useInPlan);
    connect(model_, &PruningModel::specChanged, this, &PruningPage::replan);
    connect(model_, &PruningModel::modelReset, this, [this] {
        maskView_->setMasks(model_->hasReport() ? &model_->report().layers : nullptr);
        updateCounts();
        updateDetail();
    });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& i) {
        maskView_->setSelected(i.isValid() ? i.row() : -1);
        updateDetail();
    });
    connect(maskView_, &PruningMaskView::rowClicked, this, &PruningPage::selectRow);
    connect(document_, &ModelDocument::modelChanged, this, [this] {
        job_->cancel();
        model_->clear();
        message_->clear();
        replan();
    });
    retranslate();
    if (document_->current()) replan();
}

void PruningPage::setGlobalPercent(int percent) { ratio_->setValue(percent); }

void PruningPage::useInPlan() {
    if (!model_->hasReport()) return;
    QMap<QString, double> ratios;
    for (const edge::prune::LayerMask& m : model_->report().layers)
        if (m.kind != edge::prune::UnitKind::ConvChannels && m.prunable)
            ratios.insert(QString::fromStdString(m.layer), m.ratio());
    emit ratiosChosen(ratios);
}

void PruningPage::selectRow(int row) {
    if (row < 0 || row >= model_->rowCount()) return;
    table_->selectRow(row);
    table_->setCurrentIndex(model_->index(row, 0));
}

void PruningPage::replan() {
    auto loaded = document_->current();
    if (!loaded) return;
    const edge::prune::PruneSpec spec = model_->spec();
    job_->start<edge::prune::PruneReport>(
        [loaded, spec](edge::Progress* p) -> edge::Result<edge::prune::PruneReport> {
            auto full = loaded->withWeights(p);
            if (!full.ok()) return full.error();
            return edge::prune::plan_pruning(**full, spec);
        },
        [this, loaded](edge::Result<edge::prune::PruneReport> r) {
            if (loaded != document_->current()) return;
            if (!r.ok()) {
                // The engine refused (e.g. a ratio that would remove a whole group): say why and
                // go back to the last plan it accepted.
                message_->setText(userErrorText(tr("This pruning cannot be applied."), r.error()));
                const auto rules = model_->rules();
                for (auto it = rules.cbegin(); it != rules.cend(); ++it)
                    if (QString::fromStdString(r.message()).contains(it.key())) model_->dropRule(it.key());
                return;
            }
            message_->clear();
            const int row = table_->currentIndex().row();
            model_->setReport(r.value());
            selectRow(row >= 0 ? row : 0);
        });
}

void PruningPage::updateCounts() {
    if (!model_->hasReport()) {
        counts_->setText(document_->current() ? tr("Planning…") : tr("Open a model to see its prune groups."));
        return;
    }
    const auto& r = model_->report();
    QString text =
        tr("Parameters %1 → %2 (%3 % removed)")
            .arg(groupedCount(r.params_before), groupedCount(r.params_after))
            .arg(r.params_before ? 100.0 * double(r.params_before - r.params_after) / double(r.params_before) : 0.0, 0,
                 'f', 1);
    text += QLatin1Char('\n') + tr("Nodes before: %1").arg(QString::fromStdString(r.nodes_before.text()));
    text += QLatin1Char('\n') + tr("Nodes after:  %1").arg(QString::fromStdString(r.nodes_after.text()));
    if (!r.config_before.empty())
        text +=
            QLatin1Char('\n') +
            tr("Shape %1 → %2").arg(QString::fromStdString(r.config_before), QString::fromStdString(r.config_after));
    counts_->setText(text);
}

void PruningPage::updateDetail() {
    const int row = table_->currentIndex().row();
    if (!model_->hasReport() || row < 0 || row >= model_->rowCount()) {
        detail_->clear();
        return;
    }
    const edge::prune::LayerMask& m = model_->mask(row);
    if (!m.prunable) {
        detail_->setText(
            tr("%1 is pinned: %2").arg(QString::fromStdString(m.layer), QString::fromStdString(m.pinned_reason)));
        return;
    }
    QString text = tr("%1: keeps %2 of %3 %4: %5")
                       .arg(QString::fromStdString(m.layer))
                       .arg(m.kept())
                       .arg(m.units)
                       .arg(unitKindText(m.kind), unitList(m.kept_units()));
    text += QLatin1Char('\n') + tr("removes: %1").arg(unitList(m.removed_units()));
    if (m.kind == edge::prune::UnitKind::AttentionHeads)
        text += QLatin1Char('\n') + tr("query heads kept: %1").arg(unitList(m.kept_heads()));
    detail_->setText(text);
}

void PruningPage::retranslate() {
    title_->setText(tr("Pruning"));
    subtitle_->setText(
        tr("Structured pruning removes whole units: KV heads (with their query group) and MLP channels of an "
           "LLM block, output channels of a CNN convolution. Units with the smallest weight magnitude go "
           "first. Double-click a ratio to edit one group."));
    ratioLabel_->setText(tr("Ratio for every group"));
    heads_->setText(tr("KV heads"));
    mlp_->setText(tr("MLP channels"));
    reset_->setText(tr("Reset edited ratios"));
    usePlan_->setText(tr("Use in the plan"));
    usePlan_->setToolTip(
        tr("Put these ratios into the Layers plan: validation, compile and deploy then prune "
           "the model first"));
    legend_->setText(tr("Units of each group: kept (blue), removed (red), pinned (grey)"));
    model_->retranslate();
    updateCounts();
    updateDetail();
}

void PruningPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace edge::views
