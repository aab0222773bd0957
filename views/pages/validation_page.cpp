#include "views/pages/validation_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <initializer_list>

#include "views/models/configuration_model.h"
#include "views/models/job.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/validation_report_model.h"
#include "views/style.h"

namespace edge::views {

ValidationPage::ValidationPage(ModelDocument* document, LayerPlanModel* plan, ConfigurationModel* configurations,
                               QWidget* parent)
    : QWidget(parent),
      document_(document),
      plan_(plan),
      configurations_(configurations),
      report_(new ValidationReportModel(this)),
      job_(new JobSlot(this)),
      title_(new QLabel(this)),
      subtitle_(new QLabel(this)),
      textLabel_(new QLabel(this)),
      text_(new QLineEdit(this)),
      browse_(new QPushButton(this)),
      calibLabel_(new QLabel(this)),
      calib_(new QLineEdit(this)),
      calibBrowse_(new QPushButton(this)),
      calibNote_(new QLabel(this)),
      selectLabel_(new QLabel(this)),
      select_(new QComboBox(this)),
      samplesLabel_(new QLabel(this)),
      samples_(new QSpinBox(this)),
      seedLabel_(new QLabel(this)),
      seed_(new QSpinBox(this)),
      sizeLabel_(new QLabel(this)),
      sequences_(new QSpinBox(this)),
      timesLabel_(new QLabel(this)),
      length_(new QSpinBox(this)),
      protocolLabel_(new QLabel(this)),
      protocol_(new QComboBox(this)),
      partsLabel_(new QLabel(this)),
      parts_(new QSpinBox(this)),
      bitflip_(new QCheckBox(this)),
      run_(new QPushButton(this)),
      cancel_(new QPushButton(this)),
      progress_(new QProgressBar(this)),
      stage_(new QLabel(this)),
      table_(new QTableView(this)),
      layers_(new ValidationLayerModel(this)),
      layersTitle_(new QLabel(this)),
      layerTable_(new QTableView(this)),
      verdict_(new QLabel(this)),
      message_(new QLabel(this)) {
    title_->setFont(titleFont());
    subtitle_->setObjectName(QStringLiteral("hint"));
    subtitle_->setWordWrap(true);
    text_->setText(defaultEvaluationText());
    text_->setMinimumWidth(420);
    protocol_->addItem(QString(), int(edge::validate::PplProtocol::Story));
    protocol_->addItem(QString(), int(edge::validate::PplProtocol::Para));
    protocol_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    parts_->setRange(1, 1000);
    parts_->setValue(6);
    for (const char* key : {"all", "kmeans", "random"}) select_->addItem(QString(), QString::fromLatin1(key));
    select_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    select_->setObjectName(QStringLiteral("calibSelect"));
    const ValidationSettings defaults;
    samples_->setRange(1, 100000);
    samples_->setValue(defaults.calibSamples);
    seed_->setRange(0, INT32_MAX);
    seed_->setValue(int(defaults.calibSeed));
    sequences_->setRange(1, 4096);
    sequences_->setValue(defaults.calibSequences);
    length_->setRange(8, 8192);
    length_->setValue(defaults.calibLength);
    bitflip_->setChecked(true);
    run_->setObjectName(QStringLiteral("primary"));
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(260);
    stage_->setObjectName(QStringLiteral("hint"));
    calibNote_->setObjectName(QStringLiteral("hint"));
    calibNote_->setWordWrap(true);
    message_->setWordWrap(true);
    message_->setStyleSheet(QStringLiteral("color: #c01c28;"));
    verdict_->setWordWrap(true);
    verdict_->setObjectName(QStringLiteral("sectionTitle"));

    table_->setModel(report_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::SelectedClicked |
                            QAbstractItemView::EditKeyPressed);
    table_->setAlternatingRowColors(true);
    table_->setShowGrid(false);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 14);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(ValidationReportModel::ValueColumn, QHeaderView::Stretch);
    table_->horizontalHeader()->setHighlightSections(false);

