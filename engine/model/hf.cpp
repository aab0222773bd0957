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
#include "engine/model/rope.h"
#include "engine/model/safetensors.h"
#include "engine/model/weights.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Located {
    const SafetensorsFile* file = nullptr;
    const SafetensorsEntry* entry = nullptr;
};

// How one IR tensor is made from a stored HF tensor: rows [row0, row0 + rows) of it (a fused
// qkv_proj / gate_up_proj is split this way), with the rotate-half -> interleaved row
// permutation for Q and K (heads > 0).
struct Recipe {
    Located at;
    int64_t row0 = 0, rows = 0;
    int heads = 0;  // > 0: permute rows per head
};

class HfWeights final : public model::WeightSource {
public:
    HfWeights(std::vector<SafetensorsFile> files, int head_dim, int rope_dim)
        : files_(std::move(files)), head_dim_(head_dim), rope_dim_(rope_dim) {}
    // Recipes point into `files_` (moved in, never moved again).
    void add(const std::string& name, Recipe r) { recipes_[name] = r; }

    Result<Tensor> load_f32(const Tensor& want) const override {
        auto it = recipes_.find(want.name);
        if (it == recipes_.end()) return err("tensor '", want.name, "' is not in the Hugging Face weights");
        const Recipe& r = it->second;
        const SafetensorsFile& f = *r.at.file;
        const SafetensorsEntry& e = *r.at.entry;  // its dtype was checked when the recipe was made
        if (f.file) f.file->will_need(size_t(f.bytes(e) - f.file->data()), size_t(e.end - e.begin));
        const bool whole = r.row0 == 0 && r.heads == 0 && (e.shape.empty() || r.rows == e.shape[0]);
        if (whole && *e.dtype == DType::F32) {  // aliases the mapping when it can
            auto t = f.to_f32(e, want.name);
            if (!t.ok()) return t.error();
            return t;
        }
        // A bias permuted per head (Qwen2's Q/K biases) is a column of one-element rows.
        const bool per_element = e.shape.size() == 1 && r.heads > 0;
        const int64_t cols = per_element ? 1 : e.shape.size() >= 2 ? e.numel() / e.shape[0] : e.numel();
        Tensor t = model::make_unread(want.name, want.shape, *e.dtype);
        t.data = model::alloc_counted_f32(t.numel());
        float* dst = t.f32_mut();
        const uint8_t* src = f.bytes(e);
        const int64_t esz = e.elem_bytes;
        const int64_t rows = per_element ? t.numel() : t.rows();
        for (int64_t row = 0; row < rows; ++row) {
            const uint8_t* from =
                src + (r.row0 + model::rotate_half_source_row(row, r.heads, head_dim_, rope_dim_)) * cols * esz;
            stored_to_f32(from, *e.dtype, cols, dst + row * cols);
        }
        return t;
    }

    Result<Tensor> load_stored(const Tensor& want) const override {
        auto it = recipes_.find(want.name);
        if (it == recipes_.end()) return err("tensor '", want.name, "' is not in the Hugging Face weights");
        const Recipe& r = it->second;
        const SafetensorsFile& f = *r.at.file;
        const SafetensorsEntry& e = *r.at.entry;
        if (want.shape.size() != 2 || e.shape.size() != 2 || !model::runs_as_stored(*e.dtype)) return load_f32(want);
        const uint8_t* src = f.bytes(e);
        const bool whole = r.row0 == 0 && r.heads == 0 && r.rows == e.shape[0];
        if (whole && f.file && reinterpret_cast<uintptr_t>(src) % size_t(e.elem_bytes) == 0) {
            f.file->will_run(size_t(src - f.file->data()), size_t(e.end - e.begin));
            Tensor t = model::make_unread(want.name, want.shape, *e.dtype);
            t.type = *e.dtype;
            t.nbytes = size_t(e.end - e.begin);
            t.data = f.file->share(size_t(src - f.file->data()));
            return t;
        }
        if (f.file) f.file->will_need(size_t(src - f.file->data()), size_t(e.end - e.begin));
        const int64_t row_bytes = e.shape[1] * e.elem_bytes;
        auto t = model::rows_as_stored(want.name, want.shape, *e.dtype, [&](int64_t row) {
            return src + (r.row0 + model::rotate_half_source_row(row, r.heads, head_dim_, rope_dim_)) * row_bytes;
        });
        if (!t.ok()) return err(f.origin, ": ", t.message());
        return t;
    }

    void release(const Tensor& want) const override {
        auto it = recipes_.find(want.name);
        if (it == recipes_.end() || !it->second.at.file->file) return;
        const SafetensorsFile& f = *it->second.at.file;
        const SafetensorsEntry& e = *it->second.at.entry;
        f.file->release(size_t(f.bytes(e) - f.file->data()), size_t(e.end - e.begin));
    }

private:
    std::vector<SafetensorsFile> files_;
    std::map<std::string, Recipe> recipes_;
    int head_dim_ = 0, rope_dim_ = 0;
};

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
            if (c.attn_qkv_bias) {  // Qwen2: permuted per head like their projections' rows
                w.push_back({p + "self_attn.q_proj.bias", b + "attn_q.bias", {Q}, Want::Q});
                w.push_back({p + "self_attn.k_proj.bias", b + "attn_k.bias", {KV}, Want::K});
                w.push_back({p + "self_attn.v_proj.bias", b + "attn_v.bias", {KV}});
            }
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
    for (int32_t id : hc.eos_ids) s.add_eos(id);
    s.add_space_prefix = false;  // tokenizer.json's normalizer / pre-tokenizer decides
    const fs::path tc = dir / "tokenizer_config.json";
    if (fs::is_regular_file(tc, ec)) {
        auto cfg = read_text_file(tc.string());
        if (!cfg) return cfg.error();
        EDGE_TRY(parse_tokenizer_config(*cfg, tc.string(), s));
    }
    m.metadata.push_back({"tokenizer", tj.string()});
    return {};
}

