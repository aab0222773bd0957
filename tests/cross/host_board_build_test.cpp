// scripts/board-build.sh against the loopback sshd (tests/remote/sshd_fixture.cpp) as the "board":
// an engine and an agent are first deployed the normal way (remote::deploy), then the script
// pushes the source bundle, really configures and builds edge-agent there with the board's
// compiler (CPU backend), installs it as a new version beside deploy's, switches `current`, and
// the freshly built agent serves stories260K with telemetry over SSH.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "remote/client/deploy.h"
#include "remote/client/profile.h"
#include "remote/client/ssh_session.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

class BoardBuild : public ::testing::Test {
protected:
    void SetUp() override {
        model_ = test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(model_);
        // The loopback board is this host and user, so its caches are this user's: board-build.sh
        // keeps its build folder in $XDG_CACHE_HOME and ccache its cache there, and the sessions'
        // HOME is the fixture's (tests/remote/sshd_fixture.cpp). The agent's sources compiled by
        // the host build are then cache hits on the board, as on a board that builds twice.
        const char* xdg = std::getenv("XDG_CACHE_HOME");
        const char* home = std::getenv("HOME");
        std::string env =
            "XDG_CACHE_HOME=" + (xdg && *xdg ? std::string(xdg) : std::string(home ? home : "") + "/.cache");
        if (const char* ccache_dir = std::getenv("CCACHE_DIR")) env += " CCACHE_DIR=" + std::string(ccache_dir);
        std::string why;
        sshd_ = test::Sshd::start(&why, "", "127.0.0.1", 0, env);
        ASSERT_TRUE(sshd_) << why;
        known_hosts_ = (sshd_->dir / "known_hosts").string();
        std::ofstream(known_hosts_) << sshd_->known_hosts_line() << "\n";
        root_ = (sshd_->dir / "board").string();
    }
    client::Connector connector() {
        return [this]() {
            client::SshOptions o;
            o.host = "127.0.0.1";
            o.port = sshd_->port;
            o.user = sshd_->user;
            o.identity_file = sshd_->client_key;
            o.known_hosts = known_hosts_;
            o.read_ssh_config = false;
            return client::SshSession::connect(o);
        };
    }
    // Runs the script with the fixture's port, key and known_hosts; returns its exit status and
    // fills *out with stdout + stderr.
    int board_build(const std::string& extra, std::string* out) {
        const fs::path log = sshd_->dir / "board-build.log";
        const std::string cmd = "bash " + client::shell_quote(EDGE_BOARD_BUILD_SCRIPT) + " -p " +
                                std::to_string(sshd_->port) + " -i " + client::shell_quote(sshd_->client_key) +
                                " -o UserKnownHostsFile=" + client::shell_quote(known_hosts_) +
                                " -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes " + extra + " > " +
                                client::shell_quote(log.string()) + " 2>&1";
        const int rc = std::system(cmd.c_str());
        *out = read_file(log);
        return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
    }
    std::string board() const { return sshd_->user + "@127.0.0.1"; }

    std::string model_, known_hosts_, root_;
    std::unique_ptr<test::Sshd> sshd_;
};

}  // namespace

TEST_F(BoardBuild, BuildsInstallsAndServesOnTheBoard) {
    // 1. A normal deployment: the host's agent and the model, version v1.
    client::DeployOptions d;
    d.board_root = root_;
    d.version = "v1";
    d.files = {{EDGE_AGENT_PATH, "edge-agent", true}, {model_, "", false}};
    auto dep = client::deploy_with_retry(connector(), d);
    ASSERT_TRUE(dep.ok()) << dep.message();

    // 2. Build on the board (CPU backend) and install as version v2-src.
    std::string out;
    const int rc =
        board_build("--root " + client::shell_quote(root_) + " --version v2-src --cuda off --jobs 2 " + board(), &out);
    ASSERT_EQ(rc, 0) << out << "\nsshd log:\n" << sshd_->log();
    EXPECT_NE(out.find("CUDA off"), std::string::npos) << out;
    EXPECT_NE(out.find("built edge-agent"), std::string::npos) << out;
    const fs::path v2 = fs::path(root_) / "versions" / "v2-src";
    EXPECT_EQ(fs::read_symlink(fs::path(root_) / "current"), fs::path("versions/v2-src"));
    EXPECT_EQ(fs::read_symlink(fs::path(root_) / "previous"), fs::path("versions/v1"));
    // The engine is carried over (a hard link of v1's), the agent is the new build, the
    // manifest verifies, and the build folder is cleaned up.
    EXPECT_TRUE(fs::exists(v2 / "stories260K.gguf"));
    EXPECT_TRUE(fs::equivalent(v2 / "stories260K.gguf", fs::path(root_) / "versions/v1/stories260K.gguf"));
    EXPECT_FALSE(fs::equivalent(v2 / "edge-agent", fs::path(root_) / "versions/v1/edge-agent"));
    EXPECT_EQ(std::system(("cd " + client::shell_quote(v2.string()) + " && sha256sum -c --quiet SHA256SUMS").c_str()),
              0);
    EXPECT_FALSE(fs::exists(fs::path(root_) / "build/v2-src/src"));
    EXPECT_TRUE(fs::exists(fs::path(root_) / "build/v2-src/build.log"));

    // 3. The agent built on the board serves the model there, with telemetry.
    const std::string cur = root_ + "/current";
    const std::string command = client::shell_quote(cur + "/edge-agent") + " --threads 1 --root " +
                                client::shell_quote(cur) + " --lock " + client::shell_quote(root_ + "/agent.lock");
    client::ProfileRequest req;
    req.engine_path = "stories260K.gguf";
    req.prompts = {"Once upon a time", "The sun"};
    req.max_tokens = 32;
    client::SupervisorOptions o;
    o.max_restarts = 0;
    auto r = client::run_profile(client::ssh_agent_starter(connector(), command), req, o);
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_EQ(r->results.size(), 2u);
    for (const auto& res : r->results) EXPECT_GT(res.generated_tokens, 0u);
    EXPECT_FALSE(r->samples.empty());
    const client::ProfileSummary s = client::summarize(*r);
    EXPECT_TRUE(s.tokens_per_s.has_value());

    // 4. Rollback (the client's) goes back to the deployed agent.
    auto ssh = connector()();
    ASSERT_TRUE(ssh.ok()) << ssh.message();
    ASSERT_TRUE(client::rollback(**ssh, root_).ok());
    EXPECT_EQ(fs::read_symlink(fs::path(root_) / "current"), fs::path("versions/v1"));
}

TEST_F(BoardBuild, BadArgumentsAndDeadBoardsAreReportedClearly) {
    std::string out;
    EXPECT_NE(board_build("--root relative/dir " + board(), &out), 0);
    EXPECT_NE(out.find("--root must be an absolute path"), std::string::npos) << out;
    EXPECT_NE(board_build("--cuda maybe " + board(), &out), 0);
    EXPECT_NE(out.find("--cuda must be auto, on or off"), std::string::npos) << out;
    EXPECT_NE(board_build("--root /tmp/x", &out), 0);
    EXPECT_NE(out.find("no board given"), std::string::npos) << out;
    // A board whose host key is not the known one: refused by ssh before anything is sent.
    std::ofstream(known_hosts_)
        << "[127.0.0.1]:" << sshd_->port
        << " ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOFFnQvDVqKfnHKxlN+Oc3x7bGvNQIE1LfNVqYSmBj6S\n";
    EXPECT_NE(board_build("--root " + client::shell_quote(root_) + " " + board(), &out), 0);
    EXPECT_NE(out.find("uploading the source bundle"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(fs::path(root_) / "build"));
}
