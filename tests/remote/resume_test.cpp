// Resumable, retried deploys against the real loopback sshd: the link dropped mid-upload (the
// socket shut down under libssh) is retried and resumes; a client process SIGKILLed mid-upload
// leaves the live version alone and the next deploy sends only the remainder; a corrupted or
// oversized .part restarts from byte 0; a board that refuses connections is retried with backoff
// and then named.
#include <gtest/gtest.h>
#include <libssh/libssh.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "remote/client/deploy.h"
#include "remote/client/ssh_session.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

class ResumeTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        sshd_ = test::Sshd::start(&why);
        ASSERT_TRUE(sshd_) << why;
        std::ofstream(sshd_->dir / "known_hosts") << sshd_->known_hosts_line() << "\n";
        root_ = (sshd_->dir / "board").string();
    }
    client::SshOptions options() const {
        client::SshOptions o;
        o.host = "127.0.0.1";
        o.port = sshd_->port;
        o.user = sshd_->user;
        o.identity_file = sshd_->client_key;
        o.known_hosts = (sshd_->dir / "known_hosts").string();
        o.read_ssh_config = false;
        return o;
    }
    client::DeployOptions agent_deploy(const std::string& version) const {
        client::DeployOptions d;
        d.board_root = root_;
        d.version = version;
        d.files = {{EDGE_AGENT_PATH, "edge-agent", true}};
        return d;
    }
    std::unique_ptr<test::Sshd> sshd_;
    std::string root_;
};

}  // namespace

TEST_F(ResumeTest, DroppedLinkIsRetriedAndResumesFromTheVerifiedOffset) {
    const uint64_t total = fs::file_size(EDGE_AGENT_PATH);
    ASSERT_GT(total, 8u << 20) << "the test wants a multi-MiB file to interrupt";
    client::SshSession* current = nullptr;
    int connects = 0;
    client::Connector connect = [&]() -> Result<std::unique_ptr<client::SshSession>> {
        auto s = client::SshSession::connect(options());
        if (s.ok()) current = s.value().get(), ++connects;
        return s;
    };
    auto d = agent_deploy("v1");
    bool dropped = false;
    uint64_t dropped_at = 0;
    d.progress = [&](const std::string&, uint64_t done, uint64_t) {
        if (!dropped && done >= total / 3) {  // the link dies under libssh, mid-file
            dropped = true;
            dropped_at = done;
            ::shutdown(ssh_get_fd(current->raw()), SHUT_RDWR);
        }
    };
    client::RetryPolicy p;
    p.first_delay_ms = 50;
    std::vector<std::string> retried;
    p.on_retry = [&](int, const std::string& e, int) { retried.push_back(e); };
    auto r = client::deploy_with_retry(connect, d, p);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_TRUE(dropped);
    EXPECT_EQ(r->attempts, 2);
    EXPECT_EQ(connects, 2);
    ASSERT_EQ(retried.size(), 1u);
    EXPECT_NE(retried[0].find("interrupted"), std::string::npos) << retried[0];
    EXPECT_NE(retried[0].find("127.0.0.1"), std::string::npos) << retried[0];
    ASSERT_EQ(r->files.size(), 1u);
    const auto& f = r->files[0];
    // Resumed from what the board had verified (all that was acknowledged before the drop), and
    // only the remainder went out on the second attempt.
    EXPECT_GT(f.resumed_from, 0u);
    EXPECT_LE(f.resumed_from, dropped_at);
    EXPECT_EQ(f.sent, total - f.resumed_from);
    EXPECT_EQ(f.bytes, total);
    EXPECT_LT(r->bytes_sent, total + total / 2) << "restarted instead of resuming";
    EXPECT_EQ(read_file(root_ + "/versions/v1/edge-agent"), read_file(EDGE_AGENT_PATH));
    EXPECT_FALSE(fs::exists(root_ + "/versions/v1/edge-agent.part"));
    EXPECT_EQ(fs::read_symlink(root_ + "/current").string(), "versions/v1");
    std::printf("[resume after drop] dropped at %.1f MiB, resumed from %.1f MiB, sent %.1f of %.1f MiB in all\n",
                dropped_at / 1048576.0, f.resumed_from / 1048576.0, r->bytes_sent / 1048576.0, total / 1048576.0);
}

