// Bad input through edgestudio-cli: a message on stderr naming the file and a non-zero exit code
// (1 for bad input, 2 for usage errors), never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "test_support.h"

using namespace edge::test;

namespace {
std::string stories(const std::string& f) { return shared("models/stories260K/" + f); }

void expect_failure(const CliRun& r, const std::string& names, int code = 1) {
    EXPECT_EQ(r.rc, code) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << "stderr does not name " << names << ": " << r.err;
    EXPECT_NE(r.err.find("edgestudio-cli:"), std::string::npos) << r.err;
}
}  // namespace

TEST(CliErrors, TruncatedModel) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    const auto dir = temp_dir("cli-trunc");
    std::ifstream in(stories("stories260K.gguf"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    for (size_t cut : {size_t(3), size_t(100), size_t(5000), bytes.size() / 2, bytes.size() - 1}) {
        const std::string path = (dir / ("cut" + std::to_string(cut) + ".gguf")).string();
        std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(cut));
        SCOPED_TRACE(path);
        expect_failure(run_cli({"info", path}), path);
        expect_failure(run_cli({"generate", path, "--prompt", "x", "--json"}), path);
    }
}

TEST(CliErrors, NonexistentFiles) {
    expect_failure(run_cli({"info", "/nonexistent/model.gguf"}), "/nonexistent/model.gguf");
    expect_failure(run_cli({"perplexity", "/nonexistent/m.gguf", "--text", "/nonexistent/t.txt", "--json"}),
                   "/nonexistent/t.txt");
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    expect_failure(run_cli({"perplexity", stories("stories260K.gguf"), "--text", "/nonexistent/t.txt"}),
                   "/nonexistent/t.txt");
    expect_failure(run_cli({"bench", "/nonexistent/b.gguf"}), "/nonexistent/b.gguf");
}

TEST(CliErrors, MissingTokenizer) {
    EDGE_REQUIRE_SHARED(stories("stories260K.bin"));
    // a llama2.c checkpoint alone in its folder: no tokenizer beside it
    const auto dir = temp_dir("cli-notok");
    const std::string bin = (dir / "stories260K.bin").string();
    std::filesystem::copy_file(stories("stories260K.bin"), bin);
    CliRun r = run_cli({"generate", bin, "--prompt", "Once upon a time", "--max-tokens", "5"});
    expect_failure(r, bin);
    EXPECT_NE(r.err.find("--tokenizer"), std::string::npos) << r.err;
    // a tokenizer path that does not exist
    expect_failure(run_cli({"generate", bin, "--tokenizer", "/nonexistent/tok.bin", "--prompt", "x"}),
                   "/nonexistent/tok.bin");
    expect_failure(run_cli({"tokenize", bin, "--text", "x"}), bin);
}

TEST(CliErrors, GarbageModel) {
    const auto dir = temp_dir("cli-garbage");
    const std::string path = (dir / "junk.gguf").string();
    std::ofstream(path, std::ios::binary) << "GGUF this is not a model at all";
    expect_failure(run_cli({"info", path}), path);
    const std::string empty = (dir / "empty.bin").string();
    std::ofstream(empty, std::ios::binary).flush();
    expect_failure(run_cli({"info", empty}), empty);
}

TEST(CliErrors, UsageErrors) {
    CliRun unknown = run_cli({"frobnicate", "x"});
    expect_failure(unknown, "frobnicate", 2);
    expect_failure(run_cli({}), "subcommand", 2);
    expect_failure(run_cli({"info"}), "model", 2);
    expect_failure(run_cli({"generate", "m.gguf", "--max-tokens", "lots"}), "max-tokens", 2);
    expect_failure(run_cli({"perplexity", "m.gguf", "--text", "t", "--protocol", "poem"}), "protocol", 2);
    expect_failure(run_cli({"synth", "--shape", "no-such-shape", "--out", "/tmp/edge-never.gguf"}), "no-such-shape");
    CliRun help = run_cli({"--help"});
    EXPECT_EQ(help.rc, 0);
    EXPECT_NE(help.out.find("perplexity"), std::string::npos);
}

// A command whose estimate exceeds --memory-limit stops before allocating, with the figures and
// what to do; commands that read no weights are not held back.
TEST(CliErrors, MemoryLimitStopsJobsThatWouldNotFit) {
    const std::string m = stories("stories260K.gguf");
    EDGE_REQUIRE_SHARED(m);
    const auto dir = temp_dir("cli-memlimit");
    CliRun gen = run_cli({"generate", m, "--prompt", "Once", "-n", "2", "--memory-limit", "100K"});
    expect_failure(gen, m);
    for (const char* part : {"needs about", "weights as stored", "100.0 KiB is available", "--memory-limit", "compile"})
        EXPECT_NE(gen.err.find(part), std::string::npos) << part << ": " << gen.err;

    const std::string plan = (dir / "int4.json").string();
    std::ofstream(plan) << R"({"version":1,"default":{"precision":"int4","method":"rtn","group_size":32}})";
    const std::string out = (dir / "m.edge").string();
    CliRun comp = run_cli({"--memory-limit", "20K", "compile", m, "--plan", plan, "--out", out});
    expect_failure(comp, "quantizing");
    EXPECT_NE(comp.err.find("converted layers"), std::string::npos) << comp.err;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));

    EXPECT_EQ(run_cli({"info", m, "--memory-limit", "1K"}).rc, 0);
    EXPECT_EQ(run_cli({"compile", m, "--plan", plan, "--out", out, "--memory-limit", "64M"}).rc, 0);
    expect_failure(run_cli({"info", m, "--memory-limit", "12Q"}), "unknown unit", 2);
}

