#include "engine/runtime/cost_model.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <span>

#include "engine/core/half.h"
#include "engine/core/quant_format.h"
#include "engine/core/thread_pool.h"
#include "engine/model/ir.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/one_sequence.h"
#include "engine/runtime/open_executor.h"

namespace edge::runtime {

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A random [rows, cols] weight held as the executor holds `precision`: F32, F16, or QI8 / QI4 in
// symmetric groups of 32 along each row (INT8 with float scales, INT4 with half scales: what
// `compile` writes for an RTN g32 plan).
Tensor random_weight(int64_t rows, int64_t cols, std::string_view precision, std::mt19937& rng) {
    Tensor t;
    t.name = "micro-profile";
    t.shape = {rows, cols};
    t.source_type = DType::F32;
    std::uniform_int_distribution<int> byte(0, 255);
    if (precision == "fp32" || precision == "fp16") {
        const bool half = precision == "fp16";
        t.type = half ? DType::F16 : DType::F32;
        t.nbytes = size_t(rows * cols) * (half ? 2 : 4);
        t.data = alloc_aligned(t.nbytes);
        std::normal_distribution<float> nd(0.0f, 0.02f);
        for (int64_t i = 0; i < rows * cols; ++i) {
            const float v = nd(rng);
            if (half) {
                const uint16_t h = f32_to_f16(v);
                std::memcpy(t.data.get() + 2 * i, &h, 2);
            } else {
                std::memcpy(t.data.get() + 4 * i, &v, 4);
            }
        }
        return t;
    }
    auto q = std::make_shared<QuantInfo>();
    q->bits = precision == "int8" ? 8 : 4;
    q->grouping = QGrouping::Group;
    q->group_size = 32;
    q->scale_type = q->bits == 4 ? QScale::F16 : QScale::F32;
    if (quant_layout(*q, rows, cols)) return {};
    t.type = q->bits == 8 ? DType::QI8 : DType::QI4;
    t.nbytes = q->total_bytes;
    t.data = alloc_aligned(t.nbytes);
    std::memset(t.data.get(), 0, t.nbytes);
    for (size_t i = 0; i < q->codes_bytes; ++i) t.data.get()[i] = uint8_t(byte(rng));
    for (int64_t g = 0; g < q->n_groups; ++g) {
        const float s = 0.001f * float(1 + byte(rng) % 16);
        if (q->scale_type == QScale::F16) {
            const uint16_t h = f32_to_f16(s);
            std::memcpy(t.data.get() + q->scales_offset + 2 * size_t(g), &h, 2);
        } else {
            std::memcpy(t.data.get() + q->scales_offset + 4 * size_t(g), &s, 4);
        }
    }
    t.quant = std::move(q);
    return t;
}

// Median microseconds of one token's product with a [rows, cols] weight at `precision`, cycling
// through enough copies that each product reads its weight from memory, not from the caches.
double time_linear(int64_t rows, int64_t cols, std::string_view precision, const MicroProfileOptions& o,
                   ThreadPool& pool, std::mt19937& rng) {
    std::vector<Tensor> copies{random_weight(rows, cols, precision, rng)};
    if (!copies.front().data) return 0.0;
    const uint64_t one = std::max<uint64_t>(1, copies.front().nbytes);
    const size_t n = size_t(std::clamp<uint64_t>(o.stream_bytes / one + 1, 1, 64));
    while (copies.size() < n) copies.push_back(random_weight(rows, cols, precision, rng));
    std::vector<float> x(static_cast<size_t>(cols)), y(static_cast<size_t>(rows));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : x) v = nd(rng);
    for (size_t i = 0; i < copies.size(); ++i) qkernels::matmul(y.data(), x.data(), copies[i], 1, pool);  // warm-up
    std::vector<double> us;
    for (int r = 0; r < std::max(1, o.repetitions); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (const Tensor& w : copies) qkernels::matmul(y.data(), x.data(), w, 1, pool);
        const auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / double(copies.size()));
    }
    return median(us);
}

}  // namespace