TEST_F(ResumeTest, KilledClientLeavesLiveVersionAndNextDeploySendsOnlyTheRest) {
    std::string model = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    const uint64_t total = fs::file_size(EDGE_AGENT_PATH);
    {  // v1 is live
        auto ssh = client::SshSession::connect(options());
        ASSERT_TRUE(ssh.ok()) << ssh.message();
        client::DeployOptions d;
        d.board_root = root_;
        d.version = "v1";
        d.files = {{model, "model.gguf", false}};
        ASSERT_TRUE(client::deploy(*ssh.value(), d).ok());
    }
    // A separate client process deploys v2 (slowly after 2 MiB) and is SIGKILLed mid-upload.
    std::fflush(nullptr);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto ssh = client::SshSession::connect(options());
        if (!ssh.ok()) _exit(3);
        auto d = agent_deploy("v2");
        d.files.push_back({model, "model.gguf", false});
        d.progress = [](const std::string&, uint64_t done, uint64_t) {
            if (done > (2u << 20)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        };
        (void)client::deploy(*ssh.value(), d);
        _exit(4);  // should never get here: killed first
    }
    const fs::path part = root_ + "/versions/v2/edge-agent.part";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::error_code ec;
    auto on_board = [&] {
        uint64_t n = fs::file_size(part, ec);
        return ec ? uint64_t{0} : n;  // file_size reports -1 for a missing file
    };
    while (std::chrono::steady_clock::now() < deadline && on_board() < (4u << 20))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(child, SIGKILL);  // the client we forked, by pid
    int st = 0;
    ::waitpid(child, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st)) << "the client finished or failed before it could be killed (status " << st << ")";
    uint64_t left_on_board = fs::file_size(part);
    ASSERT_GE(left_on_board, 4u << 20);
    ASSERT_LT(left_on_board, total);
    // The live version is untouched and nothing half-written has a name the agent loads.
    EXPECT_EQ(fs::read_symlink(root_ + "/current").string(), "versions/v1");
    EXPECT_FALSE(fs::exists(root_ + "/versions/v2/edge-agent"));
    EXPECT_EQ(read_file(root_ + "/versions/v1/model.gguf"), read_file(model));

    auto ssh = client::SshSession::connect(options());
    ASSERT_TRUE(ssh.ok()) << ssh.message();
    auto d = agent_deploy("v2");
    d.files.push_back({model, "model.gguf", false});
    auto r = client::deploy(*ssh.value(), d);
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_EQ(r->files.size(), 2u);
    EXPECT_EQ(r->files[0].resumed_from, left_on_board);
    EXPECT_EQ(r->files[0].sent, total - left_on_board);
    EXPECT_EQ(r->files[1].resumed_from, 0u);
    EXPECT_EQ(r->files[1].sent, fs::file_size(model));
    EXPECT_EQ(read_file(root_ + "/versions/v2/edge-agent"), read_file(EDGE_AGENT_PATH));
    EXPECT_EQ(fs::read_symlink(root_ + "/current").string(), "versions/v2");
    EXPECT_EQ(fs::read_symlink(root_ + "/previous").string(), "versions/v1");
    std::printf("[resume after kill] %.1f MiB were on the board, sent the remaining %.1f MiB\n",
                left_on_board / 1048576.0, r->files[0].sent / 1048576.0);

    // Deploying v2 again (current pointed back at v1 first) finds both files verified in place
    // and sends nothing.
    fs::remove(root_ + "/current");
    fs::create_directory_symlink("versions/v1", root_ + "/current");
    auto again = client::deploy(*ssh.value(), d);
    ASSERT_TRUE(again.ok()) << again.message();
    EXPECT_EQ(again->files[0].sent + again->files[1].sent, 0u);
    EXPECT_EQ(again->files[0].resumed_from, total);
}

TEST_F(ResumeTest, CorruptOrOversizedPartRestartsFromZero) {
    const std::string agent = read_file(EDGE_AGENT_PATH);
    fs::create_directories(root_ + "/versions/v1");
    {  // right length prefix, wrong bytes (e.g. a different build was being uploaded)
        std::string bad = agent.substr(0, 1 << 20);
        bad[1000] ^= 0x5a;
        std::ofstream(root_ + "/versions/v1/edge-agent.part", std::ios::binary) << bad;
    }
    auto ssh = client::SshSession::connect(options());
    ASSERT_TRUE(ssh.ok()) << ssh.message();
    auto r = client::deploy(*ssh.value(), agent_deploy("v1"));
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->files[0].resumed_from, 0u);
    EXPECT_EQ(r->files[0].sent, agent.size());
    EXPECT_EQ(read_file(root_ + "/versions/v1/edge-agent"), agent);

    fs::create_directories(root_ + "/versions/v2");
    std::ofstream(root_ + "/versions/v2/edge-agent.part", std::ios::binary) << agent << "trailing";
    auto r2 = client::deploy(*ssh.value(), agent_deploy("v2"));
    ASSERT_TRUE(r2.ok()) << r2.message();
    EXPECT_EQ(r2->files[0].resumed_from, 0u);
    EXPECT_EQ(read_file(root_ + "/versions/v2/edge-agent"), agent);

    // resume = false always starts over
    fs::create_directories(root_ + "/versions/v3");
    std::ofstream(root_ + "/versions/v3/edge-agent.part", std::ios::binary) << agent.substr(0, 1 << 20);
    auto d3 = agent_deploy("v3");
    d3.resume = false;
    auto r3 = client::deploy(*ssh.value(), d3);
    ASSERT_TRUE(r3.ok()) << r3.message();
    EXPECT_EQ(r3->files[0].resumed_from, 0u);
    EXPECT_EQ(r3->files[0].sent, agent.size());
}

TEST_F(ResumeTest, RefusedConnectionIsRetriedWithBackoffThenNamed) {
    auto o = options();
    sshd_.reset();  // nothing listens on the port any more
    int calls = 0;
    client::Connector connect = [&]() {
        ++calls;
        return client::SshSession::connect(o);
    };
    client::RetryPolicy p;
    p.attempts = 3;
    p.first_delay_ms = 20;
    std::vector<int> delays;
    p.on_retry = [&](int, const std::string&, int ms) { delays.push_back(ms); };
    auto r = client::deploy_with_retry(connect, agent_deploy("v1"), p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(delays, (std::vector<int>{20, 40}));
    EXPECT_NE(r.message().find("127.0.0.1:" + std::to_string(o.port)), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("connect"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("3 attempts"), std::string::npos) << r.message();

    // A local problem is not retried.
    calls = 0;
    auto d = agent_deploy("v1");
    d.files.push_back({"/nonexistent/engine.edge", "", false});
    auto local = client::deploy_with_retry(connect, d, p);
    ASSERT_FALSE(local.ok());
    EXPECT_EQ(calls, 0);
    EXPECT_NE(local.message().find("/nonexistent/engine.edge"), std::string::npos) << local.message();
}
