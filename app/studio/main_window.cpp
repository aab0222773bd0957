#include "app/studio/main_window.h"
#include "engine/model/weights.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>

#include <algorithm>

#include "app/studio/board_autoplan.h"
#include "app/studio/project_controller.h"
#include "views/models/board_controller.h"
#include "views/models/board_costs.h"
#include "views/models/configuration_model.h"
#include "views/models/format.h"
#include "views/models/language.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/recent_files_model.h"
#include "views/open_model.h"
#include "views/pages/boards_page.h"
#include "views/pages/home_page.h"
#include "views/pages/layers_page.h"
#include "views/pages/model_page.h"
#include "views/pages/pareto_page.h"
#include "views/pages/pruning_page.h"
#include "views/pages/sensitivity_page.h"
#include "views/pages/validation_page.h"
#include "views/style.h"

namespace edge::studio {

MainWindow::MainWindow(views::Language* language, QWidget* parent, const QString& autosavePath)
    : QMainWindow(parent),
      language_(language),
      document_(new views::ModelDocument(this)),
      recent_(new views::RecentFilesModel(this)),
      nav_(new QListWidget(this)),
      stack_(new QStackedWidget(this)),
      homePage_(new views::HomePage(document_, recent_, this)),
      modelPage_(new views::ModelPage(document_, this)),
      layersPage_(new views::LayersPage(document_, this)),
      configurations_(new views::ConfigurationModel(this)),
      sensitivityPage_(new views::SensitivityPage(document_, this)),
      validationPage_(new views::ValidationPage(document_, layersPage_->planModel(), configurations_, this)),
      paretoPage_(new views::ParetoPage(configurations_, this)),
      pruningPage_(new views::PruningPage(document_, this)),
      boardsPage_(new views::BoardsPage(document_, this)),
      statusModel_(new QLabel(this)) {
    project_ = new ProjectController(
        ProjectParts{document_, layersPage_->planModel(), configurations_, validationPage_, sensitivityPage_,
                     boardsPage_->workloads(), boardsPage_->costModels(), [this] { return pageKey(currentPage()); },
                     [this](const QString& key) { showPage(pageIndex(key)); }},
        autosavePath, this);
    nav_->setObjectName(QStringLiteral("pageList"));
    nav_->setFixedWidth(190);
    nav_->setFrameShape(QFrame::NoFrame);
    for (int i = 0; i < PageCount; ++i) nav_->addItem(QString());
    stack_->addWidget(homePage_);
    stack_->addWidget(modelPage_);
    stack_->addWidget(layersPage_);
    stack_->addWidget(sensitivityPage_);
    stack_->addWidget(validationPage_);
    stack_->addWidget(paretoPage_);
    stack_->addWidget(pruningPage_);
    stack_->addWidget(boardsPage_);
    connect(nav_, &QListWidget::currentRowChanged, stack_, &QStackedWidget::setCurrentIndex);

    auto* central = new QWidget(this);
    auto* row = new QHBoxLayout(central);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(0);
    row->addWidget(nav_);
    row->addWidget(stack_, 1);
    setCentralWidget(central);

    statusModel_->setFont(views::monoFont());
    statusBar()->addPermanentWidget(statusModel_);
    statusBar()->setSizeGripEnabled(false);

    connect(homePage_, &views::HomePage::openRequested, this, &MainWindow::openFileDialog);
    connect(homePage_, &views::HomePage::openFolderRequested, this, &MainWindow::openFolderDialog);
    connect(homePage_, &views::HomePage::recentActivated, this, [this](const QString& p) { openPath(p); });
    connect(homePage_, &views::HomePage::showModelRequested, this, [this] { showPage(ModelPageIndex); });
    connect(modelPage_, &views::ModelPage::openRequested, this, &MainWindow::openFileDialog);
    connect(modelPage_, &views::ModelPage::openFolderRequested, this, &MainWindow::openFolderDialog);

    connect(document_, &views::ModelDocument::loadStarted, this, [this](const QString& path) {
        statusBar()->showMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
        showPage(ModelPageIndex);
    });
    connect(document_, &views::ModelDocument::modelChanged, this, [this] {
        if (!document_->path().isEmpty()) recent_->add(document_->path());
        statusBar()->showMessage(tr("Loaded %1").arg(QFileInfo(document_->path()).fileName()), 5000);
        updateStatus();
    });
    connect(document_, &views::ModelDocument::loadFailed, this,
            [this](const QString&, const QString& message) { showLoadError(message); });
    connect(document_, &views::ModelDocument::loadCancelled, this,
            [this] { statusBar()->showMessage(tr("Loading cancelled"), 5000); });
    connect(recent_, &QAbstractItemModel::modelReset, this, &MainWindow::rebuildRecentMenu);
    connect(sensitivityPage_, &views::SensitivityPage::layerClicked, this, [this](const QString& layer) {
        layersPage_->selectLayers({layer});
        showPage(LayersPageIndex);
    });
    // The Pruning page's ratios become the plan's: validation, compile and deploy prune first.
    connect(pruningPage_, &views::PruningPage::ratiosChosen, this, [this](const QMap<QString, double>& ratios) {
        views::LayerPlanModel* plan = layersPage_->planModel();
        if (!plan->setGroupPruning(ratios)) {
            QMessageBox::warning(this, tr("Pruning"), plan->lastError());
            return;
        }
        statusBar()->showMessage(tr("The plan now prunes %n group(s)", nullptr,
                                    int(std::count_if(ratios.begin(), ratios.end(), [](double r) { return r > 0; }))),
                                 5000);
        showPage(LayersPageIndex);
    });
    // Each configuration's predicted time per token on every board with a cost model (shown
    // against what the board measures on the Pareto page).
    auto predict = [this] {
        auto model = document_->current();
        if (!model) return;
        for (int r = 0; r < configurations_->rowCount(); ++r) {
            const views::Configuration& c = configurations_->at(r);
            if (c.layers.size() != model->layers.size()) continue;  // another model's configuration
            const auto settings = views::settingsByName(model->layers, c.layers, c.settings);
            configurations_->setPredictions(r, views::predictTpot(boardsPage_->costModels()->all(), *model, settings));
        }
    };
    connect(boardsPage_->costModels(), &views::BoardCostModels::changed, this, predict);
    autoplan_ = new BoardAutoplan(document_, layersPage_->planModel(), sensitivityPage_->model(),
                                  boardsPage_->costModels(), this);
    connect(layersPage_, &views::LayersPage::autoplanRequested, this, [this] { autoplan_->ask(this); });
    connect(autoplan_, &BoardAutoplan::finished, this, [this](bool ok, const QString& message) {
        if (!ok) return showError(tr("Autoplan for a board"), message);
        showPage(LayersPageIndex);
        statusBar()->showMessage(tr("Autoplan: %1. Validate it to add the configuration.").arg(message), 10000);
    });
    connect(configurations_, &QAbstractItemModel::rowsInserted, this, predict);
    connect(validationPage_, &views::ValidationPage::configurationAdded, this, [this](int row) {
        statusBar()->showMessage(tr("Configuration %1 added to the Pareto page").arg(configurations_->at(row).name),
                                 5000);
    });
    connect(paretoPage_, &views::ParetoPage::configurationActivated, this, &MainWindow::openConfiguration);
    // The loop: a configuration compiled on the Pareto page is what the Boards page deploys, and
    // what a board measures running it comes back to that configuration (matched by SHA-256).
    paretoPage_->setCompileContext(
        {document_, [this] { return validationPage_->settings(); }, [this] { return engineDir(); }});
    connect(paretoPage_, &views::ParetoPage::engineCompiled, this, [this](int row, const QString& path) {
        boardsPage_->setEnginePath(path);
        statusBar()->showMessage(
            tr("%1 compiled: %2 (the Boards page deploys it)").arg(configurations_->at(row).name, path), 8000);
    });
    connect(
        boardsPage_->controller(), &views::BoardController::profiled, this,
        [this](const QString& board, const views::ProfileOutcome& o) {
            const int row = configurations_->addMeasurement(views::boardMeasurement(board, o));
            if (row < 0) {
                statusBar()->showMessage(
                    tr("The engine profiled on %1 was not compiled from a configuration of this project").arg(board),
                    8000);
                return;
            }
            statusBar()->showMessage(tr("%1 measured on %2: %3 ms per token (p50); shown on the Pareto page")
                                         .arg(configurations_->at(row).name, board)
                                         .arg(o.p50Ms, 0, 'f', 2),
                                     8000);
        });
    connect(project_, &ProjectController::failed, this,
            [this](const QString& message) { showError(tr("Open project"), message); });
    connect(project_, &ProjectController::modifiedChanged, this, &MainWindow::updateTitle);
    connect(project_, &ProjectController::pathChanged, this, &MainWindow::updateTitle);
    connect(document_, &views::ModelDocument::modelChanged, this, &MainWindow::updateTitle);
    setAcceptDrops(true);

    buildMenus();
    retranslate();
    showPage(HomePageIndex);
    // The window where the user left it (QSettings: per user, per application).
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

QString MainWindow::pageKey(int page) {
    switch (page) {
        case ModelPageIndex: return QStringLiteral("model");
        case LayersPageIndex: return QStringLiteral("layers");
        case SensitivityPageIndex: return QStringLiteral("sensitivity");
        case ValidationPageIndex: return QStringLiteral("validation");
        case ParetoPageIndex: return QStringLiteral("pareto");
        case PruningPageIndex: return QStringLiteral("pruning");
        case BoardsPageIndex: return QStringLiteral("boards");
        default: return QStringLiteral("home");
    }
}

int MainWindow::pageIndex(const QString& key) {
    for (int p = 0; p < PageCount; ++p)
        if (pageKey(p) == key) return p;
    return HomePageIndex;
}

void MainWindow::showPage(int page) { nav_->setCurrentRow(page); }
int MainWindow::currentPage() const { return stack_->currentIndex(); }
QWidget* MainWindow::page(int page) const { return stack_->widget(page); }

void MainWindow::buildMenus() {
    fileMenu_ = menuBar()->addMenu(QString());
    openAction_ = fileMenu_->addAction(QString(), this, &MainWindow::openFileDialog);
    openAction_->setShortcut(QKeySequence::Open);
    openFolderAction_ = fileMenu_->addAction(QString(), this, &MainWindow::openFolderDialog);
    recentMenu_ = fileMenu_->addMenu(QString());
    fileMenu_->addSeparator();
    openProjectAction_ = fileMenu_->addAction(QString(), this, &MainWindow::openProjectDialog);
    saveProjectAction_ = fileMenu_->addAction(QString(), this, [this] {
        if (project_->path().isEmpty())
            saveProjectDialog();
        else
            saveProject(project_->path());
    });
    saveProjectAction_->setShortcut(QKeySequence::Save);
    saveProjectAsAction_ = fileMenu_->addAction(QString(), this, &MainWindow::saveProjectDialog);
    fileMenu_->addSeparator();
    quitAction_ = fileMenu_->addAction(QString(), qApp, &QApplication::closeAllWindows);
    quitAction_->setShortcut(QKeySequence::Quit);

    editMenu_ = menuBar()->addMenu(QString());
    editMenu_->addAction(layersPage_->undoAction());
    editMenu_->addAction(layersPage_->redoAction());

    viewMenu_ = menuBar()->addMenu(QString());
    languageMenu_ = viewMenu_->addMenu(QString());
    languageGroup_ = new QActionGroup(this);
    for (const QString& code : views::Language::available()) {
        QAction* a = languageMenu_->addAction(views::Language::nativeName(code));
        a->setCheckable(true);
        a->setChecked(code == language_->current());
        a->setData(code);
        languageGroup_->addAction(a);
        connect(a, &QAction::triggered, this, [this, code] { language_->setLanguage(code); });
    }
    connect(language_, &views::Language::languageChanged, this, [this](const QString& code) {
        for (QAction* a : languageGroup_->actions()) a->setChecked(a->data().toString() == code);
    });

    helpMenu_ = menuBar()->addMenu(QString());
    aboutAction_ = helpMenu_->addAction(QString(), this, [this] {
        QMessageBox::about(this, tr("About EdgeStudio"),
                           tr("<b>EdgeStudio %1</b><p>Deploy neural networks on low-resource boards: inspect, "
                              "quantize, prune, compile and measure.</p>")
                               .arg(QApplication::applicationVersion()));
    });
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList paths = recent_->paths();
    for (const QString& p : paths) {
        QAction* a = recentMenu_->addAction(QFileInfo(p).fileName());
        a->setToolTip(p);
        a->setStatusTip(p);
        connect(a, &QAction::triggered, this, [this, p] { openPath(p); });
    }
    if (!paths.isEmpty()) {
        recentMenu_->addSeparator();
        recentMenu_->addAction(tr("Clear list"), recent_, &views::RecentFilesModel::clear);
    }
    recentMenu_->setEnabled(!paths.isEmpty());
}

QString MainWindow::lastDir() const {
    const QStringList paths = recent_->paths();
    return paths.isEmpty() ? QString() : QFileInfo(paths.front()).absolutePath();
}

void MainWindow::openFileDialog() {
    if (auto choice = views::chooseModelFile(this, lastDir())) document_->open(choice->path, choice->tokenizer);
}

void MainWindow::openFolderDialog() {
    if (auto choice = views::chooseModelFolder(this, lastDir())) document_->open(choice->path, choice->tokenizer);
}

void MainWindow::openPath(const QString& path, const QString& tokenizer) {
    if (path.endsWith(QLatin1String(".edgeproj"))) {
        openProject(path);
        return;
    }
    if (auto choice = views::completeChoice(this, views::OpenChoice{path, tokenizer}))
        document_->open(choice->path, choice->tokenizer);
}

void MainWindow::showLoadError(const QString& message) {
    statusBar()->showMessage(tr("Could not open the model"), 5000);
    // Window-modal and non-blocking: the event loop (and a test driving it) keeps running.
    auto* box = new QMessageBox(QMessageBox::Critical, tr("Open model"), message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("loadError"));
    box->open();
}

void MainWindow::showError(const QString& title, const QString& message) {
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("projectError"));
    box->open();
}

bool MainWindow::openProject(const QString& path) {
    if (const auto r = project_->open(path); !r) {
        showError(tr("Open project"), r.message());
        return false;
    }
    recent_->add(path);
    return true;
}

bool MainWindow::saveProject(const QString& path) {
    if (const auto r = project_->save(path); !r) {
        showError(tr("Save project"), r.message());
        return false;
    }
    recent_->add(path);
    statusBar()->showMessage(tr("Saved %1").arg(QFileInfo(path).fileName()), 5000);
    return true;
}

void MainWindow::openProjectDialog() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open project"), lastDir(), tr("EdgeStudio projects (*.edgeproj)"));
    if (!path.isEmpty()) openProject(path);
}

