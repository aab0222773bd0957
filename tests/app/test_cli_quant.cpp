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

    CliRun v = run_cli({"validate", model, out, "--text", text, "--protocol", "story", "--no-bitflip", "--json"});
    EXPECT_EQ(v.rc, 0) << v.out << v.err;

    CliRun g = run_cli({"generate", out, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0"});
    EXPECT_EQ(g.rc, 0) << g.err;
    EXPECT_NE(g.out.find("Once upon a time"), std::string::npos) << g.out;
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
