#include "hf_config.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/json_util.h"
#include "engine/model/rope.h"

using edge::tokenizer::GenerationDefaults;
using edge::tokenizer::TokenizerSpec;

namespace edge::model {

namespace {

using json = nlohmann::json;

// An integer field: absent or null -> fallback (or an error when required).
Status get_int(const json& j, const std::string& origin, const char* key, bool required, int fallback, int& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required) return err(origin, ": '", key, "' is missing");
        out = fallback;
        return {};
    }
    if (!it->is_number_integer()) return err(origin, ": '", key, "' must be an integer, found ", json_excerpt(*it));
    const int64_t v = it->get<int64_t>();
    if (v <= 0 || v > (int64_t(1) << 30)) return err(origin, ": '", key, "' = ", v, " is out of range");
    out = int(v);
    return {};
}

Status get_float(const json& j, const std::string& origin, const char* key, float fallback, float& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        out = fallback;
        return {};
    }
    if (!it->is_number()) return err(origin, ": '", key, "' must be a number, found ", json_excerpt(*it));
    const double v = it->get<double>();
    if (!std::isfinite(v) || v <= 0) return err(origin, ": '", key, "' = ", v, " is out of range");
    out = float(v);
    return {};
}

bool get_bool(const json& j, const char* key, bool fallback) {
    auto it = j.find(key);
    return (it != j.end() && it->is_boolean()) ? it->get<bool>() : fallback;
}

// The first integer of an int or a list of ints (eos_token_id may be a list).
int first_id(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) return -1;
    if (it->is_number_integer()) return int(it->get<int64_t>());
    if (it->is_array() && !it->empty() && (*it)[0].is_number_integer()) return int((*it)[0].get<int64_t>());
    return -1;
}

std::vector<int32_t> all_ids(const json& j, const char* key) {
    std::vector<int32_t> out;
    auto it = j.find(key);
    if (it == j.end()) return out;
    if (it->is_number_integer()) out.push_back(int32_t(it->get<int64_t>()));
    if (it->is_array())
        for (const json& e : *it)
            if (e.is_number_integer()) out.push_back(int32_t(e.get<int64_t>()));
    return out;
}

// One rotary-pair factor list of a longrope rope_scaling ("short_factor", "long_factor").
Status get_pair_factors(const json& rs, const std::string& origin, const char* key, int pairs,
                        std::vector<float>& out) {
    auto it = rs.find(key);
    if (it == rs.end() || !it->is_array())
        return err(origin, ": rope_scaling '", key, "' must be a list of ", pairs, " numbers (one per rotary pair)",
                   it == rs.end() ? std::string(", and is missing") : ", found " + json_excerpt(*it));
    if (it->size() != size_t(pairs))
        return err(origin, ": rope_scaling '", key, "' holds ", it->size(), " values but the rotary dimension has ",
                   pairs, " pairs");
    out.clear();
    for (size_t i = 0; i < it->size(); ++i) {
        const json& v = (*it)[i];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
            return err(origin, ": rope_scaling '", key, "'[", i, "] must be a positive number, found ",
                       json_excerpt(v));
        out.push_back(v.get<float>());
    }
    return {};
}

// Phi-3 "longrope" ("su" in older configs): short and long factors per rotary pair, the
// original context they switch at (top-level original_max_position_embeddings, or inside
// rope_scaling), and the attention factor (given, or computed as transformers does).
Status read_longrope(const json& top, const json& rs, const std::string& origin, LlamaConfig& c,
                     std::ostringstream& what) {
    const int pairs = c.rope_dim / 2;
    EDGE_TRY(get_pair_factors(rs, origin, "short_factor", pairs, c.rope_freq_factors));
    EDGE_TRY(get_pair_factors(rs, origin, "long_factor", pairs, c.rope_long_freq_factors));
    const json& where = top.contains("original_max_position_embeddings") ? top : rs;
    EDGE_TRY(get_int(where, origin, "original_max_position_embeddings", true, 0, c.rope_original_context));
    if (c.rope_original_context <= 1)
        return err(origin, ": original_max_position_embeddings ", c.rope_original_context, " is too small");
    c.rope_attn_factor = model::longrope_attention_factor(c.context_length, c.rope_original_context);
    EDGE_TRY(get_float(rs, origin, "attention_factor", c.rope_attn_factor, c.rope_attn_factor));
    what << model::longrope_description(c);
    return {};
}

