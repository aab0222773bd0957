// Two boards as network namespaces created by the test (root only: skipped, saying why, where
// namespaces cannot be made): each namespace gets a veth link to this one and its own sshd; the
// CLI deploys and profiles both in parallel from a --boards file, over those links only. Each
// board's sshd log must show the session coming from our end of its link.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "remote_test_util.h"
#include "test_support.h"

#ifdef EDGE_CLI_PATH

using namespace edge;
namespace fs = std::filesystem;

namespace {

// One namespace with a veth pair: `host_ip` on our side, `board_ip` inside. Removed on destruction
// (deleting the namespace deletes the pair).
class NetnsBoard {
public:
    static std::unique_ptr<NetnsBoard> create(int index, std::string* why) {
        auto b = std::unique_ptr<NetnsBoard>(new NetnsBoard);
        int tag = static_cast<int>(::getpid() % 10000);
        b->ns_ = "edge-test-" + std::to_string(tag) + "-" + std::to_string(index);
        std::string host_if = "eb" + std::to_string(tag) + "x" + std::to_string(index);  // < 16 characters
        int net = 16 + (tag * 2 + index) % 200;
        b->host_ip = "10.213." + std::to_string(net) + ".1";
        b->board_ip = "10.213." + std::to_string(net) + ".2";
        auto dir = test::temp_dir("netns");
        const std::vector<std::string> steps = {
            "ip netns add " + b->ns_,
            "ip link add " + host_if + " type veth peer name eth0 netns " + b->ns_,
            "ip addr add " + b->host_ip + "/30 dev " + host_if,
            "ip link set " + host_if + " up",
            "ip -n " + b->ns_ + " addr add " + b->board_ip + "/30 dev eth0",
            "ip -n " + b->ns_ + " link set eth0 up",
            "ip -n " + b->ns_ + " link set lo up",
        };
        for (const auto& s : steps) {
            auto r = test::run_shell(s, dir);
            if (r.rc != 0) {
                *why = "'" + s + "' failed: " + r.err;
                if (s.rfind("ip netns add", 0) == 0) b->ns_.clear();  // nothing to remove
                return nullptr;
            }
            b->created_ = true;
        }
        return b;
    }
    ~NetnsBoard() {
        if (created_ && !ns_.empty()) test::run_shell("ip netns del " + ns_, test::temp_dir("netns"));
    }
    const std::string& ns() const { return ns_; }
    std::string host_ip, board_ip;

private:
    std::string ns_;
    bool created_ = false;
};

}  // namespace

TEST(NetnsBoards, DeployAndProfileTwoNamespacesInParallel) {
    if (::geteuid() != 0) GTEST_SKIP() << "creating network namespaces needs root (ip netns add); not root here";
    std::string model = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    std::vector<std::unique_ptr<NetnsBoard>> boards;
    std::vector<std::unique_ptr<test::Sshd>> sshds;
    for (int i = 1; i <= 2; ++i) {
        std::string why;
        auto b = NetnsBoard::create(i, &why);
        if (!b) GTEST_SKIP() << "network namespaces cannot be created here (" << why << ")";
        auto d = test::Sshd::start(&why, b->ns(), b->board_ip, 2222);
        ASSERT_TRUE(d) << "sshd in " << b->ns() << ": " << why;
        boards.push_back(std::move(b));
        sshds.push_back(std::move(d));
    }
    fs::path dir = sshds[0]->dir;
    std::string kh = (dir / "known_hosts").string(), file = (dir / "boards").string();
    {
        std::ofstream k(kh), f(file);
        for (size_t i = 0; i < 2; ++i) {
            k << sshds[i]->known_hosts_line() << "\n";
            f << "ns-board-" << i + 1 << " " << sshds[i]->user << "@" << boards[i]->board_ip
              << ":2222 root=" << (sshds[i]->dir / "board").string() << " identity=" << sshds[i]->client_key << "\n";
        }
    }
    auto cli = [&](const std::vector<std::string>& a) {
        return test::run_shell(test::command_line(EDGE_CLI_PATH, a), dir);
    };
    auto d = cli({"deploy", model, "--boards", file, "--known-hosts", kh, "--agent", EDGE_AGENT_PATH, "--version", "v1",
                  "--json"});
    ASSERT_EQ(d.rc, 0) << d.err << d.out;
    auto p = cli({"profile", "--boards", file, "--known-hosts", kh, "-n", "16", "--threads", "1", "--json"});
    ASSERT_EQ(p.rc, 0) << p.err;
    auto pj = nlohmann::json::parse(p.out, nullptr, false);
    ASSERT_TRUE(pj.is_array() && pj.size() == 2) << p.out;
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(pj[i]["board"], "ns-board-" + std::to_string(i + 1));
        EXPECT_TRUE(pj[i]["ok"].get<bool>()) << pj[i].dump();
        EXPECT_GT(pj[i]["summary"]["tokens"].get<int>(), 0);
        EXPECT_EQ(fs::read_symlink(sshds[i]->dir / "board/current").string(), "versions/v1");
        // The sessions reached this board's sshd through its own link.
        std::string log = sshds[i]->log();
        EXPECT_NE(log.find("from " + boards[i]->host_ip), std::string::npos) << log;
    }
    sshds.clear();  // stop the servers before their namespaces go
}

#endif  // EDGE_CLI_PATH
