#include "engine/model/weights.h"

#include <algorithm>
#include <atomic>

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

Result<Tensor> weight_f32(const Model& m, const Tensor& t) {
    if (!is_unread(t)) {
        if (t.type != DType::F32)
            return err(m.source_path, ": tensor '", t.name, "' is held as ", dtype_name(t.type), ", not F32");
        return t;
    }
    if (!m.weights) return err(m.source_path, ": tensor '", t.name, "' has no data and no file to read it from");
    try {
        auto r = m.weights->load_f32(t);
        if (!r.ok()) return r.error();
        if (r->shape != t.shape || r->type != DType::F32)
            return err(m.source_path, ": tensor '", t.name, "' read back as ", dtype_name(r->type), " ", r->shape_str(),
                       ", expected F32 ", t.shape_str());
        return r;
    } catch (const std::bad_alloc&) {
        return err(m.source_path, ": out of memory reading tensor '", t.name, "' (", t.nbytes, " bytes as F32)");
    }
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

Status load_weights(Model& m, Progress* progress) {
    const size_t n = m.tensors.size();
    for (size_t k = 0; k < n; ++k) {
        Tensor& t = m.tensors[k];
        if (!is_unread(t)) continue;
        if (is_cancelled(progress)) return err(m.source_path, ": loading cancelled");
        auto r = weight_f32(m, t);
        if (!r.ok()) return r.error();
        t = std::move(r).value();
        report(progress, double(k + 1) / double(n ? n : 1), "reading tensor " + t.name);
    }
    m.weights.reset();
    return {};
}

Result<std::shared_ptr<const Model>> with_weights(std::shared_ptr<const Model> m, Progress* progress) {
    if (!m || weights_resident(*m)) return m;
    auto copy = std::make_shared<Model>(*m);
    EDGE_TRY(load_weights(*copy, progress));
    return std::shared_ptr<const Model>(std::move(copy));
}

}  // namespace edge::model
