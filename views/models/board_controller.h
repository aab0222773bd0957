// What the Boards page does with a board (QtCore only): deploy an engine with edge-agent (verified,
// resumable, retried: remote/client/deploy.h) and profile it through the agent (supervised:
// remote/client/profile.h), each as a job of the studio's job mechanism - off the UI thread, with
// progress, cancellable, stale results dropped. Telemetry batches are handed to the
// TelemetryStore on the UI thread as they arrive, so the charts stream live.
//
// Host keys: an unknown key suspends the connecting thread and emits hostKeyQuestion(); the UI
// shows the fingerprint and calls answerHostKey() (accepting appends the key to known_hosts).
// A changed key is refused by the SSH layer with a warning naming both keys; failed() carries it.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

#include "engine/runtime/cost_model.h"
#include "remote/client/boards.h"
#include "remote/client/profile.h"
#include "views/models/configuration_model.h"
#include "views/models/workload_list_model.h"

namespace edge::protocol {
struct TelemetryBatch;
}

namespace edge::views {

class JobSlot;
class TelemetryStore;

struct DeployOutcome {
    QString version, previousVersion, engineName, engineSha256;
    QString agentPath, agentSha256;  // the edge-agent sent (built for the board's architecture)
    quint64 bytesSent = 0;
    int attempts = 1;
    double seconds = 0;
};

struct ProfileOutcome {
    QString agent;         // "host · cpu · backend"
    QString engine;        // the agent's load detail
    QString engineSha256;  // of the live engine the run used (from the board's SHA256SUMS)
    int prompts = 0, tokens = 0, restarts = 0;
    double p50Ms = 0, p99Ms = 0, tokensPerS = 0, rssMiB = 0;  // per output token (TPOT) p50 / p99
    double ttftMs = 0;                                        // time to first token, p50
    double kvHitRate = -1;                                    // < 0: not reported
    QString workload;                                         // its name ("": ad hoc prompts)
    QStringList texts;
};

// The figures of a profile run (`engineSha256`: hex of the live engine it ran), and the board
// measurement they make for the configuration that compiled that engine. What the Boards page
// keeps, and `edgestudio-cli profile --project` records.
ProfileOutcome profileOutcome(const edge::client::ProfileReport& r, const std::string& engineSha256);
BoardMeasurement boardMeasurement(const QString& board, const ProfileOutcome& o);

class BoardController : public QObject {
    Q_OBJECT
public:
    explicit BoardController(TelemetryStore* store, QObject* parent = nullptr);
    ~BoardController() override;

    // "" = ~/.ssh/known_hosts, ~/.ssh/config.
    void setKnownHostsFile(const QString& path) { knownHosts_ = path; }
    void setSshConfigFile(const QString& path) { sshConfig_ = path; }
    // The edge-agent binary sent with every deployment. Empty (the default): the one built for the
    // board's architecture, asked over SSH (uname -m) and found next to the studio
    // (remote/client/board_agent.h); a given one built for another architecture is refused.
    void setAgentPath(const QString& path) { agentPath_ = path; }
    QString agentPath() const { return agentPath_; }
    // The agent the last deployment chose (its local path).
    QString lastAgent() const { return lastAgent_; }
    // The folder agents are looked for from (default: the studio's own; remote/client/board_agent.h).
    void setAgentSearchDir(const QString& dir) { agentSearchDir_ = dir; }
    // After each deployment the agent just sent measures the board's decode cost model on the
    // engine just sent (edge-agent --micro-profile; costModelMeasured()).
    void setMeasureCostModel(bool on) { measureCostModel_ = on; }
    bool measuresCostModel() const { return measureCostModel_; }

    JobSlot* deployJob() const { return deployJob_; }
    JobSlot* profileJob() const { return profileJob_; }
    bool busy() const;

    // Starts a deployment of `engine` (and edge-agent) to `folder` on the board. false (and
    // failed()) when it cannot start: another job runs, the file is missing.
    bool deploy(const edge::client::Board& board, const QString& engine, const QString& folder);
    // Runs the prompts on the deployed engine of `folder` and streams telemetry into the store
    // (cleared when the first batch of the new run arrives, so a failure keeps the old charts).
    bool profile(const edge::client::Board& board, const QString& folder, const QStringList& prompts, int maxTokens,
                 bool chat = false);
    // The same with a workload: its prompts, or its serving workload replayed through the board's
    // scheduler at its concurrency (figures from the scheduler's report); the outcome names it.
    bool profile(const edge::client::Board& board, const QString& folder, const ProfileWorkload& workload);
    void cancel();
    // The UI's answer to hostKeyQuestion().
    void answerHostKey(bool accept);

    const DeployOutcome& lastDeploy() const { return lastDeploy_; }
    const ProfileOutcome& lastProfile() const { return lastProfile_; }

signals:
    void hostKeyQuestion(const QString& where, const QString& fingerprint);
    void deployed(const QString& board, const DeployOutcome& outcome);
    void profiled(const QString& board, const ProfileOutcome& outcome);
    void costModelMeasured(const QString& board, const edge::runtime::BoardCostModel& model);
    // What went wrong (title: which action), the board's state and the charts unchanged.
    void failed(const QString& board, const QString& title, const QString& message);
    // Retries, agent restarts, the agent's log lines.
    void boardEvent(const QString& board, const QString& text);

private:
    struct HostKeyWait;
    void deliverBatch(quint64 run, const edge::protocol::TelemetryBatch& batch);

    TelemetryStore* store_;
    JobSlot* deployJob_;
    JobSlot* profileJob_;
    QString knownHosts_, sshConfig_, agentPath_, lastAgent_, agentSearchDir_;
    bool measureCostModel_ = false;
    std::shared_ptr<HostKeyWait> pendingHostKey_;
    quint64 run_ = 0;
    bool runHasData_ = false;
    DeployOutcome lastDeploy_;
    ProfileOutcome lastProfile_;
};

}  // namespace edge::views
