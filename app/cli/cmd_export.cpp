// `export MODEL --out M.gguf`: what EdgeStudio made, as a GGUF file llama.cpp loads
// (engine/model/gguf_export.h says which tensor becomes which type).
#include <CLI/CLI.hpp>

#include <map>

#include "app/cli/common.h"
#include "engine/model/gguf_export.h"

namespace edge::cli {

namespace {

struct ExportArgs {
    std::string model, tokenizer, out;
    std::string float_type = "f16", embedding = "keep";
    bool json = false;
};

int run_export(const ExportArgs& a) {
    static const std::map<std::string, DType> kFloat{{"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}};
    static const std::map<std::string, DType> kEmbedding{
        {"f32", DType::F32}, {"f16", DType::F16}, {"q8_0", DType::Q8_0}, {"q4_0", DType::Q4_0}};
    model::GgufExportOptions o;
    o.float_type = kFloat.at(a.float_type);
    if (a.embedding != "keep") {
        o.embedding_given = true;
        o.embedding = kEmbedding.at(a.embedding);
    }
    auto loaded = load(a.model, a.tokenizer, false, Weights::Lazy);
    if (!loaded.ok()) return fail(loaded.error());
    ProgressBar bar(!a.json);
    auto r = model::export_gguf(*loaded->model, a.out, o, bar.progress());
    bar.finish();
    if (!r.ok()) return fail(r.error());
    std::map<std::string, int> by_type;
    for (const auto& [name, type] : r->tensors) ++by_type[type];
    if (a.json) {
        nlohmann::json tensors = nlohmann::json::object();
        for (const auto& [name, type] : r->tensors) tensors[name] = type;
        print_json({{"out", a.out},
                    {"architecture", r->architecture},
                    {"tensors", tensors},
                    {"types", by_type},
                    {"notes", r->notes}});
        return kOk;
    }
    std::string types;
    for (const auto& [type, n] : by_type) types += (types.empty() ? "" : ", ") + std::to_string(n) + " " + type;
    std::printf("%s: GGUF '%s', %zu tensors (%s)\n", a.out.c_str(), r->architecture.c_str(), r->tensors.size(),
                types.c_str());
    for (const std::string& n : r->notes) std::printf("  note: %s\n", n.c_str());
    return kOk;
}

}  // namespace

void add_export_command(CLI::App& app, int& rc) {
    auto e = std::make_shared<ExportArgs>();
    CLI::App* ex = app.add_subcommand("export", "Write a model (a quantized .edgeq too) as a GGUF file for llama.cpp");
    ex->add_option("model", e->model, "Model file or folder")->required();
    ex->add_option("--out", e->out, "The GGUF file to write")->required();
    ex->add_option("--float-type", e->float_type, "Type of unquantized matrices")
        ->check(CLI::IsMember({"f32", "f16", "bf16"}))
        ->capture_default_str();
    ex->add_option("--embedding", e->embedding,
                   "token_embd.weight: keep (as the other tensors), f32, f16, or q8_0 / q4_0 by ggml's rule")
        ->check(CLI::IsMember({"keep", "f32", "f16", "q8_0", "q4_0"}))
        ->capture_default_str();
    ex->add_option("--tokenizer", e->tokenizer, "Tokenizer file when the model has none");
    ex->add_flag("--json", e->json, "Print JSON");
    ex->callback([e, &rc] { rc = run_export(*e); });
}

}  // namespace edge::cli
