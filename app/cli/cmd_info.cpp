// `info MODEL`: architecture, configuration, parameter count, tensors (shape, source type,
// bytes), tokenizer and metadata.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/cli/common.h"
#include "engine/model/config_json.h"
#include "engine/model/weights.h"

using edge::model::llama_config_to_json;
using edge::model::LlamaConfig;
using edge::model::Model;
using edge::tokenizer::GenerationDefaults;
using edge::tokenizer::TokenizerSpec;

namespace edge::cli {

namespace {

struct InfoArgs {
    std::string model, tokenizer;
    bool json = false;
    bool tensors = true;
};

int run_info(const InfoArgs& a) {
    auto loaded = load(a.model, a.tokenizer, false, Weights::Lazy);
    if (!loaded.ok()) return fail(loaded.error());
    const Model& m = *loaded->model;
    const LlamaConfig& c = m.config;
    size_t source_bytes = 0;
    for (const auto& t : m.tensors) source_bytes += dtype_bytes(t.source_type, t.numel());
    // A tokenizer.json keeps its vocabulary in the JSON text: build it to count (a few tenths of a
    // second for a 128K vocabulary); the other kinds list their tokens in the spec.
    // info still describes a model whose tokenizer.json does not load, and says why.
    size_t vocab = m.tokenizer.tokens.size();
    std::string tokenizer_problem;
    if (m.tokenizer.model == "hf") {
        auto tok = tokenizer::make_tokenizer(m.tokenizer);
        if (tok.ok())
            vocab = size_t((*tok)->vocab_size());
        else
            tokenizer_problem = tok.message();
    }

    if (a.json) {
        nlohmann::json j;
        j["path"] = a.model;
        j["architecture"] = m.architecture;
        j["name"] = m.name;
        j["format"] = m.source_format;
        j["config"] = llama_config_to_json(c);
        j["parameters"] = m.parameter_count();
        j["bytes"] = m.weight_bytes();
        j["source_bytes"] = source_bytes;
        j["weights_read"] = model::weights_resident(m);  // false: info read the header only
        nlohmann::json ts = nlohmann::json::array();
        for (const auto& t : m.tensors)
            ts.push_back({{"name", t.name},
                          {"shape", t.shape},
                          {"type", dtype_name(t.type)},
                          {"source_type", dtype_name(t.source_type)},
                          {"bytes", t.nbytes},
                          {"source_bytes", dtype_bytes(t.source_type, t.numel())}});
        j["tensors"] = ts;
        const TokenizerSpec& tk = m.tokenizer;
        j["tokenizer"] = {{"model", tk.model},     {"vocab_size", vocab}, {"bos_id", tk.bos_id},  {"eos_id", tk.eos_id},
                          {"add_bos", tk.add_bos}, {"source", tk.source}, {"eos_ids", tk.eos_ids}};
        if (!tokenizer_problem.empty()) j["tokenizer"]["problem"] = tokenizer_problem;
        if (tk.generation.any())
            j["generation"] = {{"temperature", tk.generation.temperature},
                               {"top_p", tk.generation.top_p},
                               {"top_k", tk.generation.top_k},
                               {"source", tk.generation.source}};
        if (!tk.chat_template.empty())
            j["chat_template"] = {{"bytes", tk.chat_template.size()}, {"source", tk.chat_template_source}};
        nlohmann::json md = nlohmann::json::object();
        for (const auto& [k, v] : m.metadata) md[k] = v;
        j["metadata"] = md;
        if (m.architecture == "cnn") j["cnn"] = cnn_summary(m);
        print_json(j);
        return kOk;
    }

    std::printf("%s\n", a.model.c_str());
    std::printf("  architecture  %s (%s)\n", m.architecture.c_str(), m.source_format.c_str());
    if (!m.name.empty()) std::printf("  name          %s\n", m.name.c_str());
    std::printf("  parameters    %s\n", group_digits(m.parameter_count()).c_str());
    if (m.weight_bytes() == 0 && m.weights)
        std::printf("  weights       %s in the file (not read: info reads the header only)\n",
                    human_bytes(double(source_bytes)).c_str());
    else
        std::printf("  weights       %s in the file, %s in memory\n", human_bytes(double(source_bytes)).c_str(),
                    human_bytes(double(m.weight_bytes())).c_str());
    if (m.architecture == "cnn")
        print_cnn_summary(m);
    else
        std::printf("  dim %d, ffn %d, layers %d, heads %d, kv heads %d, head dim %d, rope dim %d\n", c.dim,
                    c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.rope_dim);
    if (m.architecture != "cnn")
        std::printf("  vocab %d, context %d, rope theta %g, norm eps %g, tied embeddings %s\n", c.vocab_size,
                    c.context_length, double(c.rope_theta), double(c.norm_eps), c.tied_embeddings ? "yes" : "no");
    if (m.architecture != "cnn" && !c.rope_scaling.empty()) std::printf("  rope scaling  %s\n", c.rope_scaling.c_str());
    if (m.architecture != "cnn" && c.attn_qkv_bias) std::printf("  biases        Q, K and V projections (Qwen2)\n");
    if (m.tokenizer.empty())
        std::printf("  tokenizer     none\n");
    else
        std::printf("  tokenizer     %s, %zu tokens, bos %d, eos %d\n", m.tokenizer.model.c_str(), vocab,
                    m.tokenizer.bos_id, m.tokenizer.eos_id);
    if (!tokenizer_problem.empty()) std::printf("  tokenizer     does not load: %s\n", tokenizer_problem.c_str());
    if (m.tokenizer.eos_ids.size() > 1) {
        std::string ids;
        for (int32_t e : m.tokenizer.eos_ids) ids += (ids.empty() ? "" : ", ") + std::to_string(e);
        std::printf("  stops at      any of %s\n", ids.c_str());
    }
    if (const TokenizerSpec& tk = m.tokenizer; !tk.chat_template.empty())
        std::printf("  chat template %zu bytes (%s)\n", tk.chat_template.size(), tk.chat_template_source.c_str());
    if (const GenerationDefaults& g = m.tokenizer.generation; g.any()) {
        auto shown = [](double v) {
            char b[32];
            std::snprintf(b, sizeof b, "%g", v);
            return v < 0 ? std::string("-") : std::string(b);
        };
        std::printf("  sampling      temperature %s, top_p %s, top_k %s (%s)\n", shown(g.temperature).c_str(),
                    shown(g.top_p).c_str(), shown(g.top_k).c_str(), g.source.c_str());
    }
    if (a.tensors) {
        std::printf("\n  %-28s %-14s %-6s %12s\n", "tensor", "shape", "source", "bytes");
        for (const auto& t : m.tensors)
            std::printf("  %-28s %-14s %-6s %12s\n", t.name.c_str(), t.shape_str().c_str(), dtype_name(t.source_type),
                        group_digits(int64_t(dtype_bytes(t.source_type, t.numel()))).c_str());
    }
    if (!m.metadata.empty()) {
        std::printf("\n  metadata\n");
        for (const auto& [k, v] : m.metadata) {
            const std::string shown = v.size() > 100 ? v.substr(0, 97) + "..." : v;
            std::printf("  %-40s %s\n", k.c_str(), shown.c_str());
        }
    }
    return kOk;
}

}  // namespace

void add_info_command(CLI::App& app, int& rc) {
    auto a = std::make_shared<InfoArgs>();
    CLI::App* sub = app.add_subcommand("info", "Architecture, configuration, tensors and metadata of a model");
    sub->add_option("model", a->model, "Model file or folder (.gguf, .bin, HF folder, ...)")->required();
    sub->add_option("--tokenizer", a->tokenizer, "Tokenizer file for formats without one (llama2.c)");
    sub->add_flag("--json", a->json, "Print JSON");
    sub->add_flag("!--no-tensors", a->tensors, "Leave out the tensor table");
    sub->callback([a, &rc] { rc = run_info(*a); });
}

}  // namespace edge::cli