void MainWindow::saveProjectDialog() {
    QString path =
        QFileDialog::getSaveFileName(this, tr("Save project"), lastDir(), tr("EdgeStudio projects (*.edgeproj)"));
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1String(".edgeproj"))) path += QStringLiteral(".edgeproj");
    saveProject(path);
}

void MainWindow::offerRecovery() {
    if (!project_->autosave()->recoverable()) return;
    const auto answer = QMessageBox::question(
        this, tr("Recover session"),
        tr("EdgeStudio did not exit cleanly last time. Recover the autosaved project (model, plan and results)?"));
    if (answer != QMessageBox::Yes) return;
    if (const auto r = project_->recover(); !r) showError(tr("Recover session"), r.message());
}

void MainWindow::openConfiguration(int row) {
    const views::Configuration& c = configurations_->at(row);
    views::ProjectData p = project_->snapshot();
    p.layers = c.layers;
    p.plan = c.settings;
    project_->applyPlan(p);
    showPage(LayersPageIndex);
    statusBar()->showMessage(tr("Plan of %1 opened in the Layers page").arg(c.name), 5000);
}

bool MainWindow::confirmClose() {
    if (!project_->isModified()) return true;
    const QString name = project_->path().isEmpty() ? tr("The project")
                                                    : tr("The project %1").arg(QFileInfo(project_->path()).fileName());
    QMessageBox box(QMessageBox::Warning, tr("Unsaved changes"),
                    tr("%1 has changes that are not saved. Save them before closing?").arg(name),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("unsavedChanges"));
    box.setInformativeText(tr("Discarding also removes the autosaved copy."));
    box.setDefaultButton(QMessageBox::Save);
    box.setEscapeButton(QMessageBox::Cancel);
    switch (box.exec()) {
        case QMessageBox::Save:
            if (project_->path().isEmpty())
                saveProjectDialog();
            else
                saveProject(project_->path());
            return !project_->isModified();  // a cancelled or failed save keeps the window open
        case QMessageBox::Discard: project_->discardChanges(); return true;
        default: return false;  // cancel: everything stays, the autosave too
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!confirmClose()) {
        event->ignore();
        return;
    }
    // Not modified here: what there was is saved (or discarded), so nothing is left to recover.
    project_->autosave()->discard();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.front().isLocalFile()) return;
    event->acceptProposedAction();
    openPath(urls.front().toLocalFile());  // a model file, a model folder or a project
}

