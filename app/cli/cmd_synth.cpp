// `synth --shape NAME --out PATH [--format gguf|hf] [--type f16|f32|bf16|q4_k_m]
// [--tokenizer sentencepiece|bpe] [--shard-size 5G] [--seed N]`: a Llama-shaped GGUF file or
// Hugging Face folder with seeded random weights (engine/model/synth.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "app/cli/common.h"
#include "engine/core/memory_budget.h"
#include "engine/model/synth.h"
#include "engine/telemetry/stopwatch.h"

using edge::model::synth_shapes;
using edge::model::SynthFormat;
using edge::model::SynthOptions;
using edge::model::SynthTokenizer;
using edge::model::write_synth_model;
using edge::telemetry::Stopwatch;

namespace edge::cli {

namespace {

struct SynthArgs {
    std::string shape, out, type = "f16", format = "gguf", tokenizer = "sentencepiece", shard_size = "5G";
    uint64_t seed = 1234;
    bool tied = false;
    bool list = false;
    bool json = false;
};

int run_synth(const SynthArgs& a) {
    if (a.list) {
        if (a.json) {
            nlohmann::json j = nlohmann::json::array();
            for (const auto& s : synth_shapes()) j.push_back({{"name", s.name}, {"description", s.description}});
            print_json(j);
        } else {
            for (const auto& s : synth_shapes()) std::printf("%-16s %s\n", s.name.c_str(), s.description.c_str());
        }
        return kOk;
    }
    if (a.shape.empty() || a.out.empty()) {
        std::fprintf(stderr, "edgestudio-cli: synth needs --shape and --out (or --list)\n");
        return kUsage;
    }
    SynthOptions o;
    o.shape = a.shape;
    o.path = a.out;
    o.type = a.type == "f32" ? DType::F32 : a.type == "bf16" ? DType::BF16 : DType::F16;
    o.q4_k_m = a.type == "q4_k_m";
    o.seed = a.seed;
    o.tied_embeddings = a.tied;
    o.format = a.format == "hf" ? SynthFormat::HfFolder : SynthFormat::Gguf;
    o.tokenizer = a.tokenizer == "bpe" ? SynthTokenizer::ByteLevelBpe : SynthTokenizer::SentencePiece;
    auto shard = parse_memory_size(a.shard_size);
    if (!shard.ok()) return fail(err("--shard-size: ", shard.message()));
    o.max_shard_bytes = *shard;
    Stopwatch sw;
    Status st = [&] {
        ProgressBar bar;
        return write_synth_model(o, bar.progress());
    }();
    if (!st.ok()) return fail(st.error());
    std::error_code ec;
    uint64_t bytes = 0;
    if (std::filesystem::is_directory(a.out, ec)) {
        for (const auto& e : std::filesystem::directory_iterator(a.out, ec))
            if (e.is_regular_file(ec)) bytes += e.file_size(ec);
    } else {
        bytes = std::filesystem::file_size(a.out, ec);
    }
    if (a.json) {
        print_json({{"path", a.out},
                    {"shape", a.shape},
                    {"format", a.format},
                    {"type", a.type},
                    {"tokenizer", a.tokenizer},
                    {"seed", a.seed},
                    {"bytes", ec ? 0 : bytes},
                    {"seconds", sw.seconds()}});
    } else {
        std::printf("wrote %s (%s, %s) in %.1f s\n", a.out.c_str(), a.shape.c_str(),
                    human_bytes(ec ? 0.0 : double(bytes)).c_str(), sw.seconds());
    }
    return kOk;
}

}  // namespace

void add_synth_command(CLI::App& app, int& rc) {
    auto a = std::make_shared<SynthArgs>();
    CLI::App* sub =
        app.add_subcommand("synth", "Write a Llama-shaped GGUF or Hugging Face folder with seeded random weights");
    sub->add_option("--shape", a->shape, "Named shape (see --list)");
    sub->add_option("--out,-o", a->out, "Output .gguf file, or the folder for --format hf");
    sub->add_option("--format", a->format, "gguf: one file; hf: safetensors shards + config.json + tokenizer.json")
        ->check(CLI::IsMember({"gguf", "hf"}));
    sub->add_option("--tokenizer", a->tokenizer,
                    "sentencepiece (<s>, byte fallback) or bpe (byte-level, Llama 3's special tokens)")
        ->check(CLI::IsMember({"sentencepiece", "bpe"}));
    sub->add_option("--shard-size", a->shard_size, "--format hf: largest safetensors shard (e.g. 5G, 500M)");
    sub->add_option("--type", a->type, "Matrix element type (q4_k_m: Q4_K, Q6_K for the head and some attn_v/ffn_down)")
        ->check(CLI::IsMember({"f16", "f32", "bf16", "q4_k_m"}));
    sub->add_option("--seed", a->seed, "Random seed");
    sub->add_flag("--tied", a->tied, "Share the output head with the token embedding");
    sub->add_flag("--list", a->list, "List the named shapes");
    sub->add_flag("--json", a->json, "Print JSON");
    sub->callback([a, &rc] { rc = run_synth(*a); });
}

}  // namespace edge::cli
