// The Boards page and its models: the board list (ssh config + user entries in QSettings, checked
// by QAbstractItemModelTester), the telemetry store (bounded ring, decimation, percentiles, CSV),
// and the page's controller against a REAL OpenSSH server on loopback (the remote tests' fixture):
// unknown host key shown and accepted through the dialog, deploy, profile with telemetry arriving
// on the charts while the run is still going, export; a refused connection and a changed host key
// end in an error dialog with the reason and leave the charts and boards as they were.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTimer>

#include <cmath>
#include <fstream>

#include "engine/sched/workload.h"
#include "remote/protocol/messages.h"
#include "test_helpers.h"
#include "test_support.h"
#include "views/models/board_controller.h"
#include "views/models/board_list_model.h"
#include "views/models/job.h"
#include "views/models/telemetry_store.h"
#include "views/models/workload_list_model.h"
#include "views/pages/boards_page.h"
#include "views/telemetry_chart.h"

#ifdef EDGE_HAVE_SSHD_FIXTURE
#include "remote/client/board_agent.h"
#include "remote/client/sha256_file.h"
#include "remote_test_util.h"
#endif

using namespace edge::views;
using edge::views::test::failsWith;
using edge::views::test::succeeded;
using edge::views::test::waitUntil;
namespace fs = std::filesystem;

namespace {

QString qs(const fs::path& p) { return QString::fromStdString(p.string()); }

edge::protocol::TelemetrySample sample(uint64_t ns, double latency, uint32_t used = 3, uint32_t free = 13) {
    edge::protocol::TelemetrySample s;
    s.timestamp_ns = ns;
    s.token_latency_ms = latency;
    s.tokens_per_s = 1000.0 / latency;
    s.rss_bytes = uint64_t(50) << 20;
    s.kv_blocks_used = used;
    s.kv_blocks_free = free;
    return s;
}

int lineCount(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return -1;
    return int(f.readAll().count('\n'));
}

}  // namespace

TEST(BoardListModel, SshConfigHostsAndUserEntries) {
    QSettings().remove(QStringLiteral("boards/user"));
    const fs::path dir = edge::test::temp_dir("views-boards");
    std::ofstream(dir / "config")
        << "Host *\n  ServerAliveInterval 5\nHost orin-nx\n  HostName 10.1.1.7\n  User nvidia\n"
           "  Port 2200\nHost jetson\n  HostName 10.1.1.8\n";
    BoardListModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
    m.reload(qs(dir / "config"));
    ASSERT_EQ(m.rowCount(), 2);
    EXPECT_EQ(m.index(0, BoardListModel::NameColumn).data().toString(), QStringLiteral("orin-nx"));
    EXPECT_EQ(m.destination(0), QStringLiteral("nvidia@orin-nx:2200"));
    EXPECT_EQ(m.folder(0), QStringLiteral("/opt/edgestudio"));
    EXPECT_FALSE(m.isUserBoard(0));

    ASSERT_TRUE(succeeded(m.addUserBoard(QStringLiteral("lab-pi"), QStringLiteral("pi@10.0.0.5:2222"),
                                         QStringLiteral("/srv/es"), QString())));
    ASSERT_EQ(m.rowCount(), 3);
    EXPECT_EQ(m.destination(2), QStringLiteral("pi@10.0.0.5:2222"));
    EXPECT_EQ(m.folder(2), QStringLiteral("/srv/es"));
    EXPECT_TRUE(m.isUserBoard(2));
    EXPECT_TRUE(failsWith(m.addUserBoard(QStringLiteral("lab-pi"), QStringLiteral("10.0.0.6"), QString(), QString()),
                          {QStringLiteral("lab-pi"), QStringLiteral("already a board")}));
    EXPECT_TRUE(failsWith(m.addUserBoard(QStringLiteral("bad"), QStringLiteral("host:0"), QString(), QString()),
                          {QStringLiteral("host:0"), QStringLiteral("bad port")}));
    EXPECT_TRUE(
        failsWith(m.addUserBoard(QStringLiteral("rel"), QStringLiteral("h"), QStringLiteral("relative/dir"), QString()),
                  {QStringLiteral("relative/dir"), QStringLiteral("absolute path")}));

    m.setStatus(2, QStringLiteral("deployed v1"));
    // User entries persist (QSettings); ssh config hosts cannot be removed from the studio.
    BoardListModel again;
    QAbstractItemModelTester tester2(&again, QAbstractItemModelTester::FailureReportingMode::Fatal);
    again.reload(qs(dir / "config"));
    ASSERT_EQ(again.rowCount(), 3);
    EXPECT_EQ(again.board(2).user, "pi");
    EXPECT_EQ(again.board(2).port, 2222);
    EXPECT_FALSE(again.removeUserBoard(0));
    EXPECT_TRUE(again.removeUserBoard(2));
    m.reload(qs(dir / "config"));
    EXPECT_EQ(m.rowCount(), 2);
    QSettings().remove(QStringLiteral("boards/user"));
}

