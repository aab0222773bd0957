#include "engine/model/weights.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "engine/model/ggml_dequant.h"

namespace edge::model {

namespace {

std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};

void count_up(size_t n) {
    const size_t now = g_live.fetch_add(n, std::memory_order_relaxed) + n;
    size_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
}

}  // namespace

F32WeightStats f32_weight_stats() { return {g_live.load(), g_peak.load()}; }

void reset_f32_weight_peak() { g_peak.store(g_live.load()); }

std::shared_ptr<uint8_t> alloc_counted_f32(int64_t n) {
    const size_t bytes = size_t(std::max<int64_t>(n, 0)) * sizeof(float);
    std::shared_ptr<uint8_t> buf = alloc_aligned(bytes);
    count_up(bytes);
    uint8_t* p = buf.get();
    return std::shared_ptr<uint8_t>(p, [buf = std::move(buf), bytes](uint8_t*) mutable {
        g_live.fetch_sub(bytes, std::memory_order_relaxed);
        buf.reset();
    });
}

Tensor make_unread(std::string name, std::vector<int64_t> shape, DType source_type) {
    Tensor t;
    t.name = std::move(name);
    t.type = DType::F32;
    t.source_type = source_type;
    t.shape = std::move(shape);
    t.nbytes = size_t(t.numel()) * sizeof(float);
    return t;
}

size_t stored_weight_bytes(const Model& m) {
    size_t n = 0;
    for (const Tensor& t : m.tensors) n += dtype_bytes(t.source_type, t.numel());
    return n;
}

bool weights_resident(const Model& m) {
    return std::all_of(m.tensors.begin(), m.tensors.end(), [](const Tensor& t) { return !is_unread(t); });
}

namespace {

// Reads unread tensor `t` of `m` through its source: as F32, or (as_stored) in the type the
// executors run. The result's shape (and for F32 its type) is checked against the placeholder.
Result<Tensor> read_unread(const Model& m, const Tensor& t, bool as_stored) {
    if (!m.weights) return err(m.source_path, ": tensor '", t.name, "' has no data and no file to read it from");
    try {
        auto r = as_stored ? m.weights->load_stored(t) : m.weights->load_f32(t);
        if (!r.ok()) return r.error();
        if (r->shape != t.shape || (!as_stored && r->type != DType::F32))
            return err(m.source_path, ": tensor '", t.name, "' read back as ", dtype_name(r->type), " ", r->shape_str(),
                       ", expected ", as_stored ? "" : "F32 ", t.shape_str());
        return r;
    } catch (const std::bad_alloc&) {
        return err(m.source_path, ": out of memory reading tensor '", t.name, "' (",
                   as_stored ? dtype_bytes(t.source_type, t.numel()) : t.nbytes, " bytes as ",
                   as_stored ? dtype_name(t.source_type) : "F32", ")");
    }
}

// The 2-D tensors load_stored keeps as stored; vectors (norms, biases) are read as F32.
bool kept_as_stored(const Tensor& t) { return t.shape.size() == 2 && runs_as_stored(t.source_type); }

}  // namespace

Result<Tensor> weight_f32(const Model& m, const Tensor& t) {
    if (!is_unread(t)) {
        if (t.type != DType::F32)
            return err(m.source_path, ": tensor '", t.name, "' is held as ", dtype_name(t.type), ", not F32");
        return t;
    }
    return read_unread(m, t, false);
}

Result<Tensor> weight_as_stored(const Model& m, const Tensor& t) {
    if (!is_unread(t)) return t;
    return read_unread(m, t, kept_as_stored(t));
}

bool runs_as_stored(DType stored) {
    return can_dequantize(stored);  // the kernels read every type there is a row dequantization for
}

DType as_stored_type(DType stored) {
    return stored == DType::Q8_0 ? DType::QI8 : stored == DType::Q4_0 ? DType::QI4 : stored;
}