// rope_scaling: "llama3" (Llama 3.1-3.3) and "linear" become per-pair frequency factors
// (engine/model/rope.h), Phi-3 "longrope"/"su" short and long ones; other types are refused by
// name.
Status read_rope_scaling(const json& top, const json& rs, const std::string& origin, LlamaConfig& c) {
    if (!rs.is_object()) return err(origin, ": rope_scaling must be an object, found ", json_excerpt(rs));
    std::string type = "?";
    for (const char* k : {"type", "rope_type"})
        if (auto t = rs.find(k); t != rs.end() && t->is_string()) type = t->get<std::string>();
    if (type == "default") return {};
    float factor = 1.0f;
    if (type == "llama3" || type == "linear") {
        if (!rs.contains("factor")) return err(origin, ": rope_scaling of type '", type, "' has no 'factor'");
        EDGE_TRY(get_float(rs, origin, "factor", 1.0f, factor));
    }
    std::ostringstream what;
    if (type == "linear") {
        c.rope_freq_factors.assign(size_t(c.rope_dim / 2), factor);
        what << "linear: factor " << factor;
    } else if (type == "llama3") {
        model::Llama3RopeScaling s;
        float low = 1.0f, high = 4.0f;
        EDGE_TRY(get_float(rs, origin, "low_freq_factor", 1.0f, low));
        EDGE_TRY(get_float(rs, origin, "high_freq_factor", 4.0f, high));
        EDGE_TRY(get_int(rs, origin, "original_max_position_embeddings", true, 0, s.original_context));
        if (!(high > low))
            return err(origin, ": rope_scaling high_freq_factor ", high, " must be above low_freq_factor ", low);
        s.factor = factor;
        s.low_freq_factor = low;
        s.high_freq_factor = high;
        c.rope_freq_factors = model::llama3_rope_factors(c.rope_dim, c.rope_theta, s);
        what << "llama3: factor " << factor << ", low " << low << ", high " << high << ", original context "
             << s.original_context;
    } else if (type == "longrope" || type == "su") {
        EDGE_TRY(read_longrope(top, rs, origin, c, what));
    } else {
        return err(origin, ": rope_scaling of type '", type,
                   "' is not supported (supported: llama3, linear, longrope, su, default; YaRN and dynamic are not)");
    }
    c.rope_scaling = what.str();
    return {};
}