    auto* layerProxy = new QSortFilterProxyModel(this);
    layerProxy->setSourceModel(layers_);
    layerProxy->setSortRole(ValidationLayerModel::SortRole);
    layerTable_->setModel(layerProxy);
    layerTable_->setSortingEnabled(true);
    layerTable_->sortByColumn(ValidationLayerModel::LayerColumn, Qt::AscendingOrder);
    layerTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    layerTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layerTable_->setAlternatingRowColors(true);
    layerTable_->setShowGrid(false);
    layerTable_->verticalHeader()->hide();
    layerTable_->verticalHeader()->setDefaultSectionSize(layerTable_->fontMetrics().height() + 8);
    layerTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    layerTable_->horizontalHeader()->setHighlightSections(false);
    layersTitle_->setObjectName(QStringLiteral("sectionTitle"));

    auto* form = new QGridLayout;
    form->setHorizontalSpacing(10);
    form->addWidget(textLabel_, 0, 0);
    auto* textRow = new QHBoxLayout;
    textRow->addWidget(text_, 1);
    textRow->addWidget(browse_);
    form->addLayout(textRow, 0, 1, 1, 5);
    form->addWidget(calibLabel_, 1, 0);
    auto* calibRow = new QHBoxLayout;
    calibRow->addWidget(calib_, 1);
    calibRow->addWidget(calibBrowse_);
    form->addLayout(calibRow, 1, 1, 1, 5);
    auto* selectRow = new QHBoxLayout;
    for (QWidget* w : std::initializer_list<QWidget*>{select_, samplesLabel_, samples_, seedLabel_, seed_, sizeLabel_,
                                                      sequences_, timesLabel_, length_})
        selectRow->addWidget(w);
    selectRow->addStretch(1);
    form->addWidget(selectLabel_, 2, 0);
    form->addLayout(selectRow, 2, 1, 1, 5);
    form->addWidget(calibNote_, 3, 1, 1, 5);
    form->addWidget(protocolLabel_, 4, 0);
    form->addWidget(protocol_, 4, 1);
    form->addWidget(partsLabel_, 4, 2);
    form->addWidget(parts_, 4, 3);
    form->addWidget(bitflip_, 4, 4);
    form->setColumnStretch(5, 1);

