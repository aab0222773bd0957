// edgestudio-cli deploy / profile / boards as a subprocess against the real loopback sshd: an
// ssh-config alias, a two-board fleet file deployed and profiled in parallel, JSON and table
// output, and the errors a user meets (unknown host key, refused connection, nothing deployed).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "remote/client/board_agent.h"
#include "remote/client/boards.h"
#include "remote/client/sha256_file.h"
#include "remote/client/ssh_session.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;
namespace fs = std::filesystem;

TEST(Boards, FileAndSshConfigAndDestinations) {
    auto dir = test::temp_dir("boards");
    std::ofstream(dir / "boards") << "# fleet\norin-01  nvidia@10.0.0.21  root=/opt/es identity=/k\n"
                                     "orin-02 10.0.0.22:2222\n\nlab-alias   # ssh config alias\n";
    auto b = client::read_boards_file((dir / "boards").string());
    ASSERT_TRUE(b.ok()) << b.message();
    ASSERT_EQ(b->size(), 3u);
    EXPECT_EQ((*b)[0].user, "nvidia");
    EXPECT_EQ((*b)[0].host, "10.0.0.21");
    EXPECT_EQ((*b)[0].root, "/opt/es");
    EXPECT_EQ((*b)[0].identity, "/k");
    EXPECT_EQ((*b)[1].port, 2222);
    EXPECT_EQ((*b)[2].host, "lab-alias");
    EXPECT_EQ((*b)[2].source, (dir / "boards").string() + ":5");

    std::ofstream(dir / "bad") << "x  u@h:99999\n";
    auto bad = client::read_boards_file((dir / "bad").string());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find((dir / "bad").string() + ":1"), std::string::npos) << bad.message();
    std::ofstream(dir / "dup") << "x h1\nx h2\n";
    EXPECT_TRUE(edge::test::fails_with(client::read_boards_file((dir / "dup").string()),
                                       {"dup:2", "board 'x' is listed twice (first at ", "dup:1)"}));
    std::ofstream(dir / "opt") << "x h1 rooot=/a\n";
    EXPECT_TRUE(edge::test::fails_with(client::read_boards_file((dir / "opt").string()),
                                       {"opt:1", "unknown or bad option 'rooot=/a'"}));

    std::ofstream(dir / "config") << "Host *\n  ServerAliveInterval 5\nHost orin jetson\n  HostName 10.1.1.1\n"
                                     "  User nv\n  Port 2200\nMatch host foo\n  User bar\n";
    auto c = client::ssh_config_boards((dir / "config").string());
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].name, "orin");
    EXPECT_EQ(c[1].user, "nv");
    EXPECT_EQ(c[1].port, 2200);

    auto d = client::parse_destination("root@[::1]:2022");
    ASSERT_TRUE(d.ok()) << d.message();
    EXPECT_EQ(d->host, "::1");
    EXPECT_EQ(d->port, 2022);
    EXPECT_TRUE(edge::test::fails_with(client::parse_destination("@host"), {"board '@host'", "empty user before '@'"}));
    EXPECT_TRUE(
        edge::test::fails_with(client::parse_destination("host:0"), {"board 'host:0'", "bad port '0' (1..65535)"}));
    auto r = client::resolve_board("orin", c);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->user, "nv");
    EXPECT_EQ(client::resolve_board("pi@10.0.0.5", c)->host, "10.0.0.5");
}

TEST(Boards, ALauncherMayHoldSpacesInQuotes) {
    auto dir = test::temp_dir("boards-launcher");
    std::ofstream(dir / "boards")
        << "emu u@127.0.0.1:2222 launcher=\"qemu-aarch64 -L /usr/aarch64-linux-gnu\" root=/r\n"
           "plain h2\n";
    auto b = client::read_boards_file((dir / "boards").string());
    ASSERT_TRUE(b.ok()) << b.message();
    ASSERT_EQ(b->size(), 2u);
    EXPECT_EQ((*b)[0].launcher, "qemu-aarch64 -L /usr/aarch64-linux-gnu");
    EXPECT_EQ((*b)[0].root, "/r");
    EXPECT_EQ((*b)[1].launcher, "");
    EXPECT_EQ(client::agent_command_line({"/r", (*b)[0].launcher, 2, "", ""}),
              "qemu-aarch64 -L /usr/aarch64-linux-gnu '/r/current/edge-agent' --root '/r/current' --lock "
              "'/r/agent.lock' --threads 2");
    std::ofstream(dir / "open") << "emu h launcher=\"nice -n 5\n";
    auto open = client::read_boards_file((dir / "open").string());
    ASSERT_FALSE(open.ok());
    EXPECT_NE(open.message().find((dir / "open").string() + ":1: a double quote is not closed"), std::string::npos)
        << open.message();
    // Found by fuzz_boards: a line of "" made a board without a name, which nothing could select.
    std::ofstream(dir / "nameless") << "orin nvidia@10.0.0.2\n\"\" h3\n";
    auto nameless = client::read_boards_file((dir / "nameless").string());
    ASSERT_FALSE(nameless.ok());
    EXPECT_NE(nameless.message().find((dir / "nameless").string() + ":2: the board name is empty"), std::string::npos)
        << nameless.message();
}