QString MainWindow::engineDir() const {
    // Next to the project ("name.engines/"), or in the user's data folder before it is saved.
    if (!project_->path().isEmpty()) {
        const QFileInfo fi(project_->path());
        return fi.absoluteDir().filePath(fi.completeBaseName() + QStringLiteral(".engines"));
    }
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("engines"));
}

void MainWindow::updateTitle() {
    // "name[*] — EdgeStudio": Qt shows the [*] as the modified mark.
    QString name = QFileInfo(project_->path()).fileName();
    if (name.isEmpty()) name = document_->current() ? QFileInfo(document_->path()).fileName() : tr("Untitled");
    setWindowTitle(tr("%1[*] — EdgeStudio").arg(name));
    setWindowModified(project_->isModified());
}

void MainWindow::updateStatus() {
    auto loaded = document_->current();
    if (!loaded) {
        statusModel_->setText(tr("No model"));
        return;
    }
    const QString name = QFileInfo(document_->path()).fileName();
    statusModel_->setText(tr("%1  ·  %2 parameters  ·  %3  ·  %4 layers")
                              .arg(name, views::compactCount(loaded->model.parameter_count()),
                                   views::humanBytes(edge::model::shown_weight_bytes(loaded->model)))
                              .arg(loaded->layers.size()));
}