    auto* runRow = new QHBoxLayout;
    runRow->addWidget(run_);
    runRow->addWidget(cancel_);
    runRow->addSpacing(12);
    runRow->addWidget(progress_);
    runRow->addWidget(stage_, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(20, 16, 20, 12);
    layout->setSpacing(8);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addLayout(form);
    layout->addLayout(runRow);
    layout->addWidget(message_);
    auto* lower = new QWidget(this);
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addWidget(layersTitle_);
    lowerLayout->addWidget(layerTable_, 1);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(table_);
    split->addWidget(lower);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(verdict_);
    layout->addWidget(split, 1);

    connect(browse_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Evaluation text"), QFileInfo(text_->text()).absolutePath(), tr("Text (*.txt);;All files (*)"));
        if (!path.isEmpty()) setTextPath(path);
    });
    connect(calibBrowse_, &QPushButton::clicked, this, [this] {
        const QString start = QFileInfo(calib_->text().isEmpty() ? text_->text() : calib_->text()).absolutePath();
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Calibration text"), start, tr("Text (*.txt);;All files (*)"));
        if (!path.isEmpty()) setCalibrationPath(path);
    });
    auto updateSelect = [this] {
        const bool picks = select_->currentData().toString() != QLatin1String("all");
        samples_->setEnabled(picks);
        seed_->setEnabled(picks);
    };
    connect(select_, &QComboBox::currentIndexChanged, this, updateSelect);
    updateSelect();
    connect(run_, &QPushButton::clicked, this, &ValidationPage::run);
    connect(cancel_, &QPushButton::clicked, this, &ValidationPage::cancel);
    connect(job_, &JobSlot::progress, this, [this](double f, const QString& stage) {
        progress_->setValue(int(f * 1000));
        stage_->setText(stage);
    });
    connect(job_, &JobSlot::runningChanged, this, &ValidationPage::updateRunState);
    connect(job_, &JobSlot::cancelled, this, [this] { stage_->setText(tr("Cancelled")); });
    connect(report_, &ValidationReportModel::verdictChanged, this, &ValidationPage::updateVerdict);
    // Thresholds and run options persist between sessions (QSettings "validation/...").
    {
        QSettings settings;
        edge::validate::Thresholds t;
        t.kl_mean_max = settings.value(QStringLiteral("validation/kl_mean_max"), t.kl_mean_max).toDouble();
        t.jitter_ms_max = settings.value(QStringLiteral("validation/jitter_ms_max"), t.jitter_ms_max).toDouble();
        t.bitflip_conf_drop_max =
            settings.value(QStringLiteral("validation/bitflip_conf_drop_max"), t.bitflip_conf_drop_max).toDouble();
        t.scale_ratio_warn =
            settings.value(QStringLiteral("validation/scale_ratio_warn"), t.scale_ratio_warn).toDouble();
        report_->setThresholds(t);
        parts_->setValue(settings.value(QStringLiteral("validation/parts"), parts_->value()).toInt());
        bitflip_->setChecked(settings.value(QStringLiteral("validation/bitflip"), true).toBool());
    }
    connect(report_, &ValidationReportModel::thresholdsChanged, this, [this] {
        const edge::validate::Thresholds t = report_->thresholds();
        QSettings settings;
        settings.setValue(QStringLiteral("validation/kl_mean_max"), t.kl_mean_max);
        settings.setValue(QStringLiteral("validation/jitter_ms_max"), t.jitter_ms_max);
        settings.setValue(QStringLiteral("validation/bitflip_conf_drop_max"), t.bitflip_conf_drop_max);
        settings.setValue(QStringLiteral("validation/scale_ratio_warn"), t.scale_ratio_warn);
    });
    connect(parts_, &QSpinBox::valueChanged, this,
            [](int v) { QSettings().setValue(QStringLiteral("validation/parts"), v); });
    connect(bitflip_, &QCheckBox::toggled, this,
            [](bool on) { QSettings().setValue(QStringLiteral("validation/bitflip"), on); });
    connect(document_, &ModelDocument::modelChanged, this, [this] {
        job_->cancel();  // a run on the previous model is stale
        report_->clear();
        layers_->setReport(nullptr);
        message_->clear();
        updateRunState();
    });
    retranslate();
    updateRunState();
}

ValidationSettings ValidationPage::settings() const {
    ValidationSettings s;
    s.textPath = text_->text();
    s.calibPath = calib_->text();
    s.protocol = edge::validate::PplProtocol(protocol_->currentData().toInt());
    s.maxParts = parts_->value();
    s.bitflip = bitflip_->isChecked();
    s.thresholds = report_->thresholds();
    s.calibSelect = select_->currentData().toString();
    s.calibSamples = samples_->value();
    s.calibSeed = quint64(seed_->value());
    s.calibSequences = sequences_->value();
    s.calibLength = length_->value();
    return s;
}

void ValidationPage::setCalibrationSelection(const QString& method, int samples, quint64 seed) {
    const int i = select_->findData(method);
    if (i >= 0) select_->setCurrentIndex(i);
    samples_->setValue(samples);
    seed_->setValue(int(std::min<quint64>(seed, quint64(INT32_MAX))));
}

void ValidationPage::setCalibrationSize(int sequences, int tokens) {
    sequences_->setValue(sequences);
    length_->setValue(tokens);
}

void ValidationPage::setTextPath(const QString& path) {
    text_->setText(path);
    rememberEvaluationText(path);
}

void ValidationPage::setCalibrationPath(const QString& path) { calib_->setText(path); }

QString ValidationPage::calibrationNote() const { return calibNote_->text(); }

void ValidationPage::setParts(int parts) { parts_->setValue(parts); }

void ValidationPage::run() {
    message_->clear();
    auto model = document_->current();
    if (!model) {
        message_->setText(tr("Open a model first."));
        return;
    }
    const ValidationSettings s = settings();
    const std::vector<LayerSetting> plan = plan_->settings();
    progress_->setValue(0);
    stage_->setText(tr("Quantizing…"));
    job_->start<ValidationOutcome>([model, plan, s](edge::Progress* p) { return runValidation(model, plan, s, p); },
                                   [this](edge::Result<ValidationOutcome> r) { finished(std::move(r)); });
}