// A GGUF holding a tensor type nothing here converts (ggml's IQ4_NL, as importance-matrix
// quantizations write them): `info` shows the file with the type; running it names the tensor
// and the type.
TEST(CliErrors, AnUnsupportedTensorTypeIsShownAndNamedWhenRun) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    auto m = edge::model::load_model(stories("stories260K.gguf"));
    ASSERT_TRUE(m.ok()) << m.message();
    const std::string path = (temp_dir("cli-iq") / "iq4nl.gguf").string();
    edge::model::gguf::Writer w;
    edge::model::gguf::set_llama_metadata(w, m->config, m->tokenizer, "iq4nl");
    const std::string iq = "blk.0.attn_q.weight";
    for (const edge::Tensor& t : m->tensors)
        ASSERT_TRUE(w.add_tensor(t.name, t.name == iq ? edge::DType::IQ4_NL : edge::DType::F32, t.shape).ok());
    ASSERT_TRUE(w.open(path).ok());
    for (const edge::Tensor& t : m->tensors) {
        if (t.name == iq) {
            const std::vector<uint8_t> blocks(size_t(t.numel() / 32 * 18), 0x11);
            ASSERT_TRUE(w.write_raw(blocks.data(), blocks.size()).ok());
        } else {
            ASSERT_TRUE(w.write_f32(t.f32(), t.numel()).ok());
        }
    }
    ASSERT_TRUE(w.finish().ok());

    CliRun info = run_cli({"info", path, "--json"});
    ASSERT_EQ(info.rc, 0) << info.err;
    std::string entry;
    const nlohmann::json shown = info.json();
    for (const auto& t : shown["tensors"])
        if (t["name"] == iq) entry = t.dump();
    EXPECT_NE(entry.find("\"source_type\":\"IQ4_NL\""), std::string::npos) << entry;
    CliRun tok = run_cli({"tokenize", path, "--text", "Once upon a time"});
    EXPECT_EQ(tok.rc, 0) << tok.err;
    CliRun gen = run_cli({"generate", path, "--prompt", "Once", "--max-tokens", "2"});
    expect_failure(gen, "tensor '" + iq + "' has type IQ4_NL");
    EXPECT_NE(gen.err.find(path), std::string::npos) << gen.err;
}

// `quantize` with ggml's rounding, then `export`: the GGUF's types, and what cannot be exported.
TEST(CliErrors, ExportWritesGgmlRoundedLayersAsQ8_0AndNamesWhatItCannotWrite) {
    EDGE_REQUIRE_SHARED(stories("stories260K.gguf"));
    const auto dir = temp_dir("cli-export");
    std::ofstream(dir / "q8.plan.json")
        << R"({"default": {"precision": "int8", "rounding": "ggml", "group_size": 32, "scales": "fp16"},
              "layers": {"blk.*.ffn_down": {"precision": "fp16"}}})";
    const std::string edgeq = (dir / "q8.edgeq").string(), gguf = (dir / "q8.gguf").string();
    CliRun q =
        run_cli({"quantize", stories("stories260K.gguf"), "--plan", (dir / "q8.plan.json").string(), "--out", edgeq});
    ASSERT_EQ(q.rc, 0) << q.err;
    CliRun e = run_cli({"export", edgeq, "--out", gguf, "--embedding", "q8_0", "--json"});
    ASSERT_EQ(e.rc, 0) << e.err;
    const nlohmann::json j = e.json();
    EXPECT_EQ(j["types"]["Q8_0"], 32);  // 6 matrices of each of 5 blocks (ffn_down aside), output, token_embd
    EXPECT_EQ(j["types"]["F16"], 5);
    EXPECT_EQ(j["tensors"]["token_embd.weight"], "Q8_0");
    CliRun g = run_cli({"generate", gguf, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0"});
    EXPECT_EQ(g.rc, 0) << g.err;
    EXPECT_EQ(g.out.rfind("Once upon a time, there was a little girl", 0), 0u) << g.out;

    CliRun usage = run_cli({"export", edgeq, "--out", gguf, "--embedding", "q5_k"});
    EXPECT_EQ(usage.rc, 2) << usage.err;
    CliRun nope = run_cli({"export", "/nonexistent/m.edgeq", "--out", gguf});
    expect_failure(nope, "/nonexistent/m.edgeq");
}
