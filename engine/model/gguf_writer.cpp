// GGUF writer (see gguf_writer.h). Writes to "<path>.tmp" and renames on finish(), so a failed
// or cancelled write never leaves a half file under the real name (nor clobbers an old one).
#include "gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/core/half.h"
#include "engine/model/gguf_export.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model::gguf {

Writer::Writer(uint32_t version, uint32_t alignment) : version_(version), alignment_(alignment ? alignment : 32) {}

Writer::~Writer() {
    if (out_) {
        std::fclose(out_);
        std::remove((path_ + ".tmp").c_str());
    }
}

void Writer::set(const std::string& key, Value v) {
    for (auto& [k, old] : kv_)
        if (k == key) {
            old = std::move(v);
            return;
        }
    kv_.emplace_back(key, std::move(v));
}

Status Writer::add_tensor(const std::string& name, DType type, const std::vector<int64_t>& shape) {
    if (out_) return err(name, ": tensors must be declared before the GGUF file is opened");
    if (!ggml_type_id(type)) return err(name, ": type ", dtype_name(type), " has no GGUF equivalent");
    if (shape.size() > kMaxDims) return err(name, ": GGUF tensors have at most ", kMaxDims, " dimensions");
    Decl d{name, type, shape};
    int64_t n = 1;
    for (int64_t s : shape) {
        if (s < 0) return err(name, ": negative dimension in shape");
        n *= s;
    }
    const int64_t inner = shape.empty() ? 1 : shape.back();
    if (inner % dtype_block_elems(type) != 0)
        return err(name, ": rows of ", inner, " elements do not fill whole ", dtype_name(type), " blocks");
    d.nbytes = dtype_bytes(type, n);
    tensors_.push_back(std::move(d));
    return {};
}

Status Writer::put(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, out_) != n) return err(path_, ": write failed: ", std::strerror(errno));
    pos_ += n;
    return {};
}

Status Writer::put_string(const std::string& s) {
    const uint64_t n = s.size();
    EDGE_TRY(put(&n, 8));
    return put(s.data(), s.size());
}

Status Writer::put_value(const Value& v) {
    auto scalar = [&](auto x) { return put(&x, sizeof x); };
    switch (v.type) {
        case ValueType::U8: return scalar(uint8_t(v.i));
        case ValueType::I8: return scalar(int8_t(v.i));
        case ValueType::U16: return scalar(uint16_t(v.i));
        case ValueType::I16: return scalar(int16_t(v.i));
        case ValueType::U32: return scalar(uint32_t(v.i));
        case ValueType::I32: return scalar(int32_t(v.i));
        case ValueType::U64: return scalar(uint64_t(v.i));
        case ValueType::I64: return scalar(int64_t(v.i));
        case ValueType::F32: return scalar(float(v.f));
        case ValueType::F64: return scalar(double(v.f));
        case ValueType::Bool: return scalar(uint8_t(v.i ? 1 : 0));
        case ValueType::String: return put_string(v.s);
        case ValueType::Array: break;
    }
    EDGE_TRY(scalar(uint32_t(v.elem)));
    EDGE_TRY(scalar(uint64_t(v.count())));
    if (v.elem == ValueType::String) {
        for (const auto& s : v.strings) EDGE_TRY(put_string(s));
        return {};
    }
    if (v.elem == ValueType::Array) {
        for (const auto& item : v.items) {
            if (item.type != ValueType::Array) return err(path_, ": nested array holds a non-array value");
            EDGE_TRY(put_value(item));
        }
        return {};
    }
    return put(v.raw.data(), v.raw.size());
}

Status Writer::pad_to(uint64_t a) {
    static const uint8_t zeros[64] = {};
    while (pos_ % a) EDGE_TRY(put(zeros, size_t(std::min<uint64_t>(a - pos_ % a, sizeof zeros))));
    return {};
}

