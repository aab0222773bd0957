#include "views/pages/boards_page.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTime>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "views/models/board_controller.h"
#include "views/models/board_costs.h"
#include "views/models/board_list_model.h"
#include "views/models/job.h"
#include "views/models/model_document.h"
#include "views/models/telemetry_store.h"
#include "views/models/workload_list_model.h"
#include "views/style.h"
#include "views/telemetry_chart.h"

namespace edge::views {
namespace {
const QColor kBlue(0x1f, 0x6f, 0xd1), kRed(0xd9, 0x48, 0x2b), kGreen(0x2e, 0x9e, 0x6a), kGrey(0x8a, 0x94, 0xa0),
    kViolet(0x7b, 0x4f, 0xc9);
const double kWindows[] = {30, 120, 600, 3600, 0};

QString figure(double v, int decimals) {
    return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'f', decimals);
}
}  // namespace

BoardsPage::BoardsPage(ModelDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      boards_(new BoardListModel(this)),
      store_(new TelemetryStore(this)),
      controller_(new BoardController(store_, this)),
      title_(new QLabel(this)),
      subtitle_(new QLabel(this)),
      table_(new QTableView(this)),
      add_(new QPushButton(this)),
      remove_(new QPushButton(this)),
      reload_(new QPushButton(this)),
      engineLabel_(new QLabel(this)),
      engine_(new QLineEdit(this)),
      browse_(new QPushButton(this)),
      folderLabel_(new QLabel(this)),
      folder_(new QLineEdit(this)),
      promptLabel_(new QLabel(this)),
      prompts_(new QLineEdit(this)),
      chat_(new QCheckBox(this)),
      tokensLabel_(new QLabel(this)),
      tokens_(new QSpinBox(this)),
      workloads_(new WorkloadListModel(this)),
      costModels_(new BoardCostModels(this)),
      measureCost_(new QCheckBox(this)),
      workloadLabel_(new QLabel(this)),
      workload_(new QComboBox(this)),
      saveWorkload_(new QPushButton(this)),
      serveWorkload_(new QPushButton(this)),
      removeWorkload_(new QPushButton(this)),
      deploy_(new QPushButton(this)),
      profile_(new QPushButton(this)),
      cancel_(new QPushButton(this)),
      progress_(new QProgressBar(this)),
      stage_(new QLabel(this)),
      summary_(new QLabel(this)),
      log_(new QPlainTextEdit(this)),
      windowLabel_(new QLabel(this)),
      window_(new QComboBox(this)),
      pause_(new QCheckBox(this)),
      exportCsv_(new QPushButton(this)),
      exportPng_(new QPushButton(this)),
      exportPdf_(new QPushButton(this)),
      figures_(new QLabel(this)),
      refresh_(new QTimer(this)) {
    title_->setFont(titleFont());
    subtitle_->setObjectName(QStringLiteral("hint"));
    subtitle_->setWordWrap(true);

    table_->setModel(boards_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->setShowGrid(false);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 10);
    table_->horizontalHeader()->setHighlightSections(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);

    engine_->setMinimumWidth(280);
    folder_->setText(QString::fromLatin1(BoardListModel::kDefaultRoot));
    prompts_->setText(QStringLiteral("Once upon a time | The little dog"));
    tokens_->setRange(1, 4096);
    tokens_->setValue(64);
    deploy_->setObjectName(QStringLiteral("primary"));
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(220);
    stage_->setObjectName(QStringLiteral("hint"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(300);
    log_->setFont(monoFont());
    log_->setMinimumHeight(60);
    for (int i = 0; i < 5; ++i) window_->addItem(QString());
    window_->setCurrentIndex(1);
    window_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    figures_->setFont(monoFont());
    figures_->setObjectName(QStringLiteral("hint"));

    for (auto& c : charts_) c = new TelemetryChart(this);
    charts_[LatencyChart]->addSeries(TelemetryColumn::TokenLatency, kGrey, true);
    charts_[LatencyChart]->addSeries(TelemetryColumn::LatencyP50, kBlue);
    charts_[LatencyChart]->addSeries(TelemetryColumn::LatencyP99, kRed);
    charts_[ThroughputChart]->addSeries(TelemetryColumn::TokensPerS, kGreen);
    charts_[MemoryChart]->addSeries(TelemetryColumn::RssMiB, kBlue);
    charts_[MemoryChart]->addSeries(TelemetryColumn::DeviceMiB, kViolet);
    charts_[KvChart]->addSeries(TelemetryColumn::KvHitPct, kGreen);
    charts_[KvChart]->addSeries(TelemetryColumn::KvUsedPct, kBlue);

    // ---- layout ----
    auto* boardButtons = new QHBoxLayout;
    boardButtons->addWidget(add_);
    boardButtons->addWidget(remove_);
    boardButtons->addWidget(reload_);
    boardButtons->addStretch(1);
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(table_, 1);
    leftLayout->addLayout(boardButtons);

    auto* form = new QGridLayout;
    form->setHorizontalSpacing(10);
    form->addWidget(engineLabel_, 0, 0);
    auto* engineRow = new QHBoxLayout;
    engineRow->addWidget(engine_, 1);
    engineRow->addWidget(browse_);
    form->addLayout(engineRow, 0, 1, 1, 3);
    form->addWidget(folderLabel_, 1, 0);
    form->addWidget(folder_, 1, 1, 1, 3);
    form->addWidget(workloadLabel_, 2, 0);
    auto* workloadRow = new QHBoxLayout;
    workloadRow->addWidget(workload_, 1);
    workloadRow->addWidget(saveWorkload_);
    workloadRow->addWidget(serveWorkload_);
    workloadRow->addWidget(removeWorkload_);
    form->addLayout(workloadRow, 2, 1, 1, 3);
    form->addWidget(promptLabel_, 3, 0);
    auto* promptRow = new QHBoxLayout;
    promptRow->addWidget(prompts_, 1);
    promptRow->addWidget(chat_);
    form->addLayout(promptRow, 3, 1);
    form->addWidget(tokensLabel_, 3, 2);
    form->addWidget(tokens_, 3, 3);
    form->setColumnStretch(1, 1);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(deploy_);
    runRow->addWidget(measureCost_);
    runRow->addWidget(profile_);
    runRow->addWidget(cancel_);
    runRow->addSpacing(12);
    runRow->addWidget(progress_);
    runRow->addWidget(stage_, 1);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addLayout(form);
    rightLayout->addLayout(runRow);
    rightLayout->addWidget(summary_);
    rightLayout->addWidget(log_, 1);

    auto* top = new QSplitter(Qt::Horizontal, this);
    top->addWidget(left);
    top->addWidget(right);
    top->setStretchFactor(0, 1);
    top->setStretchFactor(1, 1);
    top->setSizes({660, 740});

    auto* chartBar = new QHBoxLayout;
    chartBar->addWidget(windowLabel_);
    chartBar->addWidget(window_);
    chartBar->addWidget(pause_);
    chartBar->addSpacing(16);
    chartBar->addWidget(figures_, 1);
    chartBar->addWidget(exportCsv_);
    chartBar->addWidget(exportPng_);
    chartBar->addWidget(exportPdf_);
    auto* grid = new QGridLayout;
    grid->setHorizontalSpacing(18);
    grid->setVerticalSpacing(8);
    grid->addWidget(charts_[LatencyChart], 0, 0);
    grid->addWidget(charts_[ThroughputChart], 0, 1);
    grid->addWidget(charts_[MemoryChart], 1, 0);
    grid->addWidget(charts_[KvChart], 1, 1);
    auto* lower = new QWidget(this);
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addLayout(chartBar);
    lowerLayout->addLayout(grid, 1);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(lower);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 5);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(20, 16, 20, 12);
    layout->setSpacing(8);
    layout->addWidget(title_);
    layout->addWidget(subtitle_);
    layout->addWidget(split, 1);

    // ---- behaviour ----
    refresh_->setSingleShot(true);
    refresh_->setInterval(200);  // 5 redraws a second, however fast the batches come
    connect(refresh_, &QTimer::timeout, this, [this] {
        if (isVisible()) refreshCharts();  // a hidden page redraws when shown
    });
    connect(store_, &TelemetryStore::appended, this, [this] {
        if (!refresh_->isActive()) refresh_->start();
    });
    connect(store_, &TelemetryStore::cleared, this, &BoardsPage::refreshCharts);
    connect(window_, &QComboBox::currentIndexChanged, this, &BoardsPage::refreshCharts);
    connect(pause_, &QCheckBox::toggled, this, [this](bool paused) {
        for (auto* c : charts_) c->setInteractive(paused);
        if (!paused) refreshCharts();
    });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& i) {
        if (i.isValid()) folder_->setText(boards_->folder(i.row()));
        updateRunState();
    });
    connect(add_, &QPushButton::clicked, this, &BoardsPage::addBoardDialog);
    connect(remove_, &QPushButton::clicked, this, [this] { boards_->removeUserBoard(selectedBoard()); });
    connect(reload_, &QPushButton::clicked, this, [this] { reloadBoards(boards_->sshConfigPath()); });
    connect(workloads_, &WorkloadListModel::workloadsChanged, this, &BoardsPage::rebuildWorkloads);
    connect(workload_, &QComboBox::currentIndexChanged, this, &BoardsPage::workloadChosen);
    connect(saveWorkload_, &QPushButton::clicked, this, [this] {
        bool ok = false;
        const QString name = QInputDialog::getText(this, tr("Save workload"), tr("Name"), QLineEdit::Normal,
                                                   tr("workload %1").arg(workloads_->rowCount() + 1), &ok);
        if (!ok) return;
        if (auto r = savePromptsAs(name); !r) showError(tr("Save workload"), r.message());
    });
    connect(serveWorkload_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Serving workload"), QString(),
                                                          tr("Workloads (*.workload);;All files (*)"));
        if (path.isEmpty()) return;
        bool ok = false;
        const QString name = QInputDialog::getText(this, tr("Serving workload"), tr("Name"), QLineEdit::Normal,
                                                   QFileInfo(path).completeBaseName(), &ok);
        if (!ok) return;
        const int concurrency =
            QInputDialog::getInt(this, tr("Serving workload"), tr("Requests at once"), 8, 1, 4096, 1, &ok);
        if (!ok) return;
        if (auto r = addServeWorkload(path, name, concurrency); !r) showError(tr("Serving workload"), r.message());
    });
    connect(removeWorkload_, &QPushButton::clicked, this,
            [this] { workloads_->remove(workloads_->rowOfName(selectedWorkload())); });
    connect(browse_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Engine or model to deploy"), QFileInfo(engine_->text()).absolutePath(),
            tr("Engines and models (*.edge *.gguf *.bin);;All files (*)"));
        if (!path.isEmpty()) setEnginePath(path);
    });
    connect(deploy_, &QPushButton::clicked, this, &BoardsPage::deploy);
    measureCost_->setChecked(QSettings().value(QStringLiteral("boards/measure_cost_model"), false).toBool());
    controller_->setMeasureCostModel(measureCost_->isChecked());
    connect(measureCost_, &QCheckBox::toggled, this, [this](bool on) {
        controller_->setMeasureCostModel(on);
        QSettings().setValue(QStringLiteral("boards/measure_cost_model"), on);
    });
    connect(controller_, &BoardController::costModelMeasured, this,
            [this](const QString& board, const edge::runtime::BoardCostModel& cm) {
                costModels_->set(board, cm);
                logEvent(board, tr("Cost model measured: %1 ms per token on %2 (%3)")
                                    .arg(cm.engine_tpot_ms, 0, 'f', 3)
                                    .arg(QString::fromStdString(cm.engine), QString::fromStdString(cm.kernels)));
            });
    connect(profile_, &QPushButton::clicked, this, &BoardsPage::profile);
    connect(cancel_, &QPushButton::clicked, this, &BoardsPage::cancel);
    connect(exportCsv_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export telemetry"), QString(), tr("CSV (*.csv)"));
        if (path.isEmpty()) return;
        if (const auto r = exportCsv(path); !r) showError(tr("Export telemetry"), r.message());
    });
    for (auto [button, ext] :
         {std::pair{exportPng_, QStringLiteral("png")}, std::pair{exportPdf_, QStringLiteral("pdf")}}) {
        connect(button, &QPushButton::clicked, this, [this, ext = ext] {
            QString base = QFileDialog::getSaveFileName(
                this, tr("Export charts"), QString(),
                ext == QLatin1String("png") ? tr("PNG images (*.png)") : tr("PDF (*.pdf)"));
            if (base.isEmpty()) return;
            if (base.endsWith(QLatin1Char('.') + ext)) base.chop(ext.size() + 1);
            QStringList written;
            if (const auto r = exportCharts(base, ext, &written); !r)
                showError(tr("Export charts"), r.message());
            else
                logEvent(QString(), tr("Charts written: %1").arg(written.join(QStringLiteral(", "))));
        });
    }
    for (JobSlot* job : {controller_->deployJob(), controller_->profileJob()}) {
        connect(job, &JobSlot::runningChanged, this, &BoardsPage::updateRunState);
        connect(job, &JobSlot::progress, this, [this](double f, const QString& stage) {
            progress_->setValue(int(f * 1000));
            stage_->setText(stage);
        });
        connect(job, &JobSlot::cancelled, this, [this] { stage_->setText(tr("Cancelled")); });
    }
    connect(controller_, &BoardController::hostKeyQuestion, this, &BoardsPage::askHostKey);
    connect(controller_, &BoardController::failed, this,
            [this](const QString& board, const QString& title, const QString& message) {
                logEvent(board, message);
                stage_->setText(tr("Failed"));
                showError(title, message);
            });
    connect(controller_, &BoardController::boardEvent, this, &BoardsPage::logEvent);
    connect(controller_, &BoardController::deployed, this, &BoardsPage::onDeployed);
    connect(controller_, &BoardController::profiled, this, &BoardsPage::onProfiled);
    if (document_) {
        connect(document_, &ModelDocument::modelChanged, this, [this] { setAutoEngine(document_->path()); });
        if (!document_->path().isEmpty()) setAutoEngine(document_->path());
    }
    retranslate();
    reloadBoards();
    updateRunState();
    refreshCharts();
}

