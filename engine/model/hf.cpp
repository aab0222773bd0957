// Hugging Face folder importer: config.json + model.safetensors (or shards listed by
// model.safetensors.index.json) + tokenizer.json (+ tokenizer_config.json).
//
// Q and K projections: HF checkpoints use the rotate-half RoPE layout (rotary pair i of a head =
// dims (i, i + rope_dim/2)); the IR uses interleaved pairs (2i, 2i+1). HF's own conversion from
// Meta weights permuted rows as w.view(heads, rope/2, 2, dim).transpose(1, 2); undoing it:
// IR row (head h, pair i, component c) = HF row h*head_dim + c*rope_dim/2 + i. Rows beyond
// rope_dim (partial rotary) are left in place.
#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include <set>
#include "engine/core/json_util.h"

#include "engine/core/mapped_file.h"
#include "engine/model/hf_config.h"
#include "engine/model/loader.h"
#include "engine/model/safetensors.h"

namespace edge {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Located {
    const SafetensorsFile* file = nullptr;
    const SafetensorsEntry* entry = nullptr;
};

// HF rotate-half rows -> IR interleaved rows, per head.
Tensor unpermute_rope(const Tensor& src, int n_heads, int head_dim, int rope_dim) {
    Tensor out = Tensor::alloc(src.name, DType::F32, src.shape);
    out.source_type = src.source_type;
    const int64_t cols = src.cols();
    const int half = rope_dim / 2;
    for (int h = 0; h < n_heads; ++h) {
        for (int r = 0; r < head_dim; ++r) {
            int64_t from = r;  // HF row within the head
            if (r < rope_dim) from = (r % 2) * half + r / 2;
            std::copy_n(src.f32() + (int64_t(h) * head_dim + from) * cols, cols,
                        out.f32_mut() + (int64_t(h) * head_dim + r) * cols);
        }
    }
    return out;
}

Tensor row_slice(const Tensor& src, int64_t row0, int64_t nrows, const std::string& name) {
    Tensor out = Tensor::alloc(name, DType::F32, {nrows, src.cols()});
    out.source_type = src.source_type;
    std::copy_n(src.f32() + row0 * src.cols(), nrows * src.cols(), out.f32_mut());
    return out;
}

std::string shape_str(const std::vector<int64_t>& s) {
    Tensor t;
    t.shape = s;
    return t.shape_str();
}

// Opens the weights: one model.safetensors or the shards of an index. Fills `where`.
Status open_weights(const fs::path& dir, std::vector<SafetensorsFile>& files, std::map<std::string, Located>& where,
                    std::vector<std::pair<std::string, std::string>>& meta) {
    const fs::path index = dir / "model.safetensors.index.json";
    const fs::path single = dir / "model.safetensors";
    std::error_code ec;
    std::map<std::string, std::string> weight_map;
    std::vector<std::string> shard_names;
    if (fs::is_regular_file(index, ec)) {
        auto text = read_text_file(index.string());
        if (!text) return text.error();
        try {
            auto parsed = parse_json(*text, index.string());
            if (!parsed) return parsed.error();
            const json& j = *parsed;
            auto wm = j.find("weight_map");
            if (!j.is_object() || wm == j.end() || !wm->is_object())
                return err(index.string(), ": no 'weight_map' object");
            for (auto it = wm->begin(); it != wm->end(); ++it) {
                if (!it->is_string()) return err(index.string(), ": weight_map entry '", it.key(), "' is not a string");
                const std::string shard = it->get<std::string>();
                if (shard.empty() || shard.find('/') != std::string::npos || shard.find('\\') != std::string::npos ||
                    shard == "." || shard == "..")
                    return err(index.string(), ": shard name '", shard, "' for tensor '", it.key(),
                               "' is not a plain file name");
                weight_map[it.key()] = shard;
                if (std::find(shard_names.begin(), shard_names.end(), shard) == shard_names.end())
                    shard_names.push_back(shard);
            }
        } catch (const std::exception& ex) {
            return err(index.string(), ": cannot read the shard index: ", ex.what());
        }
        for (const auto& s : shard_names) {
            if (fs::is_regular_file(dir / s, ec)) continue;
            std::string needed;
            for (const auto& [t, f] : weight_map)
                if (f == s) {
                    needed = t;
                    break;
                }
            return err((dir / s).string(), ": missing shard (listed in model.safetensors.index.json for tensor '",
                       needed, "')");
        }
        meta.push_back({"weights", std::to_string(shard_names.size()) + " safetensors shards"});
    } else if (fs::is_regular_file(single, ec)) {
        shard_names.push_back("model.safetensors");
        meta.push_back({"weights", "model.safetensors"});
    } else {
        return err(dir.string(),
                   ": no model.safetensors or model.safetensors.index.json in the folder "
                   "(PyTorch .bin checkpoints are not supported; convert them to safetensors)");
    }
    files.reserve(shard_names.size());  // `where` points into `files`: no reallocation after this
    for (const auto& s : shard_names) {
        auto f = open_safetensors((dir / s).string());
        if (!f) return f.error();
        files.push_back(std::move(f).value());
    }
    for (const auto& f : files) {
        for (const auto& e : f.entries) {
            auto [it, fresh] = where.emplace(e.name, Located{&f, &e});
            if (!fresh) return err(f.origin, ": tensor '", e.name, "' is also stored in ", it->second.file->origin);
        }
    }
    for (const auto& [t, shard] : weight_map) {
        auto it = where.find(t);
        if (it == where.end() || fs::path(it->second.file->origin).filename() != shard)
            return err((dir / shard).string(), ": tensor '", t,
                       "' listed in model.safetensors.index.json is not in it");
    }
    return {};
}

struct Want {
    std::string hf;         // HF tensor name
    std::string canonical;  // IR name ("" for fused tensors split below)
    std::vector<int64_t> shape;
    enum Kind { Plain, Q, K, QKV, GateUp } kind = Plain;
    int layer = -1;
};

std::vector<Want> wanted(const HfConfig& hc) {
    const LlamaConfig& c = hc.llama;
    const int64_t D = c.dim, F = c.hidden_dim, Q = c.q_dim(), KV = c.kv_dim();
    std::vector<Want> w;
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        const std::string b = "blk." + std::to_string(l) + ".";
        const size_t first = w.size();
        w.push_back({p + "input_layernorm.weight", b + "attn_norm.weight", {D}});
        if (hc.phi3) {
            w.push_back({p + "self_attn.qkv_proj.weight", "", {Q + 2 * KV, D}, Want::QKV});
        } else {
            w.push_back({p + "self_attn.q_proj.weight", b + "attn_q.weight", {Q, D}, Want::Q});
            w.push_back({p + "self_attn.k_proj.weight", b + "attn_k.weight", {KV, D}, Want::K});
            w.push_back({p + "self_attn.v_proj.weight", b + "attn_v.weight", {KV, D}});
        }
        w.push_back({p + "self_attn.o_proj.weight", b + "attn_output.weight", {D, Q}});
        w.push_back({p + "post_attention_layernorm.weight", b + "ffn_norm.weight", {D}});
        if (hc.phi3) {
            w.push_back({p + "mlp.gate_up_proj.weight", "", {2 * F, D}, Want::GateUp});
        } else {
            w.push_back({p + "mlp.gate_proj.weight", b + "ffn_gate.weight", {F, D}});
            w.push_back({p + "mlp.up_proj.weight", b + "ffn_up.weight", {F, D}});
        }
        w.push_back({p + "mlp.down_proj.weight", b + "ffn_down.weight", {D, F}});
        for (size_t i = first; i < w.size(); ++i) w[i].layer = l;
    }
    w.push_back({"model.norm.weight", "output_norm.weight", {D}});
    return w;
}

