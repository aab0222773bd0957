#include "engine/model/gguf_export.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "engine/core/ggml_blocks.h"
#include "engine/core/half.h"
#include "engine/core/quant_format.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/safetensors.h"
#include "engine/model/weights.h"
#include "engine/tokenizer/gguf_translate.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model {

namespace {

// Whether a QI tensor holds exactly ggml's Q8_0 / Q4_0 numbers.
bool is_ggml_block_layout(const Tensor& t) {
    if (!t.quant || (t.type != DType::QI8 && t.type != DType::QI4)) return false;
    const QuantInfo& q = *t.quant;
    return q.symmetric && q.grouping == QGrouping::Group && q.group_size == kGgmlBlock && q.scale_type == QScale::F16 &&
           q.cols % kGgmlBlock == 0 && t.shape.size() == 2;
}

// Q8_0 / Q4_0 blocks of a QI tensor in the ggml layout: per block, its half scale, then its codes
// (INT4 nibbles are already in ggml's order).
std::vector<uint8_t> ggml_blocks_of(const Tensor& t) {
    const QuantInfo& q = *t.quant;
    const uint8_t* base = t.data.get();
    const bool q8 = q.bits == 8;
    const size_t block_bytes = q8 ? kQ80Bytes : kQ40Bytes, code_bytes = block_bytes - 2;
    const int64_t per_row = q.cols / kGgmlBlock;
    std::vector<uint8_t> out(size_t(q.rows * per_row) * block_bytes);
    for (int64_t r = 0; r < q.rows; ++r)
        for (int64_t b = 0; b < per_row; ++b) {
            uint8_t* dst = out.data() + size_t(r * per_row + b) * block_bytes;
            std::memcpy(dst, base + q.scales_offset + size_t(r * q.groups_per_row + b) * 2, 2);
            std::memcpy(dst + 2, base + size_t(r * q.row_bytes) + size_t(b) * code_bytes, code_bytes);
        }
    return out;
}

std::vector<uint8_t> ggml_blocks_from_f32(const float* x, int64_t n, DType type) {
    const size_t block_bytes = type == DType::Q8_0 ? kQ80Bytes : kQ40Bytes;
    std::vector<uint8_t> out(size_t(n / kGgmlBlock) * block_bytes);
    for (int64_t b = 0; b < n / kGgmlBlock; ++b) {
        if (type == DType::Q8_0)
            ggml_q8_0_block(x + b * kGgmlBlock, out.data() + size_t(b) * block_bytes);
        else
            ggml_q4_0_block(x + b * kGgmlBlock, out.data() + size_t(b) * block_bytes);
    }
    return out;
}

// The values of a resident tensor as F32 (QI through its codes and scales).
Result<std::vector<float>> values_of(const Tensor& t) {
    const int64_t n = t.numel();
    std::vector<float> v(static_cast<size_t>(n));
    const uint8_t* base = t.data.get();
    switch (t.type) {
        case DType::F32: std::memcpy(v.data(), t.f32(), size_t(n) * 4); break;
        case DType::F16:
        case DType::BF16: stored_to_f32(base, t.type, n, v.data()); break;
        case DType::QI8:
        case DType::QI4: {
            const QuantInfo& q = *t.quant;
            for (int64_t r = 0; r < q.rows; ++r)
                for (int64_t c = 0; c < q.cols; ++c) {
                    const int64_t g = q.group_of(r, c);
                    v[size_t(r * q.cols + c)] =
                        quant_scale(q, base, g) * float(quant_code(q, base, r, c) - quant_zero(q, base, g));
                }
            break;
        }
        default: return err("tensor '", t.name, "' has type ", dtype_name(t.type), ", which cannot be exported");
    }
    return v;
}

std::vector<uint8_t> halves_of(const float* x, int64_t n, DType type) {
    std::vector<uint8_t> out(size_t(n) * 2);
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = type == DType::BF16 ? f32_to_bf16(x[i]) : f32_to_f16(x[i]);
        std::memcpy(out.data() + size_t(i) * 2, &h, 2);
    }
    return out;
}

// How one tensor is written: its GGUF type, and its bytes made when asked.
struct Plan {
    DType type = DType::F32;
    std::string note;
};