TEST(TelemetryStore, BoundedRingPercentilesDecimationAndCsv) {
    TelemetryStore store(nullptr, 100);
    QSignalSpy appended(&store, &TelemetryStore::appended);
    const uint64_t t0 = 1'700'000'000'000'000'000ull;
    std::vector<double> all;
    for (int b = 0; b < 50; ++b) {  // 50 batches of 5 samples at 20 Hz: 250 samples, 12.5 s
        edge::protocol::TelemetryBatch batch;
        for (int k = 0; k < 5; ++k) {
            const int i = b * 5 + k;
            const double lat = 1.0 + (i * 37 % 23);
            all.push_back(lat);
            batch.samples.push_back(
                sample(t0 + uint64_t(i) * 50'000'000ull, lat, uint32_t(i % 16), uint32_t(16 - i % 16)));
        }
        store.addBatch(batch);
    }
    EXPECT_EQ(appended.size(), 50);
    EXPECT_EQ(store.received(), 250u);
    ASSERT_EQ(store.rows().size(), 100);  // bounded: the oldest 150 were overwritten
    EXPECT_DOUBLE_EQ(store.rows().at(0).t, 150 * 0.05);
    EXPECT_DOUBLE_EQ(store.latestTime(), 249 * 0.05);
    // p50 / p99 over the last 64 token latencies, against a sort.
    std::vector<double> last(all.end() - TelemetryStore::kPercentileWindow, all.end());
    std::sort(last.begin(), last.end());
    EXPECT_DOUBLE_EQ(store.latest(TelemetryColumn::LatencyP50), last[size_t(std::lround(0.5 * 63))]);
    EXPECT_DOUBLE_EQ(store.latest(TelemetryColumn::LatencyP99), last[size_t(std::lround(0.99 * 63))]);
    EXPECT_DOUBLE_EQ(store.latest(TelemetryColumn::KvUsedPct), 100.0 * (249 % 16) / 16.0);
    EXPECT_TRUE(store.has(TelemetryColumn::RssMiB));
    EXPECT_FALSE(store.has(TelemetryColumn::KvHitPct));
    EXPECT_FALSE(store.has(TelemetryColumn::DeviceMiB));

    // A board clock step backwards does not reorder the rows.
    edge::protocol::TelemetryBatch back;
    back.samples.push_back(sample(t0, 2.0));
    store.addBatch(back);
    EXPECT_DOUBLE_EQ(store.latestTime(), 249 * 0.05);

    const QString csv = qs(edge::test::temp_dir("views-telemetry") / "t.csv");
    ASSERT_TRUE(succeeded(store.writeCsv(csv)));
    EXPECT_EQ(lineCount(csv), 101);
    QFile f(csv);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    EXPECT_TRUE(lines[0].startsWith("t_s,token_latency_ms,latency_p50_ms,latency_p99_ms,tokens_per_s,rss_mib"));
    EXPECT_TRUE(lines[1].startsWith("7.550,")) << lines[1].toStdString();  // the step-back sample pushed one row out
    EXPECT_TRUE(failsWith(store.writeCsv(QStringLiteral("/nonexistent-dir/x.csv")),
                          {QStringLiteral("Cannot write /nonexistent-dir/x.csv")}));

    // Decimation keeps every bucket's extremes and bounds the point count.
    TelemetryStore big(nullptr, 20000);
    edge::protocol::TelemetryBatch many;
    for (int i = 0; i < 20000; ++i)
        many.samples.push_back(sample(t0 + uint64_t(i) * 50'000'000ull, i == 12345 ? 500.0
                                                                        : i == 777 ? 0.25
                                                                                   : 5.0 + (i % 7)));
    big.addBatch(many);
    QVector<double> keys, values;
    decimate(big.rows(), TelemetryColumn::TokenLatency, 0, big.latestTime(), 200, keys, values);
    EXPECT_LE(values.size(), 400);
    EXPECT_GE(values.size(), 200);
    EXPECT_EQ(*std::max_element(values.begin(), values.end()), 500.0);
    EXPECT_EQ(*std::min_element(values.begin(), values.end()), 0.25);
    EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
    decimate(big.rows(), TelemetryColumn::TokenLatency, 10.0, 11.0, 200, keys, values);
    EXPECT_EQ(values.size(), 21);  // few enough in the window: every point (t = 10.00 ... 11.00)
    // Bucket ends that round onto a row's time (3.125 ms rows, 300 buckets over 79.296875 s: the
    // soak bench's stream) still advance: this once looped forever.
    TelemetryStore fine(nullptr, 30000);
    edge::protocol::TelemetryBatch rows;
    for (int i = 0; i <= 25375; ++i) rows.samples.push_back(sample(t0 + uint64_t(i) * 3'125'000ull, 10.0 + (i % 5)));
    fine.addBatch(rows);
    ASSERT_DOUBLE_EQ(fine.latestTime(), 79.296875);
    for (int buckets : {300, 299, 256, 7}) {
        decimate(fine.rows(), TelemetryColumn::TokenLatency, 0, fine.latestTime(), buckets, keys, values);
        EXPECT_LE(values.size(), 2 * buckets + 2);
        EXPECT_GE(values.size(), buckets);
    }
    decimate(big.rows(), TelemetryColumn::KvHitPct, 0, big.latestTime(), 200, keys, values);
    EXPECT_TRUE(values.isEmpty());
    store.clear();
    EXPECT_EQ(store.rows().size(), 0);
    EXPECT_EQ(store.received(), 0u);
}

