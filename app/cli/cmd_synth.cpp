// `synth --shape NAME --out FILE [--type f16|f32|bf16|q4_k_m] [--seed N]`: a Llama-shaped GGUF with
// seeded random weights (engine/model/synth.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "app/cli/common.h"
#include "engine/model/synth.h"
#include "engine/telemetry/stopwatch.h"

using edge::model::synth_shapes;
using edge::model::SynthOptions;
using edge::model::write_synth_model;
using edge::telemetry::Stopwatch;

namespace edge::cli {

namespace {

struct SynthArgs {
    std::string shape, out, type = "f16";
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
    Stopwatch sw;
    Status st = [&] {
        ProgressBar bar;
        return write_synth_model(o, bar.progress());
    }();
    if (!st.ok()) return fail(st.error());
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(a.out, ec);
    if (a.json) {
        print_json({{"path", a.out},
                    {"shape", a.shape},
                    {"type", a.type},
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
    CLI::App* sub = app.add_subcommand("synth", "Write a Llama-shaped GGUF with seeded random weights");
    sub->add_option("--shape", a->shape, "Named shape (see --list)");
    sub->add_option("--out,-o", a->out, "Output .gguf file");
    sub->add_option("--type", a->type, "Matrix element type (q4_k_m: Q4_K, Q6_K for the head and some attn_v/ffn_down)")
        ->check(CLI::IsMember({"f16", "f32", "bf16", "q4_k_m"}));
    sub->add_option("--seed", a->seed, "Random seed");
    sub->add_flag("--tied", a->tied, "Share the output head with the token embedding");
    sub->add_flag("--list", a->list, "List the named shapes");
    sub->add_flag("--json", a->json, "Print JSON");
    sub->callback([a, &rc] { rc = run_synth(*a); });
}

}  // namespace edge::cli