Result<Plan> plan_tensor(const Tensor& t, const GgufExportOptions& o, const std::string& path) {
    const bool matrix = t.shape.size() == 2;
    if (t.name == "token_embd.weight" && o.embedding_given && o.embedding != DType::F32) {
        if ((o.embedding == DType::Q8_0 || o.embedding == DType::Q4_0) && t.shape.back() % kGgmlBlock != 0)
            return err(path, ": the embedding's rows hold ", t.shape.back(), " elements, not whole ", kGgmlBlock,
                       "-element ", dtype_name(o.embedding), " blocks");
        if (o.embedding == DType::Q8_0 || o.embedding == DType::Q4_0)
            return Plan{o.embedding, std::string("token_embd.weight re-quantized to ") + dtype_name(o.embedding) +
                                         " by ggml's rule"};
        return Plan{o.embedding, ""};
    }
    switch (t.type) {
        case DType::QI8:
        case DType::QI4:
            if (is_ggml_block_layout(t)) return Plan{t.type == DType::QI8 ? DType::Q8_0 : DType::Q4_0, ""};
            return Plan{DType::F16, t.name + ": " + dtype_name(t.type) +
                                        " in a layout ggml has no type for (asymmetric, other groups or float "
                                        "scales), written as F16 of its values"};
        case DType::F16:
        case DType::BF16: return Plan{t.type, ""};
        case DType::F32: return Plan{matrix ? o.float_type : DType::F32, ""};
        default:
            return err(path, ": tensor '", t.name, "' has type ", dtype_name(t.type),
                       ", which the GGUF export does not convert");
    }
}

}  // namespace