#ifdef EDGE_HAVE_SSHD_FIXTURE
namespace {

// Longest gap between ticks of a 10 ms timer: how long the event loop could not run.
class Watchdog {
public:
    Watchdog() {
        QObject::connect(&timer_, &QTimer::timeout, [this] {
            if (clock_.isValid())
                worst_ = std::max(worst_, clock_.restart());
            else
                clock_.start();
        });
        timer_.start(10);
    }
    qint64 worstMs() const { return worst_; }

private:
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 worst_ = 0;
};

// The "SHA256:..." fingerprint ssh-keygen prints for a public key file.
std::string keygenFingerprint(const fs::path& pub) {
    std::string cmd = "ssh-keygen -lf '" + pub.string() + "' 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return "";
    char buf[512] = {};
    std::string out = std::fgets(buf, sizeof buf, p) ? buf : "";
    ::pclose(p);
    const size_t a = out.find("SHA256:");
    return a == std::string::npos ? "" : out.substr(a, out.find(' ', a) - a);
}

class BoardsPageSsh : public ::testing::Test {
protected:
    void SetUp() override {
        QSettings().remove(QStringLiteral("boards/user"));
        model_ = edge::test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(model_);
        std::string why;
        sshd_ = edge::test::Sshd::start(&why);
        ASSERT_TRUE(sshd_) << why;
        knownHosts_ = sshd_->dir / "known_hosts";
        std::ofstream(knownHosts_).flush();  // empty: the host key is unknown
        config_ = sshd_->dir / "ssh_config";
        std::ofstream(config_) << "Host loopback-board\n  HostName 127.0.0.1\n  Port " << sshd_->port << "\n  User "
                               << sshd_->user << "\n  IdentityFile " << sshd_->client_key << "\n";
        page_ = std::make_unique<BoardsPage>(nullptr);
        page_->resize(1400, 900);
        page_->controller()->setKnownHostsFile(qs(knownHosts_));
        page_->controller()->setAgentPath(QStringLiteral(EDGE_AGENT_PATH));
        page_->reloadBoards(qs(config_));
        ASSERT_TRUE(page_->selectBoard(QStringLiteral("loopback-board")));
        page_->setEnginePath(QString::fromStdString(model_));
        page_->setFolder(qs(sshd_->dir / "board"));
    }
    void TearDown() override {
        for (auto* box : page_ ? page_->findChildren<QMessageBox*>() : QList<QMessageBox*>()) box->done(0);
        page_.reset();
        QSettings().remove(QStringLiteral("boards/user"));
    }
    QMessageBox* box(const QString& name) const { return page_->findChild<QMessageBox*>(name); }