void BoardsPage::reloadBoards(const QString& sshConfigPath) {
    const QString current =
        selectedBoard() >= 0 ? QString::fromStdString(boards_->board(selectedBoard()).name) : QString();
    controller_->setSshConfigFile(sshConfigPath);
    boards_->reload(sshConfigPath);
    if (!current.isEmpty()) selectBoard(current);
    if (selectedBoard() < 0 && boards_->rowCount() > 0) table_->selectRow(0);
    updateRunState();
}

bool BoardsPage::selectBoard(const QString& name) {
    const int row = boards_->rowOfName(name);
    if (row < 0) return false;
    table_->selectRow(row);
    table_->setCurrentIndex(boards_->index(row, 0));
    return true;
}

int BoardsPage::selectedBoard() const {
    const QModelIndex i = table_->currentIndex();
    return i.isValid() ? i.row() : -1;
}

void BoardsPage::setAutoEngine(const QString& path) {
    if (path.isEmpty()) return;
    if (!engine_->text().isEmpty() && engine_->text() != autoEngine_) return;  // the user chose another file
    const QString canonical = QFileInfo(path).canonicalFilePath();
    autoEngine_ = canonical.isEmpty() ? path : canonical;
    engine_->setText(autoEngine_);
}

void BoardsPage::setEnginePath(const QString& path) {
    const QString canonical = QFileInfo(path).canonicalFilePath();
    engine_->setText(canonical.isEmpty() ? path : canonical);
}