TEST(BoardAgent, ArchitecturesAreReadFromTheElfHeaderAndAMismatchIsRefused) {
    EXPECT_EQ(client::normalize_arch("arm64\n"), "aarch64");
    EXPECT_EQ(client::normalize_arch(" x86_64 "), "x86_64");
    EXPECT_EQ(client::normalize_arch("amd64"), "x86_64");
    auto self = client::elf_arch(EDGE_AGENT_PATH);
    ASSERT_TRUE(self.ok()) << self.message();
    EXPECT_EQ(self.value(), client::host_arch());
    auto dir = test::temp_dir("board-agent");
    std::ofstream(dir / "script") << "#!/bin/sh\n";
    auto script = client::elf_arch((dir / "script").string());
    ASSERT_FALSE(script.ok());
    EXPECT_NE(script.message().find("script: not an ELF executable"), std::string::npos) << script.message();
    auto given = client::find_agent("aarch64", EDGE_AGENT_PATH, dir.string());
    ASSERT_FALSE(given.ok());
    EXPECT_NE(given.message().find("is built for " + client::host_arch() + ", but the board is aarch64"),
              std::string::npos)
        << given.message();
    // Nothing next to an empty folder: the error lists every place looked.
    auto none = client::find_agent("riscv64", "", dir.string());
    ASSERT_FALSE(none.ok());
    for (const std::string& p : client::agent_candidates("riscv64", dir.string()))
        EXPECT_NE(none.message().find(p), std::string::npos) << p << "\n" << none.message();
    // The host's agent is found through the build tree's layout (SELF/../../remote/edge-agent).
    const fs::path agent = fs::path(EDGE_AGENT_PATH);
    const fs::path self_dir = agent.parent_path().parent_path() / "app" / "cli";
    auto found = client::find_agent(client::host_arch(), "", self_dir.string());
    ASSERT_TRUE(found.ok()) << found.message();
    EXPECT_EQ(found.value(), fs::canonical(agent).string());
}

#ifdef EDGE_CLI_PATH

namespace {

struct Run {
    int rc = -1;
    std::string out, err;
    nlohmann::json json() const { return nlohmann::json::parse(out, nullptr, false); }
};

Run cli(const std::vector<std::string>& args, const fs::path& tmp) {
    std::string cmd = client::shell_quote(EDGE_CLI_PATH);
    for (const auto& a : args) cmd += " " + client::shell_quote(a);
    fs::path errf = tmp / "stderr.txt";
    cmd += " 2>" + client::shell_quote(errf.string()) + " </dev/null";
    Run r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int st = ::pclose(p);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::ifstream f(errf);
    r.err.assign(std::istreambuf_iterator<char>(f), {});
    return r;
}

class CliRemoteTest : public ::testing::Test {
protected:
    void SetUp() override {
        model_ = test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(model_);
        std::string why;
        sshd_ = test::Sshd::start(&why);
        ASSERT_TRUE(sshd_) << why;
        dir_ = sshd_->dir;
        kh_ = sshd_->write_known_hosts();
        cfg_ = (dir_ / "ssh_config").string();
        std::ofstream(cfg_) << "Host jetson-test\n  HostName 127.0.0.1\n  Port " << sshd_->port << "\n  User "
                            << sshd_->user << "\n  IdentityFile " << sshd_->client_key << "\n";
        boards_ = (dir_ / "boards").string();
        std::ofstream(boards_) << "orin-a " << sshd_->user << "@127.0.0.1:" << sshd_->port
                               << " root=" << (dir_ / "a").string() << " identity=" << sshd_->client_key << "\n"
                               << "orin-b " << sshd_->user << "@127.0.0.1:" << sshd_->port
                               << " root=" << (dir_ / "b").string() << " identity=" << sshd_->client_key << "\n";
    }
    std::vector<std::string> alias(std::vector<std::string> args) const {
        // The board folder is named first: a temporary path inside the braced list below would be
        // destroyed before the loop body reads its c_str() (C++20 range-for lifetime rules).
        const std::string root = (dir_ / "j").string();
        for (const std::string& a : {std::string("--board"), std::string("jetson-test"), std::string("--ssh-config"),
                                     cfg_, std::string("--known-hosts"), kh_, std::string("--root"), root})
            args.push_back(a);
        return args;
    }
    std::unique_ptr<test::Sshd> sshd_;
    fs::path dir_;
    std::string model_, kh_, cfg_, boards_;
};

}  // namespace