namespace {

// One tensor of the file: a model tensor, or - Phi-3 - rows of several stacked (attn_qkv: Q, K, V;
// ffn_up: gate then up), Q and K rows put back into the rotate-half order llama.cpp's phi3 reads.
struct OutTensor {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<const Tensor*> parts;
    std::vector<int> heads;  // per part: heads whose rows go back to rotate-half order (0: none)
    Plan plan;
};

// The tensors of the file in model order: as they are for a 'llama' file, fused for 'phi3'.
Result<std::vector<OutTensor>> file_tensors(const Model& m, const GgufExportOptions& o, const std::string& path,
                                            bool phi3) {
    const LlamaConfig& c = m.config;
    std::vector<OutTensor> out;
    for (const Tensor& t : m.tensors) {
        OutTensor x{t.name, t.shape, {&t}, {0}, {}};
        const int b = block_of(t.name);
        if (phi3 && b >= 0) {
            const std::string p = "blk." + std::to_string(b) + ".";
            const std::string part = t.name.substr(p.size());
            if (part == "attn_k.weight" || part == "attn_v.weight" || part == "ffn_up.weight") continue;
            auto need = [&](const std::string& n) -> const Tensor* { return m.find(p + n); };
            if (part == "attn_q.weight") {
                const Tensor *k = need("attn_k.weight"), *v = need("attn_v.weight");
                if (!k || !v) return err(path, ": ", p, "attn_k/attn_v.weight missing beside ", t.name);
                x = OutTensor{p + "attn_qkv.weight",
                              {int64_t(c.q_dim()) + 2 * c.kv_dim(), c.dim},
                              {&t, k, v},
                              {c.n_heads, c.n_kv_heads, 0},
                              {}};
            } else if (part == "ffn_gate.weight") {
                const Tensor* up = need("ffn_up.weight");
                if (!up) return err(path, ": ", p, "ffn_up.weight missing beside ", t.name);
                x = OutTensor{p + "ffn_up.weight", {2 * int64_t(c.hidden_dim), c.dim}, {&t, up}, {0, 0}, {}};
            } else if (part.find(".bias") != std::string::npos) {
                return err(path, ": tensor '", t.name, "': llama.cpp's phi3 architecture has no projection biases");
            }
        }
        // Stacked parts share one type: theirs when they agree, else the float type of their values.
        for (const Tensor* part : x.parts) {
            auto pl = plan_tensor(*part, o, path);
            if (!pl.ok()) return pl.error();
            if (part == x.parts.front()) {
                x.plan = *pl;
            } else if (pl->type != x.plan.type) {
                const DType f = o.float_type == DType::F32 ? DType::F16 : o.float_type;
                x.plan = Plan{f, x.name + ": its parts have different types (" + dtype_name(x.plan.type) + ", " +
                                     dtype_name(pl->type) + "), written as " + dtype_name(f) + " of their values"};
            } else if (!pl->note.empty() && x.plan.note.empty()) {
                x.plan.note = pl->note;
            }
        }
        out.push_back(std::move(x));
    }
    return out;
}

// The bytes of `x` as GGUF type `to`, given to `out` (without a copy where the bytes are already
// the file's).
Status encode(const Tensor& x, DType to, const std::string& path,
              const std::function<Status(const uint8_t*, size_t)>& out) {
    if (x.type == to && (to == DType::F16 || to == DType::BF16 || to == DType::F32))
        return out(x.data.get(), dtype_bytes(x.type, x.numel()));
    if ((x.type == DType::QI8 || x.type == DType::QI4) && (to == DType::Q8_0 || to == DType::Q4_0)) {
        const std::vector<uint8_t> b = ggml_blocks_of(x);
        return out(b.data(), b.size());
    }
    // Everything else goes through F32 values.
    auto f = values_of(x);
    if (!f.ok()) return err(path, ": ", f.message());
    const float* v = f->data();
    const int64_t n = int64_t(f->size());
    if (to == DType::Q8_0 || to == DType::Q4_0) {
        const std::vector<uint8_t> b = ggml_blocks_from_f32(v, n, to);
        return out(b.data(), b.size());
    }
    if (to == DType::F16 || to == DType::BF16) {
        const std::vector<uint8_t> b = halves_of(v, n, to);
        return out(b.data(), b.size());
    }
    return out(reinterpret_cast<const uint8_t*>(v), size_t(n) * sizeof(float));
}

// Rows of `heads` heads of `head_dim` rows from the IR's interleaved rotary pairs back to the
// rotate-half order (the first rope_dim / 2 rows of a head take the even pairs' rows, the next
// rope_dim / 2 the odd ones'; rows past rope_dim stay): the inverse of the importer's permutation.
std::vector<uint8_t> to_rotate_half(const uint8_t* rows, size_t bytes, int heads, int head_dim, int rope_dim) {
    std::vector<uint8_t> out(bytes);
    const size_t row = bytes / (size_t(heads) * size_t(head_dim));
    const int half = rope_dim / 2;
    for (int h = 0; h < heads; ++h)
        for (int r = 0; r < head_dim; ++r) {
            const int src = r < rope_dim ? (r < half ? 2 * r : 2 * (r - half) + 1) : r;
            std::memcpy(out.data() + (size_t(h) * head_dim + r) * row, rows + (size_t(h) * head_dim + src) * row, row);
        }
    return out;
}

}  // namespace