QString BoardsPage::enginePath() const { return engine_->text(); }
void BoardsPage::setFolder(const QString& folder) { folder_->setText(folder); }
void BoardsPage::setPrompts(const QStringList& prompts) { prompts_->setText(prompts.join(QStringLiteral(" | "))); }
void BoardsPage::setMaxTokens(int tokens) { tokens_->setValue(tokens); }
void BoardsPage::setChat(bool chat) { chat_->setChecked(chat); }
bool BoardsPage::isChat() const { return chat_->isChecked(); }

void BoardsPage::setWindowSeconds(double seconds) {
    for (int i = 0; i < window_->count(); ++i)
        if (kWindows[i] == seconds) window_->setCurrentIndex(i);
}

double BoardsPage::windowSeconds() const { return kWindows[std::max(0, window_->currentIndex())]; }
void BoardsPage::setPaused(bool paused) { pause_->setChecked(paused); }
bool BoardsPage::isPaused() const { return pause_->isChecked(); }

void BoardsPage::deploy() {
    const int row = selectedBoard();
    if (row < 0) return showError(tr("Deploy"), tr("Select a board first."));
    controller_->deploy(boards_->board(row), engine_->text(), folder_->text().trimmed());
}

void BoardsPage::profile() {
    const int row = selectedBoard();
    if (row < 0) return showError(tr("Profile"), tr("Select a board first."));
    const int w = workloads_->rowOfName(selectedWorkload());
    if (w >= 0) {
        controller_->profile(boards_->board(row), folder_->text().trimmed(), workloads_->at(w));
        return;
    }
    QStringList prompts;
    for (const QString& p : prompts_->text().split(QLatin1Char('|')))
        if (!p.trimmed().isEmpty()) prompts << p.trimmed();
    controller_->profile(boards_->board(row), folder_->text().trimmed(), prompts, tokens_->value(), chat_->isChecked());
}

