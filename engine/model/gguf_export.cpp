#include "engine/model/gguf_export.h"

#include <cstring>

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
    const size_t block_bytes = q8 ? kQ8_0Bytes : kQ4_0Bytes, code_bytes = block_bytes - 2;
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
    const size_t block_bytes = type == DType::Q8_0 ? kQ8_0Bytes : kQ4_0Bytes;
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

Result<GgufExportReport> export_gguf(const Model& m, const std::string& path, const GgufExportOptions& o,
                                     Progress* progress) {
    if (o.float_type != DType::F32 && o.float_type != DType::F16 && o.float_type != DType::BF16)
        return err(path, ": matrices are written as F32, F16 or BF16, not ", dtype_name(o.float_type));
    if (o.embedding_given && o.embedding != DType::F32 && o.embedding != DType::F16 && o.embedding != DType::Q8_0 &&
        o.embedding != DType::Q4_0)
        return err(path, ": the embedding is written as F32, F16, Q8_0 or Q4_0, not ", dtype_name(o.embedding));
    if (!m.config.rope_long_freq_factors.empty() || m.config.rope_attn_factor != 1.0f)
        return err(path, ": the model uses Phi-3 longrope scaling (", m.config.rope_scaling,
                   "), which llama.cpp reads only from GGUF architecture 'phi3'; the exporter writes 'llama' "
                   "files, so this model cannot be exported to GGUF yet");
    GgufExportReport rep;
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
    std::vector<Plan> plans;
    gguf::Writer w;
    gguf::set_llama_metadata(w, m.config, tok, m.name);
    for (const Tensor& t : m.tensors) {
        auto p = plan_tensor(t, o, path);
        if (!p.ok()) return p.error();
        EDGE_TRY(w.add_tensor(t.name, p->type, t.shape));
        rep.tensors.emplace_back(t.name, dtype_name(p->type));
        if (!p->note.empty()) rep.notes.push_back(p->note);
        plans.push_back(std::move(p).value());
    }
    const std::vector<float>& ff = m.config.rope_freq_factors;
    if (!ff.empty()) EDGE_TRY(w.add_tensor("rope_freqs.weight", DType::F32, {int64_t(ff.size())}));
    EDGE_TRY(w.open(path));
    for (size_t k = 0; k < m.tensors.size(); ++k) {
        if (is_cancelled(progress)) return err(path, ": export cancelled");
        const Tensor& t = m.tensors[k];
        const DType to = plans[k].type;
        // One tensor's data at a time: read now if the model was opened lazily, let go after.
        auto write_one = [&](const Tensor& x) -> Status {
            if (x.type == to && (to == DType::F16 || to == DType::BF16 || to == DType::F32))
                return w.write_raw(x.data.get(), dtype_bytes(x.type, x.numel()));
            if ((x.type == DType::QI8 || x.type == DType::QI4) && (to == DType::Q8_0 || to == DType::Q4_0)) {
                const std::vector<uint8_t> b = ggml_blocks_of(x);
                return w.write_raw(b.data(), b.size());
            }
            // Everything else goes through F32 values.
            auto f = values_of(x);
            if (!f.ok()) return err(path, ": ", f.message());
            const float* v = f->data();
            const int64_t n = int64_t(f->size());
            if (to == DType::Q8_0 || to == DType::Q4_0) {
                const std::vector<uint8_t> b = ggml_blocks_from_f32(v, n, to);
                return w.write_raw(b.data(), b.size());
            }
            if (to == DType::F16 || to == DType::BF16) {
                const std::vector<uint8_t> b = halves_of(v, n, to);
                return w.write_raw(b.data(), b.size());
            }
            return w.write_f32(v, n);
        };
        EDGE_TRY(use_weight(m, t, write_one));
        report(progress, double(k + 1) / double(m.tensors.size()), "writing " + t.name);
    }
    if (!ff.empty()) EDGE_TRY(w.write_f32(ff.data(), int64_t(ff.size())));
    EDGE_TRY(w.finish());
    return rep;
}

}  // namespace edge::model
