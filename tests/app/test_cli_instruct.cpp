// Instruct-model behaviour through edgestudio-cli: a Hugging Face folder's generation_config.json
// (several EOS ids, sampling defaults) decides where `generate` stops and how it samples, unless
// flags say otherwise. The folder is stories260K written as HF files with such a config.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.h"
#include "engine/model/loader.h"
#include "hf_fixture.h"
#include "test_support.h"

using namespace edge::test;

namespace {

// stories260K's greedy continuation of "Once upon a time" (tests/app/test_cli.cpp).
const std::vector<int> kGreedy{432, 383, 286, 261, 376, 298, 315, 421};

std::string hf_folder_with(const std::string& generation_config) {
    const std::string gguf = shared("models/stories260K/stories260K.gguf");
    auto m = edge::load_model(gguf);
    EXPECT_TRUE(m.ok()) << m.message();
    if (!m.ok()) return "";
    const auto dir = temp_dir("instruct");
    EXPECT_EQ(write_hf_folder(*m, dir, {}), "");
    std::ofstream(dir / "generation_config.json") << generation_config;
    return dir.string();
}

}  // namespace

TEST(CliInstruct, GenerationStopsAtAnyEosOfGenerationConfigAndUsesItsSampling) {
    EDGE_REQUIRE_SHARED(shared("models/stories260K/stories260K.gguf"));
    // 298 is the sixth greedy token: listed as a second EOS id, generation ends before it. No
    // do_sample: greedy, as transformers decodes; no --temperature given, so that default holds.
    const std::string dir = hf_folder_with(R"({"bos_token_id": 1, "eos_token_id": [2, 298], "top_k": 40})");
    CliRun r = run_cli({"generate", dir, "--prompt", "Once upon a time", "--max-tokens", "30", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    EXPECT_EQ(j["ids"].get<std::vector<int>>(), std::vector<int>(kGreedy.begin(), kGreedy.begin() + 5));
    EXPECT_EQ(j["sampling"]["temperature"], 0.0);
    EXPECT_EQ(j["sampling"]["top_k"], 40);
    // A flag given wins over the model's default.
    CliRun k =
        run_cli({"generate", dir, "--prompt", "Once upon a time", "--max-tokens", "3", "--top-k", "5", "--json"});
    ASSERT_EQ(k.rc, 0) << k.err;
    EXPECT_EQ(k.json()["sampling"]["top_k"], 5);

    CliRun info = run_cli({"info", dir});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("stops at      any of 2, 298"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("sampling      temperature 0, top_p -, top_k 40"), std::string::npos) << info.out;
}

TEST(CliInstruct, ABadGenerationConfigNamesTheFileAndTheField) {
    EDGE_REQUIRE_SHARED(shared("models/stories260K/stories260K.gguf"));
    const std::string dir = hf_folder_with(R"({"eos_token_id": 2, "do_sample": true, "temperature": "warm"})");
    CliRun r = run_cli({"generate", dir, "--prompt", "Once", "--max-tokens", "3"});
    EXPECT_NE(r.rc, 0);
    EXPECT_NE(r.err.find(dir + "/generation_config.json: temperature must be a number"), std::string::npos) << r.err;
    const std::string ids = hf_folder_with(R"({"eos_token_id": [2, 100000]})");
    CliRun bad = run_cli({"info", ids});
    EXPECT_NE(bad.rc, 0);
    EXPECT_NE(bad.err.find("eos_token_id must be token ids below the vocabulary size 512"), std::string::npos)
        << bad.err;
}
