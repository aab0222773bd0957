// The Home page: start here. Open a model (file or Hugging Face folder), reopen a recent one, and
// what the studio reads.
#pragma once
#include <QWidget>

class QLabel;
class QListView;
class QPushButton;

namespace edge::views {

class RecentFilesModel;

class HomePage : public QWidget {
    Q_OBJECT
public:
    explicit HomePage(RecentFilesModel* recent, QWidget* parent = nullptr);
    QListView* recentView() const { return recentView_; }

signals:
    void openRequested();
    void openFolderRequested();
    void recentActivated(const QString& path);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void updateRecentState();

    RecentFilesModel* recent_;
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