    std::string model_;
    std::unique_ptr<edge::test::Sshd> sshd_;
    fs::path knownHosts_, config_;
    std::unique_ptr<BoardsPage> page_;
};

}  // namespace

TEST_F(BoardsPageSsh, TrustsTheHostKeyDeploysAndStreamsLiveCharts) {
    BoardController* c = page_->controller();
    // The unknown key is shown with its fingerprint; the user clicks "Trust and connect".
    QString asked;
    QObject::connect(c, &BoardController::hostKeyQuestion, page_.get(), [&](const QString&, const QString& fp) {
        asked = fp;
        QTimer::singleShot(0, page_.get(), [&] {
            QMessageBox* q = box(QStringLiteral("hostKeyQuestion"));
            ASSERT_NE(q, nullptr);
            EXPECT_TRUE(q->text().contains(fp));
            for (QAbstractButton* b : q->buttons())
                if (q->buttonRole(b) == QMessageBox::AcceptRole) b->click();
        });
    });
    QSignalSpy deployed(c, &BoardController::deployed);
    QSignalSpy failed(c, &BoardController::failed);
    Watchdog watchdog;
    page_->deploy();
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 0; }, 120000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    const std::string fp = keygenFingerprint(sshd_->dir / "host_key.pub");
    ASSERT_FALSE(fp.empty());
    EXPECT_TRUE(asked.contains(QString::fromStdString(fp))) << asked.toStdString() << " vs " << fp;
    std::ifstream kh(knownHosts_);
    std::string remembered((std::istreambuf_iterator<char>(kh)), {});
    EXPECT_NE(remembered.find("[127.0.0.1]:" + std::to_string(sshd_->port)), std::string::npos) << remembered;
    const DeployOutcome d = c->lastDeploy();
    EXPECT_EQ(d.engineName, QStringLiteral("stories260K.gguf"));
    EXPECT_TRUE(fs::is_regular_file(sshd_->dir / "board" / "current" / "stories260K.gguf"));
    EXPECT_TRUE(fs::is_regular_file(sshd_->dir / "board" / "current" / "edge-agent"));
    EXPECT_TRUE(page_->boards()->status(0).contains(d.version));

    // Profile: telemetry reaches the charts while the run is still going.
    int liveBatches = 0;
    QObject::connect(page_->store(), &TelemetryStore::appended, page_.get(), [&] {
        if (c->profileJob()->isRunning()) ++liveBatches;
    });
    QSignalSpy profiled(c, &BoardController::profiled);
    // Enough work that the run outlasts several 50 ms telemetry batches however fast decode gets
    // (stories260K runs at thousands of tokens/s): 24 prompts of up to 120 tokens.
    QStringList prompts;
    for (int i = 0; i < 8; ++i)
        prompts << QStringLiteral("Once upon a time") << QStringLiteral("The little dog") << QStringLiteral("Lily");
    page_->setPrompts(prompts);
    page_->setMaxTokens(120);
    page_->profile();
    ASSERT_TRUE(waitUntil([&] { return profiled.size() + failed.size() > 0; }, 150000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    EXPECT_GE(liveBatches, 2) << "telemetry only arrived after the run ended";
    // A deploy or profile on the UI thread would stall it for seconds (the deploy hashes and sends a
    // 93 MB agent; the profile runs 24 prompts); 250 ms leaves room for a 2-vCPU machine running
    // ctest -j2 beside the agent, sshd and Xvfb, where a clean CI run once saw exactly 100 ms.
    EXPECT_LT(watchdog.worstMs(), 250) << "the event loop stalled for " << watchdog.worstMs()
                                       << " ms during deploy/profile";
    const ProfileOutcome p = c->lastProfile();
    EXPECT_EQ(p.prompts, 24);
    EXPECT_GT(p.tokens, 0);
    EXPECT_GT(p.p50Ms, 0.0);
    EXPECT_GE(p.p99Ms, p.p50Ms);
    EXPECT_GE(page_->store()->received(), quint64(p.tokens));
    page_->refreshCharts();
    for (int i = 0; i < BoardsPage::ChartCount; ++i) EXPECT_GT(page_->chart(i)->totalPoints(), 0) << "chart " << i;
    EXPECT_GT(page_->chart(BoardsPage::LatencyChart)->pointCount(1), 0);  // p50
    EXPECT_GT(page_->chart(BoardsPage::LatencyChart)->pointCount(2), 0);  // p99
    EXPECT_TRUE(page_->summaryLabel()->text().contains(QStringLiteral("p99")));

    // Pause holds the charts still while data keeps arriving in the store.
    page_->setPaused(true);
    const int held = page_->chart(BoardsPage::ThroughputChart)->totalPoints();
    edge::protocol::TelemetryBatch extra;
    extra.samples.push_back(sample(uint64_t(4e18), 2.0));
    page_->store()->addBatch(extra);
    page_->refreshCharts();
    EXPECT_EQ(page_->chart(BoardsPage::ThroughputChart)->totalPoints(), held);
    page_->setPaused(false);

    // Export: CSV of every row kept, one PNG and PDF per chart.
    const fs::path out = edge::test::temp_dir("views-boards-export");
    ASSERT_TRUE(succeeded(page_->exportCsv(qs(out / "t.csv"))));
    EXPECT_EQ(lineCount(qs(out / "t.csv")), page_->store()->rows().size() + 1);
    QStringList written;
    ASSERT_TRUE(succeeded(page_->exportCharts(qs(out / "charts"), QStringLiteral("png"), &written)));
    ASSERT_TRUE(succeeded(page_->exportCharts(qs(out / "charts"), QStringLiteral("pdf"), &written)));
    ASSERT_EQ(written.size(), 8);
    for (const QString& f : written) EXPECT_GT(QFileInfo(f).size(), 1000) << f.toStdString();

    // "Chat template": the prompts travel as user messages for the engine's own template (protocol
    // 5). stories260K has none, so the board's agent refuses them naming the engine; the charts of
    // the run above stay.
    const quint64 kept = page_->store()->received();
    page_->setChat(true);
    page_->setPrompts({QStringLiteral("Hello")});
    page_->profile();
    ASSERT_TRUE(waitUntil([&] { return failed.size() > 0 || profiled.size() > 1; }, 150000));
    ASSERT_EQ(failed.size(), 1);
    const QString why = failed.front().at(2).toString();
    EXPECT_TRUE(why.contains(QStringLiteral("chat template"))) << why.toStdString();
    EXPECT_TRUE(why.contains(QStringLiteral("stories260K.gguf"))) << why.toStdString();
    EXPECT_EQ(page_->store()->received(), kept);
    if (QMessageBox* b = box(QStringLiteral("boardError"))) b->done(0);
}

TEST_F(BoardsPageSsh, RefusedConnectionShowsTheReasonAndKeepsTheCharts) {
    // Charts from an earlier run stay when the next board refuses.
    edge::protocol::TelemetryBatch earlier;
    for (int i = 0; i < 10; ++i) earlier.samples.push_back(sample(1'000'000'000ull * uint64_t(i + 1), 3.0 + i));
    page_->store()->addBatch(earlier);
    page_->refreshCharts();
    const int points = page_->chart(BoardsPage::LatencyChart)->totalPoints();
    ASSERT_GT(points, 0);

    // A port nobody listens on: the sshd's, after it is stopped.
    const int port = sshd_->port;
    sshd_.reset();
    ASSERT_TRUE(
        succeeded(page_->boards()->addUserBoard(QStringLiteral("dead-board"), QStringLiteral("127.0.0.1:%1").arg(port),
                                                QStringLiteral("/tmp/edge-dead"), QString())));
    ASSERT_TRUE(page_->selectBoard(QStringLiteral("dead-board")));
    const int row = page_->selectedBoard();
    BoardController* c = page_->controller();
    QSignalSpy failed(c, &BoardController::failed);
    page_->profile();
    ASSERT_TRUE(waitUntil([&] { return failed.size() == 1; }, 30000));
    QMessageBox* b = box(QStringLiteral("boardError"));
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(b->text().contains(QStringLiteral("127.0.0.1:%1").arg(port))) << b->text().toStdString();
    EXPECT_TRUE(b->text().contains(QStringLiteral("connect"))) << b->text().toStdString();
    EXPECT_EQ(page_->store()->received(), 10u);
    EXPECT_EQ(page_->chart(BoardsPage::LatencyChart)->totalPoints(), points);
    EXPECT_TRUE(page_->boards()->status(row).isEmpty());
    b->done(0);

    page_->deploy();  // the deployment is retried, then reported the same way
    ASSERT_TRUE(waitUntil([&] { return failed.size() == 2; }, 60000));
    EXPECT_TRUE(failed.back().at(2).toString().contains(QStringLiteral("connect")));
    EXPECT_FALSE(c->busy());
}

TEST_F(BoardsPageSsh, ChangedOrRejectedHostKeyIsRefused) {
    BoardController* c = page_->controller();
    QSignalSpy asked(c, &BoardController::hostKeyQuestion);
    QSignalSpy failed(c, &BoardController::failed);
    // The user declines the unknown key: nothing is sent.
    QObject::connect(c, &BoardController::hostKeyQuestion, page_.get(), [&] {
        QTimer::singleShot(0, page_.get(), [&] {
            if (QMessageBox* q = box(QStringLiteral("hostKeyQuestion"))) q->button(QMessageBox::Cancel)->click();
        });
    });
    page_->deploy();
    ASSERT_TRUE(waitUntil([&] { return failed.size() == 1; }, 30000));
    EXPECT_EQ(asked.size(), 1);
    EXPECT_TRUE(failed.front().at(2).toString().contains(QStringLiteral("unknown host key")));
    EXPECT_FALSE(fs::exists(sshd_->dir / "board" / "current"));
    if (QMessageBox* b = box(QStringLiteral("boardError"))) b->done(0);

    // known_hosts remembers another key for this host: refused with a warning, no question asked.
    const std::string other = edge::test::make_key(sshd_->dir / "other_host_key");
    ASSERT_FALSE(other.empty());
    std::ofstream(knownHosts_) << "[127.0.0.1]:" << sshd_->port << " " << other << "\n";
    page_->deploy();
    ASSERT_TRUE(waitUntil([&] { return failed.size() == 2; }, 30000));
    EXPECT_EQ(asked.size(), 1);
    const QString message = failed.back().at(2).toString();
    EXPECT_TRUE(message.contains(QStringLiteral("HOST KEY CHANGED"))) << message.toStdString();
    QMessageBox* b = box(QStringLiteral("boardError"));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->icon(), QMessageBox::Warning);
    EXPECT_FALSE(fs::exists(sshd_->dir / "board" / "current"));
}

// Issue 18: named profile workloads saved with the project - a serving workload (edge-workload
// text replayed through the board's scheduler at a concurrency) and saved prompts - each run from
// the Boards page, its figures named after it; bad workloads are refused naming the line.
TEST_F(BoardsPageSsh, NamedWorkloadsRunAndNameTheirMeasurements) {
    {  // the board's host key is already known
        std::ifstream pub(sshd_->dir / "host_key.pub");
        std::string type, key;
        pub >> type >> key;
        std::ofstream(knownHosts_) << "[127.0.0.1]:" << sshd_->port << " " << type << " " << key << "\n";
    }
    BoardController* c = page_->controller();
    QSignalSpy deployed(c, &BoardController::deployed);
    QSignalSpy profiled(c, &BoardController::profiled);
    QSignalSpy failed(c, &BoardController::failed);
    page_->deploy();
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 0; }, 120000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();

    WorkloadListModel* list = page_->workloads();
    QAbstractItemModelTester tester(list, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const QString mixed = QStringLiteral(EDGE_SOURCE_DIR "/tests/data/workloads/mixed.workload");
    ASSERT_TRUE(succeeded(page_->addServeWorkload(mixed, QStringLiteral("mixed"), 4)));
    EXPECT_EQ(page_->selectedWorkload(), QStringLiteral("mixed"));
    page_->profile();
    ASSERT_TRUE(waitUntil([&] { return profiled.size() + failed.size() > 0; }, 180000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    const ProfileOutcome served = c->lastProfile();
    EXPECT_EQ(served.workload, QStringLiteral("mixed"));
    auto parsed = edge::sched::read_workload(mixed.toStdString());
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    int outputs = 0;
    for (const auto& r : parsed->requests) outputs += r.output_tokens;
    EXPECT_EQ(served.prompts, int(parsed->requests.size()));
    EXPECT_EQ(served.tokens, outputs);
    EXPECT_GT(served.p50Ms, 0.0);
    EXPECT_GE(served.p99Ms, served.p50Ms);
    EXPECT_GT(served.tokensPerS, 0.0);
    EXPECT_GT(served.kvHitRate, 0.0) << "a third of the requests share a system prompt";
    EXPECT_EQ(boardMeasurement(QStringLiteral("b"), served).workload, QStringLiteral("mixed"));

    page_->selectWorkload(QString());
    page_->setPrompts({QStringLiteral("Once upon a time"), QStringLiteral("Lily")});
    page_->setMaxTokens(12);
    ASSERT_TRUE(succeeded(page_->savePromptsAs(QStringLiteral("two stories"))));
    page_->setPrompts({QStringLiteral("changed after saving")});  // the named workload runs as saved
    ASSERT_TRUE(page_->selectWorkload(QStringLiteral("two stories")));
    page_->profile();
    ASSERT_TRUE(waitUntil([&] { return profiled.size() + failed.size() > 1; }, 180000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    EXPECT_EQ(c->lastProfile().workload, QStringLiteral("two stories"));
    EXPECT_EQ(c->lastProfile().prompts, 2);
    EXPECT_EQ(c->lastProfile().tokens, 24);

    // Saved and read back as the project stores them.
    ASSERT_EQ(list->rowCount(), 2);
    for (const ProfileWorkload& w : list->workloads()) {
        ProfileWorkload back;
        ASSERT_TRUE(succeeded(workloadFromJson(workloadToJson(w), &back)));
        EXPECT_TRUE(back == w) << w.name.toStdString();
    }
    // Refused by name and line; nothing replaced.
    const fs::path bad = sshd_->dir / "bad.workload";
    std::ofstream(bad) << "edge-workload 1\nreq 0 - 10\n";
    EXPECT_TRUE(failsWith(page_->addServeWorkload(qs(bad), QStringLiteral("mixed"), 4), {QStringLiteral("mixed:2")}));
    EXPECT_TRUE(failsWith(page_->addServeWorkload(qs(sshd_->dir / "none.workload"), QStringLiteral("x"), 4),
                          {QStringLiteral("none.workload"), QStringLiteral("cannot read")}));
    EXPECT_TRUE(failsWith(page_->savePromptsAs(QStringLiteral("  ")), {QStringLiteral("needs a name")}));
    EXPECT_EQ(list->rowCount(), 2);
    EXPECT_EQ(list->at(list->rowOfName(QStringLiteral("mixed"))).concurrency, 4);
}

TEST_F(BoardsPageSsh, CancelStopsARunningProfile) {
    std::ofstream(knownHosts_) << sshd_->known_hosts_line() << "\n";
    BoardController* c = page_->controller();
    QSignalSpy deployed(c, &BoardController::deployed);
    QSignalSpy failed(c, &BoardController::failed);
    page_->deploy();
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 0; }, 120000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    QStringList prompts;
    for (int i = 0; i < 40; ++i) prompts << QStringLiteral("Once upon a time there was a girl number %1").arg(i);
    page_->setPrompts(prompts);
    page_->setMaxTokens(200);
    page_->profile();
    ASSERT_TRUE(waitUntil([&] { return page_->store()->received() > 0; }, 60000));
    QElapsedTimer t;
    t.start();
    page_->cancel();
    EXPECT_FALSE(c->busy());
    c->profileJob()->waitForWorkers();  // the worker stops the agent and returns
    EXPECT_LT(t.elapsed(), 10000);
    QCoreApplication::processEvents();
    EXPECT_EQ(failed.size(), 0);  // a cancelled run's result is dropped, not reported
}
// Issue 18: the Boards page sends the agent built for the board's architecture, asked over SSH
// (`uname -m`; here a `uname` first on the board's PATH says what the board is). An aarch64 board
// gets the cross-built aarch64 agent and runs it under its launcher (qemu-user); a board with no
// agent for its architecture gets a dialog naming it, and nothing is sent.
class BoardsPageArch : public ::testing::Test {
protected:
    void start(const std::string& machine, const QString& launcher) {
        QSettings().remove(QStringLiteral("boards/user"));
        model_ = edge::test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(model_);
        tmp_ = edge::test::temp_dir("views-arch-board");
        std::string why;
        sshd_ = edge::test::Sshd::start_as_machine(&why, machine);
        ASSERT_TRUE(sshd_) << why;
        page_ = std::make_unique<BoardsPage>(nullptr);
        page_->resize(1400, 900);
        page_->controller()->setKnownHostsFile(QString::fromStdString(sshd_->write_known_hosts()));
        page_->controller()->setAgentSearchDir(QStringLiteral(EDGE_FRONTEND_DIR));  // as the studio finds it
        page_->reloadBoards(QString::fromStdString((tmp_ / "no_ssh_config").string()));
        ASSERT_TRUE(succeeded(page_->boards()->addUserBoard(
            QStringLiteral("emulated-orin"),
            QStringLiteral("%1@127.0.0.1:%2").arg(QString::fromStdString(sshd_->user)).arg(sshd_->port),
            QString::fromStdString((tmp_ / "board").string()), QString::fromStdString(sshd_->client_key), launcher)));
        ASSERT_TRUE(page_->selectBoard(QStringLiteral("emulated-orin")));
        page_->setEnginePath(QString::fromStdString(model_));
        page_->setFolder(QString::fromStdString((tmp_ / "board").string()));
    }
    void TearDown() override {
        for (auto* box : page_ ? page_->findChildren<QMessageBox*>() : QList<QMessageBox*>()) box->done(0);
        page_.reset();
        QSettings().remove(QStringLiteral("boards/user"));
    }
    std::string model_;
    fs::path tmp_;
    std::unique_ptr<edge::test::Sshd> sshd_;
    std::unique_ptr<BoardsPage> page_;
};

#if defined(EDGE_AARCH64_AGENT) && defined(EDGE_QEMU_AARCH64)
TEST_F(BoardsPageArch, AnAarch64BoardGetsTheAarch64AgentAndServesUnderItsLauncher) {
    start("aarch64", QStringLiteral(EDGE_QEMU_AARCH64 " -L /usr/aarch64-linux-gnu"));
    BoardController* c = page_->controller();
    QSignalSpy deployed(c, &BoardController::deployed);
    QSignalSpy failed(c, &BoardController::failed);
    page_->deploy();
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 0; }, 120000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    auto want = edge::client::sha256_of_file(EDGE_AARCH64_AGENT);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(c->lastDeploy().agentSha256.toStdString(), edge::client::digest_hex(want.value()));
    EXPECT_EQ(QFileInfo(c->lastDeploy().agentPath).canonicalFilePath(),
              QFileInfo(QStringLiteral(EDGE_AARCH64_AGENT)).canonicalFilePath());
    auto arch = edge::client::elf_arch((tmp_ / "board/current/edge-agent").string());
    ASSERT_TRUE(arch.ok()) << arch.message();
    EXPECT_EQ(arch.value(), "aarch64");

    QSignalSpy profiled(c, &BoardController::profiled);
    page_->setPrompts({QStringLiteral("Once upon a time")});
    page_->setMaxTokens(24);
    page_->profile();
    ASSERT_TRUE(waitUntil([&] { return profiled.size() + failed.size() > 0; }, 150000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    ASSERT_EQ(c->lastProfile().texts.size(), 1);
    EXPECT_TRUE(c->lastProfile().texts[0].contains(QStringLiteral("there was")))
        << c->lastProfile().texts[0].toStdString();
}
#endif

TEST_F(BoardsPageArch, ABoardWithNoAgentForItsArchitectureGetsADialogAndNothingIsSent) {
    start("riscv64", QString());
    BoardController* c = page_->controller();
    QSignalSpy failed(c, &BoardController::failed);
    page_->deploy();
    ASSERT_TRUE(waitUntil([&] { return failed.size() > 0; }, 60000));
    auto* box = page_->findChild<QMessageBox*>(QStringLiteral("boardError"));
    ASSERT_NE(box, nullptr);
    const QString text = box->text() + QLatin1Char('\n') + box->informativeText() + box->detailedText();
    EXPECT_TRUE(text.contains(QStringLiteral("no edge-agent for riscv64"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("looked in"))) << text.toStdString();
    EXPECT_FALSE(fs::exists(tmp_ / "board" / "current"));
}
#endif
