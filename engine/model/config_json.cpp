#include "config_json.h"

namespace edge {

nlohmann::json llama_config_to_json(const LlamaConfig& c) {
    return {{"dim", c.dim},
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
    return c;
}

}  // namespace edge
