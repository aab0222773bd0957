// The board controller without the Boards page (QtCore only), against the remote tests' loopback
// OpenSSH server: an unknown host key suspends the deploy job's thread until the UI thread answers;
// deploy and profile run as jobs while their progress, the agent's events and the telemetry
// batches come back to the UI thread. These are the views' thread hand-offs beyond JobSlot's own,
// so the ThreadSanitizer leg (scripts/sanitize.sh tsan-jobs) runs them.
#include <gtest/gtest.h>

#include <QSignalSpy>

#include <fstream>

#include "test_helpers.h"
#include "test_support.h"
#include "views/models/board_controller.h"
#include "views/models/job.h"
#include "views/models/telemetry_store.h"

#ifdef EDGE_HAVE_SSHD_FIXTURE
#include "remote_test_util.h"

using namespace edge::views;
using edge::views::test::waitUntil;

TEST(BoardController, AsksForTheHostKeyThenDeploysAndStreamsAProfileIntoTheStore) {
    const std::string model = edge::test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    std::string why;
    auto sshd = edge::test::Sshd::start(&why);
    ASSERT_TRUE(sshd) << why;
    const auto knownHosts = sshd->dir / "known_hosts", sshConfig = sshd->dir / "ssh_config";
    std::ofstream(knownHosts).flush();  // empty: the host key is unknown
    std::ofstream(sshConfig).flush();   // nothing from the user's ~/.ssh/config
    edge::client::Board board;
    board.name = "loopback-board";
    board.host = "127.0.0.1";
    board.port = sshd->port;
    board.user = sshd->user;
    board.identity = sshd->client_key;
    const QString folder = QString::fromStdString((sshd->dir / "board").string());

    TelemetryStore store;
    BoardController c(&store);
    c.setKnownHostsFile(QString::fromStdString(knownHosts.string()));
    c.setSshConfigFile(QString::fromStdString(sshConfig.string()));
    c.setAgentPath(QStringLiteral(EDGE_AGENT_PATH));
    QString asked;
    QObject::connect(&c, &BoardController::hostKeyQuestion, &c, [&](const QString&, const QString& fingerprint) {
        asked = fingerprint;
        c.answerHostKey(true);
    });
    QSignalSpy deployed(&c, &BoardController::deployed);
    QSignalSpy failed(&c, &BoardController::failed);
    QSignalSpy events(&c, &BoardController::boardEvent);
    ASSERT_TRUE(c.deploy(board, QString::fromStdString(model), folder));
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 0; }, 120000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    EXPECT_TRUE(asked.contains(QStringLiteral("SHA256:"))) << asked.toStdString();
    EXPECT_EQ(c.lastDeploy().engineName, QStringLiteral("stories260K.gguf"));
    EXPECT_EQ(c.lastAgent(), QStringLiteral(EDGE_AGENT_PATH));  // set by a queued call from the job
    EXPECT_GT(events.size(), 0);

    QSignalSpy profiled(&c, &BoardController::profiled);
    QSignalSpy progress(c.profileJob(), &JobSlot::progress);
    const QStringList prompts{QStringLiteral("Once upon a time"), QStringLiteral("The little dog"),
                              QStringLiteral("Lily")};
    ASSERT_TRUE(c.profile(board, folder, prompts, 48));
    ASSERT_TRUE(waitUntil([&] { return profiled.size() + failed.size() > 0; }, 150000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    const ProfileOutcome p = c.lastProfile();
    EXPECT_EQ(p.prompts, 3);
    EXPECT_GT(p.tokens, 0);
    // The live engine's digest: written by the profile job's thread, read once the job is done.
    EXPECT_EQ(p.engineSha256, c.lastDeploy().engineSha256);
    EXPECT_GE(store.received(), quint64(p.tokens));
    EXPECT_GT(progress.size(), 0);
}

#endif  // EDGE_HAVE_SSHD_FIXTURE
