// edgestudio-cli on real models: the figures of ../shared/ASSETS.md through the command line.
#include <gtest/gtest.h>
#include <cstdlib>

#include <cmath>
#include <fstream>

#include "cli_runner.h"
#include "test_support.h"

using namespace edge::test;

namespace {
const std::vector<int> kPromptIds{1, 403, 407, 261, 378};
const std::vector<int> kGreedy30{432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267,
                                 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432};
const char* kGreedyText = ", there was a little girl named Lily. She loved to play outside in the park. One day,";

std::string stories(const std::string& f) { return shared("models/stories260K/" + f); }
}  // namespace

TEST(Cli, InfoDescribesStories260K) {
    const std::string gguf = stories("stories260K.gguf");
    EDGE_REQUIRE_SHARED(gguf);
    CliRun r = run_cli({"info", gguf, "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j["architecture"], "llama");
    EXPECT_EQ(j["config"]["dim"], 64);
    EXPECT_EQ(j["config"]["hidden_dim"], 172);
    EXPECT_EQ(j["config"]["n_layers"], 5);
    EXPECT_EQ(j["config"]["n_heads"], 8);
    EXPECT_EQ(j["config"]["n_kv_heads"], 4);
    EXPECT_EQ(j["config"]["vocab_size"], 512);
    EXPECT_EQ(j["config"]["rope_dim"], 8);
    EXPECT_EQ(j["tensors"].size(), 48u);
    EXPECT_GT(j["parameters"].get<int64_t>(), 260000);
    bool found = false;
    for (const auto& t : j["tensors"])
        if (t["name"] == "blk.0.ffn_down.weight") {
            found = true;
            EXPECT_EQ(t["shape"], nlohmann::json::array({64, 172}));
            EXPECT_EQ(t["source_type"], "F32");
            EXPECT_EQ(t["source_bytes"], 64 * 172 * 4);
        }
    EXPECT_TRUE(found);
    EXPECT_TRUE(j["metadata"].contains("general.architecture"));
    EXPECT_EQ(j["weights_read"], false);  // the header and tensor table only
    EXPECT_EQ(j["bytes"], 0);

    CliRun text = run_cli({"info", gguf});
    EXPECT_EQ(text.rc, 0);
    EXPECT_NE(text.out.find("blk.4.attn_q.weight"), std::string::npos);
}

TEST(Cli, TokenizeMatchesReferenceIds) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    CliRun r = run_cli({"tokenize", stories("stories260K.gguf"), "--text", "Once upon a time", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.json()["ids"].get<std::vector<int>>(), kPromptIds);
    CliRun plain = run_cli({"tokenize", stories("stories260K.gguf"), "--text", "Once upon a time"});
    EXPECT_EQ(plain.out, "1 403 407 261 378\n");
}

TEST(Cli, GreedyGenerationGguf) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    CliRun r = run_cli({"generate", stories("stories260K.gguf"), "--prompt", "Once upon a time", "--max-tokens", "30",
                        "--temperature", "0", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    EXPECT_EQ(j["prompt_ids"].get<std::vector<int>>(), kPromptIds);
    EXPECT_EQ(j["ids"].get<std::vector<int>>(), kGreedy30);
    EXPECT_EQ(j["text"], kGreedyText);

    CliRun streamed = run_cli({"generate", stories("stories260K.gguf"), "--prompt", "Once upon a time", "--max-tokens",
                               "30", "--temperature", "0"});
    ASSERT_EQ(streamed.rc, 0) << streamed.err;
    EXPECT_EQ(streamed.out, std::string("Once upon a time") + kGreedyText + "\n");
}

// A compiled engine generates through its compiled program on the backend (the CPU here, or
// CUDA when a device answers) with the same greedy text as the GGUF it came from; the JSON
// names what ran it. --numerics llamacpp is for GGUF files only.
TEST(Cli, GreedyGenerationOfACompiledEngineRunsItsProgram) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    const auto out = (temp_dir("gen-edge") / "s.edge").string();
    CliRun c = run_cli({"compile", stories("stories260K.gguf"), "--out", out});
    ASSERT_EQ(c.rc, 0) << c.err;
    CliRun r = run_cli({"generate", out, "--prompt", "Once upon a time", "--max-tokens", "30", "--temperature", "0",
                        "--backend", "cpu", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    EXPECT_EQ(j["ids"].get<std::vector<int>>(), kGreedy30);
    EXPECT_EQ(j["executor"].get<std::string>().rfind("cpu (compiled program, ", 0), 0u) << j["executor"];
    CliRun g = run_cli({"generate", stories("stories260K.gguf"), "--prompt", "Once upon a time", "--max-tokens", "4",
                        "--temperature", "0", "--json"});
    ASSERT_EQ(g.rc, 0) << g.err;
    EXPECT_EQ(g.json()["executor"].get<std::string>().rfind("cpu (FP32 arithmetic, ", 0), 0u) << g.json()["executor"];
    CliRun bad = run_cli({"generate", out, "--prompt", "x", "--numerics", "llamacpp"});
    EXPECT_NE(bad.rc, 0);
    EXPECT_NE(bad.err.find(out + ": --numerics llamacpp runs GGUF files as they store them, not compiled engines"),
              std::string::npos)
        << bad.err;
}

TEST(Cli, GreedyGenerationLlama2cWithTokenizer) {
    EDGE_REQUIRE_SHARED(stories("stories260K.bin"));
    EDGE_REQUIRE_SHARED(stories("tok512.bin"));
    CliRun r = run_cli({"generate", stories("stories260K.bin"), "--tokenizer", stories("tok512.bin"), "--prompt",
                        "Once upon a time", "--max-tokens", "30", "--temperature", "0", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    EXPECT_EQ(j["prompt_ids"].get<std::vector<int>>(), kPromptIds);
    EXPECT_EQ(j["ids"].get<std::vector<int>>(), kGreedy30);
    EXPECT_EQ(j["text"], kGreedyText);
}

TEST(Cli, SampledGenerationIsSeeded) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    auto gen = [&](const char* seed) {
        return run_cli({"generate", stories("stories260K.gguf"), "--prompt", "Once upon a time", "--max-tokens", "20",
                        "--temperature", "1.0", "--top-p", "0.9", "--top-k", "40", "--seed", seed, "--json"});
    };
    CliRun a = gen("7"), b = gen("7");
    ASSERT_EQ(a.rc, 0) << a.err;
    EXPECT_EQ(a.json()["ids"], b.json()["ids"]);
    EXPECT_LE(a.json()["ids"].size(), 20u);
}

TEST(Cli, PerplexityStoryProtocol) {
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    EDGE_REQUIRE_SHARED(text);
    CliRun r = run_cli({"perplexity", stories("stories260K.gguf"), "--text", text, "--protocol", "story", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    EXPECT_NEAR(j["perplexity"].get<double>(), 3.5482, 3.5482 * 1e-3);
    EXPECT_EQ(j["tokens"].get<int64_t>(), 1804);
    EXPECT_EQ(j["parts"].get<int>(), 5);
}

TEST(Cli, BenchReportsThroughputAndMemory) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    CliRun r = run_cli(
        {"bench", stories("stories260K.gguf"), "--runs", "1", "--prompt-tokens", "16", "--gen-tokens", "8", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = r.json();
    ASSERT_EQ(j["results"].size(), 2u);
    EXPECT_EQ(j["results"][0]["threads"], 1);
    EXPECT_EQ(j["results"][1]["threads"], 2);
    for (const auto& row : j["results"]) {
        EXPECT_GT(row["prefill_tokens_per_second"].get<double>(), 0.0);
        EXPECT_GT(row["decode_tokens_per_second"].get<double>(), 0.0);
    }
    EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
    EXPECT_FALSE(j["cpu"].get<std::string>().empty());
    CliRun table =
        run_cli({"bench", stories("stories260K.gguf"), "--runs", "1", "--prompt-tokens", "8", "--gen-tokens", "4"});
    EXPECT_EQ(table.rc, 0);
    EXPECT_NE(table.out.find("| threads |"), std::string::npos);
}

// EDGE_KERNELS caps the kernel family for any command (how the AVX2 benchmarks run the AVX2
// kernels on an AVX-512 processor); a value that names no family is reported and ignored.
TEST(Cli, EdgeKernelsCapsTheKernelFamily) {
    const std::vector<std::string> args{
        "bench", stories("stories260K.gguf"), "--runs", "1", "--prompt-tokens", "8", "--gen-tokens", "4"};
    const auto executor_line = [](const std::string& out) {
        const size_t at = out.find("executor: ");
        return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
    };
    ::unsetenv("EDGE_KERNELS");
    const CliRun plain = run_cli(args);
    ::setenv("EDGE_KERNELS", "portable", 1);
    const CliRun capped = run_cli(args);
    ::setenv("EDGE_KERNELS", "bogus", 1);
    const CliRun bad = run_cli(args);
    ::unsetenv("EDGE_KERNELS");
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_EQ(capped.rc, 0) << capped.err;
    EXPECT_NE(executor_line(capped.out).find("portable kernels"), std::string::npos) << capped.out;
    EXPECT_EQ(bad.rc, 0) << bad.err;
    EXPECT_NE(bad.err.find("EDGE_KERNELS=bogus: not a kernel family here (auto, portable"), std::string::npos)
        << bad.err;
    EXPECT_EQ(executor_line(bad.out), executor_line(plain.out));
    EXPECT_FALSE(executor_line(plain.out).empty()) << plain.out;
}

TEST(Cli, SynthWritesALoadableModel) {
    const auto out = (temp_dir("synth") / "tiny.gguf").string();
    CliRun r = run_cli({"synth", "--shape", "test-tiny", "--out", out, "--type", "f16", "--seed", "5"});
    ASSERT_EQ(r.rc, 0) << r.err;
    CliRun info = run_cli({"info", out, "--json"});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_EQ(info.json()["tensors"][1]["source_type"].is_string(), true);
    CliRun gen = run_cli({"generate", out, "--prompt", "hello", "--max-tokens", "5", "--temperature", "0", "--json"});
    EXPECT_EQ(gen.rc, 0) << gen.err;
    CliRun list = run_cli({"synth", "--list"});
    EXPECT_EQ(list.rc, 0);
    EXPECT_NE(list.out.find("tinyllama-1.1b"), std::string::npos);
}

// The same seed as a GGUF file and as a Hugging Face folder (byte-level BPE vocabulary, BF16,
// sharded): the folder opens, tokenizes and generates what the file does, greedy.
TEST(Cli, SynthHfFolderGeneratesWhatTheGgufOfTheSameSeedGenerates) {
    const auto dir = temp_dir("synth_hf_cli");
    const std::string folder = (dir / "tiny-hf").string(), file = (dir / "tiny.gguf").string();
    const std::vector<std::string> common = {"--shape", "test-tiny", "--type", "bf16",  "--tokenizer",
                                             "bpe",     "--seed",    "9",      "--json"};
    std::vector<std::string> a = {"synth", "--out", folder, "--format", "hf", "--shard-size", "40K"};
    a.insert(a.end(), common.begin(), common.end());
    CliRun r = run_cli(a);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.json()["format"], "hf");
    EXPECT_GT(r.json()["bytes"].get<int64_t>(), 100000);
    EXPECT_TRUE(std::filesystem::exists(dir / "tiny-hf" / "model-00001-of-00003.safetensors"));
    std::vector<std::string> b = {"synth", "--out", file};
    b.insert(b.end(), common.begin(), common.end());
    ASSERT_EQ(run_cli(b).rc, 0);

    CliRun info = run_cli({"info", folder, "--json"});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_EQ(info.json()["tensors"][1]["source_type"], "BF16");
    EXPECT_EQ(info.json()["tokenizer"]["vocab_size"], 384);  // counted from tokenizer.json
    std::string texts[2];
    for (int k = 0; k < 2; ++k) {
        CliRun tok = run_cli({"tokenize", k ? file : folder, "--text", "Once upon a time, they said hello"});
        ASSERT_EQ(tok.rc, 0) << tok.err;
        CliRun gen = run_cli({"generate", k ? file : folder, "--prompt", "Once upon a time", "--max-tokens", "12",
                              "--temperature", "0", "--json"});
        ASSERT_EQ(gen.rc, 0) << gen.err;
        texts[k] = tok.out + gen.json()["text"].get<std::string>();
    }
    EXPECT_EQ(texts[0], texts[1]);

    CliRun bad = run_cli(
        {"synth", "--shape", "test-tiny", "--out", (dir / "kq").string(), "--format", "hf", "--type", "q4_k_m"});
    EXPECT_NE(bad.rc, 0);
    EXPECT_NE(bad.err.find("Hugging Face folder"), std::string::npos) << bad.err;
    CliRun shard = run_cli(
        {"synth", "--shape", "test-tiny", "--out", (dir / "s").string(), "--format", "hf", "--shard-size", "lots"});
    EXPECT_NE(shard.rc, 0);
    EXPECT_NE(shard.err.find("--shard-size"), std::string::npos) << shard.err;

    // A tokenizer.json that does not load: info still describes the model and says why.
    std::ofstream(dir / "tiny-hf" / "tokenizer.json", std::ios::trunc) << R"({"model": {"type": "Unigram"}})";
    CliRun broken = run_cli({"info", folder, "--json"});
    ASSERT_EQ(broken.rc, 0) << broken.err;
    EXPECT_NE(broken.json()["tokenizer"]["problem"].get<std::string>().find("tokenizer.json"), std::string::npos)
        << broken.out;
}

#ifdef EDGE_DEMO_DIR
// The demo model (generated at build time, resources/) has learned its grammar: perplexity on
// held-back text from the same grammar is far below a uniform guess over the vocabulary.
TEST(Cli, DemoModelLearnedItsGrammar) {
    const std::string dir = EDGE_DEMO_DIR;
    const std::string model = dir + "/demo.gguf", heldout = dir + "/demo-heldout.txt";
    ASSERT_TRUE(std::filesystem::exists(model)) << "missing " << model << " (built by the edge_demo_model target)";
    ASSERT_TRUE(std::filesystem::exists(heldout)) << "missing " << heldout;
    CliRun info = run_cli({"info", model, "--json"});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_EQ(info.json()["name"], "EdgeStudio demo");
    const int vocab = info.json()["config"]["vocab_size"].get<int>();
    EXPECT_GE(vocab, 384);
    CliRun r = run_cli({"perplexity", model, "--text", heldout, "--protocol", "story", "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const double ppl = r.json()["perplexity"].get<double>();
    EXPECT_GT(r.json()["tokens"].get<int64_t>(), 5000);
    EXPECT_LE(ppl, vocab / 3.0) << "no better than a third of a uniform guess";
    EXPECT_LE(ppl, 12.0) << "the demo model should know its grammar well";
    RecordProperty("demo_heldout_perplexity", std::to_string(ppl));
    CliRun gen = run_cli(
        {"generate", model, "--prompt", "Once upon a time", "--max-tokens", "40", "--temperature", "0", "--json"});
    ASSERT_EQ(gen.rc, 0) << gen.err;
    EXPECT_FALSE(gen.json()["text"].get<std::string>().empty());
}
#endif
