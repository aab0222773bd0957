#include "views/models/board_controller.h"

#include <QDateTime>
#include <QFileInfo>
#include <QPointer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "remote/client/board_agent.h"
#include "remote/client/deploy.h"
#include "remote/client/profile.h"
#include "remote/client/sha256_file.h"
#include "remote/client/ssh_session.h"
#include "views/models/job.h"
#include "views/models/telemetry_store.h"

namespace edge::views {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// Runs `fn` on the UI thread later (dropped when the controller is gone).
template <class Fn>
void post(const QPointer<BoardController>& guard, Fn fn) {
    postToUiThread([guard, fn = std::move(fn)]() mutable {
        if (guard) fn(guard.data());
    });
}

}  // namespace

// One question about an unknown host key: the connecting thread waits on it, the UI answers.
struct BoardController::HostKeyWait {
    std::mutex mutex;
    std::condition_variable cv;
    std::optional<bool> answer;
    void set(bool accept) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!answer) answer = accept;
        }
        cv.notify_all();
    }
};

BoardController::BoardController(TelemetryStore* store, QObject* parent)
    : QObject(parent), store_(store), deployJob_(new JobSlot(this)), profileJob_(new JobSlot(this)) {}

BoardController::~BoardController() {
    if (pendingHostKey_) pendingHostKey_->set(false);
    deployJob_->cancel();
    profileJob_->cancel();
}

bool BoardController::busy() const { return deployJob_->isRunning() || profileJob_->isRunning(); }

void BoardController::answerHostKey(bool accept) {
    if (!pendingHostKey_) return;
    pendingHostKey_->set(accept);
    pendingHostKey_.reset();
}

void BoardController::cancel() {
    if (pendingHostKey_) answerHostKey(false);
    deployJob_->cancel();
    profileJob_->cancel();
    ++run_;  // telemetry still in flight belongs to a cancelled run
}

void BoardController::deliverBatch(quint64 run, const edge::protocol::TelemetryBatch& batch) {
    if (run != run_) return;
    if (!runHasData_) {
        store_->clear();  // the new run replaces the old charts only once it has data
        runHasData_ = true;
    }
    store_->addBatch(batch);
}

namespace {

// The SSH options of a board, with the unknown-host-key question routed to the UI thread.
edge::client::SshOptions sshOptions(const edge::client::Board& b, const QString& knownHosts, const QString& sshConfig,
                                    std::function<bool(const std::string&, const std::string&)> confirm) {
    edge::client::SshOptions o;
    o.host = b.host;
    o.port = b.port;
    o.user = b.user;
    o.identity_file = edge::client::expand_home(b.identity);
    o.known_hosts = knownHosts.toStdString();
    o.ssh_config = sshConfig.toStdString();
    o.confirm_unknown_host = std::move(confirm);
    return o;
}

}  // namespace

