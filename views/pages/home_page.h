// The Home page: start here. Open a model (file or Hugging Face folder), reopen a recent one, and
// what the studio reads.
#pragma once
#include <QWidget>

class QLabel;
class QListView;
class QPushButton;

namespace edge::views {

class ModelDocument;
class RecentFilesModel;

class HomePage : public QWidget {
    Q_OBJECT
public:
    HomePage(ModelDocument* document, RecentFilesModel* recent, QWidget* parent = nullptr);
    QListView* recentView() const { return recentView_; }

signals:
    void openRequested();
    void openFolderRequested();
    void recentActivated(const QString& path);
    void showModelRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void updateRecentState();
    void updateCurrent();

    ModelDocument* document_;
    RecentFilesModel* recent_;
    QLabel* currentTitle_;
    QLabel* currentFacts_;
    QPushButton* showModel_;
    QLabel* title_;
    QLabel* tagline_;
    QPushButton* open_;
    QPushButton* openFolder_;
    QLabel* recentTitle_;
    QListView* recentView_;
    QLabel* recentEmpty_;
    QLabel* formatsTitle_;
    QLabel* formats_;
    QLabel* workflowTitle_;
    QLabel* workflow_;
};

}  // namespace edge::views