Status read_tokenizer(const fs::path& dir, const HfConfig& hc, Model& m) {
    std::error_code ec;
    const fs::path tj = dir / "tokenizer.json";
    if (!fs::is_regular_file(tj, ec)) {
        m.metadata.push_back({"tokenizer", "none (no tokenizer.json in the folder)"});
        return {};
    }
    auto text = read_text_file(tj.string());
    if (!text) return text.error();
    TokenizerSpec& s = m.tokenizer;
    s.model = "hf";
    s.hf_json = std::move(text).value();
    s.source = tj.string();
    s.bos_id = hc.bos_id;
    s.eos_id = hc.eos_id;
    s.add_space_prefix = false;  // tokenizer.json's normalizer / pre-tokenizer decides
    const fs::path tc = dir / "tokenizer_config.json";
    if (fs::is_regular_file(tc, ec)) {
        auto cfg = read_text_file(tc.string());
        if (!cfg) return cfg.error();
        try {
            auto parsed = parse_json(*cfg, tc.string());
            if (!parsed) return parsed.error();
            const json& j = *parsed;
            if (auto it = j.find("add_bos_token"); j.is_object() && it != j.end() && it->is_boolean())
                s.add_bos = it->get<bool>();
        } catch (const std::exception& ex) {
            return err(tc.string(), ": cannot read tokenizer_config.json: ", ex.what());
        }
    }
    m.metadata.push_back({"tokenizer", tj.string()});
    return {};
}

}  // namespace