bool BoardController::deploy(const edge::client::Board& board, const QString& engine, const QString& folder) {
    const QString name = q(board.name);
    if (busy()) {
        emit failed(name, tr("Deploy"), tr("Another deployment or profile is running; cancel it first."));
        return false;
    }
    const QFileInfo fi(engine);
    if (!fi.isFile() || !fi.isReadable()) {
        emit failed(name, tr("Deploy"), tr("%1: no such engine or model file (nothing was sent).").arg(engine));
        return false;
    }
    if (!folder.startsWith(QLatin1Char('/'))) {
        emit failed(name, tr("Deploy"), tr("The folder on the board must be an absolute path (got '%1').").arg(folder));
        return false;
    }
    const QPointer<BoardController> guard(this);
    const std::string enginePath = fi.canonicalFilePath().toStdString(), givenAgent = agentPath_.toStdString();
    const std::string searchDir = agentSearchDir_.isEmpty() ? edge::client::self_dir() : agentSearchDir_.toStdString();
    const std::string root = folder.toStdString();
    const uint64_t engineBytes = uint64_t(fi.size());
    const QString knownHosts = knownHosts_, sshConfig = sshConfig_;
    const bool measureCost = measureCostModel_;
    const std::string engineName = fi.fileName().toStdString();
    struct Deployed {
        edge::client::DeployReport report;
        std::optional<edge::runtime::BoardCostModel> cost;
        std::string costError;
    };
    deployJob_->start<Deployed>(
        [=](edge::Progress* p) -> edge::Result<Deployed> {
            // A declined host key ends the deployment: no retry asks again.
            auto declined = std::make_shared<std::atomic<bool>>(false);
            auto confirm = [guard, p, declined](const std::string& fp, const std::string& where) {
                auto w = std::make_shared<HostKeyWait>();
                post(guard, [w, fp, where](BoardController* c) {
                    if (c->pendingHostKey_) c->pendingHostKey_->set(false);
                    c->pendingHostKey_ = w;
                    emit c->hostKeyQuestion(q(where), q(fp));
                });
                std::unique_lock<std::mutex> lock(w->mutex);
                while (!w->answer && !edge::is_cancelled(p)) w->cv.wait_for(lock, std::chrono::milliseconds(100));
                const bool accepted = w->answer.value_or(false);
                if (!accepted) declined->store(true);
                return accepted;
            };
            const auto opts = sshOptions(board, knownHosts, sshConfig, confirm);
            edge::report(p, 0.0, tr("Connecting to %1").arg(name).toStdString());
            auto agentBytes = std::make_shared<std::atomic<uint64_t>>(0);
            edge::client::DeployOptions d;
            d.board_root = root;
            d.files = {{enginePath, "", false}};
            // The agent built for the board's own architecture (uname -m), never just this host's.
            d.board_files = edge::client::agent_file(
                givenAgent, searchDir, [guard, name, agentBytes](const std::string& agent, const std::string& arch) {
                    std::error_code ec;
                    agentBytes->store(uint64_t(std::filesystem::file_size(agent, ec)));
                    post(guard, [=](BoardController* c) {
                        c->lastAgent_ = q(agent);
                        emit c->boardEvent(name, tr("The board is %1: sending %2").arg(q(arch), q(agent)));
                    });
                });
            auto done = std::make_shared<std::map<std::string, uint64_t>>();
            d.progress = [p, done, engineBytes, agentBytes](const std::string& file, uint64_t bytes, uint64_t) {
                (*done)[file] = bytes;
                const uint64_t totalBytes = engineBytes + agentBytes->load();
                uint64_t sum = 0;
                for (const auto& [f, b] : *done) sum += b;
                edge::report(p, totalBytes ? double(sum) / double(totalBytes) : 1.0,
                             tr("Uploading %1").arg(QFileInfo(q(file)).fileName()).toStdString());
            };
            d.cancelled = [p, declined] { return edge::is_cancelled(p) || declined->load(); };
            edge::client::RetryPolicy policy;
            policy.attempts = 3;
            policy.on_retry = [guard, name](int attempt, const std::string& e, int ms) {
                post(guard, [=](BoardController* c) {
                    emit c->boardEvent(name,
                                       tr("Attempt %1 failed: %2; retrying in %3 ms").arg(attempt).arg(q(e)).arg(ms));
                });
            };
            auto report =
                edge::client::deploy_with_retry([opts] { return edge::client::SshSession::connect(opts); }, d, policy);
            if (!report.ok()) return report.error();
            Deployed out{std::move(report).value(), std::nullopt, std::string()};
            if (measureCost && !edge::is_cancelled(p)) {
                // The agent just deployed times the board on the engine just deployed (its cost
                // model, engine/runtime/cost_model.h); a failure here leaves the deployment live.
                edge::report(p, 1.0, tr("Measuring %1's cost model").arg(name).toStdString());
                auto s = edge::client::SshSession::connect(opts);
                auto cm = s.ok() ? edge::client::measure_cost_model(*s.value(), {root, board.launcher}, engineName,
                                                                    board.name)
                                 : edge::Result<edge::runtime::BoardCostModel>(s.error());
                if (cm.ok())
                    out.cost = std::move(cm).value();
                else
                    out.costError = cm.message();
            }
            return out;
        },
        [this, name](edge::Result<Deployed> deployed) {
            if (!deployed.ok()) {
                emit failed(name, tr("Deploy"),
                            userErrorText(tr("Deploying to %1 failed.").arg(name), deployed.error()));
                return;
            }
            const edge::client::DeployReport* r = &deployed->report;
            DeployOutcome o;
            o.version = q(r->version);
            o.previousVersion = q(r->previous_version);
            for (const auto& f : r->files) {
                const QString file = QFileInfo(q(f.remote_path)).fileName();
                if (file == QLatin1String("edge-agent")) {
                    o.agentSha256 = q(edge::client::digest_hex(f.sha256));
                    continue;
                }
                o.engineName = file;
                o.engineSha256 = q(edge::client::digest_hex(f.sha256));
            }
            o.agentPath = lastAgent_;
            o.bytesSent = r->bytes_sent;
            o.attempts = r->attempts;
            o.seconds = r->seconds;
            lastDeploy_ = o;
            emit this->deployed(name, o);
            if (deployed->cost) emit costModelMeasured(name, *deployed->cost);
            if (!deployed->costError.empty())
                emit failed(name, tr("Cost model"),
                            tr("Deployed %1, but measuring the board's cost model failed: %2")
                                .arg(o.version, q(deployed->costError)));
        });
    return true;
}