void BoardsPage::setMeasureCostModel(bool on) { measureCost_->setChecked(on); }

Result BoardsPage::saveWorkload(const ProfileWorkload& workload) {
    if (auto r = workloads_->save(workload); !r) return r;
    selectWorkload(workload.name);
    return {};
}

Result BoardsPage::savePromptsAs(const QString& name) {
    ProfileWorkload w;
    w.name = name.trimmed();
    for (const QString& p : prompts_->text().split(QLatin1Char('|')))
        if (!p.trimmed().isEmpty()) w.prompts << p.trimmed();
    w.maxTokens = tokens_->value();
    w.chat = chat_->isChecked();
    return saveWorkload(w);
}

Result BoardsPage::addServeWorkload(const QString& path, const QString& name, int concurrency) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return Result::failure(tr("%1: cannot read the workload file").arg(path));
    ProfileWorkload w;
    w.name = name.trimmed();
    w.serveText = QString::fromUtf8(f.readAll());
    w.serveSource = QFileInfo(path).fileName();
    w.concurrency = concurrency;
    if (w.serveText.isEmpty()) return Result::failure(tr("%1: the workload file is empty").arg(path));
    return saveWorkload(w);
}

bool BoardsPage::selectWorkload(const QString& name) {
    const int i = name.isEmpty() ? 0 : workload_->findData(name);
    if (i < 0) return false;
    workload_->setCurrentIndex(i);
    return true;
}

