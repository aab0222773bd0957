// `edgestudio-cli boards export-ansible` + Debian's ansible-playbook against the real loopback
// sshd: the playbook performs the same verified deploy as `edgestudio-cli deploy` (same folder
// layout, same SHA256SUMS, atomic switch, previous kept), refuses a file whose digest on the board
// is not the exported one (current untouched), is idempotent, and what it deployed profiles.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "remote/client/sha256_file.h"
#include "remote_test_util.h"
#include "test_support.h"

#ifdef EDGE_CLI_PATH

using namespace edge;
namespace fs = std::filesystem;

namespace {

constexpr const char* kAnsiblePlaybook = "/usr/bin/ansible-playbook";

class AnsibleTest : public ::testing::Test {
protected:
    void SetUp() override {
        model_ = test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(model_);
        ASSERT_EQ(::access(kAnsiblePlaybook, X_OK), 0)
            << kAnsiblePlaybook << " is missing (Debian package ansible-core; scripts/install-deps.sh installs it)";
        std::string why;
        sshd_ = test::Sshd::start(&why);
        ASSERT_TRUE(sshd_) << why;
        dir_ = sshd_->dir;
        kh_ = sshd_->write_known_hosts();
        boards_ = (dir_ / "boards").string();
        std::ofstream(boards_) << "orin-a " << sshd_->user << "@127.0.0.1:" << sshd_->port
                               << " root=" << (dir_ / "a").string() << " identity=" << sshd_->client_key << "\n"
                               << "orin-b " << sshd_->user << "@127.0.0.1:" << sshd_->port
                               << " root=" << (dir_ / "b").string() << " identity=" << sshd_->client_key << "\n";
    }

    test::Shell cli(const std::vector<std::string>& args) {
        return test::run_shell(test::command_line(EDGE_CLI_PATH, args), dir_);
    }

    test::Shell export_bundle(const std::string& version, const fs::path& out) {
        return cli({"boards", "export-ansible", model_, "--boards", boards_, "--known-hosts", kh_, "--agent",
                    EDGE_AGENT_PATH, "--version", version, "--out", out.string(), "--json"});
    }

    test::Shell playbook(const fs::path& bundle, const std::string& limit = "") {
        fs::path tmp = dir_ / "ansible-tmp";
        fs::create_directories(tmp);
        std::string env =
            "ANSIBLE_CONFIG=" + (bundle / "ansible.cfg").string() + " ANSIBLE_LOCAL_TEMP=" + (tmp / "local").string() +
            " ANSIBLE_REMOTE_TEMP=" + (tmp / "remote").string() +
            " ANSIBLE_SSH_CONTROL_PATH_DIR=" + (tmp / "cp").string() + " ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ";
        return test::run_shell(
            "cd " + (bundle.string()) + " && " + env +
                test::command_line(
                    kAnsiblePlaybook,
                    limit.empty() ? std::vector<std::string>{"-i", "inventory.json", "deploy.yml"}
                                  : std::vector<std::string>{"-i", "inventory.json", "deploy.yml", "--limit", limit}),
            dir_);
    }

    std::string digest(const fs::path& p) {
        auto d = client::sha256_of_file(p.string());
        return d.ok() ? client::digest_hex(d.value()) : d.message();
    }

    std::unique_ptr<test::Sshd> sshd_;
    fs::path dir_;
    std::string model_, kh_, boards_;
};

}  // namespace