void MainWindow::retranslate() {
    updateTitle();
    nav_->item(HomePageIndex)->setText(tr("Home"));
    nav_->item(ModelPageIndex)->setText(tr("Model"));
    nav_->item(LayersPageIndex)->setText(tr("Layers"));
    nav_->item(SensitivityPageIndex)->setText(tr("Sensitivity"));
    nav_->item(ValidationPageIndex)->setText(tr("Validation"));
    nav_->item(ParetoPageIndex)->setText(tr("Pareto"));
    nav_->item(PruningPageIndex)->setText(tr("Pruning"));
    nav_->item(BoardsPageIndex)->setText(tr("Boards"));
    fileMenu_->setTitle(tr("&File"));
    openAction_->setText(tr("&Open model…"));
    openFolderAction_->setText(tr("Open &folder…"));
    recentMenu_->setTitle(tr("Open &recent"));
    openProjectAction_->setText(tr("Open &project…"));
    saveProjectAction_->setText(tr("&Save project"));
    saveProjectAsAction_->setText(tr("Save project &as…"));
    quitAction_->setText(tr("&Quit"));
    editMenu_->setTitle(tr("&Edit"));
    viewMenu_->setTitle(tr("&View"));
    languageMenu_->setTitle(tr("&Language"));
    helpMenu_->setTitle(tr("&Help"));
    aboutAction_->setText(tr("&About EdgeStudio"));
    rebuildRecentMenu();
    updateStatus();
    statusBar()->clearMessage();  // transient messages were in the previous language
}

void MainWindow::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QMainWindow::changeEvent(event);
}

}  // namespace edge::studio