Result<Model> load_hf_model(const std::string& folder, Progress* progress) {
    const fs::path dir(folder);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return err(folder, ": not a folder (a Hugging Face model is a folder)");
    const fs::path cfg_path = dir / "config.json";
    if (!fs::is_regular_file(cfg_path, ec))
        return err(folder, ": no config.json (a Hugging Face model folder needs config.json next to the weights)");
    auto cfg_text = read_text_file(cfg_path.string());
    if (!cfg_text) return cfg_text.error();
    auto hcr = parse_hf_config(*cfg_text, cfg_path.string());
    if (!hcr) return hcr.error();
    const HfConfig hc = std::move(hcr).value();

    Model m;
    m.source_path = folder;
    m.source_format = "hf";
    m.architecture = "llama";
    m.name = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
    m.config = hc.llama;
    m.metadata = hc.metadata;
    const LlamaConfig& c = m.config;

    std::vector<SafetensorsFile> files;
    std::map<std::string, Located> where;
    EDGE_TRY(open_weights(dir, files, where, m.metadata));
    std::set<std::string> used;

    auto fetch = [&](const std::string& hf, const std::vector<int64_t>& shape,
                     const std::string& canonical) -> Result<Tensor> {
        auto it = where.find(hf);
        if (it == where.end()) return err(folder, ": tensor '", hf, "' is missing from the safetensors weights");
        const Located& at = it->second;
        if (at.entry->shape != shape)
            return err(at.file->origin, ": tensor '", hf, "' has shape ", shape_str(at.entry->shape),
                       " but config.json implies ", shape_str(shape));
        used.insert(hf);
        return at.file->to_f32(*at.entry, canonical);
    };

    // Embedding and output head, tied or not.
    const int64_t V = c.vocab_size, D = c.dim;
    const bool has_embed = where.count("model.embed_tokens.weight") > 0;
    const bool has_head = where.count("lm_head.weight") > 0;
    if (c.tied_embeddings && !has_embed && has_head) {
        auto t = fetch("lm_head.weight", {V, D}, "token_embd.weight");
        if (!t) return t.error();
        m.tensors.push_back(std::move(t).value());
    } else {
        auto t = fetch("model.embed_tokens.weight", {V, D}, "token_embd.weight");
        if (!t) return t.error();
        m.tensors.push_back(std::move(t).value());
        if (!c.tied_embeddings) {
            if (!has_head)
                return err(folder,
                           ": tensor 'lm_head.weight' is missing and config.json says tie_word_embeddings "
                           "is false");
            auto h = fetch("lm_head.weight", {V, D}, "output.weight");
            if (!h) return h.error();
            m.tensors.push_back(std::move(h).value());
        } else if (has_head) {
            used.insert("lm_head.weight");  // tied: the stored copy is the embedding
        }
    }

    const std::vector<Want> wants = wanted(hc);
    for (size_t i = 0; i < wants.size(); ++i) {
        if (is_cancelled(progress)) return err(folder, ": loading cancelled");
        const Want& w = wants[i];
        auto t = fetch(w.hf, w.shape, w.canonical);
        if (!t) return t.error();
        Tensor x = std::move(t).value();
        const std::string blk = "blk." + std::to_string(w.layer) + ".";
        switch (w.kind) {
            case Want::Plain: m.tensors.push_back(std::move(x)); break;
            case Want::Q: m.tensors.push_back(unpermute_rope(x, c.n_heads, c.head_dim, c.rope_dim)); break;
            case Want::K: m.tensors.push_back(unpermute_rope(x, c.n_kv_heads, c.head_dim, c.rope_dim)); break;
            case Want::QKV: {
                const int64_t Q = c.q_dim(), KV = c.kv_dim();
                m.tensors.push_back(
                    unpermute_rope(row_slice(x, 0, Q, blk + "attn_q.weight"), c.n_heads, c.head_dim, c.rope_dim));
                m.tensors.push_back(
                    unpermute_rope(row_slice(x, Q, KV, blk + "attn_k.weight"), c.n_kv_heads, c.head_dim, c.rope_dim));
                m.tensors.push_back(row_slice(x, Q + KV, KV, blk + "attn_v.weight"));
                break;
            }
            case Want::GateUp: {
                const int64_t F = c.hidden_dim;
                m.tensors.push_back(row_slice(x, 0, F, blk + "ffn_gate.weight"));
                m.tensors.push_back(row_slice(x, F, F, blk + "ffn_up.weight"));
                break;
            }
        }
        report(progress, double(i + 1) / double(wants.size()), "reading safetensors");
    }
    for (const auto& [name, at] : where) {
        if (used.count(name)) continue;
        if (name.find("rotary_emb.inv_freq") != std::string::npos) continue;  // recomputed from rope_theta
        return err(at.file->origin, ": tensor '", name, "' is not part of a ", hc.architecture,
                   " checkpoint as this importer reads it (num_hidden_layers ", c.n_layers, ")");
    }

    std::set<std::string> stored;
    for (const auto& [name, at] : where) stored.insert(at.entry->dtype_name);
    std::string types;
    for (const auto& s : stored) types += (types.empty() ? "" : ", ") + s;
    m.metadata.push_back({"stored dtypes", types});

    EDGE_TRY(read_tokenizer(dir, hc, m));
    EDGE_TRY(validate_and_finalize_llama(m));
    return m;
}

}  // namespace edge