QString BoardsPage::selectedWorkload() const { return workload_->currentData().toString(); }

void BoardsPage::rebuildWorkloads() {
    const QString keep = selectedWorkload();
    const QSignalBlocker block(workload_);
    workload_->clear();
    workload_->addItem(tr("The prompts below (not saved)"), QString());
    for (const ProfileWorkload& w : workloads_->workloads())
        workload_->addItem(w.isServe()
                               ? tr("%1 — serving %2 at concurrency %3").arg(w.name, w.serveSource).arg(w.concurrency)
                               : tr("%1 — %n prompt(s)", nullptr, int(w.prompts.size())).arg(w.name),
                           w.name);
    const int i = workload_->findData(keep);
    workload_->setCurrentIndex(i < 0 ? 0 : i);
    workloadChosen();
}

void BoardsPage::workloadChosen() {
    const int row = workloads_->rowOfName(selectedWorkload());
    const bool named = row >= 0;
    if (named) {
        const ProfileWorkload& w = workloads_->at(row);
        if (!w.isServe()) {
            prompts_->setText(w.prompts.join(QStringLiteral(" | ")));
            tokens_->setValue(w.maxTokens);
            chat_->setChecked(w.chat);
        }
    }
    // A named workload runs as saved: its prompts are shown, edited by saving the page's under a name.
    prompts_->setEnabled(!named);
    tokens_->setEnabled(!named);
    chat_->setEnabled(!named);
    removeWorkload_->setEnabled(named);
}