TEST_F(AnsibleTest, ExportedPlaybookPerformsTheVerifiedDeploy) {
    const std::string model_name = fs::path(model_).filename().string();

    // The bundle: inventory with both boards, vars with the digests of the bundled files.
    fs::path b1 = dir_ / "bundle-v1";
    auto e = export_bundle("v1", b1);
    ASSERT_EQ(e.rc, 0) << e.err << e.out;
    auto ej = nlohmann::json::parse(e.out, nullptr, false);
    ASSERT_TRUE(ej.is_object()) << e.out;
    EXPECT_EQ(ej["version"], "v1");
    auto inv = nlohmann::json::parse(test::read_file(b1 / "inventory.json"), nullptr, false);
    const auto& hosts = inv["all"]["children"]["edge_boards"]["hosts"];
    ASSERT_EQ(hosts.size(), 2u) << inv.dump(2);
    EXPECT_EQ(hosts["orin-a"]["ansible_port"], sshd_->port);
    EXPECT_EQ(hosts["orin-b"]["edge_root"], (dir_ / "b").string());
    EXPECT_NE(inv["all"]["children"]["edge_boards"]["vars"]["ansible_ssh_common_args"].get<std::string>().find(
                  "StrictHostKeyChecking=yes"),
              std::string::npos);
    EXPECT_EQ(digest(b1 / "files" / model_name), digest(model_));

    auto p1 = playbook(b1);
    ASSERT_EQ(p1.rc, 0) << p1.out << p1.err;
    for (const char* board : {"a", "b"}) {
        fs::path root = dir_ / board;
        EXPECT_EQ(fs::read_symlink(root / "current").string(), "versions/v1") << board;
        EXPECT_FALSE(fs::exists(root / "previous")) << board;
        EXPECT_EQ(digest(root / "versions/v1" / model_name), digest(model_)) << board;
        EXPECT_EQ(digest(root / "versions/v1/edge-agent"), digest(EDGE_AGENT_PATH)) << board;
        struct stat st {};
        ASSERT_EQ(::stat((root / "versions/v1/edge-agent").c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0755u);
        EXPECT_FALSE(fs::exists(root / ("versions/v1/" + model_name + ".part"))) << board;
    }

    // The same SHA256SUMS, byte for byte, as the native deploy writes.
    auto native = cli({"deploy", model_, "--board", "orin-a", "--boards", boards_, "--known-hosts", kh_, "--agent",
                       EDGE_AGENT_PATH, "--root", (dir_ / "native").string(), "--version", "v1"});
    ASSERT_EQ(native.rc, 0) << native.err;
    EXPECT_EQ(test::read_file(dir_ / "a/versions/v1/SHA256SUMS"),
              test::read_file(dir_ / "native/versions/v1/SHA256SUMS"));

    // A second version: current switches, previous keeps v1, v1 stays whole.
    fs::path b2 = dir_ / "bundle-v2";
    ASSERT_EQ(export_bundle("v2", b2).rc, 0);
    auto p2 = playbook(b2);
    ASSERT_EQ(p2.rc, 0) << p2.out << p2.err;
    EXPECT_EQ(fs::read_symlink(dir_ / "a/current").string(), "versions/v2");
    EXPECT_EQ(fs::read_symlink(dir_ / "a/previous").string(), "versions/v1");
    EXPECT_EQ(fs::read_symlink(dir_ / "b/previous").string(), "versions/v1");
    EXPECT_EQ(digest(dir_ / "a/versions/v1" / model_name), digest(model_));

    // Again (one board, to keep the test short): the live version is re-verified, nothing changes.
    auto again = playbook(b2, "orin-a");
    ASSERT_EQ(again.rc, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("orin-a"), std::string::npos);
    EXPECT_NE(again.out.find("changed=0"), std::string::npos) << again.out;
    EXPECT_EQ(again.out.find("changed=1"), std::string::npos) << again.out;
    EXPECT_EQ(fs::read_symlink(dir_ / "a/previous").string(), "versions/v1");

    // A bundled file that is not the exported one: the digest on the board differs, the board
    // fails before any rename or switch.
    fs::path b3 = dir_ / "bundle-v3";
    ASSERT_EQ(export_bundle("v3", b3).rc, 0);
    std::ofstream(b3 / "files" / model_name, std::ios::app | std::ios::binary) << 'x';
    auto bad = playbook(b3, "orin-b");
    EXPECT_NE(bad.rc, 0) << bad.out;
    EXPECT_NE(bad.out.find("expected " + digest(model_)), std::string::npos) << bad.out;
    EXPECT_NE(bad.out.find("current is unchanged"), std::string::npos) << bad.out;
    EXPECT_EQ(fs::read_symlink(dir_ / "a/current").string(), "versions/v2");
    EXPECT_EQ(fs::read_symlink(dir_ / "b/current").string(), "versions/v2");
    EXPECT_FALSE(fs::exists(dir_ / "b/versions/v3" / model_name));
    EXPECT_FALSE(fs::exists(dir_ / "b/versions/v3/SHA256SUMS"));

    // What Ansible deployed is what `profile` runs: it reads SHA256SUMS and the agent checks the
    // engine's digest before loading it.
    auto prof = cli({"profile", "--board", "orin-a", "--boards", boards_, "--known-hosts", kh_, "-n", "8", "--threads",
                     "1", "--json"});
    ASSERT_EQ(prof.rc, 0) << prof.err;
    auto pj = nlohmann::json::parse(prof.out, nullptr, false);
    ASSERT_TRUE(pj.is_array() && pj.size() == 1) << prof.out;
    EXPECT_GT(pj[0]["summary"]["tokens"].get<int>(), 0);
}

TEST_F(AnsibleTest, ExportNamesAndRefusals) {
    // Names Ansible cannot take become inventory names; two boards colliding are refused.
    auto d =
        cli({"boards", "export-ansible", model_, "--board", sshd_->user + "@127.0.0.1:" + std::to_string(sshd_->port),
             "--root", "/opt/x", "--agent", EDGE_AGENT_PATH, "--out", (dir_ / "w").string()});
    ASSERT_EQ(d.rc, 0) << d.err;
    auto inv = nlohmann::json::parse(test::read_file(dir_ / "w/inventory.json"), nullptr, false);
    const auto& hosts = inv["all"]["children"]["edge_boards"]["hosts"];
    ASSERT_EQ(hosts.size(), 1u) << inv.dump();
    EXPECT_TRUE(hosts.contains(sshd_->user + "_127.0.0.1_" + std::to_string(sshd_->port))) << inv.dump();
    EXPECT_EQ(hosts.begin().value()["edge_root"], "/opt/x");
    std::ofstream(dir_ / "clash") << "orin/a 127.0.0.1:22 root=/x\norin:a 127.0.0.1:22 root=/y\n";
    auto r = cli({"boards", "export-ansible", model_, "--boards", (dir_ / "clash").string(), "--agent", EDGE_AGENT_PATH,
                  "--out", (dir_ / "x").string()});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("'orin:a'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'orin_a'"), std::string::npos) << r.err;
    auto rel = cli({"boards", "export-ansible", model_, "--board", "u@h", "--root", "relative/dir", "--agent",
                    EDGE_AGENT_PATH, "--out", (dir_ / "y").string()});
    EXPECT_EQ(rel.rc, 1);
    EXPECT_NE(rel.err.find("must be absolute"), std::string::npos) << rel.err;
    auto missing = cli({"boards", "export-ansible", "/nonexistent.gguf", "--boards", boards_, "--agent",
                        EDGE_AGENT_PATH, "--out", (dir_ / "z").string()});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("/nonexistent.gguf"), std::string::npos) << missing.err;
}

#endif  // EDGE_CLI_PATH