TEST_F(CliRemoteTest, DeployAndProfileThroughAnSshConfigAlias) {
    auto d = cli(alias({"deploy", model_, "--agent", EDGE_AGENT_PATH, "--version", "v1", "--json"}), dir_);
    ASSERT_EQ(d.rc, 0) << d.err;
    auto dj = d.json();
    ASSERT_TRUE(dj.is_array() && dj.size() == 1) << d.out;
    EXPECT_EQ(dj[0]["version"], "v1");
    EXPECT_EQ(dj[0]["files"].size(), 2u);
    EXPECT_EQ(fs::read_symlink(dir_ / "j/current").string(), "versions/v1");

    auto p =
        cli(alias({"profile", "-p", "Once upon a time", "-p", "Lily wanted", "-n", "48", "--threads", "1", "--json"}),
            dir_);
    ASSERT_EQ(p.rc, 0) << p.err;
    auto pj = p.json();
    ASSERT_TRUE(pj.is_array() && pj.size() == 1) << p.out;
    const auto& s = pj[0]["summary"];
    EXPECT_EQ(s["prompts"], 2);
    EXPECT_GT(s["tokens"].get<int>(), 0);
    EXPECT_TRUE(s["latency_p50_ms"].is_number()) << s.dump();
    EXPECT_TRUE(s["latency_p99_ms"].is_number());
    EXPECT_TRUE(s["tokens_per_s"].is_number());
    EXPECT_TRUE(s["rss_max_bytes"].is_number());
    ASSERT_TRUE(s["kv_hit_rate"].is_number()) << s.dump();  // prompt positions reused from the agent's cache
    EXPECT_GE(s["kv_hit_rate"].get<double>(), 0.0);
    EXPECT_LE(s["kv_hit_rate"].get<double>(), 1.0);
    EXPECT_EQ(pj[0]["restarts"], 0);
    EXPECT_EQ(pj[0]["results"].size(), 2u);

    // The table form names the columns the user asked for.
    auto t = cli(alias({"profile", "-n", "16", "--threads", "1"}), dir_);
    ASSERT_EQ(t.rc, 0) << t.err;
    for (const char* col : {"p50 ms", "p99 ms", "tok/s", "rss max", "kv hit", "jetson-test"})
        EXPECT_NE(t.out.find(col), std::string::npos) << col << "\n" << t.out;
    EXPECT_EQ(t.out.find("absent"), std::string::npos) << "the agent reports its KV hit rate\n" << t.out;
}