std::string executed_precision(const Tensor& w) {
    switch (w.type) {
        case DType::F32: return "fp32";
        case DType::F16: return "fp16";
        case DType::QI8: return "int8";
        case DType::QI4: return "int4";
        default: return "";
    }
}

Result<double> linear_us(const BoardCostModel& cm, int64_t rows, int64_t cols, std::string_view precision) {
    for (const LinearTiming& l : cm.linears)
        if (l.rows == rows && l.cols == cols && l.precision == precision) return l.us;
    return err("the board's cost model (", cm.engine, ") has no timing for a ", rows, "x", cols, " weight at ",
               precision, "; deploy an engine of this model to measure it");
}

Result<BoardCostModel> micro_profile(const std::string& engine_path, const MicroProfileOptions& o) {
    OpenOptions oo;
    oo.threads = o.threads;
    oo.backend = BackendChoice::Cpu;
    auto opened = open_executor(engine_path, oo);
    if (!opened.ok()) return opened.error();
    const model::Model& m = *opened->model;
    BoardCostModel cm;
    cm.engine = engine_path.substr(engine_path.find_last_of('/') + 1);
    cm.kernels = cpu_kernels_and_threads(o.threads);
    {
        ThreadPool probe(o.threads);
        cm.threads = probe.size();
    }
    // The engine's own time per token: a short prompt, then greedy decoding.
    const int prompt = 8, total = prompt + std::max(2, o.decode_tokens) + 1;
    if (m.config.context_length > 0 && total > m.config.context_length)
        return err(engine_path, ": the micro-profile decodes ", total, " positions; the model's context is ",
                   m.config.context_length);
    auto seq = OneSequence::create(*opened->exe, total);
    if (!seq.ok()) return seq.error();
    std::vector<int32_t> ids(static_cast<size_t>(prompt));
    for (int i = 0; i < prompt; ++i) ids[size_t(i)] = int32_t((int64_t(i) * 7919 + 3) % m.config.vocab_size);
    auto first = seq->next(ids);
    if (!first.ok()) return first.error();
    int32_t next = argmax(*first, m.config.vocab_size);
    std::vector<double> step_ms;
    for (int i = 0; i < std::max(2, o.decode_tokens); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = seq->next(std::span(&next, 1));
        if (!r.ok()) return r.error();
        next = argmax(*r, m.config.vocab_size);
        step_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    cm.engine_tpot_ms = median(step_ms);
    opened->exe.reset();  // its threads and memory go before the products are timed

    // Every distinct linear shape of the model, at every precision.
    std::set<std::pair<int64_t, int64_t>> shapes;
    for (const model::LayerInfo& li : model::list_layers(m))
        if (li.shape.size() == 2) shapes.insert({li.shape[0], li.shape[1]});
    ThreadPool pool(o.threads);
    std::mt19937 rng(20261206u);
    for (const auto& [rows, cols] : shapes)
        for (const char* p : kCostPrecisions) {
            cm.linears.push_back({rows, cols, p, time_linear(rows, cols, p, o, pool, rng)});
        }
    // The rest of a step: the engine's time less what its own layers' products predict.
    for (const model::LayerInfo& li : model::list_layers(m)) {
        const Tensor* w = m.find(li.tensor);
        if (!w || li.shape.size() != 2) continue;
        const std::string p = executed_precision(*w);
        if (p.empty())
            return err(engine_path, ": layer '", li.name, "' runs as ", dtype_name(w->type),
                       ", which the cost model does not price");
        auto us = linear_us(cm, li.shape[0], li.shape[1], p);
        if (!us.ok()) return us.error();
        cm.engine_linear_ms += *us / 1000.0;
    }
    cm.rest_ms = std::max(0.0, cm.engine_tpot_ms - cm.engine_linear_ms);
    return cm;
}

}  // namespace edge::runtime
