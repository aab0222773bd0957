// Memory planner: liveness of every intermediate value of the fused graph (first node that
// writes it, last node that reads it) and greedy-by-size offset assignment in one arena: the
// largest buffers are placed first, each at the smallest gap between already placed buffers whose
// lifetimes overlap its own (best fit), or above them all.
#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>

#include "engine/compile/passes.h"

using edge::model::Graph;
using edge::model::LlamaConfig;

namespace edge::compile {

namespace {

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

// Floats per token of an IR value of build_llama_graph; 0 when unknown.
int64_t value_elems(const std::string& value, const LlamaConfig& c) {
    std::string s = value;
    if (s.rfind("blk.", 0) == 0) {
        const size_t dot = s.find('.', 4);
        if (dot == std::string::npos) return 0;
        s = s.substr(dot + 1);
    }
    if (s == "x0" || s == "xf" || s == "xn" || s == "ao" || s == "h" || s == "hn" || s == "d" || s == "out")
        return c.dim;
    if (s == "q" || s == "qr" || s == "att") return c.q_dim();
    if (s == "k" || s == "kr" || s == "v") return c.kv_dim();
    if (s == "g" || s == "u" || s == "a") return c.hidden_dim;
    if (s == "logits") return c.vocab_size;
    return 0;
}

}  // namespace

Result<MemoryLayout> plan_memory(const std::vector<FusedNode>& nodes, const Graph& g, const LlamaConfig& cfg, int batch,
                                 int max_seq, int wide_rows) {
    if (batch <= 0 || max_seq <= 0 || wide_rows <= 0)
        return err("memory plan: batch ", batch, ", sequence length ", max_seq, " and rows of the wide buffers ",
                   wide_rows, " must be positive");
    MemoryLayout p;
    p.batch = batch;
    p.wide_rows = std::min(batch, wide_rows);
    const auto rows = [&](const std::string& value) { return size_t(value == "logits" ? p.wide_rows : batch); };
    std::map<std::string, size_t> index;
    const int end = int(nodes.size());
    for (int i = 0; i < end; ++i) {
        const FusedNode& n = nodes[size_t(i)];
        for (const auto& o : n.outputs) {
            const int64_t e = value_elems(o, cfg);
            if (e <= 0) return err("memory plan: the size of value '", o, "' (node ", n.name, ") is unknown");
            index[o] = p.buffers.size();
            p.buffers.push_back(Buffer{o, align64(size_t(e) * rows(o) * sizeof(float)), i, i, 0});
        }
        if (n.kind == "attention")  // score scratch, live during the node only
            p.buffers.push_back(
                Buffer{n.name + ".scores",
                       align64(size_t(cfg.n_heads) * size_t(max_seq) * size_t(p.wide_rows) * sizeof(float)), i, i, 0});
        std::vector<std::string> reads = n.inputs;
        if (!n.epilogue_input.empty()) reads.push_back(n.epilogue_input);
        for (const auto& r : reads) {
            auto it = index.find(r);
            if (it != index.end()) p.buffers[it->second].last = std::max(p.buffers[it->second].last, i);
        }
    }
    for (const auto& o : g.outputs) {
        auto it = index.find(o);
        if (it != index.end()) p.buffers[it->second].last = end;  // outputs outlive the graph
    }

    std::vector<size_t> order(p.buffers.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return p.buffers[a].bytes > p.buffers[b].bytes; });
    std::vector<size_t> placed;
    for (size_t id : order) {
        Buffer& b = p.buffers[id];
        std::vector<const Buffer*> live;
        for (size_t q : placed) {
            const Buffer& o = p.buffers[q];
            if (o.first <= b.last && b.first <= o.last) live.push_back(&o);
        }
        std::sort(live.begin(), live.end(), [](const Buffer* x, const Buffer* y) { return x->offset < y->offset; });
        size_t best = SIZE_MAX, best_gap = SIZE_MAX, prev_end = 0;
        for (const Buffer* o : live) {
            if (o->offset >= prev_end && o->offset - prev_end >= b.bytes && o->offset - prev_end < best_gap) {
                best_gap = o->offset - prev_end;
                best = prev_end;
            }
            prev_end = std::max(prev_end, o->offset + o->bytes);
        }
        b.offset = best != SIZE_MAX ? best : prev_end;
        p.arena_bytes = std::max(p.arena_bytes, b.offset + b.bytes);
        placed.push_back(id);
    }
    for (const Buffer& b : p.buffers) p.naive_bytes += b.bytes;
    for (int s = 0; s <= end; ++s) {
        size_t live = 0;
        for (const Buffer& b : p.buffers)
            if (b.first <= s && s <= b.last) live += b.bytes;
        p.peak_live_bytes = std::max(p.peak_live_bytes, live);
    }
    return p;
}

bool layout_has_overlap(const MemoryLayout& p, std::string* why) {
    for (size_t i = 0; i < p.buffers.size(); ++i)
        for (size_t j = i + 1; j < p.buffers.size(); ++j) {
            const Buffer& a = p.buffers[i];
            const Buffer& b = p.buffers[j];
            const bool time = a.first <= b.last && b.first <= a.last;
            const bool space = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
            if (time && space) {
                if (why) *why = a.name + " and " + b.name;
                return true;
            }
        }
    return false;
}

}  // namespace edge::compile