// Issue 18 acceptance 2: the studio's loop through the CLI on one project file - two
// configurations validated into the project (one pruned), compiled, deployed to the board from the
// project, profiled with the figures recorded back to the configuration whose engine ran (matched
// by SHA-256), listed and diffed with the board's time per token.
TEST_F(CliRemoteTest, TheStudiosLoopThroughTheCliOnOneProjectFile) {
#ifndef EDGE_CLI_HAS_CONFIGS
    GTEST_SKIP() << "edgestudio-cli was built without the studio's item models (configs)";
#endif
    const std::string text = test::shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(text);
    const std::string project = (dir_ / "loop.edgeproj").string();
    std::ofstream(dir_ / "int8.plan.json")
        << R"({"default": {"precision": "int8", "method": "rtn", "group_size": 32}})";
    std::ofstream(dir_ / "int4p.plan.json")
        << R"({"default": {"precision": "int4", "method": "rtn", "group_size": 32}, "prune": {"layers": {"blk.*.ffn": 0.25}}})";
    auto a1 = cli({"configs", "add", project, "--model", model_, "--plan", (dir_ / "int8.plan.json").string(), "--text",
                   text, "--parts", "2", "--json"},
                  dir_);
    ASSERT_EQ(a1.rc, 0) << a1.err;
    EXPECT_EQ(a1.json()["name"], "C1");
    auto a2 = cli({"configs", "add", project, "--plan", (dir_ / "int4p.plan.json").string(), "--parts", "2"}, dir_);
    ASSERT_EQ(a2.rc, 0) << a2.err;
    for (const char* c : {"C1", "C2"}) {
        auto comp = cli({"configs", "compile", project, c, "--json"}, dir_);
        ASSERT_EQ(comp.rc, 0) << comp.err;
        EXPECT_EQ(comp.json()["sha256"].get<std::string>().size(), 64u);
        auto d = cli(alias({"deploy", "--project", project, "--config", c, "--agent", EDGE_AGENT_PATH}), dir_);
        ASSERT_EQ(d.rc, 0) << d.err;
        auto p =
            cli(alias({"profile", "--project", project, "-p", "Once upon a time", "-n", "24", "--threads", "1"}), dir_);
        ASSERT_EQ(p.rc, 0) << p.err;
        EXPECT_NE(p.err.find(std::string("jetson-test: recorded for ") + c), std::string::npos) << p.err;
    }
    auto list = cli({"configs", "list", project, "--json"}, dir_);
    ASSERT_EQ(list.rc, 0) << list.err;
    const auto configs = list.json()["configurations"];
    ASSERT_EQ(configs.size(), 2u);
    for (const auto& c : configs) {
        ASSERT_EQ(c["engines"].size(), 1u) << c.dump();
        ASSERT_EQ(c["measurements"].size(), 1u) << c.dump();
        EXPECT_EQ(c["measurements"][0]["board"], "jetson-test");
        EXPECT_EQ(c["measurements"][0]["engine_sha256"], c["engines"][0]["sha256"]);
        EXPECT_GT(c["measurements"][0]["tpot_p50_ms"].get<double>(), 0.0);
    }
    EXPECT_LT(configs[1]["bytes"].get<double>(), configs[0]["bytes"].get<double>()) << "INT4 and pruned";
    auto diff = cli({"configs", "diff", project, "C1", "C2", "--json"}, dir_);
    ASSERT_EQ(diff.rc, 0) << diff.err;
    EXPECT_EQ(diff.json()["layers"].size(), 36u);
    EXPECT_TRUE(diff.json()["figures"].contains("board_tpot_p50_ms")) << diff.out;
    auto show = cli({"configs", "show", project, "C2"}, dir_);
    ASSERT_EQ(show.rc, 0) << show.err;
    EXPECT_NE(show.out.find("blk.0.ffn_up           INT4 RTN g32 −25%"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("board  jetson-test"), std::string::npos) << show.out;
    auto missing = cli({"configs", "show", project, "C9"}, dir_);
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("no configuration named C9 (it has C1, C2)"), std::string::npos) << missing.err;

    // Named workloads the studio saved in the project run by name; a serving workload file's run is
    // recorded too; each measurement names its workload. (C2's engine is the live one.)
    {
        std::ifstream in(project);
        nlohmann::json pj = nlohmann::json::parse(in);
        pj["workloads"] = {
            {{"name", "two stories"}, {"prompts", {"Once upon a time", "Lily"}}, {"max_tokens", 12}, {"chat", false}}};
        std::ofstream(project) << pj.dump(2);
    }
    auto named = cli(alias({"profile", "--project", project, "--workload", "two stories", "--threads", "1"}), dir_);
    ASSERT_EQ(named.rc, 0) << named.err;
    EXPECT_NE(named.err.find("jetson-test: recorded for C2"), std::string::npos) << named.err;
    const std::string wl = std::string(EDGE_SOURCE_DIR) + "/tests/data/workloads/mixed.workload";
    auto served =
        cli(alias({"profile", "--project", project, "--workload", wl, "--concurrency", "4", "--threads", "1"}), dir_);
    ASSERT_EQ(served.rc, 0) << served.err;
    auto shown = cli({"configs", "show", project, "C2", "--json"}, dir_);
    ASSERT_EQ(shown.rc, 0) << shown.err;
    const auto ms = shown.json()["configuration"]["measurements"];
    ASSERT_EQ(ms.size(), 3u) << ms.dump();
    EXPECT_EQ(ms[1]["workload"], "two stories");
    EXPECT_EQ(ms[1]["prompts"], 2);
    EXPECT_EQ(ms[1]["tokens"], 24);
    EXPECT_EQ(ms[2]["workload"], "mixed.workload");
    EXPECT_EQ(ms[2]["prompts"], 24);
    EXPECT_GT(ms[2]["kv_hit_rate"].get<double>(), 0.0);
    auto unknown = cli(alias({"profile", "--project", project, "--workload", "nightly"}), dir_);
    EXPECT_EQ(unknown.rc, 1);
    EXPECT_NE(unknown.err.find("nightly: no such workload file, and " + project +
                               " has no workload of that name (it has two stories)"),
              std::string::npos)
        << unknown.err;
    auto alias_of = cli({"calibrate", "--help"}, dir_);
    EXPECT_EQ(alias_of.rc, 0) << "calibrate is calib-select's other name";
}

