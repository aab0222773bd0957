// GGUF -> IR importer for the "llama" and "phi3" architectures: config from <arch>.* keys, tensors
// read through a WeightSource (dequantized to F32; F32 tensors alias the mapping when aligned) at
// once or lazily (engine/model/weights.h), tokenizer.ggml.* into a TokenizerSpec, printable
// metadata. A phi3 file's fused attn_qkv and ffn_up (gate then up) are split into the IR's
// separate projections by rows, and its Q/K rows, stored in the rotate-half (NEOX) layout
// llama.cpp runs phi3 with, are permuted into the IR's interleaved pairs as they are read.
#include <cstdint>
#include <cstring>
#include <map>
#include <new>

#include "engine/model/ggml_dequant.h"
#include "engine/model/gguf.h"
#include "engine/model/loader.h"
#include "engine/model/rope.h"
#include "engine/model/weights.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model {
namespace {

using gguf::File;
using gguf::Value;
using gguf::ValueType;

// Not weights: the RoPE frequency divisors, read into LlamaConfig::rope_freq_factors (and, for
// Phi-3 longrope, rope_long_freq_factors).
constexpr const char* kRopeFreqs = "rope_freqs.weight";
constexpr const char* kRopeLong = "rope_factors_long.weight";
constexpr const char* kRopeShort = "rope_factors_short.weight";
bool is_rope_tensor(const std::string& n) { return n == kRopeFreqs || n == kRopeLong || n == kRopeShort; }

Status read_int(const File& f, const std::string& key, bool required, int& out) {
    auto v = f.get_int(key);
    if (!v.ok()) return v.error();
    if (!v->has_value()) {
        if (required) return err(f.path, ": required metadata '", key, "' is missing");
        return {};
    }
    if (**v < 0 || **v > INT32_MAX) return err(f.path, ": metadata '", key, "' value ", **v, " is out of range");
    out = int(**v);
    return {};
}

Status read_float(const File& f, const std::string& key, float& out) {
    auto v = f.get_float(key);
    if (!v.ok()) return v.error();
    if (v->has_value()) out = float(**v);
    return {};
}

// One divisor per rotary pair from a GGUF tensor (rope_freqs.weight, rope_factors_long.weight, ...).
Status read_pair_factors(const File& f, const gguf::TensorInfo& ti, const LlamaConfig& c, std::vector<float>& out) {
    if (ti.n_elements != uint64_t(std::max(c.rope_dim / 2, 0)))
        return err(f.path, ": tensor '", ti.name, "' has ", ti.n_elements, " values but the rotary dimension ",
                   c.rope_dim, " has ", c.rope_dim / 2, " pairs");
    if (!can_dequantize(ti.type))
        return err(f.path, ": tensor '", ti.name, "' has type ", dtype_name(ti.type), ", which cannot be read");
    out.resize(size_t(ti.n_elements));
    Status s = dequantize(ti.type, ti.data, out.data(), int64_t(out.size()));
    if (!s.ok()) return err(f.path, ": tensor '", ti.name, "': ", s.message());
    return {};
}

// RoPE scaling as llama.cpp stores it: rope_freqs.weight (one divisor per rotary pair; what its
// converter writes for Llama 3.x "llama3" scaling), <arch>.rope.scaling.type "linear" with its
// factor, or Phi-3 longrope's rope_factors_short/long.weight with
// <arch>.rope.scaling.original_context_length and attn_factor. Other scaling types are refused by
// name.
Status read_rope_scaling(const File& f, const std::string& p, LlamaConfig& c) {
    auto type = f.get_string(p + "rope.scaling.type");
    if (!type.ok()) return type.error();
    if (type->has_value() && **type != "none") {
        if (**type != "linear")
            return err(f.path, ": ", p, "rope.scaling.type '", **type,
                       "' is not supported (supported: rope_freqs.weight, linear, rope_factors_long/short)");
        float factor = 1.0f;
        EDGE_TRY(read_float(f, p + "rope.scaling.factor", factor));
        if (!(factor > 0.0f)) return err(f.path, ": ", p, "rope.scaling.factor is ", factor);
        if (factor != 1.0f) {
            c.rope_freq_factors.assign(size_t(std::max(c.rope_dim / 2, 0)), factor);
            c.rope_scaling = "linear: factor " + std::to_string(factor);
        }
    }
    if (const gguf::TensorInfo* ti = f.find_tensor(kRopeFreqs)) {
        std::vector<float> ff;
        EDGE_TRY(read_pair_factors(f, *ti, c, ff));
        if (!c.rope_freq_factors.empty())
            for (size_t i = 0; i < ff.size(); ++i) ff[i] *= c.rope_freq_factors[i];
        c.rope_freq_factors = std::move(ff);
        c.rope_scaling =
            c.rope_scaling.empty() ? std::string("rope_freqs.weight") : c.rope_scaling + " and rope_freqs.weight";
    }
    const gguf::TensorInfo* lo = f.find_tensor(kRopeLong);
    const gguf::TensorInfo* sh = f.find_tensor(kRopeShort);
    if (lo || sh) {
        if (!lo || !sh)
            return err(f.path, ": tensor '", lo ? kRopeShort : kRopeLong, "' is missing beside '",
                       lo ? kRopeLong : kRopeShort, "' (Phi-3 longrope needs both)");
        if (f.find_tensor(kRopeFreqs) || !c.rope_freq_factors.empty())
            return err(f.path, ": the file holds both ", kRopeFreqs, " (or linear scaling) and Phi-3 longrope factors");
        EDGE_TRY(read_pair_factors(f, *sh, c, c.rope_freq_factors));
        EDGE_TRY(read_pair_factors(f, *lo, c, c.rope_long_freq_factors));
        EDGE_TRY(read_int(f, p + "rope.scaling.original_context_length", true, c.rope_original_context));
        c.rope_attn_factor = model::longrope_attention_factor(c.context_length, c.rope_original_context);
        EDGE_TRY(read_float(f, p + "rope.scaling.attn_factor", c.rope_attn_factor));
        c.rope_scaling = model::longrope_description(c);
    }
    return {};
}

// `arch`: the file's general.architecture, the prefix of its keys.
Status read_config(const File& f, const std::string& arch, Model& m) {
    LlamaConfig& c = m.config;
    const std::string p = arch + ".";
    EDGE_TRY(read_int(f, p + "embedding_length", true, c.dim));
    EDGE_TRY(read_int(f, p + "block_count", true, c.n_layers));
    EDGE_TRY(read_int(f, p + "feed_forward_length", true, c.hidden_dim));
    EDGE_TRY(read_int(f, p + "attention.head_count", true, c.n_heads));
    c.n_kv_heads = c.n_heads;
    EDGE_TRY(read_int(f, p + "attention.head_count_kv", false, c.n_kv_heads));
    EDGE_TRY(read_int(f, p + "context_length", false, c.context_length));
    if (c.n_heads <= 0) return err(f.path, ": ", p, "attention.head_count is ", c.n_heads);
    c.head_dim = c.dim / c.n_heads;
    EDGE_TRY(read_int(f, p + "attention.key_length", false, c.head_dim));
    c.rope_dim = c.head_dim;
    EDGE_TRY(read_int(f, p + "rope.dimension_count", false, c.rope_dim));
    EDGE_TRY(read_float(f, p + "rope.freq_base", c.rope_theta));
    EDGE_TRY(read_float(f, p + "attention.layer_norm_rms_epsilon", c.norm_eps));
    // Vocabulary: explicit key, else the token list, else the embedding's outer dimension.
    EDGE_TRY(read_int(f, p + "vocab_size", false, c.vocab_size));
    if (c.vocab_size == 0) {
        if (const Value* t = f.find("tokenizer.ggml.tokens"); t && t->type == ValueType::Array)
            c.vocab_size = int(std::min<uint64_t>(t->count(), INT32_MAX));
    }
    if (c.vocab_size == 0) {
        if (const auto* e = f.find_tensor("token_embd.weight"); e && e->ne.size() == 2 && e->ne[1] <= INT32_MAX)
            c.vocab_size = int(e->ne[1]);
    }
    c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
    EDGE_TRY(read_rope_scaling(f, p, c));
    return check_llama_config(c, f.path);
}

Status read_tokenizer(const File& f, TokenizerSpec& t) {
    auto model = f.get_string("tokenizer.ggml.model");
    if (!model.ok()) return model.error();
    if (!model->has_value()) return {};  // no embedded tokenizer
    t.model = **model;
    if (t.model != "llama" && t.model != "gpt2")
        return err(f.path, ": tokenizer model '", t.model, "' is not supported (expected 'llama' or 'gpt2')");
    t.source = f.path;
    auto pre = f.get_string("tokenizer.ggml.pre");
    if (!pre.ok()) return pre.error();
    if (pre->has_value()) t.pre = **pre;
    auto chat = f.get_string("tokenizer.chat_template");  // a Jinja template, as tokenizer_config.json's
    if (!chat.ok()) return chat.error();
    if (chat->has_value()) {
        t.chat_template = **chat;
        t.chat_template_source = f.path;
    }

    const Value* tokens = f.find("tokenizer.ggml.tokens");
    if (!tokens || tokens->type != ValueType::Array || tokens->elem != ValueType::String)
        return err(f.path, ": tokenizer.ggml.tokens is missing or not an array of strings");
    t.tokens = tokens->strings;
    const uint64_t n = t.tokens.size();
    auto numeric_array = [&](const char* key, const Value*& out) -> Status {
        out = f.find(key);
        if (!out) return {};
        if (out->type != ValueType::Array || out->elem == ValueType::String || out->elem == ValueType::Array)
            return err(f.path, ": ", key, " is not a numeric array");
        if (out->count() != n)
            return err(f.path, ": ", key, " has ", out->count(), " entries but there are ", n, " tokens");
        return {};
    };
    const Value* scores = nullptr;
    const Value* types = nullptr;
    EDGE_TRY(numeric_array("tokenizer.ggml.scores", scores));
    EDGE_TRY(numeric_array("tokenizer.ggml.token_type", types));
    if (scores)
        for (uint64_t i = 0; i < n; ++i) t.scores.push_back(float(scores->float_at(i)));
    if (types)
        for (uint64_t i = 0; i < n; ++i) t.token_types.push_back(int32_t(types->int_at(i)));
    if (const Value* merges = f.find("tokenizer.ggml.merges")) {
        if (merges->type != ValueType::Array || merges->elem != ValueType::String)
            return err(f.path, ": tokenizer.ggml.merges is not an array of strings");
        t.merges = merges->strings;
    }
    auto id = [&](const char* key, int& out) -> Status {
        auto v = f.get_int(key);
        if (!v.ok()) return v.error();
        if (!v->has_value()) return {};
        // llama.cpp writes "no such token" as -1 stored in a u32 (4294967295): absent, not an error.
        if (**v == -1 || **v == int64_t(UINT32_MAX)) return {};
        if (**v < 0 || uint64_t(**v) >= n)
            return err(f.path, ": ", key, " is ", **v, ", outside the vocabulary of ", n, " tokens");
        out = int(**v);
        return {};
    };
    EDGE_TRY(id("tokenizer.ggml.bos_token_id", t.bos_id));
    EDGE_TRY(id("tokenizer.ggml.eos_token_id", t.eos_id));
    EDGE_TRY(id("tokenizer.ggml.unknown_token_id", t.unk_id));
    EDGE_TRY(id("tokenizer.ggml.padding_token_id", t.pad_id));
    // End-of-turn / end-of-message tokens (llama.cpp's eot and eom, set on instruct models) also
    // end generation.
    t.add_eos(t.eos_id);
    for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
        int extra = -1;
        EDGE_TRY(id(key, extra));
        t.add_eos(extra);
    }
    auto flag = [&](const char* key, bool& out) -> Status {
        auto v = f.get_bool(key);
        if (!v.ok()) return v.error();
        if (v->has_value()) out = **v;
        return {};
    };
    EDGE_TRY(flag("tokenizer.ggml.add_bos_token", t.add_bos));
    // SentencePiece models prepend a space unless told otherwise; byte-level BPE does not.
    t.add_space_prefix = t.model == "llama";
    EDGE_TRY(flag("tokenizer.ggml.add_space_prefix", t.add_space_prefix));
    return {};
}

