#include "config_json.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model {

nlohmann::json llama_config_to_json(const LlamaConfig& c) {
    nlohmann::json j = {{"dim", c.dim},
                        {"hidden_dim", c.hidden_dim},
                        {"n_layers", c.n_layers},
                        {"n_heads", c.n_heads},
                        {"n_kv_heads", c.n_kv_heads},
                        {"head_dim", c.head_dim},
                        {"vocab_size", c.vocab_size},
                        {"context_length", c.context_length},
                        {"rope_dim", c.rope_dim},
                        {"rope_theta", c.rope_theta},
                        {"norm_eps", c.norm_eps},
                        {"tied_embeddings", c.tied_embeddings}};
    // Only when scaled: files of unscaled models read the same as before the keys existed.
    if (!c.rope_freq_factors.empty()) {
        j["rope_freq_factors"] = c.rope_freq_factors;
        j["rope_scaling"] = c.rope_scaling;
    }
    if (!c.rope_long_freq_factors.empty()) {
        j["rope_long_freq_factors"] = c.rope_long_freq_factors;
        j["rope_original_context"] = c.rope_original_context;
    }
    if (c.rope_attn_factor != 1.0f) j["rope_attn_factor"] = c.rope_attn_factor;
    if (c.attn_qkv_bias) j["attn_qkv_bias"] = true;  // likewise only when set
    return j;
}

LlamaConfig llama_config_from_json(const nlohmann::json& j) {
    LlamaConfig c;
    c.dim = j.at("dim");
    c.hidden_dim = j.at("hidden_dim");
    c.n_layers = j.at("n_layers");
    c.n_heads = j.at("n_heads");
    c.n_kv_heads = j.at("n_kv_heads");
    c.head_dim = j.at("head_dim");
    c.vocab_size = j.at("vocab_size");
    c.context_length = j.at("context_length");
    c.rope_dim = j.at("rope_dim");
    c.rope_theta = j.at("rope_theta");
    c.norm_eps = j.at("norm_eps");
    c.tied_embeddings = j.at("tied_embeddings");
    if (auto f = j.find("rope_freq_factors"); f != j.end()) {
        c.rope_freq_factors = f->get<std::vector<float>>();
        c.rope_scaling = j.value("rope_scaling", std::string());
    }
    if (auto f = j.find("rope_long_freq_factors"); f != j.end()) {
        c.rope_long_freq_factors = f->get<std::vector<float>>();
        c.rope_original_context = j.value("rope_original_context", 0);
    }
    c.rope_attn_factor = j.value("rope_attn_factor", 1.0f);
    c.attn_qkv_bias = j.value("attn_qkv_bias", false);
    return c;
}

nlohmann::json tokenizer_header_to_json(const TokenizerSpec& t) {
    return {{"model", t.model},
            {"pre", t.pre},
            {"scores", t.scores},
            {"token_types", t.token_types},
            {"n_tokens", t.tokens.size()},
            {"n_merges", t.merges.size()},
            {"bos_id", t.bos_id},
            {"eos_id", t.eos_id},
            {"unk_id", t.unk_id},
            {"pad_id", t.pad_id},
            {"eos_ids", t.eos_ids},
            {"chat_template", t.chat_template},
            {"chat_template_source", t.chat_template_source},
            {"generation",
             {{"temperature", t.generation.temperature},
              {"top_p", t.generation.top_p},
              {"top_k", t.generation.top_k},
              {"source", t.generation.source}}},
            {"add_bos", t.add_bos},
            {"add_space_prefix", t.add_space_prefix},
            {"hf_json", t.hf_json}};
}

void tokenizer_header_from_json(const nlohmann::json& j, TokenizerSpec& t) {
    t.model = j.at("model");
    t.pre = j.at("pre");
    t.scores = j.at("scores").get<std::vector<float>>();
    t.token_types = j.at("token_types").get<std::vector<int32_t>>();
    t.bos_id = j.at("bos_id");
    t.eos_id = j.at("eos_id");
    t.unk_id = j.at("unk_id");
    t.pad_id = j.at("pad_id");
    t.add_bos = j.at("add_bos");
    t.add_space_prefix = j.at("add_space_prefix");
    // Files written before these fields existed have none: one EOS id, no sampling defaults.
    t.eos_ids = j.value("eos_ids", std::vector<int32_t>());
    t.chat_template = j.value("chat_template", std::string());
    t.chat_template_source = j.value("chat_template_source", std::string());
    if (auto g = j.find("generation"); g != j.end() && g->is_object()) {
        t.generation.temperature = g->value("temperature", -1.0f);
        t.generation.top_p = g->value("top_p", -1.0f);
        t.generation.top_k = g->value("top_k", -1);
        t.generation.source = g->value("source", std::string());
    }
    t.hf_json = j.at("hf_json");
}

nlohmann::json tensor_entry_to_json(const Tensor& x, uint64_t offset) {
    nlohmann::json e{{"name", x.name},   {"type", dtype_name(x.type)}, {"source_type", dtype_name(x.source_type)},
                     {"shape", x.shape}, {"offset", offset},           {"nbytes", x.nbytes}};
    if (x.quant) e["quant"] = quant_info_to_json(*x.quant);
    return e;
}

nlohmann::json quant_info_to_json(const QuantInfo& q) {
    return {{"bits", q.bits},
            {"symmetric", q.symmetric},
            {"grouping", int(q.grouping)},
            {"group_size", q.group_size},
            {"method", int(q.method)},
            {"scales", q.scale_type == QScale::F16 ? "f16" : "f32"}};
}

const char* quant_info_from_json(const nlohmann::json& j, QuantInfo& q) {
    q.bits = j.at("bits");
    q.symmetric = j.at("symmetric");
    const int grouping = j.at("grouping"), method = j.at("method");
    if (grouping < 0 || grouping > 2 || method < 0 || method > 2) return "unknown grouping or method";
    q.grouping = QGrouping(grouping);
    q.method = QMethod(method);
    q.group_size = j.at("group_size");
    const std::string scales = j.value("scales", std::string("f32"));
    if (scales != "f32" && scales != "f16") return "unknown scale storage (expected f32 or f16)";
    q.scale_type = scales == "f16" ? QScale::F16 : QScale::F32;
    return nullptr;
}

}  // namespace edge::model
