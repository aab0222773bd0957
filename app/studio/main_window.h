// The studio's main window: menus, the page list and stack, the status bar. It only wires pages
// to the shared document, recent files and language; the pages do the work.
#pragma once
#include <QMainWindow>

class QActionGroup;
class QLabel;
class QListWidget;
class QMenu;
class QStackedWidget;
class QCloseEvent;
class QDragEnterEvent;
class QDropEvent;

namespace edge::views {
class BoardsPage;
class PruningPage;
class ConfigurationModel;
class HomePage;
class ParetoPage;
class SensitivityPage;
class ValidationPage;
class LayersPage;
class Language;
class ModelDocument;
class ModelPage;
class RecentFilesModel;
}  // namespace edge::views

namespace edge::studio {

class ProjectController;
class BoardAutoplan;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Page {
        HomePageIndex,
        ModelPageIndex,
        LayersPageIndex,
        SensitivityPageIndex,
        ValidationPageIndex,
        ParetoPageIndex,
        PruningPageIndex,
        BoardsPageIndex,
        PageCount
    };

    // `autosavePath`: the crash-recovery file (empty: the default under AppDataLocation).
    explicit MainWindow(views::Language* language, QWidget* parent = nullptr, const QString& autosavePath = QString());

    views::ModelDocument* document() const { return document_; }
    views::ModelPage* modelPage() const { return modelPage_; }
    views::HomePage* homePage() const { return homePage_; }
    views::LayersPage* layersPage() const { return layersPage_; }
    views::SensitivityPage* sensitivityPage() const { return sensitivityPage_; }
    views::ValidationPage* validationPage() const { return validationPage_; }
    views::ParetoPage* paretoPage() const { return paretoPage_; }
    views::BoardsPage* boardsPage() const { return boardsPage_; }
    views::PruningPage* pruningPage() const { return pruningPage_; }
    views::ConfigurationModel* configurations() const { return configurations_; }
    ProjectController* project() const { return project_; }
    // The Layers page's "Autoplan for a board…".
    BoardAutoplan* boardAutoplan() const { return autoplan_; }
    views::RecentFilesModel* recentFiles() const { return recent_; }
    // Stable, untranslated page keys for files and tests: "home", "model", "layers", ...
    static QString pageKey(int page);
    static int pageIndex(const QString& key);
    void showPage(int page);
    int currentPage() const;
    QWidget* page(int page) const;

public slots:
    // Opens `path` (asking for a tokenizer when a llama2.c checkpoint needs one).
    void openPath(const QString& path, const QString& tokenizer = QString());
    void openFileDialog();
    void openFolderDialog();
    // Projects: an error dialog (and nothing changed) when the file is unreadable or malformed.
    bool openProject(const QString& path);
    bool saveProject(const QString& path);
    void openProjectDialog();
    void saveProjectDialog();
    // Asks whether to recover the previous session when it left an autosave behind.
    void offerRecovery();

    // What closing with unsaved changes does (the question's answer, for a window without a user):
    // QMessageBox::Save, Discard or Cancel. Asks only when the project is modified.
    bool confirmClose();

protected:
    void changeEvent(QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void retranslate();
    void rebuildRecentMenu();
    void updateStatus();
    void showLoadError(const QString& message);
    void showError(const QString& title, const QString& message);
    void openConfiguration(int row);
    void updateTitle();
    QString engineDir() const;
    QString lastDir() const;

    views::Language* language_;
    views::ModelDocument* document_;
    views::RecentFilesModel* recent_;
    QListWidget* nav_;
    QStackedWidget* stack_;
    views::HomePage* homePage_;
    views::ModelPage* modelPage_;
    views::LayersPage* layersPage_;
    views::ConfigurationModel* configurations_;
    views::SensitivityPage* sensitivityPage_;
    views::ValidationPage* validationPage_;
    views::ParetoPage* paretoPage_;
    views::PruningPage* pruningPage_;
    views::BoardsPage* boardsPage_;
    BoardAutoplan* autoplan_ = nullptr;
    ProjectController* project_;
    QLabel* statusModel_;
    QMenu* fileMenu_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QMenu* editMenu_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QMenu* languageMenu_ = nullptr;
    QMenu* helpMenu_ = nullptr;
    QAction* openAction_ = nullptr;
    QAction* openFolderAction_ = nullptr;
    QAction* openProjectAction_ = nullptr;
    QAction* saveProjectAction_ = nullptr;
    QAction* saveProjectAsAction_ = nullptr;
    QAction* quitAction_ = nullptr;
    QAction* aboutAction_ = nullptr;
    QActionGroup* languageGroup_ = nullptr;
};

}  // namespace edge::studio
