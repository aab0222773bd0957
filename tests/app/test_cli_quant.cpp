// quantize + validate from the command line on stories260K: an INT8 RTN plan passes the
// validation suite and the result generates; a bad plan is refused naming the layer.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.h"
#include "test_support.h"

namespace edge::test {
namespace {

std::string write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p) << text;
    return p.string();
}

TEST(CliQuant, Int8RtnQuantizesValidatesAndGenerates) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-quant");
    const std::string plan =
        write(dir / "int8.plan.json", R"({"default": {"precision": "int8", "method": "rtn", "group_size": 32}})");
    const std::string out = (dir / "m.edgeq").string();
    CliRun q = run_cli({"quantize", model, "--plan", plan, "--out", out, "--json"});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_LT(q.json()["bytes_after"].get<double>(), 0.5 * q.json()["bytes_before"].get<double>());

    // Timing is not judged here (the machine may be busy with other tests): the jitter bound is lifted.
    CliRun v = run_cli({"validate", model, out, "--text", text, "--protocol", "story", "--no-bitflip",
                        "--jitter-ms-max", "1e9", "--json"});
    EXPECT_EQ(v.rc, 0) << v.out << v.err;

    CliRun g = run_cli({"generate", out, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0"});
    EXPECT_EQ(g.rc, 0) << g.err;
    EXPECT_NE(g.out.find("Once upon a time"), std::string::npos) << g.out;
}

// `sensitivity`: the studio's Sensitivity page from the command line, on the model as stored (one
// block at a time): one entry per layer, the JSON the studio reads, ranked so that quantizing the
// head costs more than an attention key projection does on average; too little memory stops it first.
TEST(CliQuant, SensitivityRanksEveryLayerAndWritesTheStudiosJson) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-sensitivity");
    const std::string out = (dir / "sens.json").string();
    CliRun r = run_cli(
        {"sensitivity", model, "--calib", text, "--calib-sequences", "4", "--calib-len", "48", "--out", out, "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = r.json();
    ASSERT_EQ(j.size(), 36u);
    EXPECT_EQ(j[0]["layer"], "blk.0.attn_q");
    EXPECT_EQ(j[35]["layer"], "output");
    double attn_k = 0;
    for (const auto& e : j) {
        EXPECT_GE(e["kl_mean"].get<double>(), 0.0) << e["layer"];
        if (e["layer"].get<std::string>().find("attn_k") != std::string::npos) attn_k += e["kl_mean"].get<double>() / 5;
    }
    EXPECT_GT(j[35]["kl_mean"].get<double>(), attn_k);
    std::ifstream written(out);
    EXPECT_EQ(nlohmann::json::parse(written), j);

    CliRun low = run_cli({"sensitivity", model, "--calib", text, "--memory-limit", "100K"});
    EXPECT_EQ(low.rc, 1);
    for (const char* part : {"stories260K.gguf: layer sensitivity", "needs about", "100.0 KiB is available"})
        EXPECT_NE(low.err.find(part), std::string::npos) << part << " in " << low.err;
    CliRun none = run_cli({"sensitivity", model});
    EXPECT_EQ(none.rc, 1);
    EXPECT_NE(none.err.find("needs --calib"), std::string::npos) << none.err;
}

// Issue 18 acceptance 5: a plan's "prune" section takes effect in compile and quantize. A 25 %
// pruned configuration compiles to the shapes and the perplexity `prune --ratio 0.25` gives (the
// same nats to the last bit), and quantizing it equals quantizing the pruned model; importance that
// needs gradients is refused with what to run instead.
TEST(CliQuant, APlanThatPrunesCompilesToThePrunedShapesAndPerplexity) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-prune-plan");
    const std::string pruned = (dir / "pruned.gguf").string(), engine = (dir / "pruned.edge").string();
    ASSERT_EQ(run_cli({"prune", model, "--ratio", "0.25", "--out", pruned}).rc, 0);
    const std::string prune_plan = write(dir / "prune.plan.json", R"({"version": 1, "prune": {"ratio": 0.25}})");
    CliRun c = run_cli({"compile", model, "--plan", prune_plan, "--out", engine, "--json"});
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_NE(c.json()["plan"].get<std::string>().find("heads 6/3 kv, ffn 129"), std::string::npos) << c.out;
    auto info = [&](const std::string& m) { return run_cli({"info", m, "--json", "--no-tensors"}).json()["config"]; };
    EXPECT_EQ(info(engine), info(pruned));
    EXPECT_EQ(info(engine)["hidden_dim"], 129);
    auto nll = [&](const std::string& m) {
        CliRun r = run_cli({"perplexity", m, "--text", text, "--json"});
        EXPECT_EQ(r.rc, 0) << r.err;
        return r.rc == 0 ? r.json()["nll_sum"].get<double>() : -1.0;
    };
    const double want = nll(pruned);
    EXPECT_GT(want, 0.0);
    EXPECT_EQ(nll(engine), want);

    // INT8 RTN on top: quantize with the pruning plan = quantize the pruned file.
    const std::string int8 = R"("default": {"precision": "int8", "method": "rtn", "group_size": 32})";
    const std::string both = write(dir / "both.plan.json", "{" + int8 + R"(, "prune": {"ratio": 0.25}})");
    const std::string only = write(dir / "int8.plan.json", "{" + int8 + "}");
    const std::string a = (dir / "a.edgeq").string(), b = (dir / "b.edgeq").string();
    CliRun qa = run_cli({"quantize", model, "--plan", both, "--out", a});
    ASSERT_EQ(qa.rc, 0) << qa.err;
    EXPECT_NE(qa.err.find("prunes first: dim 64, heads 8/4 kv, ffn 172 -> dim 64, heads 6/3 kv, ffn 129"),
              std::string::npos)
        << qa.err;
    ASSERT_EQ(run_cli({"quantize", pruned, "--plan", only, "--out", b}).rc, 0);
    EXPECT_EQ(nll(a), nll(b));

    const std::string taylor = write(dir / "taylor.plan.json", R"({"prune": {"importance": "taylor", "ratio": 0.25}})");
    CliRun t = run_cli({"compile", model, "--plan", taylor, "--out", (dir / "t.edge").string()});
    EXPECT_EQ(t.rc, 1);
    for (const char* part : {"taylor.plan.json", "prune.importance taylor", "edgestudio-cli prune --plan"})
        EXPECT_NE(t.err.find(part), std::string::npos) << part << " in " << t.err;
}

// Issue 18: calibration never sees what the evaluation scores. With --eval-text, the calibration
// text's paragraphs that the evaluation also has are dropped and the count reported.
TEST(CliQuant, CalibrationDropsTheEvaluationParagraphsAndSaysHowMany) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-quant-disjoint");
    const std::string plan =
        write(dir / "awq.plan.json", R"({"default": {"precision": "int4", "method": "awq", "group_size": 32}})");
    // The evaluation text: the sample's first two stories, re-wrapped (other line breaks, spaces).
    std::ifstream in(text);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    size_t cut = all.find("<|endoftext|>");
    ASSERT_NE(cut, std::string::npos);
    cut = all.find("<|endoftext|>", cut + 1);
    ASSERT_NE(cut, std::string::npos);
    std::string two = all.substr(0, cut);
    for (char& c : two)
        if (c == '\n') c = ' ';
    const std::string eval = write(dir / "eval.txt", "  " + two + "\n");
    CliRun q = run_cli({"quantize", model, "--plan", plan, "--calib", text, "--eval-text", eval, "--calib-sequences",
                        "4", "--calib-len", "64", "--out", (dir / "m.edgeq").string(), "--json"});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_NE(q.err.find("kept 3 of 5 paragraphs; 2 also in the evaluation text were removed (lines 2, 8)"),
              std::string::npos)
        << q.err;
    EXPECT_NE(q.err.find("eval.txt"), std::string::npos) << q.err;
}