Result<GgufExportReport> export_gguf(const Model& m, const std::string& path, const GgufExportOptions& o,
                                     Progress* progress) {
    if (o.float_type != DType::F32 && o.float_type != DType::F16 && o.float_type != DType::BF16)
        return err(path, ": matrices are written as F32, F16 or BF16, not ", dtype_name(o.float_type));
    if (o.embedding_given && o.embedding != DType::F32 && o.embedding != DType::F16 && o.embedding != DType::Q8_0 &&
        o.embedding != DType::Q4_0)
        return err(path, ": the embedding is written as F32, F16, Q8_0 or Q4_0, not ", dtype_name(o.embedding));
    const LlamaConfig& c = m.config;
    // Phi-3 longrope exists only in llama.cpp's 'phi3' architecture: such a model is written as
    // one (fused attn_qkv and ffn_up, rotate-half Q/K rows, rope_factors_short/long.weight).
    const bool phi3 = !c.rope_long_freq_factors.empty();
    if (!phi3 && c.rope_attn_factor != 1.0f)
        return err(path, ": the model scales its rotary embedding's magnitude (attention factor ", c.rope_attn_factor,
                   ") without Phi-3 longrope factors, which no GGUF architecture carries");
    GgufExportReport rep;
    rep.architecture = phi3 ? "phi3" : "llama";
    // A tokenizer.json travels as the GGUF tokenizer llama.cpp reads (byte-level BPE: model gpt2
    // and its pre name; SentencePiece-style BPE: model llama with scores), checked to tokenize as
    // tokenizer.json does; otherwise it is left out with the reason.
    TokenizerSpec tok = m.tokenizer;
    if (tok.model == "hf") {
        auto g = tokenizer::gguf_from_tokenizer_json(tok);
        if (g) {
            tok = std::move(g->spec);
            rep.notes.insert(rep.notes.end(), g->notes.begin(), g->notes.end());
            rep.notes.push_back("tokenizer.json written as GGUF tokenizer model '" + tok.model + "'" +
                                (tok.pre.empty() ? std::string() : ", pre '" + tok.pre + "'") + " (" +
                                std::to_string(tok.tokens.size()) + " tokens, " +
                                (tok.model == "llama" ? std::to_string(tok.scores.size()) + " scores)"
                                                      : std::to_string(tok.merges.size()) + " merges)"));
        } else {
            rep.notes.push_back("the tokenizer is not written: " + g.message());
            tok = TokenizerSpec{};
        }
    }
    auto tensors = file_tensors(m, o, path, phi3);
    if (!tensors.ok()) return tensors.error();
    gguf::Writer w;
    gguf::set_llama_metadata(w, c, tok, m.name, rep.architecture);
    if (phi3) {
        w.set("phi3.rope.scaling.original_context_length", gguf::Value::of_u32(uint32_t(c.rope_original_context)));
        w.set("phi3.rope.scaling.attn_factor", gguf::Value::of_f32(c.rope_attn_factor));
        rep.notes.push_back(
            "Phi-3 longrope: written as GGUF architecture 'phi3' (fused attn_qkv and ffn_up, Q/K rows "
            "in rotate-half order, rope_factors_short/long.weight)");
    }
    for (const OutTensor& t : *tensors) {
        EDGE_TRY(w.add_tensor(t.name, t.plan.type, t.shape));
        rep.tensors.emplace_back(t.name, dtype_name(t.plan.type));
        if (!t.plan.note.empty()) rep.notes.push_back(t.plan.note);
    }
    // Rotary divisors: Phi-3's short and long sets, or one set (Llama 3.x scaling).
    std::vector<std::pair<std::string, std::vector<float>>> rope;
    const size_t pairs = size_t(std::max(c.rope_dim / 2, 0));
    if (phi3) {
        rope.emplace_back("rope_factors_short.weight",
                          c.rope_freq_factors.empty() ? std::vector<float>(pairs, 1.0f) : c.rope_freq_factors);
        rope.emplace_back("rope_factors_long.weight", c.rope_long_freq_factors);
    } else if (!c.rope_freq_factors.empty()) {
        rope.emplace_back("rope_freqs.weight", c.rope_freq_factors);
    }
    for (const auto& [name, f] : rope) EDGE_TRY(w.add_tensor(name, DType::F32, {int64_t(f.size())}));
    EDGE_TRY(w.open(path));
    auto write = [&](const uint8_t* b, size_t n) { return w.write_raw(b, n); };
    for (size_t k = 0; k < tensors->size(); ++k) {
        if (is_cancelled(progress)) return err(path, ": export cancelled");
        const OutTensor& t = (*tensors)[k];
        // One tensor's data at a time: read now if the model was opened lazily, let go after.
        for (size_t i = 0; i < t.parts.size(); ++i) {
            const int heads = t.heads[i];
            EDGE_TRY(use_weight(m, *t.parts[i], [&](const Tensor& x) -> Status {
                if (heads == 0) return encode(x, t.plan.type, path, write);
                return encode(x, t.plan.type, path, [&](const uint8_t* b, size_t n) {
                    const std::vector<uint8_t> r = to_rotate_half(b, n, heads, c.head_dim, c.rope_dim);
                    return write(r.data(), r.size());
                });
            }));
        }
        report(progress, double(k + 1) / double(tensors->size()), "writing " + t.name);
    }
    for (const auto& [name, f] : rope) EDGE_TRY(w.write_f32(f.data(), int64_t(f.size())));
    EDGE_TRY(w.finish());
    return rep;
}

}  // namespace edge::model
