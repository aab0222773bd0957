// The Boards page: the boards the studio knows (ssh config hosts and the user's entries), deploy
// an engine with edge-agent (progress, cancel), profile it through the agent, and live charts of
// what the agent streams back - per-token latency p50/p99, tokens/s, memory (RSS and device), KV
// hit rate and occupancy - with a rolling window, pause, and export of the data (CSV) and the
// charts (PNG, PDF). Unknown host keys are shown with their fingerprint and need an explicit
// accept; a changed key or a board that refuses the connection gets an error dialog with the
// reason, and the charts and board list stay as they were.
#pragma once
#include <QMap>
#include <QPair>
#include <QString>
#include <QWidget>

#include "views/models/result.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QMessageBox;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;

namespace edge::views {

class BoardController;
class BoardListModel;
class ModelDocument;
class TelemetryChart;
class TelemetryStore;
class WorkloadListModel;
class BoardCostModels;
struct ProfileWorkload;
struct DeployOutcome;
struct ProfileOutcome;

class BoardsPage : public QWidget {
    Q_OBJECT
public:
    enum Chart { LatencyChart, ThroughputChart, MemoryChart, KvChart, ChartCount };

    // `document`: its model file is the default engine to deploy (may be null).
    explicit BoardsPage(ModelDocument* document, QWidget* parent = nullptr);

    BoardListModel* boards() const { return boards_; }
    BoardController* controller() const { return controller_; }
    TelemetryStore* store() const { return store_; }
    TelemetryChart* chart(int which) const { return charts_[which]; }
    QTableView* boardTable() const { return table_; }
    QLabel* summaryLabel() const { return summary_; }

    // Re-reads the ssh config (path "" = ~/.ssh/config) and the user's boards.
    void reloadBoards(const QString& sshConfigPath = QString());
    bool selectBoard(const QString& name);
    int selectedBoard() const;
    void setEnginePath(const QString& path);
    QString enginePath() const;
    void setFolder(const QString& folder);
    // Prompts as user messages in the engine's chat template (RunWorkload::chat).
    void setChat(bool chat);
    bool isChat() const;
    void setPrompts(const QStringList& prompts);
    void setMaxTokens(int tokens);
    // The project's named profile workloads (saved with it); the one chosen runs on Profile and
    // names the measurement ("" = the prompts typed on the page).
    WorkloadListModel* workloads() const { return workloads_; }
    // The boards' cost models (saved with the project): with *Measure cost model* ticked, each
    // deployment ends with the agent timing the board on the engine just sent.
    BoardCostModels* costModels() const { return costModels_; }
    void setMeasureCostModel(bool on);
    Result saveWorkload(const ProfileWorkload& workload);
    // Saves the page's prompts, tokens and chat setting as a workload named `name`.
    Result savePromptsAs(const QString& name);
    // A serving workload (edge-workload file) replayed at `concurrency` through the board's scheduler.
    Result addServeWorkload(const QString& path, const QString& name, int concurrency);
    bool selectWorkload(const QString& name);
    QString selectedWorkload() const;
    // Seconds of telemetry the charts show (0: everything kept).
    void setWindowSeconds(double seconds);
    double windowSeconds() const;
    void setPaused(bool paused);
    bool isPaused() const;

    Result exportCsv(const QString& path);
    // One file per chart: <base>-latency.<ext>, -throughput, -memory, -kv (ext "png" or "pdf").
    Result exportCharts(const QString& base, const QString& ext, QStringList* written);

public slots:
    void deploy();
    void profile();
    void cancel();
    // Redraws the charts from the store now (the page does it 5 times a second while data arrives and it is shown).
    void refreshCharts();

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void retranslate();
    void updateRunState();
    void showError(const QString& title, const QString& message);
    void askHostKey(const QString& where, const QString& fingerprint);
    void addBoardDialog();
    void onDeployed(const QString& board, const DeployOutcome& o);
    void onProfiled(const QString& board, const ProfileOutcome& o);
    void logEvent(const QString& board, const QString& text);
    void updateFigures();
    void updateSummary();
    QString deployText() const;
    QString profileText() const;
    void setAutoEngine(const QString& path);
    void rebuildWorkloads();
    void workloadChosen();

    ModelDocument* document_;
    BoardListModel* boards_;
    TelemetryStore* store_;
    BoardController* controller_;
    QLabel* title_;
    QLabel* subtitle_;
    QTableView* table_;
    QPushButton* add_;
    QPushButton* remove_;
    QPushButton* reload_;
    QLabel* engineLabel_;
    QLineEdit* engine_;
    QPushButton* browse_;
    QLabel* folderLabel_;
    QLineEdit* folder_;
    QLabel* promptLabel_;
    QLineEdit* prompts_;
    QCheckBox* chat_;  // prompts rendered with the engine's chat template
    QLabel* tokensLabel_;
    QSpinBox* tokens_;
    WorkloadListModel* workloads_;
    BoardCostModels* costModels_;
    QCheckBox* measureCost_;
    QLabel* workloadLabel_;
    QComboBox* workload_;  // 0: the prompts below; then the project's workloads by name
    QPushButton* saveWorkload_;
    QPushButton* serveWorkload_;
    QPushButton* removeWorkload_;
    QPushButton* deploy_;
    QPushButton* profile_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* stage_;
    QLabel* summary_;
    QPlainTextEdit* log_;
    QLabel* windowLabel_;
    QComboBox* window_;
    QCheckBox* pause_;
    QPushButton* exportCsv_;
    QPushButton* exportPng_;
    QPushButton* exportPdf_;
    QLabel* figures_;
    TelemetryChart* charts_[ChartCount];
    QTimer* refresh_;
    QString autoEngine_;                     // the engine path filled in from the open model (replaced on a new model)
    QString deployedBoard_, profiledBoard_;  // whose outcome the summary shows
    QMap<QString, QPair<QString, double>> boardState_;  // board -> deployed version, last tok/s
};

}  // namespace edge::views
