// The studio's main window: menus, the page list and stack, the status bar. It only wires pages
// to the shared document, recent files and language; the pages do the work.
#pragma once
#include <QMainWindow>

class QActionGroup;
class QLabel;
class QListWidget;
class QMenu;
class QStackedWidget;

namespace edge::views {
class HomePage;
class LayersPage;
class Language;
class ModelDocument;
class ModelPage;
class RecentFilesModel;
}  // namespace edge::views

namespace edge::studio {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Page { HomePageIndex, ModelPageIndex, LayersPageIndex, PageCount };

    explicit MainWindow(views::Language* language, QWidget* parent = nullptr);

    views::ModelDocument* document() const { return document_; }
    views::ModelPage* modelPage() const { return modelPage_; }
    views::HomePage* homePage() const { return homePage_; }
    views::LayersPage* layersPage() const { return layersPage_; }
    views::RecentFilesModel* recentFiles() const { return recent_; }
    // Stable, untranslated page keys for files and tests: "home", "model", "layers".
    static QString pageKey(int page);
    void showPage(int page);
    int currentPage() const;
    QWidget* page(int page) const;

public slots:
    // Opens `path` (asking for a tokenizer when a llama2.c checkpoint needs one).
    void openPath(const QString& path, const QString& tokenizer = QString());
    void openFileDialog();
    void openFolderDialog();

protected:
    void changeEvent(QEvent* event) override;

private:
    void buildMenus();
    void retranslate();
    void rebuildRecentMenu();
    void updateStatus();
    void showLoadError(const QString& message);
    QString lastDir() const;

    views::Language* language_;
    views::ModelDocument* document_;
    views::RecentFilesModel* recent_;
    QListWidget* nav_;
    QStackedWidget* stack_;
    views::HomePage* homePage_;
    views::ModelPage* modelPage_;
    views::LayersPage* layersPage_;
    QLabel* statusModel_;
    QMenu* fileMenu_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QMenu* editMenu_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QMenu* languageMenu_ = nullptr;
    QMenu* helpMenu_ = nullptr;
    QAction* openAction_ = nullptr;
    QAction* openFolderAction_ = nullptr;
    QAction* quitAction_ = nullptr;
    QAction* aboutAction_ = nullptr;
    QActionGroup* languageGroup_ = nullptr;
};

}  // namespace edge::studio
