// The client against a real sshd on loopback: verified deploy, the agent over an exec channel
// with telemetry arriving, rollback, and host keys that are unknown or changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "remote/client/deploy.h"
#include "remote/client/ssh_session.h"
#include "remote/protocol/trace.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;
using namespace edge::protocol;

namespace {

class SshTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        sshd_ = test::Sshd::start(&why);
        ASSERT_TRUE(sshd_) << why;
        known_hosts_ = (sshd_->dir / "known_hosts").string();
    }

    client::SshOptions options(bool trusted) {
        if (trusted) std::ofstream(known_hosts_) << sshd_->known_hosts_line() << "\n";
        client::SshOptions o;
        o.host = "127.0.0.1";
        o.port = sshd_->port;
        o.user = sshd_->user;
        o.identity_file = sshd_->client_key;
        o.known_hosts = known_hosts_;
        o.read_ssh_config = false;  // the test must not depend on the runner's ~/.ssh/config
        return o;
    }

    std::unique_ptr<test::Sshd> sshd_;
    std::string known_hosts_;
};

std::string model_path() { return test::shared("models/stories260K/stories260K.gguf"); }

}  // namespace

TEST_F(SshTest, DeployAndProfileStories260K) {
    EDGE_REQUIRE_SHARED(model_path());
    auto ssh = client::SshSession::connect(options(true));
    ASSERT_TRUE(ssh.ok()) << ssh.message() << "\n" << sshd_->log();
    std::string root = (sshd_->dir / "board").string();

    client::DeployOptions d;
    d.board_root = root;
    d.version = "v1";
    d.files = {{EDGE_AGENT_PATH, "edge-agent", true}, {model_path(), "model.gguf", false}};
    auto first = client::deploy(*ssh.value(), d);
    ASSERT_TRUE(first.ok()) << first.message();
    EXPECT_EQ(first->previous_version, "");
    ASSERT_EQ(first->files.size(), 2u);
    EXPECT_EQ(std::filesystem::read_symlink(root + "/current").string(), "versions/v1");
    EXPECT_FALSE(std::filesystem::exists(root + "/versions/v1/model.gguf.part"));
    EXPECT_TRUE(std::filesystem::exists(root + "/versions/v1/SHA256SUMS"));

    // The live version cannot be overwritten; a second version keeps the first as previous.
    auto again = client::deploy(*ssh.value(), d);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.message().find("is live"), std::string::npos) << again.message();
    d.version = "v2";
    auto second = client::deploy(*ssh.value(), d);
    ASSERT_TRUE(second.ok()) << second.message();
    EXPECT_EQ(second->previous_version, "v1");
    EXPECT_EQ(std::filesystem::read_symlink(root + "/current").string(), "versions/v2");
    EXPECT_EQ(std::filesystem::read_symlink(root + "/previous").string(), "versions/v1");
    std::printf("[deploy] %.1f MiB in %.2f s (upload + remote SHA-256 + switch)\n",
                (second->files[0].bytes + second->files[1].bytes) / 1048576.0, second->seconds);

    // Run the deployed agent over an exec channel on the deployed engine.
    std::string cur = root + "/current";
    auto t = client::start_ssh_agent(*ssh.value(), client::shell_quote(cur + "/edge-agent") + " --threads 1 --lock " +
                                                       client::shell_quote(root + "/agent.lock") + " --root " +
                                                       client::shell_quote(cur));
    ASSERT_TRUE(t.ok()) << t.message();
    auto link = client::AgentLink::open(std::move(t).value());
    ASSERT_TRUE(link.ok()) << link.message();
    auto trace = new_trace();
    uint32_t load_id = link.value()->next_request_id();
    ASSERT_TRUE(link.value()
                    ->send(LoadEngine{load_id, "model.gguf", second->files[1].sha256, "", format_traceparent(trace)})
                    .ok());
    auto loaded = test::collect(*link.value(), load_id, 30000);
    ASSERT_TRUE(loaded.ack.has_value()) << (loaded.error ? loaded.error->message : "timeout");

    RunWorkload run;
    run.request_id = link.value()->next_request_id();
    run.prompts = {"Once upon a time", "Lily wanted", "The sun"};
    run.max_tokens = 256;
    run.traceparent = format_traceparent(trace);
    ASSERT_TRUE(link.value()->send(run).ok());
    auto c = test::collect(*link.value(), run.request_id, 60000);
    test::expect_live_telemetry(c, 3);
    std::sort(c.ages_ms.begin(), c.ages_ms.end());
    ASSERT_FALSE(c.ages_ms.empty());
    std::printf("[telemetry over ssh] %zu batches, newest-sample age median %.2f ms, max %.2f ms\n", c.ages_ms.size(),
                c.ages_ms[c.ages_ms.size() / 2], c.ages_ms.back());
    // Request -> ack round trips over the exec channel (an idle agent acks a cancel at once).
    std::vector<double> rtt;
    for (int i = 0; i < 50; ++i) {
        uint32_t id = link.value()->next_request_id();
        auto t0 = std::chrono::steady_clock::now();
        ASSERT_TRUE(link.value()->send(Stop{id, StopScope::Cancel}).ok());
        auto acked = test::collect(*link.value(), id, 5000);
        ASSERT_TRUE(acked.ack.has_value());
        rtt.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(rtt.begin(), rtt.end());
    std::printf("[frame round trip over ssh] median %.3f ms, max %.3f ms (50 stop/ack)\n", rtt[25], rtt.back());

    auto status = link.value()->stop(10000);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(status.value(), 0);

    // Rollback swaps current and previous.
    ASSERT_TRUE(client::rollback(*ssh.value(), root).ok());
    EXPECT_EQ(std::filesystem::read_symlink(root + "/current").string(), "versions/v1");
    EXPECT_EQ(std::filesystem::read_symlink(root + "/previous").string(), "versions/v2");
}