Result<HfConfig> parse(const json& j, const std::string& origin) {
    if (!j.is_object()) return err(origin, ": config.json is not a JSON object");
    HfConfig h;
    auto arch = j.find("architectures");
    if (arch != j.end() && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
        h.architecture = (*arch)[0].get<std::string>();
    } else if (auto mt = j.find("model_type"); mt != j.end() && mt->is_string()) {
        const std::string t = mt->get<std::string>();
        if (t == "llama")
            h.architecture = "LlamaForCausalLM";
        else if (t == "mistral")
            h.architecture = "MistralForCausalLM";
        else if (t == "phi3")
            h.architecture = "Phi3ForCausalLM";
        else if (t == "qwen2")
            h.architecture = "Qwen2ForCausalLM";
        else
            h.architecture = "model_type " + t;
    } else {
        return err(origin, ": neither 'architectures' nor 'model_type' says what model this is");
    }
    bool known = false;
    for (const auto& a : hf_supported_architectures()) known = known || a == h.architecture;
    if (!known) {
        std::string list;
        for (const auto& a : hf_supported_architectures()) list += (list.empty() ? "" : ", ") + a;
        return err(origin, ": unsupported architecture '", h.architecture, "' (supported: ", list, ")");
    }
    h.phi3 = h.architecture == "Phi3ForCausalLM";
    // Qwen2: Q/K/V projections with biases (the output projection and the MLP have none).
    h.llama.attn_qkv_bias = h.architecture == "Qwen2ForCausalLM";

    LlamaConfig& c = h.llama;
    EDGE_TRY(get_int(j, origin, "hidden_size", true, 0, c.dim));
    EDGE_TRY(get_int(j, origin, "intermediate_size", true, 0, c.hidden_dim));
    EDGE_TRY(get_int(j, origin, "num_hidden_layers", true, 0, c.n_layers));
    EDGE_TRY(get_int(j, origin, "num_attention_heads", true, 0, c.n_heads));
    EDGE_TRY(get_int(j, origin, "num_key_value_heads", false, c.n_heads, c.n_kv_heads));
    EDGE_TRY(get_int(j, origin, "vocab_size", true, 0, c.vocab_size));
    if (c.dim % c.n_heads && !j.contains("head_dim"))
        return err(origin, ": hidden_size ", c.dim, " is not a multiple of num_attention_heads ", c.n_heads);
    EDGE_TRY(get_int(j, origin, "head_dim", false, c.dim / c.n_heads, c.head_dim));
    EDGE_TRY(get_int(j, origin, "max_position_embeddings", false, 2048, c.context_length));
    EDGE_TRY(get_float(j, origin, "rope_theta", 10000.0f, c.rope_theta));
    EDGE_TRY(get_float(j, origin, "rms_norm_eps", h.phi3 ? 1e-5f : 1e-6f, c.norm_eps));
    c.tied_embeddings = get_bool(j, "tie_word_embeddings", false);
    if (c.n_heads % c.n_kv_heads)
        return err(origin, ": num_attention_heads ", c.n_heads, " is not a multiple of num_key_value_heads ",
                   c.n_kv_heads);

    float rotary = 1.0f;
    EDGE_TRY(get_float(j, origin, "partial_rotary_factor", 1.0f, rotary));
    if (rotary > 1.0f) return err(origin, ": partial_rotary_factor ", rotary, " is above 1");
    c.rope_dim = int(std::lround(double(c.head_dim) * rotary));
    if (c.rope_dim <= 0 || c.rope_dim % 2)
        return err(origin, ": rotary dimension ", c.rope_dim, " (head_dim ", c.head_dim, " x partial_rotary_factor ",
                   rotary, ") must be positive and even");

    if (auto act = j.find("hidden_act"); act != j.end() && act->is_string() && act->get<std::string>() != "silu")
        return err(origin, ": hidden_act '", act->get<std::string>(), "' is not supported (Llama uses silu)");
    if (get_bool(j, "attention_bias", false))
        return err(origin, ": attention_bias is true (biases on Q, K, V and the output projection); only Qwen2's ",
                   "Q/K/V biases are supported");
    if (get_bool(j, "mlp_bias", false)) return err(origin, ": mlp_bias is true; MLP biases are not supported");
    if (auto rs = j.find("rope_scaling"); rs != j.end() && !rs->is_null())
        EDGE_TRY(read_rope_scaling(j, *rs, origin, c));
    // Sliding-window attention (Mistral): within the window it equals full attention, so the
    // usable context is capped at the window.
    // Qwen2 writes a sliding_window beside use_sliding_window false: then it does not apply.
    if (auto sw = j.find("sliding_window");
        sw != j.end() && sw->is_number_integer() && get_bool(j, "use_sliding_window", true)) {
        const int64_t w = sw->get<int64_t>();
        if (w > 0 && w < c.context_length) {
            c.context_length = int(w);
            h.metadata.push_back({"sliding_window", std::to_string(w) + " (context capped to it)"});
        }
    }
    // (Before anything computes a shape from it: q_dim() and kv_dim() are int products.)
    EDGE_TRY(check_llama_config(c, origin));
    h.bos_id = first_id(j, "bos_token_id");
    h.eos_id = first_id(j, "eos_token_id");
    h.eos_ids = all_ids(j, "eos_token_id");

    h.metadata.insert(h.metadata.begin(), {
                                              {"architecture", h.architecture},
                                              {"hidden_size", std::to_string(c.dim)},
                                              {"intermediate_size", std::to_string(c.hidden_dim)},
                                              {"num_hidden_layers", std::to_string(c.n_layers)},
                                              {"num_attention_heads", std::to_string(c.n_heads)},
                                              {"num_key_value_heads", std::to_string(c.n_kv_heads)},
                                              {"head_dim", std::to_string(c.head_dim)},
                                              {"vocab_size", std::to_string(c.vocab_size)},
                                              {"max_position_embeddings", std::to_string(c.context_length)},
                                              {"rope_theta", to_piece(c.rope_theta)},
                                              {"rope_scaling", c.rope_scaling.empty() ? "none" : c.rope_scaling},
                                              {"rms_norm_eps", to_piece(c.norm_eps)},
                                              {"tie_word_embeddings", c.tied_embeddings ? "true" : "false"},
                                          });
    if (auto td = j.find("torch_dtype"); td != j.end() && td->is_string())
        h.metadata.push_back({"torch_dtype", td->get<std::string>()});
    return h;
}

}  // namespace

const std::vector<std::string>& hf_supported_architectures() {
    static const std::vector<std::string> a = {"LlamaForCausalLM", "MistralForCausalLM", "Phi3ForCausalLM",
                                               "Qwen2ForCausalLM"};
    return a;
}

