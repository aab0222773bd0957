#include "llama2c_q80.h"

#include <cstring>

#include "engine/core/mapped_file.h"
#include "engine/core/quant_format.h"

namespace edge::quant {

Result<Llama2cQ80> read_llama2c_q80(const std::string& path) {
    auto mf = MappedFile::open(path);
    if (!mf.ok()) return mf.error();
    const uint8_t* p = (*mf)->data();
    const size_t size = (*mf)->size();
    if (size < kLlama2cV2HeaderBytes) return err(path, ": ", size, " bytes is too short for a llama2.c v2 header");
    Llama2cQ80 out;
    Llama2cV2Header& h = out.header;
    std::memcpy(&h, p, sizeof h);
    if (h.magic != kLlama2cMagic) return err(path, ": not a llama2.c v2 export (magic ", +h.magic, ")");
    if (h.version != 2) return err(path, ": llama2.c export version ", +h.version, " is not 2 (Q8_0)");
    if (h.dim <= 0 || h.hidden_dim <= 0 || h.n_layers <= 0 || h.n_heads <= 0 || h.n_kv_heads <= 0 ||
        h.vocab_size <= 0 || h.group_size <= 0 || h.dim > (1 << 16) || h.hidden_dim > (1 << 18) || h.n_layers > 1024 ||
        h.vocab_size > (1 << 22) || h.dim % h.n_heads != 0 || h.n_kv_heads > h.n_heads || h.n_heads % h.n_kv_heads != 0)
        return err(path, ": implausible llama2.c v2 header (dim ", +h.dim, ", hidden ", +h.hidden_dim, ", layers ",
                   +h.n_layers, ", heads ", +h.n_heads, ", kv heads ", +h.n_kv_heads, ", vocab ", +h.vocab_size,
                   ", group ", +h.group_size, ")");
    size_t off = kLlama2cV2HeaderBytes;
    const int64_t D = h.dim, F = h.hidden_dim, L = h.n_layers, V = h.vocab_size;
    const int64_t kv = D / h.n_heads * h.n_kv_heads;
    auto take = [&](size_t bytes, const char* what) -> Result<const uint8_t*> {
        if (bytes > size - off) return err(path, ": truncated at byte ", off, " while reading ", what);
        const uint8_t* r = p + off;
        off += bytes;
        return r;
    };
    auto norm = [&](const std::string& name) -> Status {
        auto r = take(size_t(D) * 4, name.c_str());
        if (!r.ok()) return r.error();
        Tensor t = Tensor::zeros_f32(name, {D});
        std::memcpy(t.data.get(), *r, size_t(D) * 4);
        out.norms.push_back(std::move(t));
        return {};
    };
    for (int l = 0; l < L; ++l) EDGE_TRY(norm("blk." + std::to_string(l) + ".attn_norm.weight"));
    for (int l = 0; l < L; ++l) EDGE_TRY(norm("blk." + std::to_string(l) + ".ffn_norm.weight"));
    EDGE_TRY(norm("output_norm.weight"));

    struct Entry {
        std::string name;
        int64_t rows, cols;
    };
    std::vector<Entry> order{{"token_embd.weight", V, D}};
    const std::pair<const char*, std::pair<int64_t, int64_t>> kinds[] = {
        {"attn_q", {D, D}},   {"attn_k", {kv, D}},  {"attn_v", {kv, D}}, {"attn_output", {D, D}},
        {"ffn_gate", {F, D}}, {"ffn_down", {D, F}}, {"ffn_up", {F, D}}};
    for (const auto& [kind, shape] : kinds)
        for (int l = 0; l < L; ++l)
            order.push_back({"blk." + std::to_string(l) + "." + kind + ".weight", shape.first, shape.second});
    if (!h.shared_classifier) order.push_back({"output.weight", V, D});

    // Each matrix is checked against the bytes left before its buffer is allocated, so a header
    // that promises more than the file holds costs no memory. The tensor is assembled here from
    // quant_layout (engine/core) rather than by rtn's make_quant_tensor, so that this reader links
    // alone into the fuzz project (tests/fuzz/project) without the quantizers and the runtime.
    for (const Entry& e : order) {
        auto info = std::make_shared<QuantInfo>();
        info->bits = 8;
        info->symmetric = true;
        info->grouping = QGrouping::Flat;
        info->group_size = h.group_size;
        info->scale_type = QScale::F32;
        if (const char* why = quant_layout(*info, e.rows, e.cols))
            return err(path, ": ", e.name, ": cannot hold a ", e.rows, "x", e.cols, " tensor in groups of ",
                       +h.group_size, ": ", why);
        const int64_t numel = e.rows * e.cols;
        if (numel % h.group_size != 0)
            return err(path, ": ", e.name, " has ", numel, " elements, not a multiple of group ", +h.group_size);
        auto codes = take(size_t(numel), e.name.c_str());
        if (!codes.ok()) return codes.error();
        auto scales = take(size_t(info->n_groups) * 4, e.name.c_str());
        if (!scales.ok()) return scales.error();
        Tensor t;
        t.name = e.name;
        t.type = DType::QI8;
        t.source_type = DType::F32;
        t.shape = {e.rows, e.cols};
        t.nbytes = info->total_bytes;
        t.data = alloc_aligned(t.nbytes);
        std::memset(t.data.get(), 0, t.nbytes);
        std::memcpy(t.data.get(), *codes, size_t(numel));
        std::memcpy(t.data.get() + info->scales_offset, *scales, size_t(info->n_groups) * 4);
        t.quant = std::move(info);
        out.weights.push_back(std::move(t));
    }
    if (off != size) return err(path, ": ", size - off, " unexpected bytes after the last tensor");
    return out;
}

}  // namespace edge::quant
