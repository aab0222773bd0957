// Instruct-model behaviour through edgestudio-cli: a Hugging Face folder's generation_config.json
// (several EOS ids, sampling defaults) decides where `generate` stops and how it samples, unless
// flags say otherwise. The folder is stories260K written as HF files with such a config.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "hf_fixture.h"
#include "test_support.h"

using namespace edge::test;

namespace {

// stories260K's greedy continuation of "Once upon a time" (tests/app/test_cli.cpp).
const std::vector<int> kGreedy{432, 383, 286, 261, 376, 298, 315, 421};

std::string hf_folder_with(const std::string& generation_config) {
    const std::string gguf = shared("models/stories260K/stories260K.gguf");
    auto m = edge::model::load_model(gguf);
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

namespace {

// stories260K as a GGUF whose tokenizer carries `chat_template` (tokenizer.chat_template).
std::string gguf_with_template(const std::string& chat_template) {
    auto m = edge::model::load_model(shared("models/stories260K/stories260K.gguf"));
    EXPECT_TRUE(m.ok()) << m.message();
    if (!m.ok()) return "";
    m->tokenizer.chat_template = chat_template;
    std::string out = (temp_dir("chat") / "chat.gguf").string();
    auto st = edge::model::write_gguf_model(*m, out);
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
}

}  // namespace

// `generate --chat` renders the model's own template over the conversation and encodes what it
// wrote: here a template that writes BOS and the messages' text, so the prompt is exactly the
// reference encoding of "Once upon a time" (BOS from the template's "<s>", not added again) and
// the greedy continuation is the reference one.
TEST(CliInstruct, ChatRendersTheModelsTemplateAndEncodesTheSpecialTokensItWrites) {
    EDGE_REQUIRE_SHARED(shared("models/stories260K/stories260K.gguf"));
    const std::string model = gguf_with_template(
        "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] | trim }} "
        "{% else %}{{ m['content'] }}{% endif %}{% endfor %}");
    CliRun r = run_cli({"generate", model, "--chat", "--prompt", "Once upon a time", "--max-tokens", "8",
                        "--temperature", "0", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    EXPECT_EQ(j["chat_prompt"], "<s>Once upon a time");
    EXPECT_EQ(j["prompt_ids"].get<std::vector<int>>(), (std::vector<int>{1, 403, 407, 261, 378}));
    EXPECT_EQ(j["ids"].get<std::vector<int>>(), kGreedy);
    // The reply alone is printed (not the rendered prompt).
    CliRun plain = run_cli(
        {"generate", model, "--chat", "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0"});
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_EQ(plain.out, j["text"].get<std::string>() + "\n");
    EXPECT_EQ(plain.out.rfind(", there was a little girl", 0), 0u) << plain.out;

    // A system message and a conversation file take the same path.
    const auto dir = temp_dir("chat-msgs");
    std::ofstream(dir / "conv.json")
        << R"([{"role": "system", "content": "  Once upon  "}, {"role": "user", "content": "a time"}])";
    CliRun conv = run_cli({"generate", model, "--messages", (dir / "conv.json").string(), "--max-tokens", "2",
                           "--temperature", "0", "--json"});
    ASSERT_EQ(conv.rc, 0) << conv.err;
    EXPECT_EQ(conv.json()["chat_prompt"], "<s>Once upon a time");
}

TEST(CliInstruct, ChatErrorsNameTheModelTheTemplateAndTheMessage) {
    EDGE_REQUIRE_SHARED(shared("models/stories260K/stories260K.gguf"));
    const std::string gguf = shared("models/stories260K/stories260K.gguf");
    CliRun none = run_cli({"generate", gguf, "--chat", "--prompt", "Hi", "--max-tokens", "2"});
    EXPECT_NE(none.rc, 0);
    EXPECT_NE(none.err.find(gguf + ": has no chat template"), std::string::npos) << none.err;

    // A template that refuses the conversation: its own words reach the user.
    const std::string strict = gguf_with_template(
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{{ messages[0]['content'] }}");
    CliRun raised = run_cli({"generate", strict, "--chat", "--system", "Be brief", "--prompt", "Hi"});
    EXPECT_NE(raised.rc, 0);
    EXPECT_NE(raised.err.find("System role not supported"), std::string::npos) << raised.err;
    EXPECT_NE(raised.err.find(strict), std::string::npos) << raised.err;

    const std::string broken = gguf_with_template("{% for m in messages %}{{ m['content'] }}");
    CliRun unclosed = run_cli({"generate", broken, "--chat", "--prompt", "Hi"});
    EXPECT_NE(unclosed.rc, 0);
    EXPECT_NE(unclosed.err.find(broken), std::string::npos) << unclosed.err;
    EXPECT_NE(unclosed.err.find("endfor"), std::string::npos) << unclosed.err;

    const auto dir = temp_dir("chat-bad");
    std::ofstream(dir / "conv.json") << R"([{"role": "user", "content": "Hi"}, {"role": "user"}])";
    CliRun bad = run_cli({"generate", strict, "--messages", (dir / "conv.json").string()});
    EXPECT_NE(bad.rc, 0);
    EXPECT_NE(bad.err.find((dir / "conv.json").string() + ": message 1 needs a text \"content\""), std::string::npos)
        << bad.err;
}