bool BoardController::profile(const edge::client::Board& board, const QString& folder, const QStringList& prompts,
                              int maxTokens, bool chat) {
    ProfileWorkload w;
    w.prompts = prompts;
    w.maxTokens = maxTokens;
    w.chat = chat;
    return profile(board, folder, w);
}

bool BoardController::profile(const edge::client::Board& board, const QString& folder,
                              const ProfileWorkload& workload) {
    const QString name = q(board.name);
    if (busy()) {
        emit failed(name, tr("Profile"), tr("Another deployment or profile is running; cancel it first."));
        return false;
    }
    if (!workload.isServe() && workload.prompts.isEmpty()) {
        emit failed(name, tr("Profile"), tr("Give at least one prompt to run."));
        return false;
    }
    if (auto r = checkWorkload(workload); !r) {
        emit failed(name, tr("Profile"), r.message());
        return false;
    }
    const quint64 run = ++run_;
    runHasData_ = false;
    const QPointer<BoardController> guard(this);
    const std::string root = folder.toStdString();
    std::vector<std::string> texts;
    for (const QString& s : workload.prompts) texts.push_back(s.toStdString());
    const bool chat = workload.chat;
    std::optional<edge::protocol::ServeWorkload> serve;
    if (workload.isServe()) {
        edge::protocol::ServeWorkload sw;
        sw.workload = workload.serveText.toStdString();
        sw.concurrency = uint32_t(workload.concurrency);
        serve = std::move(sw);
        texts.clear();
    }
    const QString workloadName = workload.name;
    const QString knownHosts = knownHosts_, sshConfig = sshConfig_;
    const uint32_t tokens = uint32_t(std::max(1, workload.maxTokens));
    auto engineSha = std::make_shared<std::string>();  // written by the worker, read once it is done
    profileJob_->start<edge::client::ProfileReport>(
        [=](edge::Progress* p) -> edge::Result<edge::client::ProfileReport> {
            auto confirm = [guard, p](const std::string& fp, const std::string& where) {
                auto w = std::make_shared<HostKeyWait>();
                post(guard, [w, fp, where](BoardController* c) {
                    if (c->pendingHostKey_) c->pendingHostKey_->set(false);
                    c->pendingHostKey_ = w;
                    emit c->hostKeyQuestion(q(where), q(fp));
                });
                std::unique_lock<std::mutex> lock(w->mutex);
                while (!w->answer && !edge::is_cancelled(p)) w->cv.wait_for(lock, std::chrono::milliseconds(100));
                return w->answer.value_or(false);
            };
            const auto opts = sshOptions(board, knownHosts, sshConfig, confirm);
            edge::client::Connector connect = [opts] { return edge::client::SshSession::connect(opts); };
            edge::report(p, 0.0, tr("Connecting to %1").arg(name).toStdString());
            edge::client::ProfileRequest req;
            req.prompts = texts;
            req.chat = chat;
            req.max_tokens = tokens;
            req.telemetry_hz = 20;
            req.serve = serve;
            {
                auto s = connect();
                if (!s.ok()) return s.error();
                auto e = edge::client::live_engine(*s.value(), root);
                if (!e.ok()) return e.error();
                req.engine_path = e->first;
                req.engine_sha256 = e->second;
                *engineSha = edge::client::digest_hex(e->second);
            }
            if (edge::is_cancelled(p)) return edge::err("profile cancelled");
            const std::string cmd = edge::client::agent_command_line({root, board.launcher});
            edge::client::SupervisorOptions o;
            o.cancelled = [p] { return edge::is_cancelled(p); };
            o.on_event = [guard, name](const std::string& e) {
                post(guard, [=](BoardController* c) { emit c->boardEvent(name, q(e)); });
            };
            o.on_log = [guard, name](const edge::protocol::LogLine& l) {
                post(guard, [=, text = l.text](BoardController* c) { emit c->boardEvent(name, q(text)); });
            };
            const size_t promptCount = texts.size();
            o.on_telemetry = [guard, run, p, promptCount, tokens](const edge::protocol::TelemetryBatch& b) {
                if (!b.samples.empty() && promptCount == 0) {
                    edge::report(p, 0.5, tr("Serving: %1 tokens").arg(b.samples.back().tokens_generated).toStdString());
                } else if (!b.samples.empty()) {
                    const auto& s = b.samples.back();
                    const double f = (double(s.prompt_index) + std::min(1.0, double(s.tokens_generated) / tokens)) /
                                     double(promptCount);
                    edge::report(p, std::min(1.0, f),
                                 tr("Prompt %1 of %2: %3 tokens")
                                     .arg(s.prompt_index + 1)
                                     .arg(promptCount)
                                     .arg(s.tokens_generated)
                                     .toStdString());
                }
                auto copy = std::make_shared<edge::protocol::TelemetryBatch>(b);
                post(guard, [run, copy](BoardController* c) { c->deliverBatch(run, *copy); });
            };
            return edge::client::run_profile(edge::client::ssh_agent_starter(connect, cmd), req, o);
        },
        [this, name, engineSha, workloadName](edge::Result<edge::client::ProfileReport> r) {
            if (!r.ok()) {
                emit failed(name, tr("Profile"), userErrorText(tr("Profiling on %1 failed.").arg(name), r.error()));
                return;
            }
            ProfileOutcome o = profileOutcome(r.value(), *engineSha);
            o.workload = workloadName;
            lastProfile_ = o;
            emit profiled(name, o);
        });
    return true;
}

