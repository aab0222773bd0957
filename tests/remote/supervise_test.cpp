// Supervised profiling against the real loopback sshd and real agent processes: the agent
// SIGKILLed mid-run is detected, restarted, the engine reloaded and the unfinished prompts re-run,
// with telemetry resuming from the new agent; the link dropped mid-run reconnects; with no
// restarts allowed the death is reported naming the board.
#include <gtest/gtest.h>
#include <libssh/libssh.h>
#include <time.h>

#include <signal.h>
#include <sys/socket.h>

#include <fstream>
#include <set>

#include "remote/client/profile.h"
#include "remote/client/ssh_session.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;
namespace fs = std::filesystem;

namespace {

uint64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

class SuperviseTest : public ::testing::Test {
protected:
    void SetUp() override {
        model_ = test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(model_);
        std::string why;
        sshd_ = test::Sshd::start(&why);
        ASSERT_TRUE(sshd_) << why;
        std::ofstream(sshd_->dir / "known_hosts") << sshd_->known_hosts_line() << "\n";
        pidfile_ = (sshd_->dir / "agent.pid").string();
    }
    client::Connector connector() {
        return [this]() {
            client::SshOptions o;
            o.host = "127.0.0.1";
            o.port = sshd_->port;
            o.user = sshd_->user;
            o.identity_file = sshd_->client_key;
            o.known_hosts = (sshd_->dir / "known_hosts").string();
            o.read_ssh_config = false;
            auto s = client::SshSession::connect(o);
            if (s.ok()) session_ = s.value().get(), ++connects_;
            return s;
        };
    }
    // The agent's shell writes its pid (exec keeps it), so the test can kill exactly that process.
    std::string command() const {
        return "echo $$ > " + client::shell_quote(pidfile_) + " && exec " + client::shell_quote(EDGE_AGENT_PATH) +
               " --threads 1 --lock " + client::shell_quote((sshd_->dir / "agent.lock").string()) + " --root " +
               client::shell_quote(fs::path(model_).parent_path().string());
    }
    pid_t agent_pid() const {
        pid_t p = 0;
        std::ifstream(pidfile_) >> p;
        return p;
    }
    client::ProfileRequest request() const {
        client::ProfileRequest r;
        r.engine_path = fs::path(model_).filename().string();
        r.prompts = {"Once upon a time", "Lily wanted", "The sun", "A little dog", "Tom and Sue"};
        r.max_tokens = 256;
        return r;
    }
    std::string model_, pidfile_;
    std::unique_ptr<test::Sshd> sshd_;
    client::SshSession* session_ = nullptr;
    int connects_ = 0;
};

}  // namespace