// compile with a calibrated plan quantizes block by block straight into the engine: the same
// weights as quantize with the same plan and calibration, then compile of that .edgeq.
TEST(CliQuant, CompileWithAGptqPlanCalibratesAndEqualsQuantizeThenCompile) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-compile-gptq");
    const std::string plan =
        write(dir / "gptq.plan.json", R"({"default": {"precision": "int4", "method": "gptq", "group_size": 32}})");
    const std::vector<std::string> calib = {"--calib", text, "--calib-sequences", "4", "--calib-len", "64"};
    auto args = [&](std::vector<std::string> a) {
        a.insert(a.end(), calib.begin(), calib.end());
        return a;
    };
    const std::string direct = (dir / "direct.edge").string();
    CliRun c = run_cli(args({"compile", model, "--plan", plan, "--out", direct, "--json"}));
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_NE(c.json()["plan"].get<std::string>().find("gptq"), std::string::npos) << c.out;
    const std::string edgeq = (dir / "m.edgeq").string();
    ASSERT_EQ(run_cli(args({"quantize", model, "--plan", plan, "--out", edgeq})).rc, 0);
    const std::string via = (dir / "via.edge").string();
    ASSERT_EQ(run_cli({"compile", edgeq, "--out", via}).rc, 0);
    CliRun a = run_cli({"generate", direct, "--prompt", "Once upon a time", "-n", "12", "--temperature", "0"});
    CliRun b = run_cli({"generate", via, "--prompt", "Once upon a time", "-n", "12", "--temperature", "0"});
    ASSERT_EQ(a.rc, 0) << a.err;
    ASSERT_EQ(b.rc, 0) << b.err;
    EXPECT_EQ(a.out.substr(0, a.out.find("tokens,")), b.out.substr(0, b.out.find("tokens,")));
    // Without --calib the plan is refused with the reason; --calib without a plan too.
    CliRun no = run_cli({"compile", model, "--plan", plan, "--out", (dir / "x.edge").string()});
    EXPECT_NE(no.rc, 0);
    EXPECT_NE(no.err.find("calibration"), std::string::npos) << no.err;
    CliRun nop = run_cli(args({"compile", model, "--out", (dir / "y.edge").string()}));
    EXPECT_NE(nop.rc, 0);
    EXPECT_NE(nop.err.find("--plan"), std::string::npos) << nop.err;
}

TEST(CliQuant, PlanNamingAnUnknownLayerIsRefused) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    const auto dir = temp_dir("cli-quant-bad");
    const std::string plan =
        write(dir / "bad.plan.json", R"({"layers": {"blk.9.attn_q": {"precision": "int4", "method": "rtn"}}})");
    CliRun q = run_cli({"quantize", model, "--plan", plan, "--out", (dir / "x.edgeq").string()});
    EXPECT_EQ(q.rc, 1);
    EXPECT_NE(q.err.find("blk.9.attn_q"), std::string::npos) << q.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "x.edgeq"));
}

}  // namespace
}  // namespace edge::test