Status Writer::open(const std::string& path) {
    if (out_) return err(path, ": writer already open");
    path_ = path;
    if (alignment_ != 32) set("general.alignment", Value::of_u32(alignment_));
    uint64_t off = 0;
    for (Decl& d : tensors_) {
        d.offset = off;
        off = (off + d.nbytes + alignment_ - 1) / alignment_ * alignment_;
    }
    out_ = std::fopen((path + ".tmp").c_str(), "wb");
    if (!out_) return err(path, ": cannot create: ", std::strerror(errno));
    const uint32_t magic = 0x46554747u;
    EDGE_TRY(put(&magic, 4));
    EDGE_TRY(put(&version_, 4));
    const uint64_t nt = tensors_.size(), nkv = kv_.size();
    EDGE_TRY(put(&nt, 8));
    EDGE_TRY(put(&nkv, 8));
    for (const auto& [k, v] : kv_) {
        EDGE_TRY(put_string(k));
        const uint32_t t = uint32_t(v.type);
        EDGE_TRY(put(&t, 4));
        EDGE_TRY(put_value(v));
    }
    for (const Decl& d : tensors_) {
        EDGE_TRY(put_string(d.name));
        const uint32_t nd = uint32_t(d.shape.size());
        EDGE_TRY(put(&nd, 4));
        for (auto it = d.shape.rbegin(); it != d.shape.rend(); ++it) {  // ggml order: innermost first
            const uint64_t e = uint64_t(*it);
            EDGE_TRY(put(&e, 8));
        }
        const uint32_t id = *ggml_type_id(d.type);
        EDGE_TRY(put(&id, 4));
        EDGE_TRY(put(&d.offset, 8));
    }
    EDGE_TRY(pad_to(alignment_));
    current_ = 0;
    written_ = 0;
    // Zero-byte tensors are complete before anything is written.
    while (current_ < tensors_.size() && tensors_[current_].nbytes == 0) ++current_;
    return {};
}

Status Writer::advance(size_t nbytes) {
    written_ += nbytes;
    if (written_ == tensors_[current_].nbytes) {
        EDGE_TRY(pad_to(alignment_));
        written_ = 0;
        ++current_;
        while (current_ < tensors_.size() && tensors_[current_].nbytes == 0) ++current_;
    }
    return {};
}

Status Writer::write_raw(const void* data, size_t nbytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (nbytes > 0) {
        if (!out_) return err(path_, ": writer is not open");
        if (current_ >= tensors_.size()) return err(path_, ": more tensor data than the declared tensors hold");
        const uint64_t room = tensors_[current_].nbytes - written_;
        const size_t n = size_t(std::min<uint64_t>(room, nbytes));
        EDGE_TRY(put(p, n));
        EDGE_TRY(advance(n));
        p += n;
        nbytes -= n;
    }
    return {};
}

Status Writer::write_f32(const float* data, int64_t n) {
    if (!out_) return err(path_, ": writer is not open");
    while (n > 0) {
        if (current_ >= tensors_.size()) return err(path_, ": more tensor data than the declared tensors hold");
        const Decl& d = tensors_[current_];
        const int64_t left = int64_t((d.nbytes - written_) / uint64_t(dtype_block_bytes(d.type)));
        const int64_t k = std::min(left, n);
        if (d.type == DType::F32) {
            EDGE_TRY(write_raw(data, size_t(k) * 4));
        } else if (d.type == DType::F16 || d.type == DType::BF16) {
            constexpr int64_t kChunk = 1 << 16;
            for (int64_t i = 0; i < k; i += kChunk) {
                const int64_t m = std::min(kChunk, k - i);
                scratch_.resize(size_t(m));
                for (int64_t j = 0; j < m; ++j)
                    scratch_[size_t(j)] = d.type == DType::F16 ? f32_to_f16(data[i + j]) : f32_to_bf16(data[i + j]);
                EDGE_TRY(write_raw(scratch_.data(), size_t(m) * 2));
            }
        } else {
            return err(path_, ": tensor '", d.name, "' is ", dtype_name(d.type),
                       "; write_f32 converts to F32/F16/BF16 only");
        }
        data += k;
        n -= k;
    }
    return {};
}

Status Writer::finish() {
    if (!out_) return err(path_, ": writer is not open");
    if (current_ < tensors_.size())
        return err(path_, ": tensor '", tensors_[current_].name, "' is incomplete (", written_, " of ",
                   tensors_[current_].nbytes, " bytes written)");
    const bool flushed = std::fflush(out_) == 0;
    const bool closed = std::fclose(out_) == 0;
    out_ = nullptr;
    const std::string tmp = path_ + ".tmp";
    if (!flushed || !closed) {
        std::remove(tmp.c_str());
        return err(path_, ": write failed: ", std::strerror(errno));
    }
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
        const int e = errno;
        std::remove(tmp.c_str());
        return err(path_, ": cannot rename the finished file into place: ", std::strerror(e));
    }
    return {};
}