void ValidationPage::cancel() { job_->cancel(); }

void ValidationPage::finished(edge::Result<ValidationOutcome> result) {
    progress_->setValue(1000);
    if (!result.ok()) {
        stage_->clear();
        message_->setText(userErrorText(tr("Validation failed"), result.error()));
        return;
    }
    stage_->setText(tr("Done"));
    calibNote_->setText(result->calibration.isEmpty() ? QString() : tr("Calibrated on %1").arg(result->calibration));
    report_->setReport(result->report);
    layers_->setReport(&*report_->report());
    auto model = document_->current();
    if (!model) return;
    Configuration c = configurationFrom(*result, *model, settings(), configurations_->nextName());
    c.passed = report_->passed();  // under the thresholds shown (edited after the run too)
    c.failures = report_->failures();
    const int row = configurations_->add(std::move(c));
    emit configurationAdded(row);
}

void ValidationPage::updateVerdict() {
    if (!report_->hasReport()) {
        verdict_->setText(document_->current() ? tr("No validation run yet: set a plan on the Layers page, then Run.")
                                               : QString());
        verdict_->setStyleSheet(QString());
        return;
    }
    const QStringList f = report_->failures();
    if (f.isEmpty()) {
        verdict_->setText(tr("Passed: every check is within its threshold."));
        verdict_->setStyleSheet(QStringLiteral("color: #1b7f3b;"));
    } else {
        verdict_->setText(tr("Failed: %1").arg(f.join(QStringLiteral("; "))));
        verdict_->setStyleSheet(QStringLiteral("color: #c01c28;"));
    }
}

void ValidationPage::updateRunState() {
    const bool running = job_->isRunning();
    run_->setEnabled(!running && document_->current() != nullptr);
    cancel_->setEnabled(running);
    progress_->setVisible(running || progress_->value() > 0);
    updateVerdict();
}

void ValidationPage::retranslate() {
    title_->setText(tr("Validation"));
    subtitle_->setText(
        tr("The open model quantized with the Layers page's plan, checked against the FP32 model: "
           "perplexity, KL divergence, top-1 agreement, numeric health, bit-flip fault injection "
           "and decode jitter. Double-click a threshold to change it."));
    textLabel_->setText(tr("Evaluation text"));
    text_->setPlaceholderText(tr("A text file the model should predict well"));
    browse_->setText(tr("Browse…"));
    calibLabel_->setText(tr("Calibration text"));
    calib_->setPlaceholderText(tr("AWQ/GPTQ: empty = the evaluation text without the parts it scores"));
    calibBrowse_->setText(tr("Browse…"));
    selectLabel_->setText(tr("Calibrate on"));
    select_->setItemText(0, tr("every paragraph, in order"));
    select_->setItemText(1, tr("k-means representatives"));
    select_->setItemText(2, tr("a random draw"));
    select_->setToolTip(
        tr("k-means: the paragraphs nearest the centres of clusters of the model's own embeddings (what "
           "calib-select does); random: a seeded uniform draw. Either chooses among the paragraphs left "
           "after those the evaluation scores are removed."));
    samplesLabel_->setText(tr("paragraphs"));
    seedLabel_->setText(tr("seed"));
    sizeLabel_->setText(tr("  sequences"));
    timesLabel_->setText(tr("× tokens"));
    protocolLabel_->setText(tr("Split into"));
    protocol_->setItemText(0, tr("stories (<|endoftext|>)"));
    protocol_->setItemText(1, tr("paragraphs (blank lines)"));
    partsLabel_->setText(tr("Parts scored"));
    bitflip_->setText(tr("Bit-flip injection (1 % of codes)"));
    run_->setText(tr("Run validation"));
    cancel_->setText(tr("Cancel"));
    if (!job_->isRunning())
        stage_->setText(report_->hasReport() ? tr("Done") : QString());  // stage texts were in the old language
    report_->retranslate();
    layers_->retranslate();
    layersTitle_->setText(tr("Per layer: input activations checked for NaN / Inf, and the quantized scales' range"));
    updateVerdict();
}

void ValidationPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace edge::views