// Acceptance 2 (issue 20): `profile --workload mixed.workload --concurrency 8` against the
// loopback board serves every request through the agent's scheduler and prints the per-request
// and aggregate table; with a virtual clock its counts equal serve-bench's run here.
// Issue 18 acceptance 3's pieces: deploy --cost-models has the agent just deployed measure the
// board (edge-agent --micro-profile on the engine just deployed) into a per-board file; predict-tpot
// gives back the engine's own measured time for its own plan; autoplan --board keeps to a time
// budget and refuses one below the fastest plan.
TEST_F(CliRemoteTest, ADeployMeasuresTheBoardsCostModelAndAutoplanKeepsToItsTime) {
#ifndef EDGE_CLI_HAS_ANALYSIS
    GTEST_SKIP() << "edgestudio-cli was built without LibTorch (analyze, autoplan, predict-tpot)";
#endif
    const std::string text = test::shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(text);
    const std::string plan = (dir_ / "int4.plan.json").string(), engine = (dir_ / "int4.edge").string();
    const std::string costs = (dir_ / "costs.json").string();
    std::ofstream(plan) << R"({"version": 1, "default": {"precision": "int4", "method": "rtn", "group_size": 32}})";
    auto c = cli({"compile", model_, "--plan", plan, "--out", engine}, dir_);
    ASSERT_EQ(c.rc, 0) << c.err;
    auto d = cli(alias({"deploy", engine, "--agent", EDGE_AGENT_PATH, "--version", "v1", "--cost-models", costs,
                        "--threads", "1"}),
                 dir_);
    ASSERT_EQ(d.rc, 0) << d.err;
    EXPECT_NE(d.out.find("jetson-test: cost model in " + costs), std::string::npos) << d.out;
    std::ifstream f(costs);
    const auto file = nlohmann::json::parse(f, nullptr, false);
    ASSERT_TRUE(file.is_object()) << costs;
    const auto& cm = file["boards"]["jetson-test"];
    EXPECT_EQ(cm["engine"], "int4.edge");
    EXPECT_EQ(cm["threads"], 1);
    EXPECT_EQ(cm["linears"].size(), 5u * 4u);  // q and o, k and v, gate and up, down, output; 4 precisions
    const double tpot = cm["engine_tpot_ms"].get<double>(), linear = cm["engine_linear_ms"].get<double>();
    EXPECT_GT(tpot, 0.0);

    auto p =
        cli({"predict-tpot", model_, "--plan", plan, "--cost-models", costs, "--board", "jetson-test", "--json"}, dir_);
    ASSERT_EQ(p.rc, 0) << p.err;
    EXPECT_NEAR(p.json()[0]["predicted_tpot_ms"].get<double>(), std::max(tpot, linear), 1e-9 * tpot) << p.out;

    const std::string sens = (dir_ / "sens.json").string(), chosen = (dir_ / "chosen.plan.json").string();
    auto a = cli(
        {"analyze", model_,      "--calib", text,           "--no-quant", "--calib-sequences",   "2", "--seq-len",
         "16",      "--batches", "2",       "--batch-size", "1",          "--hessian-sequences", "1", "--lanczos-steps",
         "2",       "--topk",    "1",       "--out",        sens},
        dir_);
    ASSERT_EQ(a.rc, 0) << a.err;
    const double budget = 1.2 * std::max(tpot, linear);
    auto ap = cli(
        {"autoplan", model_, "--calib", text, "--sensitivity", sens, "--predictor", "hessian", "--cost-models", costs,
         "--board", "jetson-test", "--budget-ms-per-token", std::to_string(budget), "--out", chosen, "--json"},
        dir_);
    ASSERT_EQ(ap.rc, 0) << ap.err;
    const double predicted = ap.json()["plan"]["predicted_tpot_ms"].get<double>();
    EXPECT_LE(predicted, budget);
    auto again = cli(
        {"predict-tpot", model_, "--plan", chosen, "--cost-models", costs, "--board", "jetson-test", "--json"}, dir_);
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_NEAR(again.json()[0]["predicted_tpot_ms"].get<double>(), predicted, 1e-9 * predicted);

    auto tight =
        cli({"autoplan", model_, "--calib", text, "--sensitivity", sens, "--predictor", "hessian", "--cost-models",
             costs, "--board", "jetson-test", "--budget-ms-per-token", "0.000001", "--out", chosen},
            dir_);
    EXPECT_NE(tight.rc, 0);
    EXPECT_NE(tight.err.find("below the fastest plan's predicted"), std::string::npos) << tight.err;
    auto unknown = cli({"predict-tpot", model_, "--plan", plan, "--cost-models", costs, "--board", "nano"}, dir_);
    EXPECT_NE(unknown.rc, 0);
    EXPECT_NE(unknown.err.find("no cost model for board 'nano' (has jetson-test)"), std::string::npos) << unknown.err;
}

