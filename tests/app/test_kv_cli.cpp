// kv-sim and serve-bench through edgestudio-cli (issue 6): tables and JSON on the committed
// traces and workloads, and bad input (zero or absurd budget, block size 0, bad workload lines)
// as clear errors naming what and where.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.h"
#include "test_support.h"

using namespace edge::test;

namespace {
std::string model() { return shared("models/stories260K/stories260K.gguf"); }
std::string data(const std::string& rel) { return std::string(EDGE_SOURCE_DIR) + "/tests/data/" + rel; }

void expect_failure(const CliRun& r, const std::string& names, int code = 1) {
    EXPECT_EQ(r.rc, code) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << "stderr does not name '" << names << "': " << r.err;
}
}  // namespace

TEST(KvCli, KvSimPrintsThePolicyTable) {
    auto r = run_cli({"kv-sim", "--trace", data("kv_traces/multi_turn_chat.trace")});
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char* p : {"LRU", "LRU-2", "ARC", "Locality", "multi_turn_chat", "hit rate"})
        EXPECT_NE(r.out.find(p), std::string::npos) << p << "\n" << r.out;
    auto j = run_cli({"kv-sim", "--traces", data("kv_traces"), "--policy", "arc", "--budget", "512", "--json"});
    ASSERT_EQ(j.rc, 0) << j.err;
    const auto doc = j.json();
    ASSERT_TRUE(doc.is_array());
    EXPECT_EQ(doc.size(), 4u);  // four traces, one policy
    for (const auto& row : doc) {
        EXPECT_EQ(row["policy"], "ARC");
        EXPECT_EQ(row["device_blocks"], 512);
        EXPECT_GE(row["hit_rate"].get<double>(), 0.0);
        EXPECT_LE(row["hit_rate"].get<double>(), 1.0);
    }
}

TEST(KvCli, KvSimBadInput) {
    expect_failure(run_cli({"kv-sim", "--budget", "0"}), "at least one block");
    expect_failure(run_cli({"kv-sim", "--budget", "99999999999"}), "absurd");
    expect_failure(run_cli({"kv-sim", "--policy", "fifo"}), "fifo");
    expect_failure(run_cli({"kv-sim", "--trace", "/nonexistent/x.trace"}), "/nonexistent/x.trace");
}

TEST(KvCli, ServeBenchReplaysAWorkload) {
    EDGE_REQUIRE_SHARED(model());
    auto r = run_cli({"serve-bench", model(), "--workload", data("workloads/shared_prompt.workload"), "--budget-blocks",
                      "24", "--step-ms", "1", "--threads", "2", "--compare-alone", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = r.json();
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j["requests"].size(), 16u);
    const auto& a = j["aggregate"];
    EXPECT_EQ(a["requests"], 16);
    EXPECT_GT(a["preemptions"].get<int>(), 0);
    EXPECT_LE(a["peak_blocks"].get<int>(), 24);
    EXPECT_GT(a["kv_hit_rate"].get<double>(), 0.3);  // the 64-token system prompt is shared
    EXPECT_EQ(j["vs_alone"]["identical_requests"], 16);
    EXPECT_EQ(j["vs_alone"]["max_kl"].get<double>(), 0.0);
    auto t = run_cli({"serve-bench", model(), "--workload", data("workloads/shared_prompt.workload"), "--budget-blocks",
                      "24", "--preempt", "swap", "--threads", "2"});
    ASSERT_EQ(t.rc, 0) << t.err;
    for (const char* s : {"TTFT", "TPOT", "tokens/s", "KV hit", "preemptions", "| swap |"})
        EXPECT_NE(t.out.find(s), std::string::npos) << s << "\n" << t.out;
}

TEST(KvCli, ServeBenchBadInput) {
    EDGE_REQUIRE_SHARED(model());
    const std::string w = data("workloads/shared_prompt.workload");
    expect_failure(run_cli({"serve-bench", model(), "--workload", w, "--budget-blocks", "0"}), "at least one block");
    expect_failure(run_cli({"serve-bench", model(), "--workload", w, "--budget-blocks", "99999999999"}), "absurd");
    expect_failure(run_cli({"serve-bench", model(), "--workload", w, "--block-tokens", "0"}), "block size");
    expect_failure(run_cli({"serve-bench", model(), "--workload", w, "--preempt", "magic"}), "magic");
    expect_failure(run_cli({"serve-bench", model(), "--workload", w, "--budget-blocks", "3"}), "could never run");
    expect_failure(run_cli({"serve-bench", model(), "--workload", "/nonexistent/w.workload"}),
                   "/nonexistent/w.workload");
    const auto dir = temp_dir("kv-cli");
    struct Bad {
        const char* text;
        const char* names;
    } bad[] = {
        {"edge-workload 1\nreq 0 - 10 10\nreq 1 - ten 10\n", ":3: prompt length 'ten'"},
        {"edge-workload 1\nprefix s 8\nreq 0 t 4 4\n", ":3: unknown prefix 't'"},
        {"edge-workload 1\nreq 0 - 4\n", ":2: 'req' takes"},
        {"edge-workload 1\nreq 0 - 4 4 4\n", ":2: 'req' takes"},
        {"edge-workload 9\n", ":1: workload version 9"},
        {"edge-workload 1\nreq 0 - 2000 100\n", ":2: request of 2100 tokens exceeds the model's context"},
    };
    int i = 0;
    for (const Bad& b : bad) {
        const std::string path = (dir / ("bad" + std::to_string(i++) + ".workload")).string();
        std::ofstream(path) << b.text;
        SCOPED_TRACE(b.text);
        expect_failure(run_cli({"serve-bench", model(), "--workload", path}), path + b.names);
    }
}