TEST_F(SuperviseTest, KilledAgentIsRestartedAndTelemetryResumes) {
    client::SupervisorOptions o;
    o.restart_delay_ms = 50;
    pid_t killed = 0;
    uint64_t killed_at = 0;
    std::vector<std::string> events;
    o.on_telemetry = [&](const protocol::TelemetryBatch& b) {
        if (killed == 0 && !b.samples.empty()) {
            killed = agent_pid();
            ASSERT_GT(killed, 0);
            killed_at = now_ns();
            ::kill(killed, SIGKILL);  // the agent this test started over ssh, by pid
        }
    };
    o.on_event = [&](const std::string& e) { events.push_back(e); };
    auto r = client::run_profile(client::ssh_agent_starter(connector(), command()), request(), o);
    ASSERT_TRUE(r.ok()) << r.message() << "\n" << sshd_->log();
    ASSERT_GT(killed, 0);
    EXPECT_EQ(r->restarts, 1);
    ASSERT_EQ(r->incidents.size(), 1u);
    EXPECT_NE(r->incidents[0].find("127.0.0.1"), std::string::npos) << r->incidents[0];
    EXPECT_NE(r->incidents[0].find("killed by a signal"), std::string::npos) << r->incidents[0];
    ASSERT_EQ(events.size(), 1u);
    EXPECT_NE(events[0].find("restarting (1 of 3)"), std::string::npos) << events[0];
    EXPECT_EQ(connects_, 1) << "an agent death must not need a new SSH connection";
    EXPECT_NE(agent_pid(), killed) << "a fresh agent process serves the rest";

    // Every prompt has exactly one result, and telemetry came from the new agent after the kill.
    ASSERT_EQ(r->results.size(), 5u);
    for (uint32_t i = 0; i < 5; ++i) {
        EXPECT_EQ(r->results[i].prompt_index, i);
        EXPECT_GT(r->results[i].generated_tokens, 0u);
    }
    size_t after = 0;
    std::set<uint32_t> prompts_after;
    for (const auto& s : r->samples)
        if (s.timestamp_ns > killed_at) ++after, prompts_after.insert(s.prompt_index);
    EXPECT_GT(after, 0u) << "telemetry did not resume after the restart";
    for (uint32_t p : prompts_after) EXPECT_LT(p, 5u);
    auto sum = client::summarize(r.value());
    ASSERT_TRUE(sum.latency_p50_ms && sum.latency_p99_ms && sum.tokens_per_s && sum.rss_max_bytes);
    EXPECT_LE(*sum.latency_p50_ms, *sum.latency_p99_ms);
    ASSERT_TRUE(sum.kv_hit_rate.has_value()) << "the agent reports prompt positions reused from its cache";
    EXPECT_GE(*sum.kv_hit_rate, 0.0);
    EXPECT_LE(*sum.kv_hit_rate, 1.0);
    std::printf(
        "[supervised profile] killed pid %d mid-run, restarted, %zu samples (%zu after the kill), "
        "p50 %.3f ms p99 %.3f ms, %.0f tok/s\n",
        int(killed), r->samples.size(), after, *sum.latency_p50_ms, *sum.latency_p99_ms, *sum.tokens_per_s);
}

TEST_F(SuperviseTest, DroppedLinkReconnectsAndResumes) {
    client::SupervisorOptions o;
    o.restart_delay_ms = 50;
    bool dropped = false;
    o.on_telemetry = [&](const protocol::TelemetryBatch& b) {
        if (!dropped && !b.samples.empty()) {
            dropped = true;
            ::shutdown(ssh_get_fd(session_->raw()), SHUT_RDWR);
        }
    };
    auto r = client::run_profile(client::ssh_agent_starter(connector(), command()), request(), o);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_TRUE(dropped);
    EXPECT_EQ(r->restarts, 1);
    EXPECT_EQ(connects_, 2);
    EXPECT_EQ(r->results.size(), 5u);
}

TEST_F(SuperviseTest, DeathWithoutRestartsIsReportedNamingTheBoard) {
    client::SupervisorOptions o;
    o.max_restarts = 0;
    bool killed = false;
    o.on_telemetry = [&](const protocol::TelemetryBatch& b) {
        if (!killed && !b.samples.empty()) killed = ::kill(agent_pid(), SIGKILL) == 0;
    };
    auto r = client::run_profile(client::ssh_agent_starter(connector(), command()), request(), o);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(killed);
    EXPECT_NE(r.message().find("agent on " + sshd_->user + "@127.0.0.1:" + std::to_string(sshd_->port)),
              std::string::npos)
        << r.message();
    EXPECT_NE(r.message().find("killed by a signal"), std::string::npos) << r.message();

    // A load failure is not retried: it would fail the same way.
    auto req = request();
    req.engine_path = "missing.gguf";
    int starts = 0;
    auto starter = client::ssh_agent_starter(connector(), command());
    auto r2 = client::run_profile(
        [&]() {
            ++starts;
            return starter();
        },
        req, {});
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(starts, 1);
    EXPECT_NE(r2.message().find("missing.gguf"), std::string::npos) << r2.message();
}