Result<HfConfig> parse_hf_config(const std::string& text, const std::string& origin) {
    try {
        auto j = parse_json(text, origin);
        if (!j) return j.error();
        return parse(*j, origin);
    } catch (const std::exception& ex) {
        return err(origin, ": cannot read config.json: ", ex.what());
    }
}

// As transformers' generate does, do_sample absent or false means greedy decoding.
Status parse_generation_config(const std::string& text, const std::string& origin, int vocab_size, TokenizerSpec& t) {
    auto parsed = parse_json(text, origin);
    if (!parsed) return parsed.error();
    const json& j = *parsed;
    if (!j.is_object()) return err(origin, ": generation_config.json must be a JSON object");
    auto ids = [&](const char* key, bool eos) -> Status {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return {};
        const bool list = it->is_array();
        if (list && it->size() > 64) return err(origin, ": ", key, " lists ", it->size(), " ids (at most 64)");
        for (size_t i = 0; i < (list ? it->size() : 1); ++i) {
            const json& v = list ? (*it)[i] : *it;
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size)
                return err(origin, ": ", key, " must be token ids below the vocabulary size ", vocab_size, ", found ",
                           json_excerpt(*it));
            if (eos)
                t.add_eos(int32_t(v.get<int64_t>()));
            else if (t.bos_id < 0)
                t.bos_id = int32_t(v.get<int64_t>());
        }
        return {};
    };
    EDGE_TRY(ids("eos_token_id", true));
    EDGE_TRY(ids("bos_token_id", false));
    auto number = [&](const char* key, double lo, double hi, double& out) -> Status {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return {};
        if (!it->is_number() || !(it->get<double>() >= lo && it->get<double>() <= hi))
            return err(origin, ": ", key, " must be a number in [", lo, ", ", hi, "], found ", json_excerpt(*it));
        out = it->get<double>();
        return {};
    };
    double temperature = -1, top_p = -1, top_k = -1;
    EDGE_TRY(number("temperature", 0, 100, temperature));
    EDGE_TRY(number("top_p", 0, 1, top_p));
    EDGE_TRY(number("top_k", 0, 1 << 30, top_k));
    bool sample = false;
    if (auto it = j.find("do_sample"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean()) return err(origin, ": do_sample must be true or false, found ", json_excerpt(*it));
        sample = it->get<bool>();
    }
    GenerationDefaults g;
    g.temperature = sample ? float(temperature) : 0.0f;  // greedy
    g.top_p = float(top_p);
    g.top_k = int(top_k);
    g.source = origin;
    t.generation = g;
    return {};
}

Status parse_tokenizer_config(const std::string& text, const std::string& origin, TokenizerSpec& t) {
    auto parsed = parse_json(text, origin);
    if (!parsed) return parsed.error();
    const json& j = *parsed;
    if (!j.is_object()) return err(origin, ": tokenizer_config.json must be a JSON object");
    if (auto it = j.find("add_bos_token"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean()) return err(origin, ": add_bos_token must be true or false, found ", json_excerpt(*it));
        t.add_bos = it->get<bool>();
    }
    auto it = j.find("chat_template");
    if (it == j.end() || it->is_null()) return {};
    constexpr size_t kMaxTemplate = 1 << 20;
    const json* chosen = nullptr;
    if (it->is_string()) {
        chosen = &*it;
    } else if (it->is_array()) {
        for (size_t i = 0; i < it->size(); ++i) {
            const json& e = (*it)[i];
            if (!e.is_object() || !e.contains("template") || !e["template"].is_string() ||
                (e.contains("name") && !e["name"].is_string()))
                return err(origin, ": chat_template[", i, "] must be {\"name\": ..., \"template\": \"...\"}, found ",
                           json_excerpt(e));
            if (!chosen || e.value("name", std::string()) == "default") chosen = &e["template"];
            if (e.value("name", std::string()) == "default") break;
        }
        if (!chosen) return err(origin, ": chat_template is an empty list");
    } else {
        return err(origin, ": chat_template must be a template string or a list of named templates, found ",
                   json_excerpt(*it));
    }
    const std::string& tpl = chosen->get_ref<const std::string&>();
    if (tpl.size() > kMaxTemplate)
        return err(origin, ": chat_template is ", tpl.size(), " bytes (at most ", kMaxTemplate, ")");
    t.chat_template = tpl;
    t.chat_template_source = origin;
    return {};
}

}  // namespace edge::model