void read_metadata(const File& f, Model& m) {
    m.metadata.emplace_back("gguf.version", std::to_string(f.version));
    m.metadata.emplace_back("gguf.tensor_count", std::to_string(f.tensors.size()));
    for (const auto& [k, v] : f.kv) m.metadata.emplace_back(k, v.to_string());
}

std::string dims_text(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

// An IR tensor made of rows [row0, row0 + rows) of a stored tensor (a fused phi3 projection), with
// the rotate-half -> interleaved permutation of Q/K rows when heads > 0.
struct RowSlice {
    std::string stored;
    int64_t row0 = 0, rows = 0;
    int heads = 0;
};

// Reads tensors from the parsed file: F32 data aliases the mapping when suitably aligned,
// everything else is dequantized into owned (counted) storage; sliced tensors row by row.
class GgufWeights final : public model::WeightSource {
public:
    GgufWeights(std::shared_ptr<const File> f, std::map<std::string, RowSlice> slices, int head_dim, int rope_dim)
        : f_(std::move(f)), slices_(std::move(slices)), head_dim_(head_dim), rope_dim_(rope_dim) {
        for (size_t k = 0; k < f_->tensors.size(); ++k) index_.emplace(f_->tensors[k].name, k);
    }

    Result<Tensor> load_f32(const Tensor& want) const override {
        const RowSlice* slice = find_slice(want.name);
        const gguf::TensorInfo* ti = find(slice ? slice->stored : want.name);
        if (!ti) return err(f_->path, ": tensor '", want.name, "' is not in the file");
        const File& f = *f_;
        if (!can_dequantize(ti->type))
            return err(f.path, ": tensor '", ti->name, "' has type ", dtype_name(ti->type),
                       ", which cannot be converted to F32");
        if (f.mapping) f.mapping->will_need(size_t(ti->data - f.mapping->data()), size_t(ti->nbytes));
        if (slice) return load_rows(*ti, *slice, want);
        Tensor t = model::make_unread(ti->name, ti->shape(), ti->type);
        const bool aligned = (reinterpret_cast<uintptr_t>(ti->data) % 32) == 0;
        if (ti->type == DType::F32 && f.mapping && aligned) {
            t.data = f.mapping->share(size_t(ti->data - f.mapping->data()));
            return t;
        }
        t.data = model::alloc_counted_f32(int64_t(ti->n_elements));
        Status s = dequantize(ti->type, ti->data, t.f32_mut(), int64_t(ti->n_elements));
        if (!s.ok()) return err(f.path, ": tensor '", ti->name, "': ", s.message());
        return t;
    }

    Result<Tensor> load_stored(const Tensor& want) const override {
        const RowSlice* slice = find_slice(want.name);
        const gguf::TensorInfo* ti = find(slice ? slice->stored : want.name);
        if (!ti || want.shape.size() != 2 || !model::runs_as_stored(ti->type)) return load_f32(want);
        const File& f = *f_;
        const int64_t cols = int64_t(ti->ne[0]), stored_rows = int64_t(ti->n_elements) / cols;
        // Kept in its own type (not repacked): aliased where the kernels' reads stay aligned.
        const bool plain = model::as_stored_type(ti->type) == ti->type;
        const size_t align = dtype_block_elems(ti->type) > 1 ? 4 : size_t(dtype_block_bytes(ti->type));
        if (!slice && plain && f.mapping && reinterpret_cast<uintptr_t>(ti->data) % align == 0) {
            f.mapping->will_run(size_t(ti->data - f.mapping->data()), size_t(ti->nbytes));
            Tensor t = model::make_unread(ti->name, ti->shape(), ti->type);
            t.type = ti->type;
            t.nbytes = size_t(ti->nbytes);
            t.data = f.mapping->share(size_t(ti->data - f.mapping->data()));
            return t;
        }
        if (f.mapping) f.mapping->will_need(size_t(ti->data - f.mapping->data()), size_t(ti->nbytes));
        const uint64_t row_bytes = ti->nbytes / uint64_t(stored_rows);
        auto r = model::rows_as_stored(want.name, want.shape, ti->type, [&](int64_t row) {
            const int64_t from =
                slice ? slice->row0 + model::rotate_half_source_row(row, slice->heads, head_dim_, rope_dim_) : row;
            return ti->data + uint64_t(from) * row_bytes;
        });
        if (!r.ok()) return err(f.path, ": ", r.message());
        return r;
    }

    void release(const Tensor& want) const override {
        const RowSlice* slice = find_slice(want.name);
        const gguf::TensorInfo* ti = find(slice ? slice->stored : want.name);
        if (ti && f_->mapping) f_->mapping->release(size_t(ti->data - f_->mapping->data()), size_t(ti->nbytes));
    }

private:
    Result<Tensor> load_rows(const gguf::TensorInfo& ti, const RowSlice& r, const Tensor& want) const {
        if (want.shape.size() == 1) {  // a bias permuted per head (qwen2's Q/K): element by element
            const int64_t n = int64_t(ti.n_elements);
            std::vector<float> all(static_cast<size_t>(n));
            Status s = dequantize(ti.type, ti.data, all.data(), n);
            if (!s.ok()) return err(f_->path, ": tensor '", ti.name, "': ", s.message());
            Tensor t = model::make_unread(want.name, want.shape, ti.type);
            t.data = model::alloc_counted_f32(t.numel());
            for (int64_t i = 0; i < r.rows; ++i)
                t.f32_mut()[i] = all[size_t(r.row0 + model::rotate_half_source_row(i, r.heads, head_dim_, rope_dim_))];
            return t;
        }
        const int64_t cols = int64_t(ti.ne[0]), stored_rows = int64_t(ti.n_elements) / cols;
        const uint64_t row_bytes = ti.nbytes / uint64_t(stored_rows);
        Tensor t = model::make_unread(want.name, want.shape, ti.type);
        t.data = model::alloc_counted_f32(t.numel());
        float* dst = t.f32_mut();
        for (int64_t row = 0; row < r.rows; ++row) {
            const int64_t from = r.row0 + model::rotate_half_source_row(row, r.heads, head_dim_, rope_dim_);
            Status s = dequantize(ti.type, ti.data + uint64_t(from) * row_bytes, dst + row * cols, cols);
            if (!s.ok()) return err(f_->path, ": tensor '", ti.name, "': ", s.message());
        }
        return t;
    }
    const gguf::TensorInfo* find(const std::string& name) const {
        auto it = index_.find(name);
        return it == index_.end() ? nullptr : &f_->tensors[it->second];
    }
    const RowSlice* find_slice(const std::string& name) const {
        auto it = slices_.find(name);
        return it == slices_.end() ? nullptr : &it->second;
    }
    std::shared_ptr<const File> f_;
    std::map<std::string, size_t> index_;
    std::map<std::string, RowSlice> slices_;
    int head_dim_ = 0, rope_dim_ = 0;
};

// The IR tensors of a file whose Q/K rows are in the rotate-half (NEOX) layout, phi3 and qwen2:
// a phi3 file's fused blk.N.attn_qkv (rows q, k, v) and blk.N.ffn_up (rows gate, up) become
// attn_q/attn_k/attn_v and ffn_gate/ffn_up slices, and Q/K rows (also when stored apart) and
// qwen2's Q/K biases are permuted out of the rotate-half layout. Every shape is checked against
// the configuration before anything is read.
Status neox_tensors(const File& f, const LlamaConfig& c, std::vector<Tensor>& tensors,
                    std::map<std::string, RowSlice>& slices) {
    const int64_t D = c.dim, Q = c.q_dim(), KV = c.kv_dim(), F = c.hidden_dim;
    auto add = [&](const std::string& name, const gguf::TensorInfo& ti, int64_t row0, int64_t rows, int heads) {
        tensors.push_back(model::make_unread(name, {rows, D}, ti.type));
        slices[name] = RowSlice{ti.name, row0, rows, heads};
    };
    auto fused = [&](const gguf::TensorInfo& ti, int64_t rows) -> Status {
        const std::vector<int64_t> want{rows, D};
        if (ti.shape() != want)
            return err(f.path, ": tensor '", ti.name, "' has shape ", dims_text(ti.shape()), ", expected ",
                       dims_text(want), " (the configuration's fused rows)");
        return {};
    };
    for (const auto& ti : f.tensors) {
        const std::string& n = ti.name;
        if (is_rope_tensor(n)) continue;
        const size_t dot = n.find('.', 4);
        const std::string blk = n.rfind("blk.", 0) == 0 && dot != std::string::npos ? n.substr(0, dot + 1) : "";
        const std::string part = blk.empty() ? n : n.substr(blk.size());
        if (!blk.empty() && part == "attn_qkv.weight") {
            EDGE_TRY(fused(ti, Q + 2 * KV));
            add(blk + "attn_q.weight", ti, 0, Q, c.n_heads);
            add(blk + "attn_k.weight", ti, Q, KV, c.n_kv_heads);
            add(blk + "attn_v.weight", ti, Q + KV, KV, 0);
        } else if (!blk.empty() && part == "ffn_up.weight" && !f.find_tensor(blk + "ffn_gate.weight")) {
            EDGE_TRY(fused(ti, 2 * F));
            add(blk + "ffn_gate.weight", ti, 0, F, 0);
            add(blk + "ffn_up.weight", ti, F, F, 0);
        } else if (!blk.empty() && (part == "attn_q.weight" || part == "attn_k.weight")) {
            const int64_t rows = part == "attn_q.weight" ? Q : KV;
            EDGE_TRY(fused(ti, rows));
            add(n, ti, 0, rows, part == "attn_q.weight" ? c.n_heads : c.n_kv_heads);
        } else if (!blk.empty() && (part == "attn_q.bias" || part == "attn_k.bias")) {
            const int64_t rows = part == "attn_q.bias" ? Q : KV;
            if (ti.shape() != std::vector<int64_t>{rows})
                return err(f.path, ": tensor '", n, "' has shape ", dims_text(ti.shape()), ", expected ",
                           dims_text({rows}), " (a bias of the configuration's projection)");
            tensors.push_back(model::make_unread(n, {rows}, ti.type));
            slices[n] = RowSlice{ti.name, 0, rows, part == "attn_q.bias" ? c.n_heads : c.n_kv_heads};
        } else {
            tensors.push_back(model::make_unread(n, ti.shape(), ti.type));
        }
    }
    return {};
}

Result<Model> import_shared(std::shared_ptr<const File> fp, bool lazy, Progress* progress) {
    const File& f = *fp;
    Model m;
    m.source_path = f.path;
    m.source_format = "gguf";
    auto arch = f.get_string("general.architecture");
    if (!arch.ok()) return arch.error();
    if (!arch->has_value()) return err(f.path, ": general.architecture is missing");
    if (**arch != "llama" && **arch != "phi3" && **arch != "qwen2")
        return err(f.path, ": architecture '", **arch,
                   "' is not supported (EdgeStudio imports 'llama', 'phi3' and 'qwen2' GGUF models)");
    const std::string file_arch = **arch;
    m.architecture = "llama";  // the IR's family: phi3's fused projections are split below
    auto name = f.get_string("general.name");
    if (!name.ok()) return name.error();
    m.name = name->value_or("");
    if (f.tensors.empty()) {
        // A vocabulary-only file (llama.cpp ships such files for its tokenizer tests): its
        // tokenizer and metadata, for the commands that read no weights.
        const Status config = read_config(f, file_arch, m);  // hyperparameters are optional for inspection
        if (!lazy) {
            if (!config.ok()) return config.error();
            return err(f.path,
                       ": the file holds no tensors (a vocabulary-only GGUF): it can be inspected and "
                       "tokenized, not run or converted");
        }
        EDGE_TRY(read_tokenizer(f, m.tokenizer));
        if (m.tokenizer.empty()) return err(f.path, ": the file holds neither tensors nor a tokenizer");
        read_metadata(f, m);
        m.metadata.emplace_back("gguf.vocab_only", "true");
        return m;
    }
    EDGE_TRY(read_config(f, file_arch, m));
    EDGE_TRY(read_tokenizer(f, m.tokenizer));
    read_metadata(f, m);

    // Every shape is checked against the configuration before anything big is read: the tensors
    // start as unread tensors, read through the source afterwards (or later, when lazy).
    m.tensors.reserve(f.tensors.size());
    std::map<std::string, RowSlice> slices;
    if (file_arch == "phi3" || file_arch == "qwen2") {
        EDGE_TRY(neox_tensors(f, m.config, m.tensors, slices));
    } else {
        for (const auto& ti : f.tensors)
            if (!is_rope_tensor(ti.name)) m.tensors.push_back(model::make_unread(ti.name, ti.shape(), ti.type));
    }
    m.config.tied_embeddings = m.find("output.weight") == nullptr;
    // Q/K/V biases: qwen2 always has them; a llama file may carry them too (llama.cpp reads
    // them when present).
    m.config.attn_qkv_bias = m.find("blk.0.attn_q.bias") != nullptr;
    m.weights = std::make_shared<GgufWeights>(std::move(fp), std::move(slices), m.config.head_dim, m.config.rope_dim);
    EDGE_TRY(validate_and_finalize_llama(m));
    if (lazy) return m;
    EDGE_TRY(model::load_weights(m, progress));
    EDGE_TRY(validate_llama(m));
    return m;
}

}  // namespace

Result<Model> import_gguf(const gguf::File& f, Progress* progress, bool lazy_weights) {
    return import_shared(std::make_shared<const File>(f), lazy_weights, progress);
}

Result<Model> load_gguf_model(const std::string& path, Progress* progress, bool lazy_weights) {
    report(progress, 0.0, "reading GGUF header");
    auto f = gguf::open(path);
    if (!f.ok()) return f.error();
    return import_shared(std::make_shared<const File>(std::move(f).value()), lazy_weights, progress);
}

}  // namespace edge::model