TEST_F(SshTest, DeployFailsCleanlyAndLeavesCurrentAlone) {
    auto ssh = client::SshSession::connect(options(true));
    ASSERT_TRUE(ssh.ok()) << ssh.message();
    std::string root = (sshd_->dir / "board").string();
    client::DeployOptions d;
    d.board_root = root;
    d.version = "v1";
    d.files = {{EDGE_AGENT_PATH, "edge-agent", true}};
    ASSERT_TRUE(client::deploy(*ssh.value(), d).ok());
    d.version = "v2";
    d.files.push_back({"/nonexistent/model.gguf", "", false});
    auto r = client::deploy(*ssh.value(), d);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("/nonexistent/model.gguf"), std::string::npos) << r.message();
    EXPECT_EQ(std::filesystem::read_symlink(root + "/current").string(), "versions/v1");
    EXPECT_TRUE(
        edge::test::fails_with(client::deploy(*ssh.value(), client::DeployOptions{"relative/path", "v3", d.files, {}}),
                               {"deploy", "the board folder must be an absolute path (got 'relative/path')"}));
}

TEST_F(SshTest, UnknownHostKeyIsRefusedUnlessAccepted) {
    auto o = options(false);  // empty known_hosts
    auto refused = client::SshSession::connect(o);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("unknown host key"), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find("SHA256:"), std::string::npos) << refused.message();
    EXPECT_NE(refused.message().find("127.0.0.1"), std::string::npos) << refused.message();

    o.accept_unknown_host = true;
    auto accepted = client::SshSession::connect(o);
    ASSERT_TRUE(accepted.ok()) << accepted.message();
    EXPECT_NE(accepted.value()->host_key_fingerprint().find("SHA256:"), std::string::npos);
    // Now known: a plain connection succeeds.
    o.accept_unknown_host = false;
    auto known = client::SshSession::connect(o);
    ASSERT_TRUE(known.ok()) << known.message();
    auto out = known.value()->exec_checked("echo hi", "echo");
    ASSERT_TRUE(out.ok()) << out.message();
    EXPECT_EQ(out.value(), "hi\n");
}

TEST_F(SshTest, ChangedHostKeyIsRefusedEvenWithAcceptance) {
    std::string impostor = test::make_key(sshd_->dir / "impostor");
    ASSERT_FALSE(impostor.empty());
    std::ofstream(known_hosts_) << "[127.0.0.1]:" << sshd_->port << " " << impostor << "\n";
    auto o = options(false);
    o.accept_unknown_host = true;  // acceptance covers unknown keys, never changed ones
    auto r = client::SshSession::connect(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("HOST KEY CHANGED"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("127.0.0.1"), std::string::npos) << r.message();
    // Both fingerprints are named, and they differ.
    size_t first = r.message().find("SHA256:");
    ASSERT_NE(first, std::string::npos);
    size_t second = r.message().find("SHA256:", first + 1);
    ASSERT_NE(second, std::string::npos) << r.message();
    EXPECT_NE(r.message().substr(first, 50), r.message().substr(second, 50));

    // Hashed host names (HashKnownHosts yes) are matched too.
    std::string hash = "ssh-keygen -H -f '" + known_hosts_ + "' >/dev/null 2>&1";
    ASSERT_EQ(std::system(hash.c_str()), 0);
    auto r2 = client::SshSession::connect(o);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.message().find("HOST KEY CHANGED"), std::string::npos) << r2.message();
    EXPECT_NE(r2.message().find(r.message().substr(first, 50)), std::string::npos) << r2.message();
}

TEST_F(SshTest, WrongKeyIsRefusedWithoutPasswordFallback) {
    std::string other = test::make_key(sshd_->dir / "stranger");
    ASSERT_FALSE(other.empty());
    auto o = options(true);
    o.identity_file = (sshd_->dir / "stranger").string();
    auto r = client::SshSession::connect(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("authentication refused"), std::string::npos) << r.message();
}