TEST_F(CliRemoteTest, ProfileAWorkloadCountsWhatServeBenchCounts) {
    auto d = cli(alias({"deploy", model_, "--agent", EDGE_AGENT_PATH, "--version", "v1"}), dir_);
    ASSERT_EQ(d.rc, 0) << d.err;
    const std::string wl = std::string(EDGE_SOURCE_DIR) + "/tests/data/workloads/mixed.workload";
    const std::vector<std::string> knobs = {"--budget-blocks", "36", "--step-ms", "1", "--concurrency", "8"};
    std::vector<std::string> args = {"profile", "--workload", wl, "--threads", "2", "--json"};
    args.insert(args.end(), knobs.begin(), knobs.end());
    auto p = cli(alias(args), dir_);
    ASSERT_EQ(p.rc, 0) << p.err;
    auto pj = p.json();
    ASSERT_TRUE(pj.is_array() && pj.size() == 1) << p.out;
    const auto& board = pj[0]["serve"];
    std::vector<std::string> local = {"serve-bench", model_, "--workload", wl, "--json"};
    local.insert(local.end(), knobs.begin(), knobs.end());
    auto sb = cli(local, dir_);
    ASSERT_EQ(sb.rc, 0) << sb.err;
    auto sj = sb.json();
    const auto& agg = sj["aggregate"];
    for (const char* k : {"steps", "preemptions", "output_tokens", "recomputed_tokens", "peak_blocks", "queue_max"})
        EXPECT_EQ(board[k], agg[k]) << k;
    EXPECT_DOUBLE_EQ(board["kv_hit_rate"].get<double>(), agg["kv_hit_rate"].get<double>());
    EXPECT_DOUBLE_EQ(board["makespan_ms"].get<double>(), agg["makespan_ms"].get<double>());
    ASSERT_EQ(board["requests"].size(), sj["requests"].size());
    for (size_t i = 0; i < board["requests"].size(); ++i) {
        for (const char* k : {"context_tokens", "shared_tokens", "preemptions", "output_tokens"})
            EXPECT_EQ(board["requests"][i][k], sj["requests"][i][k]) << "request " << i << " " << k;
        EXPECT_DOUBLE_EQ(board["requests"][i]["ttft_ms"].get<double>(), sj["requests"][i]["ttft_ms"].get<double>());
    }
    EXPECT_GT(board["preemptions"].get<int>(), 0);
    EXPECT_GT(board["kv_hit_rate"].get<double>(), 0.0);

    // Over the loopback sshd too: each request's logits are bit-identical served alone, batched,
    // and 3x over budget with recompute or swap (the agent's digests of them).
    auto bits = [&](const char* conc, const char* budget, const char* preempt) {
        auto r = cli(alias({"profile", "--workload",
                            std::string(EDGE_SOURCE_DIR) + "/tests/data/workloads/shared_prompt.workload", "--threads",
                            "2", "--json", "--digest-logits", "--concurrency", conc, "--budget-blocks", budget,
                            "--preempt", preempt, "--step-ms", "1"}),
                     dir_);
        EXPECT_EQ(r.rc, 0) << r.err;
        std::vector<uint64_t> d;
        auto j = r.json();
        if (j.is_array() && !j.empty())
            for (const auto& q : j[0]["serve"]["requests"]) d.push_back(q["logits_digest"].get<uint64_t>());
        return d;
    };
    const auto alone = bits("1", "256", "recompute");
    ASSERT_EQ(alone.size(), 16u);
    EXPECT_EQ(bits("8", "256", "recompute"), alone);
    EXPECT_EQ(bits("8", "24", "recompute"), alone);
    EXPECT_EQ(bits("8", "24", "swap"), alone);

    // The table: a row per request and the aggregate line.
    std::vector<std::string> targs = {"profile", "--workload", wl, "--threads", "2"};
    targs.insert(targs.end(), knobs.begin(), knobs.end());
    auto t = cli(alias(targs), dir_);
    ASSERT_EQ(t.rc, 0) << t.err;
    for (const char* col : {"ttft ms", "tpot ms", "shared", "24 requests", "prefix-cache hit rate", "preemptions"})
        EXPECT_NE(t.out.find(col), std::string::npos) << col << "\n" << t.out;
}