Result<Tensor> rows_as_stored(const std::string& name, const std::vector<int64_t>& shape, DType type,
                              const std::function<const uint8_t*(int64_t)>& row) {
    if (!runs_as_stored(type) || shape.size() != 2 || shape[0] <= 0 || shape[1] <= 0)
        return err("tensor '", name, "' of type ", dtype_name(type), " cannot be kept as stored");
    const int64_t rows = shape[0], cols = shape[1];
    Tensor t;
    t.name = name;
    t.shape = shape;
    t.source_type = type;
    t.type = as_stored_type(type);
    if (type == DType::Q8_0 || type == DType::Q4_0) {
        // ggml's blocks: an f16 scale d, then 32 int8 codes (Q8_0: w = d * c) or 16 bytes of
        // nibbles, byte j holding element j low and j + 16 high (Q4_0: w = d * (u - 8)) - exactly
        // QI8 / QI4 symmetric groups of 32 with half scales (engine/core/quant_format.h), the
        // codes and scales of each row gathered into their sections.
        if (cols % kQBlock != 0)
            return err("tensor '", name, "': ", cols, " columns are not whole ", dtype_name(type), " blocks");
        auto q = std::make_shared<QuantInfo>();
        q->bits = type == DType::Q8_0 ? 8 : 4;
        q->symmetric = true;
        q->grouping = QGrouping::Group;
        q->group_size = kQBlock;
        q->scale_type = QScale::F16;
        if (const char* why = quant_layout(*q, rows, cols)) return err("tensor '", name, "': ", why);
        t.nbytes = q->total_bytes;
        t.data = alloc_aligned(t.nbytes);
        uint8_t* base = t.data.get();
        std::memset(base, 0, t.nbytes);
        const int64_t blocks = cols / kQBlock;
        const size_t block_bytes = size_t(dtype_block_bytes(type)), code_bytes = block_bytes - 2;
        for (int64_t r = 0; r < rows; ++r) {
            const uint8_t* src = row(r);
            uint8_t* codes = base + r * q->row_bytes;
            uint8_t* scales = base + q->scales_offset + size_t(r * q->groups_per_row) * 2;
            for (int64_t b = 0; b < blocks; ++b) {
                std::memcpy(scales + b * 2, src + size_t(b) * block_bytes, 2);
                std::memcpy(codes + size_t(b) * code_bytes, src + size_t(b) * block_bytes + 2, code_bytes);
            }
        }
        t.quant = std::move(q);
        return t;
    }
    if (cols % dtype_block_elems(type) != 0)
        return err("tensor '", name, "': ", cols, " columns are not whole ", dtype_name(type), " blocks");
    const size_t row_bytes = dtype_bytes(type, cols);
    t.nbytes = row_bytes * size_t(rows);
    t.data = type == DType::F32 ? alloc_counted_f32(rows * cols) : alloc_aligned(t.nbytes);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(t.data.get() + size_t(r) * row_bytes, row(r), row_bytes);
    return t;
}

void release_weight(const Model& m, const Tensor& t) {
    if (m.weights) m.weights->release(t);
}

Status use_weight(const Model& m, const Tensor& t, const std::function<Status(const Tensor&)>& use) {
    if (!is_unread(t)) return use(t);
    auto r = weight_f32(m, t);
    if (!r.ok()) return r.error();
    EDGE_TRY(use(*r));
    release_weight(m, t);
    return {};
}

namespace {

// Reads every unread tensor of `m` (as F32, or each as load_stored keeps it), then lets the
// source go.
Status read_all(Model& m, Progress* progress, bool as_stored) {
    const size_t n = m.tensors.size();
    for (size_t k = 0; k < n; ++k) {
        Tensor& t = m.tensors[k];
        if (!is_unread(t)) continue;
        if (is_cancelled(progress)) return err(m.source_path, ": loading cancelled");
        auto r = read_unread(m, t, as_stored && kept_as_stored(t));
        if (!r.ok()) return r.error();
        t = std::move(r).value();
        report(progress, double(k + 1) / double(n ? n : 1), "reading tensor " + t.name);
    }
    m.weights.reset();
    return {};
}

}  // namespace

Status load_weights(Model& m, Progress* progress) { return read_all(m, progress, false); }

Status load_weights_as_stored(Model& m, Progress* progress) { return read_all(m, progress, true); }

size_t as_stored_bytes(const Model& m) {
    size_t n = 0;
    for (const Tensor& t : m.tensors)
        if (is_unread(t)) n += kept_as_stored(t) ? dtype_bytes(t.source_type, t.numel()) : t.nbytes;
    return n;
}

Result<std::shared_ptr<const Model>> with_weights(std::shared_ptr<const Model> m, Progress* progress) {
    if (!m || weights_resident(*m)) return m;
    auto copy = std::make_shared<Model>(*m);
    EDGE_TRY(load_weights(*copy, progress));
    return std::shared_ptr<const Model>(std::move(copy));
}

}  // namespace edge::model
