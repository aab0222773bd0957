// `generate` / `perplexity --numerics llamacpp`: llama.cpp's CPU arithmetic from the command line.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "test_support.h"

using namespace edge::test;

namespace {

std::string llamacpp_file(const std::string& f) { return shared("models/stories260K/llamacpp/" + f); }

// Q4_0: llama.cpp's greedy text, which in this mode we reproduce token for token.
TEST(CliNumerics, GenerateLlamaCppQ40) {
    const std::string path = llamacpp_file("stories260K-Q4_0.gguf");
    EDGE_REQUIRE_SHARED(path);
    CliRun r = run_cli({"generate", path, "--prompt", "Once upon a time", "--max-tokens", "30", "--temperature", "0",
                        "--numerics", "llamacpp", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.json()["text"],
              ", there was a little girl named Lily. She loved to play outside in the sun. One day, she");
}

// Q4_1 with the split-KV decode of 64 threads over a 512-cell view: llama.cpp's full text (the
// fitted configuration docs/quant-formats.md describes); without it the 30th token differs.
TEST(CliNumerics, GenerateLlamaCppQ41SplitKv) {
    const std::string path = llamacpp_file("stories260K-Q4_1.gguf");
    EDGE_REQUIRE_SHARED(path);
    const std::string want =
        ", there was a little girl named Lily. She loved to play with her toys and her friends. One day, she";
    CliRun split =
        run_cli({"generate", path, "--prompt", "Once upon a time", "--max-tokens", "30", "--temperature", "0",
                 "--numerics", "llamacpp", "--llamacpp-threads", "64", "--llamacpp-kv-pad", "512", "--json"});
    ASSERT_EQ(split.rc, 0) << split.err;
    EXPECT_EQ(split.json()["text"], want);
    CliRun plain = run_cli({"generate", path, "--prompt", "Once upon a time", "--max-tokens", "30", "--temperature",
                            "0", "--numerics", "llamacpp", "--json"});
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_EQ(plain.json()["text"],
              ", there was a little girl named Lily. She loved to play with her toys and her friends. One day, Lily");
}

TEST(CliNumerics, PerplexityLlamaCppDiffersFromFp32ButStaysClose) {
    const std::string path = llamacpp_file("stories260K-Q4_1.gguf");
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(text);
    auto ppl = [&](const char* numerics) {
        CliRun r = run_cli({"perplexity", path, "--text", text, "--protocol", "story", "--max-parts", "2", "--numerics",
                            numerics, "--json"});
        EXPECT_EQ(r.rc, 0) << r.err;
        return r.rc == 0 ? r.json()["perplexity"].get<double>() : -1.0;
    };
    const double fp32 = ppl("fp32"), llamacpp = ppl("llamacpp");
    EXPECT_GT(fp32, 1.0);
    EXPECT_NE(fp32, llamacpp);                 // a different arithmetic ...
    EXPECT_NEAR(llamacpp, fp32, 0.02 * fp32);  // ... of the same model
}

TEST(CliNumerics, RejectsUnknownNumericsAndNonGguf) {
    const std::string bin = shared("models/stories260K/stories260K.bin");
    EDGE_REQUIRE_SHARED(bin);
    CliRun bad = run_cli({"generate", bin, "--tokenizer", shared("models/stories260K/tok512.bin"), "--prompt", "Once",
                          "--numerics", "ggml"});
    EXPECT_NE(bad.rc, 0);
    CliRun bin_run = run_cli({"generate", bin, "--tokenizer", shared("models/stories260K/tok512.bin"), "--prompt",
                              "Once", "--max-tokens", "2", "--numerics", "llamacpp"});
    EXPECT_NE(bin_run.rc, 0);
    EXPECT_NE(bin_run.err.find("GGUF"), std::string::npos) << bin_run.err;
}

}  // namespace
