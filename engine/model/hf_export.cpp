#include "engine/model/hf_export.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/model/rope.h"

namespace edge::model {

namespace {

using ojson = nlohmann::ordered_json;

const char* torch_dtype(DType t) {
    switch (t) {
        case DType::F16: return "float16";
        case DType::BF16: return "bfloat16";
        default: return "float32";
    }
}

ojson token_id_or_list(const tokenizer::TokenizerSpec& tok) {
    if (tok.eos_ids.size() > 1) return tok.eos_ids;
    if (tok.eos_id >= 0) return tok.eos_id;
    return nullptr;
}

ojson token_text(const tokenizer::TokenizerSpec& tok, int32_t id) {
    if (id < 0 || size_t(id) >= tok.tokens.size()) return nullptr;
    return tok.tokens[size_t(id)];
}

}  // namespace

std::string hf_config_json(const LlamaConfig& c, const tokenizer::TokenizerSpec& tok, DType dtype) {
    const bool qwen2 = c.attn_qkv_bias;
    ojson j = {
        {"architectures", {qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
        {"model_type", qwen2 ? "qwen2" : "llama"},
        {"hidden_size", c.dim},
        {"intermediate_size", c.hidden_dim},
        {"num_hidden_layers", c.n_layers},
        {"num_attention_heads", c.n_heads},
        {"num_key_value_heads", c.n_kv_heads},
        {"head_dim", c.head_dim},
        {"max_position_embeddings", c.context_length},
        {"rope_theta", c.rope_theta},
        {"rms_norm_eps", c.norm_eps},
        {"hidden_act", "silu"},
        {"tie_word_embeddings", c.tied_embeddings},
        {"vocab_size", c.vocab_size},
        {"bos_token_id", tok.bos_id >= 0 ? ojson(tok.bos_id) : ojson(nullptr)},
        {"eos_token_id", token_id_or_list(tok)},
        {"rope_scaling", nullptr},
        {"torch_dtype", torch_dtype(dtype)},
    };
    return j.dump(2) + "\n";
}

std::string hf_generation_config_json(const tokenizer::TokenizerSpec& tok) {
    ojson j = {{"bos_token_id", tok.bos_id >= 0 ? ojson(tok.bos_id) : ojson(nullptr)},
               {"eos_token_id", token_id_or_list(tok)}};
    return j.dump(2) + "\n";
}

std::string hf_tokenizer_config_json(const tokenizer::TokenizerSpec& tok) {
    ojson j = {{"bos_token", token_text(tok, tok.bos_id)},
               {"eos_token", token_text(tok, tok.eos_id)},
               {"add_bos_token", tok.add_bos},
               {"clean_up_tokenization_spaces", true},
               {"model_max_length", 131072},
               {"tokenizer_class", "PreTrainedTokenizerFast"}};
    if (!tok.chat_template.empty()) j["chat_template"] = tok.chat_template;
    return j.dump(2) + "\n";
}

std::string hf_tensor_name(const std::string& ir) {
    if (ir == "token_embd.weight") return "model.embed_tokens.weight";
    if (ir == "output_norm.weight") return "model.norm.weight";
    if (ir == "output.weight") return "lm_head.weight";
    int layer = -1, used = 0;
    if (std::sscanf(ir.c_str(), "blk.%d.%n", &layer, &used) != 1 || used == 0) return "";
    static const std::pair<const char*, const char*> kParts[] = {
        {"attn_norm.weight", "input_layernorm.weight"},
        {"attn_q.weight", "self_attn.q_proj.weight"},
        {"attn_k.weight", "self_attn.k_proj.weight"},
        {"attn_v.weight", "self_attn.v_proj.weight"},
        {"attn_q.bias", "self_attn.q_proj.bias"},
        {"attn_k.bias", "self_attn.k_proj.bias"},
        {"attn_v.bias", "self_attn.v_proj.bias"},
        {"attn_output.weight", "self_attn.o_proj.weight"},
        {"ffn_norm.weight", "post_attention_layernorm.weight"},
        {"ffn_gate.weight", "mlp.gate_proj.weight"},
        {"ffn_up.weight", "mlp.up_proj.weight"},
        {"ffn_down.weight", "mlp.down_proj.weight"},
    };
    const std::string part = ir.substr(size_t(used));
    for (const auto& [from, to] : kParts)
        if (part == from) return "model.layers." + std::to_string(layer) + "." + to;
    return "";
}

std::vector<int64_t> hf_rows_from_ir(const std::string& ir, const LlamaConfig& c) {
    const auto ends = [&](const char* s) {
        const std::string t(s);
        return ir.size() >= t.size() && ir.compare(ir.size() - t.size(), t.size(), t) == 0;
    };
    int heads = 0;
    if (ends(".attn_q.weight") || ends(".attn_q.bias")) heads = c.n_heads;
    if (ends(".attn_k.weight") || ends(".attn_k.bias")) heads = c.n_kv_heads;
    if (heads == 0) return {};
    const int64_t rows = int64_t(heads) * c.head_dim;
    std::vector<int64_t> from(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) from[size_t(rotate_half_source_row(r, heads, c.head_dim, c.rope_dim))] = r;
    return from;
}

}  // namespace edge::model