void set_architecture(Writer& w, const std::string& arch, const LlamaConfig& c) {
    const std::string p = arch + ".";
    w.set("general.architecture", Value::of_string(arch));
    w.set(p + "context_length", Value::of_u32(uint32_t(c.context_length)));
    w.set(p + "embedding_length", Value::of_u32(uint32_t(c.dim)));
    w.set(p + "block_count", Value::of_u32(uint32_t(c.n_layers)));
    w.set(p + "feed_forward_length", Value::of_u32(uint32_t(c.hidden_dim)));
    w.set(p + "attention.head_count", Value::of_u32(uint32_t(c.n_heads)));
    w.set(p + "attention.head_count_kv", Value::of_u32(uint32_t(c.n_kv_heads)));
    w.set(p + "attention.layer_norm_rms_epsilon", Value::of_f32(c.norm_eps));
    w.set(p + "rope.dimension_count", Value::of_u32(uint32_t(c.rope_dim)));
    w.set(p + "rope.freq_base", Value::of_f32(c.rope_theta));
    if (c.head_dim != 0 && c.n_heads != 0 && c.head_dim != c.dim / c.n_heads)
        w.set(p + "attention.key_length", Value::of_u32(uint32_t(c.head_dim)));
    w.set(p + "vocab_size", Value::of_u32(uint32_t(c.vocab_size)));
}

void set_llama_metadata(Writer& w, const LlamaConfig& c, const TokenizerSpec& tok, const std::string& name,
                        const std::string& arch) {
    set_architecture(w, arch, c);
    if (!name.empty()) w.set("general.name", Value::of_string(name));
    if (tok.empty() || tok.model == "hf") return;
    w.set("tokenizer.ggml.model", Value::of_string(tok.model));
    if (!tok.pre.empty()) w.set("tokenizer.ggml.pre", Value::of_string(tok.pre));
    w.set("tokenizer.ggml.tokens", Value::array_of_strings(tok.tokens));
    if (!tok.scores.empty()) w.set("tokenizer.ggml.scores", Value::array_of_f32(tok.scores));
    if (!tok.token_types.empty()) w.set("tokenizer.ggml.token_type", Value::array_of_i32(tok.token_types));
    if (!tok.merges.empty()) w.set("tokenizer.ggml.merges", Value::array_of_strings(tok.merges));
    auto id = [&](const char* key, int v) {
        if (v >= 0) w.set(key, Value::of_u32(uint32_t(v)));
    };
    id("tokenizer.ggml.bos_token_id", tok.bos_id);
    id("tokenizer.ggml.eos_token_id", tok.eos_id);
    id("tokenizer.ggml.unknown_token_id", tok.unk_id);
    id("tokenizer.ggml.padding_token_id", tok.pad_id);
    // GGUF names one more id that ends generation (end of turn); a third and later are not kept.
    for (int32_t e : tok.eos_ids)
        if (e != tok.eos_id) {
            id("tokenizer.ggml.eot_token_id", e);
            break;
        }
    w.set("tokenizer.ggml.add_bos_token", Value::of_bool(tok.add_bos));
    if (!tok.chat_template.empty()) w.set("tokenizer.chat_template", Value::of_string(tok.chat_template));
    w.set("tokenizer.ggml.add_space_prefix", Value::of_bool(tok.add_space_prefix));
}

}  // namespace edge::model::gguf

namespace edge::model {

Status write_gguf_model(const Model& m, const std::string& path, DType type, Progress* progress) {
    if (type != DType::F32 && type != DType::F16 && type != DType::BF16)
        return err(path, ": GGUF export writes F32, F16 or BF16 tensors, not ", dtype_name(type));
    model::GgufExportOptions o;
    o.float_type = type;
    auto r = model::export_gguf(m, path, o, progress);
    if (!r.ok()) return r.error();
    return {};
}

}  // namespace edge::model