// generation_config.json beside config.json (parse_generation_config).
Status read_generation_config(const fs::path& dir, Model& m) {
    std::error_code ec;
    const fs::path gc = dir / "generation_config.json";
    if (!fs::is_regular_file(gc, ec)) return {};
    auto text = read_text_file(gc.string());
    if (!text) return text.error();
    EDGE_TRY(parse_generation_config(*text, gc.string(), m.config.vocab_size, m.tokenizer));
    m.metadata.push_back({"generation_config", gc.string()});
    return {};
}

}  // namespace

Result<Model> load_hf_model(const std::string& folder, Progress* progress, bool lazy_weights) {
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
    // Moving the vector keeps its elements where `where` points.
    auto source = std::make_shared<HfWeights>(std::move(files), c.head_dim, c.rope_dim);
    std::set<std::string> used;

    // Registers IR tensor `canonical` = rows [row0, row0 + rows) of HF tensor `hf` (of `shape`),
    // permuted per head when heads > 0.
    auto take = [&](const std::string& hf, const std::vector<int64_t>& shape, const std::string& canonical,
                    int64_t row0 = 0, int64_t rows = -1, int heads = 0) -> Status {
        auto it = where.find(hf);
        if (it == where.end()) return err(folder, ": tensor '", hf, "' is missing from the safetensors weights");
        const Located& at = it->second;
        if (at.entry->shape != shape)
            return err(at.file->origin, ": tensor '", hf, "' has shape ", shape_str(at.entry->shape),
                       " but config.json implies ", shape_str(shape));
        if (!at.entry->dtype)
            return err(at.file->origin, ": tensor '", hf, "' has dtype ", at.entry->dtype_name,
                       "; supported dtypes are F32, F16 and BF16");
        used.insert(hf);
        std::vector<int64_t> out_shape = shape;
        if (rows >= 0) out_shape[0] = rows;
        source->add(canonical, Recipe{at, row0, out_shape.empty() ? 1 : out_shape[0], heads});
        m.tensors.push_back(model::make_unread(canonical, out_shape, *at.entry->dtype));
        return {};
    };

    // Embedding and output head, tied or not.
    const int64_t V = c.vocab_size, D = c.dim;
    const bool has_embed = where.count("model.embed_tokens.weight") > 0;
    const bool has_head = where.count("lm_head.weight") > 0;
    if (c.tied_embeddings && !has_embed && has_head) {
        EDGE_TRY(take("lm_head.weight", {V, D}, "token_embd.weight"));
    } else {
        EDGE_TRY(take("model.embed_tokens.weight", {V, D}, "token_embd.weight"));
        if (!c.tied_embeddings) {
            if (!has_head)
                return err(folder,
                           ": tensor 'lm_head.weight' is missing and config.json says tie_word_embeddings "
                           "is false");
            EDGE_TRY(take("lm_head.weight", {V, D}, "output.weight"));
        } else if (has_head) {
            used.insert("lm_head.weight");  // tied: the stored copy is the embedding
        }
    }

    const std::vector<Want> wants = wanted(hc);
    for (const Want& w : wants) {
        const std::string blk = "blk." + std::to_string(w.layer) + ".";
        const int64_t Q = c.q_dim(), KV = c.kv_dim(), F = c.hidden_dim;
        switch (w.kind) {
            case Want::Plain: EDGE_TRY(take(w.hf, w.shape, w.canonical)); break;
            case Want::Q: EDGE_TRY(take(w.hf, w.shape, w.canonical, 0, -1, c.n_heads)); break;
            case Want::K: EDGE_TRY(take(w.hf, w.shape, w.canonical, 0, -1, c.n_kv_heads)); break;
            case Want::QKV:
                EDGE_TRY(take(w.hf, w.shape, blk + "attn_q.weight", 0, Q, c.n_heads));
                EDGE_TRY(take(w.hf, w.shape, blk + "attn_k.weight", Q, KV, c.n_kv_heads));
                EDGE_TRY(take(w.hf, w.shape, blk + "attn_v.weight", Q + KV, KV));
                break;
            case Want::GateUp:
                EDGE_TRY(take(w.hf, w.shape, blk + "ffn_gate.weight", 0, F));
                EDGE_TRY(take(w.hf, w.shape, blk + "ffn_up.weight", F, F));
                break;
        }
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
    EDGE_TRY(read_generation_config(dir, m));
    m.weights = std::move(source);
    EDGE_TRY(validate_and_finalize_llama(m));
    if (lazy_weights) return m;
    EDGE_TRY(model::load_weights(m, progress));
    EDGE_TRY(validate_llama(m));
    return m;
}

}  // namespace edge::model
