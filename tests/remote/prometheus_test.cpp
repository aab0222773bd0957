// The agent's Prometheus answer: `edgestudio-cli profile --prometheus FILE` over the real loopback
// sshd asks the agent (metrics-request frame) after the run; Debian's promtool accepts the text
// (`promtool check metrics`, lint included) and the counters agree with the run. promtool is
// also shown to reject a broken exposition, so the check can fail.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "remote/agent/prometheus.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPromtool = "/usr/bin/promtool";

test::Shell promtool_check(const std::string& text, const fs::path& dir) {
    fs::path f = dir / "metrics.prom";
    std::ofstream(f, std::ios::binary | std::ios::trunc) << text;
    return test::run_shell(std::string(kPromtool) + " check metrics < " + f.string() + " 2>&1", dir);
}

// The value of the first sample whose line starts with `prefix` ("name{labels}" or "name ").
std::optional<double> value_of(const std::string& text, const std::string& prefix) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
    return std::nullopt;
}

}  // namespace

TEST(Prometheus, ExpositionFormatAndAbsentReadings) {
    auto dir = test::temp_dir("prom");
    ASSERT_EQ(::access(kPromtool, X_OK), 0)
        << kPromtool << " is missing (Debian package prometheus; scripts/install-deps.sh)";
    agent::AgentMetrics m;
    m.version = "0.1.0";
    m.protocol = 2;
    m.host = "orin \"lab\"\\1\nx";
    m.backend = "cpu";
    m.worker.tokens = 3;
    m.worker.latency_buckets[0] = 1, m.worker.latency_buckets[4] = 1, m.worker.latency_buckets.back() = 1;
    m.worker.latency_sum_s = 2.5;
    std::string text = agent::prometheus_text(m);
    auto c = promtool_check(text, dir);
    EXPECT_EQ(c.rc, 0) << c.out << "\n" << text;
    EXPECT_NE(text.find("host=\"orin \\\"lab\\\"\\\\1\\nx\""), std::string::npos) << text;
    EXPECT_EQ(value_of(text, "edge_agent_token_latency_seconds_bucket{le=\"0.001\"}"), 1.0);
    EXPECT_EQ(value_of(text, "edge_agent_token_latency_seconds_bucket{le=\"0.02\"}"), 2.0);
    EXPECT_EQ(value_of(text, "edge_agent_token_latency_seconds_bucket{le=\"+Inf\"}"), 3.0);
    EXPECT_EQ(value_of(text, "edge_agent_token_latency_seconds_count"), 3.0);
    EXPECT_EQ(value_of(text, "edge_agent_engine_loaded "), 0.0);
    // Readings the board lacks are left out, not zero.
    for (const char* absent : {"edge_board_power_watts", "edge_board_temperature_celsius",
                               "process_resident_memory_bytes", "edge_agent_kv_blocks"})
        EXPECT_EQ(text.find(absent), std::string::npos) << absent;

    // promtool does reject what breaks the format or its conventions.
    EXPECT_NE(promtool_check("# HELP t x\n# TYPE t counter\nt 1\n", dir).rc, 0) << "a counter without _total";
    EXPECT_NE(promtool_check(text + "edge_agent_info{version=\"x} 1\n", dir).rc, 0) << "an unescaped label";
}

#ifdef EDGE_CLI_PATH
TEST(Prometheus, AgentAnswersAfterAProfileOverSsh) {
    std::string model = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    ASSERT_EQ(::access(kPromtool, X_OK), 0)
        << kPromtool << " is missing (Debian package prometheus; scripts/install-deps.sh)";
    std::string why;
    auto sshd = test::Sshd::start(&why);
    ASSERT_TRUE(sshd) << why;
    fs::path dir = sshd->dir;
    std::string kh = (dir / "known_hosts").string();
    std::ofstream(kh) << sshd->known_hosts_line() << "\n";
    std::vector<std::string> board = {"--board",       sshd->user + "@127.0.0.1:" + std::to_string(sshd->port),
                                      "--identity",    sshd->client_key,
                                      "--known-hosts", kh,
                                      "--root",        (dir / "root").string()};
    auto with = [&](std::vector<std::string> a) {
        a.insert(a.end(), board.begin(), board.end());
        return test::run_shell(test::command_line(EDGE_CLI_PATH, a), dir);
    };
    ASSERT_EQ(with({"deploy", model, "--agent", EDGE_AGENT_PATH, "--version", "v1"}).rc, 0);
    fs::path prom = dir / "agent.prom";
    auto p = with({"profile", "-p", "Once upon a time", "-p", "The cat", "-n", "20", "--threads", "1", "--json",
                   "--prometheus", prom.string()});
    ASSERT_EQ(p.rc, 0) << p.err;
    auto pj = nlohmann::json::parse(p.out, nullptr, false);
    ASSERT_TRUE(pj.is_array() && pj.size() == 1) << p.out;
    const double tokens = pj[0]["summary"]["tokens"].get<double>();
    ASSERT_GT(tokens, 0);

    std::string text = test::read_file(prom);
    ASSERT_FALSE(text.empty()) << prom;
    auto c = promtool_check(text, dir);
    EXPECT_EQ(c.rc, 0) << c.out << "\n" << text;
    EXPECT_TRUE(c.out.empty()) << c.out;
    EXPECT_EQ(value_of(text, "edge_agent_tokens_generated_total"), tokens) << text;
    EXPECT_EQ(value_of(text, "edge_agent_token_latency_seconds_count"), tokens);
    EXPECT_EQ(value_of(text, "edge_agent_prompts_total"), 2.0);
    EXPECT_EQ(value_of(text, "edge_agent_workloads_total{result=\"ok\"}"), 1.0);
    EXPECT_EQ(value_of(text, "edge_agent_engine_loads_total{result=\"ok\"}"), 1.0);
    EXPECT_TRUE(
        std::regex_search(text, std::regex("edge_agent_engine_loaded\\{engine=\"[^\"]*stories260K\\.gguf\"\\} 1")))
        << text;
    EXPECT_GT(value_of(text, "edge_agent_telemetry_batches_total").value_or(0), 0.0);
    EXPECT_GT(value_of(text, "process_resident_memory_bytes").value_or(0), 1e6);
    EXPECT_TRUE(value_of(text, "edge_agent_kv_blocks{state=\"used\"}").has_value());
    EXPECT_NE(text.find("protocol=\"" + std::to_string(edge::protocol::kProtocolVersion) + "\""), std::string::npos);
}
#endif