TEST_F(CliRemoteTest, FleetDeployProfileAndCheckInParallel) {
    auto d = cli({"deploy", model_, "--boards", boards_, "--known-hosts", kh_, "--agent", EDGE_AGENT_PATH}, dir_);
    ASSERT_EQ(d.rc, 0) << d.err << d.out;
    EXPECT_NE(d.out.find("orin-a"), std::string::npos) << d.out;
    EXPECT_NE(d.out.find("orin-b"), std::string::npos) << d.out;
    EXPECT_TRUE(fs::is_symlink(dir_ / "a/current"));
    EXPECT_TRUE(fs::is_symlink(dir_ / "b/current"));

    auto p = cli({"profile", "--boards", boards_, "--known-hosts", kh_, "-n", "16", "--threads", "1", "--json"}, dir_);
    ASSERT_EQ(p.rc, 0) << p.err;
    auto pj = p.json();
    ASSERT_EQ(pj.size(), 2u) << p.out;
    EXPECT_EQ(pj[0]["board"], "orin-a");
    EXPECT_EQ(pj[1]["board"], "orin-b");
    EXPECT_TRUE(pj[1]["summary"]["latency_p50_ms"].is_number());

    auto b =
        cli({"boards", "--boards", boards_, "--ssh-config", cfg_, "--known-hosts", kh_, "--check", "--json"}, dir_);
    ASSERT_EQ(b.rc, 0) << b.err;
    auto bj = b.json();
    ASSERT_EQ(bj.size(), 3u) << b.out;  // two from the file, one alias from the ssh config
    for (const auto& e : bj) EXPECT_TRUE(e["reachable"].get<bool>()) << e.dump();
    EXPECT_EQ(bj[2]["name"], "jetson-test");
    EXPECT_FALSE(bj[0]["current"].get<std::string>().empty());
    EXPECT_TRUE(bj[2]["current"].get<std::string>().empty());  // nothing deployed under its root
}