void BoardsPage::cancel() { controller_->cancel(); }

void BoardsPage::refreshCharts() {
    updateFigures();
    if (pause_->isChecked() && store_->rows().size() > 0) return;  // the user is inspecting: hold still
    const TelemetryRing& ring = store_->rows();
    const double last = store_->latestTime();
    const double first = ring.size() ? ring.at(0).t : 0.0;
    const double window = windowSeconds();
    const double t0 = window > 0 ? std::max(first, last - window) : first;
    const double t1 = last > t0 ? last : t0 + 1.0;
    for (auto* c : charts_) c->refresh(*store_, t0, t1);
}

void BoardsPage::updateFigures() {
    if (store_->received() == 0) {
        figures_->setText(tr("No telemetry yet: deploy, then profile a board."));
        return;
    }
    figures_->setText(tr("p50 %1 ms · p99 %2 ms · %3 tok/s · RSS %4 MiB · %5 samples")
                          .arg(figure(store_->latest(TelemetryColumn::LatencyP50), 2),
                               figure(store_->latest(TelemetryColumn::LatencyP99), 2),
                               figure(store_->latest(TelemetryColumn::TokensPerS), 1),
                               figure(store_->latest(TelemetryColumn::RssMiB), 1))
                          .arg(store_->received()));
}

Result BoardsPage::exportCsv(const QString& path) { return store_->writeCsv(path); }

Result BoardsPage::exportCharts(const QString& base, const QString& ext, QStringList* written) {
    static const char* kNames[ChartCount] = {"latency", "throughput", "memory", "kv"};
    for (int i = 0; i < ChartCount; ++i) {
        const QString path = base + QLatin1Char('-') + QLatin1String(kNames[i]) + QLatin1Char('.') + ext;
        const int w = std::max(640, charts_[i]->plot()->width()), h = std::max(360, charts_[i]->plot()->height());
        const bool ok = ext == QLatin1String("pdf") ? charts_[i]->savePdf(path, w, h) : charts_[i]->savePng(path, w, h);
        if (!ok) {
            return Result::failure(tr("Cannot write %1.").arg(path));
        }
        if (written) *written << path;
    }
    return {};
}

void BoardsPage::showError(const QString& title, const QString& message) {
    const bool changedKey =
        message.contains(QLatin1String("HOST KEY CHANGED")) || message.contains(QLatin1String("WARNING"));
    // Window-modal and non-blocking: the event loop (and a test driving it) keeps running.
    auto* box = new QMessageBox(changedKey ? QMessageBox::Warning : QMessageBox::Critical,
                                changedKey ? tr("Host key changed: connection refused") : title, message,
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("boardError"));
    box->open();
}