ProfileOutcome profileOutcome(const edge::client::ProfileReport& r, const std::string& engineSha256) {
    const auto s = edge::client::summarize(r);
    ProfileOutcome o;
    o.agent = QStringLiteral("%1 · %2 · %3").arg(q(r.agent.hostname), q(r.agent.cpu_model), q(r.agent.backend));
    o.engine = q(r.load_detail);
    o.engineSha256 = q(engineSha256);
    o.ttftMs = s.ttft_p50_ms.value_or(0.0);
    o.kvHitRate = s.kv_hit_rate.value_or(-1.0);
    o.prompts = int(s.prompts);
    o.tokens = int(s.tokens);
    o.restarts = r.restarts;
    o.p50Ms = s.latency_p50_ms.value_or(0.0);
    o.p99Ms = s.latency_p99_ms.value_or(0.0);
    o.tokensPerS = s.tokens_per_s.value_or(0.0);
    o.rssMiB = double(s.rss_max_bytes.value_or(0)) / (1024.0 * 1024.0);
    for (const auto& x : r.results) o.texts << q(x.text);
    if (r.serve_report) {
        // A served workload: the scheduler's own per-request figures (times on its clock).
        const edge::protocol::ServeReport& sr = *r.serve_report;
        std::vector<double> tpot;
        for (const auto& req : sr.requests)
            if (req.output_tokens > 1) tpot.push_back(req.tpot_ms);
        o.prompts = int(sr.requests.size());
        o.tokens = int(sr.output_tokens);
        o.p50Ms = edge::client::percentile(tpot, 0.5);
        o.p99Ms = edge::client::percentile(tpot, 0.99);
        o.ttftMs = sr.ttft_mean_ms;
        o.tokensPerS = sr.tokens_per_s;
        o.kvHitRate = sr.kv_hit_rate;
    }
    return o;
}

BoardMeasurement boardMeasurement(const QString& board, const ProfileOutcome& o) {
    BoardMeasurement m;
    m.board = board;
    m.machine = o.agent;
    m.engineSha256 = o.engineSha256;
    m.prompts = o.prompts;
    m.tokens = o.tokens;
    m.tpotP50Ms = o.p50Ms;
    m.tpotP99Ms = o.p99Ms;
    m.ttftMs = o.ttftMs;
    m.tokensPerS = o.tokensPerS;
    m.peakRssMiB = o.rssMiB;
    m.kvHitRate = o.kvHitRate;
    m.workload = o.workload;
    m.when = QDateTime::currentDateTimeUtc();
    return m;
}

}  // namespace edge::views
