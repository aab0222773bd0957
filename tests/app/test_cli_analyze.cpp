// analyze and autoplan from the command line on stories260K (small settings so the binary stays
// fast): the sensitivity JSON of docs/analysis.md, a plan under a budget that quantize accepts, a
// measured frontier, and bad input refused with a message.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "test_support.h"

namespace edge::test {
namespace {

const std::vector<std::string> kSmall = {"--batches",
                                         "3",
                                         "--topk",
                                         "2",
                                         "--lanczos-steps",
                                         "6",
                                         "--seq-len",
                                         "32",
                                         "--batch-size",
                                         "2",
                                         "--hessian-sequences",
                                         "2",
                                         "--calib-sequences",
                                         "6",
                                         "--quant-sequences",
                                         "4",
                                         "--threads",
                                         "2"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

TEST(CliAnalyze, WritesTheSensitivityJson) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_val.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-analyze");
    const std::string out = (dir / "sens.json").string();
    CliRun r = run_cli(with({"analyze", model, "--calib", text, "--alpha", "0.5", "--out", out, "--json"}, kSmall));
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = r.json();
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["options"]["topk"], 2);
    EXPECT_DOUBLE_EQ(j["options"]["alpha"].get<double>(), 0.5);
    ASSERT_EQ(j["layers"].size(), 36u);  // 5 blocks x 7 linears + output
    EXPECT_EQ(j["layers"][0]["layer"], "blk.0.attn_q");
    int ranks = 0;
    for (const auto& l : j["layers"]) {
        EXPECT_EQ(l["eigenvalues"].size(), 2u);
        EXPECT_GE(l["importance"].get<double>(), 0.0);
        EXPECT_LE(l["importance"].get<double>(), 1.0);
        EXPECT_GT(l["int4_kl"].get<double>(), 0.0);
        EXPECT_GT(l["grad_norm_std"].get<double>(), 0.0);
        ranks += l["rank"].get<int>();
    }
    EXPECT_EQ(ranks, 36 * 37 / 2);
    EXPECT_EQ(nlohmann::json::parse(slurp(out)), j);

    CliRun t = run_cli(with({"analyze", model, "--calib", text, "--no-quant"}, kSmall));
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_NE(t.out.find("blk.4.ffn_down"), std::string::npos) << t.out;
}

TEST(CliAutoplan, PlanUnderABudgetAndAMeasuredFrontier) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_val.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-autoplan");
    const std::string sens = (dir / "sens.json").string();
    ASSERT_EQ(run_cli(with({"analyze", model, "--calib", text, "--out", sens}, kSmall)).rc, 0);
    const std::string plan = (dir / "mixed.plan.json").string();
    CliRun a = run_cli(
        with({"autoplan", model, "--calib", text, "--sensitivity", sens, "--budget", "6bpw", "--out", plan, "--json"},
             kSmall));
    ASSERT_EQ(a.rc, 0) << a.err;
    const auto j = a.json();
    EXPECT_LE(j["plan"]["bits_per_weight"].get<double>(), 6.0);
    EXPECT_GT(j["plan"]["bits_per_weight"].get<double>(), 4.5);
    ASSERT_TRUE(std::filesystem::exists(plan));
    CliRun q = run_cli({"quantize", model, "--plan", plan, "--out", (dir / "m.edgeq").string(), "--json"});
    ASSERT_EQ(q.rc, 0) << q.err;

    CliRun f = run_cli(with({"autoplan", model, "--calib", text, "--sensitivity", sens, "--frontier", "4", "--eval",
                             text, "--eval-parts", "20", "--json"},
                            kSmall));
    ASSERT_EQ(f.rc, 0) << f.err;
    const auto fj = f.json();
    ASSERT_EQ(fj["frontier"].size(), 5u);  // 4 budgets from the all-INT4 to the all-INT8 size + all-FP16
    ASSERT_EQ(fj["uniform"].size(), 3u);
    double prev_pred = 1e300;
    for (const auto& p : fj["frontier"]) {
        EXPECT_LE(p["predicted"].get<double>(), prev_pred);
        prev_pred = p["predicted"].get<double>();
        EXPECT_GT(p["perplexity"].get<double>(), 1.0);
    }
    // the all-INT4 budget admits only the all-INT4 plan
    EXPECT_DOUBLE_EQ(fj["frontier"][0]["perplexity"].get<double>(), fj["uniform"][0]["perplexity"].get<double>());
    EXPECT_TRUE(fj.contains("spearman"));
}

TEST(CliAutoplan, BadInputIsRefused) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_val.txt");
    EDGE_REQUIRE_SHARED(model);
    const auto dir = temp_dir("cli-autoplan-bad");
    const std::string sens = (dir / "sens.json").string();
    std::ofstream(sens) << R"({"version": 1, "layers": [{"layer": "blk.7.attn_q"}]})";
    CliRun a = run_cli({"autoplan", model, "--calib", text, "--sensitivity", sens, "--budget", "6bpw", "--out",
                        (dir / "p.json").string()});
    EXPECT_EQ(a.rc, 1);
    EXPECT_NE(a.err.find("blk.7.attn_q"), std::string::npos) << a.err;
    CliRun b = run_cli({"autoplan",
                        model,
                        "--calib",
                        text,
                        "--budget",
                        "2bpw",
                        "--out",
                        (dir / "p.json").string(),
                        "--seq-len",
                        "16",
                        "--batches",
                        "1",
                        "--lanczos-steps",
                        "5",
                        "--calib-sequences",
                        "2",
                        "--hessian-sequences",
                        "1",
                        "--quant-sequences",
                        "1"});
    EXPECT_EQ(b.rc, 1);
    EXPECT_NE(b.err.find("smallest plan"), std::string::npos) << b.err;
    CliRun c = run_cli({"analyze", model, "--calib", (dir / "missing.txt").string()});
    EXPECT_EQ(c.rc, 1);
    EXPECT_NE(c.err.find("missing.txt"), std::string::npos) << c.err;
    CliRun d = run_cli({"analyze", model, "--calib", text, "--alpha", "1.5"});
    EXPECT_EQ(d.rc, 2);
}

}  // namespace
}  // namespace edge::test