TEST_F(CliRemoteTest, ErrorsNameTheBoardAndTheStep) {
    // Unknown host key: refused with the fingerprint, accepted with the flag.
    std::ofstream(kh_, std::ios::trunc).close();
    auto u = cli(alias({"boards", "--check"}), dir_);
    EXPECT_EQ(u.rc, 1);
    EXPECT_NE(u.err.find("board jetson-test"), std::string::npos) << u.err;
    EXPECT_NE(u.err.find("unknown host key"), std::string::npos) << u.err;
    auto ok = cli(alias({"boards", "--check", "--accept-new-host-key"}), dir_);
    EXPECT_EQ(ok.rc, 0) << ok.err;

    // Nothing deployed yet: profile says so.
    auto none = cli(alias({"profile"}), dir_);
    EXPECT_EQ(none.rc, 1);
    EXPECT_NE(none.err.find("SHA256SUMS"), std::string::npos) << none.err;
    EXPECT_NE(none.err.find("deploy an engine first"), std::string::npos) << none.err;

    // A board that refuses the connection: named, with the retries.
    auto refused = cli({"deploy", model_, "--board", sshd_->user + "@127.0.0.1:1", "--known-hosts", kh_, "--root",
                        "/tmp/x", "--agent", EDGE_AGENT_PATH, "--retries", "1"},
                       dir_);
    EXPECT_EQ(refused.rc, 1);
    EXPECT_NE(refused.err.find("127.0.0.1:1"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("connect"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("2 attempts"), std::string::npos) << refused.err;

    auto missing = cli(alias({"deploy", "/nonexistent.edge", "--agent", EDGE_AGENT_PATH}), dir_);
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("/nonexistent.edge"), std::string::npos) << missing.err;
    auto noboard = cli({"deploy", model_}, dir_);
    EXPECT_EQ(noboard.rc, 1);
    EXPECT_NE(noboard.err.find("no board given"), std::string::npos) << noboard.err;
}

// Issue 18: the agent sent is the one built for the board's architecture. A board whose `uname -m`
// says aarch64 (a `uname` first on its PATH) gets the cross-built aarch64 agent, never this host's;
// started through the board's launcher (qemu-user, as an emulated board needs), it serves the model.
class CliArchBoardTest : public ::testing::Test {
protected:
    void start(const std::string& machine) {
        model_ = test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(model_);
        tmp_ = test::temp_dir("arch-board");
        std::string why;
        sshd_ = test::Sshd::start_as_machine(&why, machine);
        ASSERT_TRUE(sshd_) << why;
        kh_ = sshd_->write_known_hosts();
        boards_ = (tmp_ / "boards").string();
        std::ofstream(boards_) << "orin-arm " << sshd_->user << "@127.0.0.1:" << sshd_->port
                               << " root=" << (tmp_ / "arm").string() << " identity=" << sshd_->client_key
#ifdef EDGE_QEMU_AARCH64
                               << " launcher=\"" << EDGE_QEMU_AARCH64 << " -L /usr/aarch64-linux-gnu\""
#endif
                               << "\n";
    }
    std::vector<std::string> board(std::vector<std::string> args) const {
        for (const std::string& a : {std::string("--boards"), boards_, std::string("--board"), std::string("orin-arm"),
                                     std::string("--known-hosts"), kh_})
            args.push_back(a);
        return args;
    }
    std::unique_ptr<test::Sshd> sshd_;
    fs::path tmp_;
    std::string model_, kh_, boards_;
};

#if defined(EDGE_AARCH64_AGENT) && defined(EDGE_QEMU_AARCH64)
TEST_F(CliArchBoardTest, AnAarch64BoardGetsTheCrossBuiltAgentAndRunsItUnderItsLauncher) {
    start("aarch64");
    auto d = cli(board({"deploy", model_, "--version", "v1", "--json"}), tmp_);
    ASSERT_EQ(d.rc, 0) << d.err;
    auto dj = d.json();
    ASSERT_TRUE(dj.is_array() && dj.size() == 1) << d.out;
    auto want = client::sha256_of_file(EDGE_AARCH64_AGENT);
    ASSERT_TRUE(want.ok()) << want.message();
    std::string sent;
    for (const auto& f : dj[0]["files"])
        if (fs::path(f["path"].get<std::string>()).filename() == "edge-agent") sent = f["sha256"];
    EXPECT_EQ(sent, client::digest_hex(want.value())) << "the uploaded agent is not the aarch64 build\n" << d.out;
    auto on_board = client::elf_arch((tmp_ / "arm/current/edge-agent").string());
    ASSERT_TRUE(on_board.ok()) << on_board.message();
    EXPECT_EQ(on_board.value(), "aarch64");

    auto p = cli(board({"profile", "-p", "Once upon a time", "-n", "24", "--threads", "2", "--json"}), tmp_);
    ASSERT_EQ(p.rc, 0) << p.err;
    auto pj = p.json();
    ASSERT_TRUE(pj.is_array() && pj.size() == 1) << p.out;
    ASSERT_EQ(pj[0]["results"].size(), 1u) << p.out;
    EXPECT_NE(pj[0]["results"][0]["text"].get<std::string>().find("there was"), std::string::npos) << p.out;

    // This host's agent given for that board: refused, naming both architectures.
    auto x = cli(board({"deploy", model_, "--agent", EDGE_AGENT_PATH}), tmp_);
    EXPECT_EQ(x.rc, 1);
    EXPECT_NE(x.err.find("board orin-arm"), std::string::npos) << x.err;
    EXPECT_NE(x.err.find("built for x86_64, but the board is aarch64"), std::string::npos) << x.err;
}
#endif

TEST_F(CliArchBoardTest, ABoardWithNoAgentForItsArchitectureIsRefusedBeforeAnythingIsSent) {
    start("riscv64");
    auto d = cli(board({"deploy", model_}), tmp_);
    EXPECT_EQ(d.rc, 1);
    EXPECT_NE(d.err.find("board orin-arm: no edge-agent for riscv64 (the board's architecture) was found"),
              std::string::npos)
        << d.err;
    EXPECT_NE(d.err.find("looked in:"), std::string::npos) << d.err;
    EXPECT_FALSE(fs::exists(tmp_ / "arm/current")) << "nothing is deployed";
}

#endif  // EDGE_CLI_PATH