void BoardsPage::askHostKey(const QString& where, const QString& fingerprint) {
    auto* box = new QMessageBox(QMessageBox::Question, tr("Unknown host key"),
                                tr("The board %1 presents a host key this computer has not seen before:\n\n%2\n\n"
                                   "Compare it with the board's own fingerprint (ssh-keygen -lf "
                                   "/etc/ssh/ssh_host_ed25519_key.pub on the board). Trust it and remember it in "
                                   "known_hosts?")
                                    .arg(where, fingerprint),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("hostKeyQuestion"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPushButton* trust = box->addButton(tr("Trust and connect"), QMessageBox::AcceptRole);
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    connect(box, &QMessageBox::finished, this,
            [this, box, trust] { controller_->answerHostKey(box->clickedButton() == trust); });
    box->open();
}

void BoardsPage::addBoardDialog() {
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Add board"));
    auto* name = new QLineEdit(&dialog);
    auto* dest = new QLineEdit(&dialog);
    dest->setPlaceholderText(tr("user@host[:port]"));
    auto* folder = new QLineEdit(QString::fromLatin1(BoardListModel::kDefaultRoot), &dialog);
    auto* identity = new QLineEdit(&dialog);
    identity->setPlaceholderText(tr("ssh-agent or ~/.ssh keys"));
    auto* launcher = new QLineEdit(&dialog);
    launcher->setPlaceholderText(tr("none (e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu for an emulated board)"));
    auto* form = new QFormLayout(&dialog);
    form->addRow(tr("Name"), name);
    form->addRow(tr("Destination"), dest);
    form->addRow(tr("Folder on board"), folder);
    form->addRow(tr("Key file"), identity);
    form->addRow(tr("Run the agent under"), launcher);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, [&] {
        const auto r =
            boards_->addUserBoard(name->text(), dest->text(), folder->text(), identity->text(), launcher->text());
        if (r) {
            dialog.accept();
            selectBoard(name->text().trimmed());
        } else {
            QMessageBox::warning(&dialog, tr("Add board"), r.message());
        }
    });
    dialog.exec();
}

void BoardsPage::onDeployed(const QString& board, const DeployOutcome& o) {
    deployedBoard_ = board;
    boardState_[board].first = o.version;
    updateSummary();
    stage_->setText(tr("Deployed"));
    progress_->setValue(1000);
    logEvent(board, deployText());
}

void BoardsPage::onProfiled(const QString& board, const ProfileOutcome& o) {
    profiledBoard_ = board;
    boardState_[board].second = o.tokensPerS;
    updateSummary();
    stage_->setText(tr("Finished"));
    progress_->setValue(1000);
    logEvent(board, profileText() + QLatin1Char(' ') + o.agent);
    refreshCharts();
}

QString BoardsPage::deployText() const {
    if (deployedBoard_.isEmpty()) return QString();
    const DeployOutcome& o = controller_->lastDeploy();
    const QString sent = QString::number(double(o.bytesSent) / (1024.0 * 1024.0), 'f', 2);
    return tr("Deployed %1 to %2 as version %3 (%4 MiB sent, %5 attempt(s), %6 s).")
        .arg(o.engineName, deployedBoard_, o.version, sent)
        .arg(o.attempts)
        .arg(o.seconds, 0, 'f', 2);
}

QString BoardsPage::profileText() const {
    if (profiledBoard_.isEmpty()) return QString();
    const ProfileOutcome& o = controller_->lastProfile();
    return tr("Profiled on %1: %2 prompt(s), %3 tokens; p50 %4 ms, p99 %5 ms, %6 tok/s, RSS max %7 MiB%8.")
        .arg(profiledBoard_)
        .arg(o.prompts)
        .arg(o.tokens)
        .arg(o.p50Ms, 0, 'f', 2)
        .arg(o.p99Ms, 0, 'f', 2)
        .arg(o.tokensPerS, 0, 'f', 1)
        .arg(o.rssMiB, 0, 'f', 1)
        .arg(o.restarts ? tr(", %1 agent restart(s)").arg(o.restarts) : QString());
}

void BoardsPage::updateSummary() {
    QStringList parts;
    if (!deployedBoard_.isEmpty()) parts << deployText();
    if (!profiledBoard_.isEmpty()) parts << profileText();
    summary_->setText(parts.join(QLatin1Char('\n')));
    summary_->setToolTip(profiledBoard_.isEmpty() ? QString()
                                                  : controller_->lastProfile().agent + QLatin1Char('\n') +
                                                        controller_->lastProfile().engine);
    for (auto it = boardState_.cbegin(); it != boardState_.cend(); ++it) {
        QString status = it->first.isEmpty() ? QString() : tr("deployed %1").arg(it->first);
        if (it->second > 0)
            status +=
                (status.isEmpty() ? QString() : QStringLiteral(" · ")) + tr("%1 tok/s").arg(it->second, 0, 'f', 1);
        boards_->setStatus(boards_->rowOfName(it.key()), status);
    }
}

void BoardsPage::logEvent(const QString& board, const QString& text) {
    const QString stamp = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    const QString who = board.isEmpty() ? QString() : board + QStringLiteral(": ");
    log_->appendPlainText(stamp + QStringLiteral("  ") + who + text);
}

void BoardsPage::updateRunState() {
    const bool busy = controller_->busy();
    const bool board = selectedBoard() >= 0;
    deploy_->setEnabled(!busy && board);
    profile_->setEnabled(!busy && board);
    cancel_->setEnabled(busy);
    remove_->setEnabled(!busy && boards_->isUserBoard(selectedBoard()));
    if (busy) progress_->setValue(0);
}

void BoardsPage::retranslate() {
    stage_->clear();  // it named the last step in the previous language
    title_->setText(tr("Boards"));
    subtitle_->setText(
        tr("Deploy an engine with edge-agent over SSH, run it on the board and watch what the agent "
           "streams back. Boards come from ~/.ssh/config and the ones you add."));
    add_->setText(tr("Add board…"));
    remove_->setText(tr("Remove"));
    reload_->setText(tr("Reload"));
    engineLabel_->setText(tr("Engine"));
    browse_->setText(tr("Browse…"));
    folderLabel_->setText(tr("Folder on board"));
    promptLabel_->setText(tr("Prompts (separate with |)"));
    workloadLabel_->setText(tr("Workload"));
    saveWorkload_->setText(tr("Save prompts as…"));
    serveWorkload_->setText(tr("Serving workload…"));
    serveWorkload_->setToolTip(
        tr("An edge-workload file (as serve-bench reads) replayed through the board's "
           "scheduler: requests arriving over time, at most N at once"));
    removeWorkload_->setText(tr("Remove"));
    rebuildWorkloads();
    tokensLabel_->setText(tr("Tokens"));
    chat_->setText(tr("Chat template"));
    chat_->setToolTip(
        tr("Send each prompt as a user message in the engine's own chat template (instruct "
           "models); generation stops at any end-of-turn token"));
    deploy_->setText(tr("Deploy"));
    measureCost_->setText(tr("Measure cost model"));
    measureCost_->setToolTip(
        tr("After deploying, the agent times every layer shape of the engine at FP32, FP16, "
           "INT8 and INT4 on the board (edge-agent --micro-profile): the board's cost model, "
           "which predicts each configuration's time per token and guides Autoplan"));
    profile_->setText(tr("Profile"));
    cancel_->setText(tr("Cancel"));
    windowLabel_->setText(tr("Window"));
    window_->setItemText(0, tr("30 s"));
    window_->setItemText(1, tr("2 min"));
    window_->setItemText(2, tr("10 min"));
    window_->setItemText(3, tr("1 h"));
    window_->setItemText(4, tr("All kept"));
    pause_->setText(tr("Pause"));
    exportCsv_->setText(tr("Export CSV…"));
    exportPng_->setText(tr("Export PNG…"));
    exportPdf_->setText(tr("Export PDF…"));
    const QString absent = tr("Not reported by this agent: %1");
    charts_[LatencyChart]->setTexts(tr("Per-token latency"), tr("ms"), {tr("token"), tr("p50"), tr("p99")}, absent);
    charts_[ThroughputChart]->setTexts(tr("Throughput"), tr("tokens/s"), {tr("tokens/s")}, absent);
    charts_[MemoryChart]->setTexts(tr("Memory"), tr("MiB"), {tr("RSS"), tr("device")}, absent);
    charts_[KvChart]->setTexts(tr("KV cache"), tr("%"), {tr("hit rate"), tr("blocks in use")}, absent);
    boards_->retranslate();
    updateSummary();
    updateFigures();
    refreshCharts();
}

void BoardsPage::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refreshCharts();
}

void BoardsPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

}  // namespace edge::views
