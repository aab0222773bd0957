#include "resolved_program.h"

#include <algorithm>
#include <map>

#include "backend.h"

using edge::model::block_of;
using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::validate_llama;

namespace edge::runtime {

int plan_max_seq(const runtime::ExecProgram& plan, const LlamaConfig& cfg) {
    // The smallest score scratch of either memory plan, in positions per head and row.
    int best = -1;
    for (const MemoryLayout* mp : {&plan.decode, &plan.prefill})
        for (const runtime::Buffer& b : mp->buffers)
            if (b.name.size() > 7 && b.name.compare(b.name.size() - 7, 7, ".scores") == 0 && cfg.n_heads > 0) {
                const int n = int(
                    b.bytes / (sizeof(float) * size_t(cfg.n_heads) * size_t(std::clamp(mp->wide_rows, 1, mp->batch))));
                best = best < 0 ? n : std::min(best, n);
            }
    return std::max(best, 0);
}

Result<ResolvedProgram> resolve_program(const Model& m, const runtime::ExecProgram& plan, int max_seq) {
    const LlamaConfig& c = m.config;
    ResolvedProgram rp;
    const MemoryLayout* mp[2] = {&plan.decode, &plan.prefill};
    std::map<std::string, std::array<size_t, 2>> where;
    for (int k = 0; k < 2; ++k) {
        if (mp[k]->batch <= 0) return err("execution plan: memory plan ", k, " has batch ", mp[k]->batch);
        if (mp[k]->wide_rows <= 0 || mp[k]->wide_rows > mp[k]->batch)
            return err("execution plan: memory plan ", k, " has ", mp[k]->wide_rows,
                       " rows of logits and scores, outside 1..", mp[k]->batch, " (its batch)");
        rp.batch[size_t(k)] = mp[k]->batch;
        rp.wide_rows[size_t(k)] = mp[k]->wide_rows;
        rp.arena[size_t(k)] = mp[k]->arena_bytes;
        for (const runtime::Buffer& b : mp[k]->buffers) {
            if (b.offset + b.bytes > mp[k]->arena_bytes)
                return err("execution plan: buffer '", b.name, "' runs past the arena (", b.offset + b.bytes, " > ",
                           mp[k]->arena_bytes, " bytes)");
            where[b.name][size_t(k)] = b.offset;
        }
    }
    rp.arena_bytes = std::max(rp.arena[0], rp.arena[1]);
    // Both plans must know every buffer; a value's bytes must hold width * batch floats (width *
    // wide_rows for the logits and the score scratch).
    auto value = [&](const FusedNode& n, const std::string& v, int width, bool wide = false) -> Result<ValueRef> {
        auto it = where.find(v);
        if (it == where.end())
            return err("execution plan: node '", n.name, "' uses value '", v, "' that has no arena buffer");
        for (int k = 0; k < 2; ++k) {
            bool found = false;
            for (const runtime::Buffer& b : mp[k]->buffers)
                if (b.name == v) {
                    found = true;
                    const int rows = wide ? mp[k]->wide_rows : mp[k]->batch;
                    if (b.bytes < size_t(width) * size_t(rows) * sizeof(float))
                        return err("execution plan: buffer '", v, "' of node '", n.name, "' holds ", b.bytes,
                                   " bytes, fewer than ", width, " floats x ", rows, wide ? " rows" : " (batch)");
                }
            if (!found)
                return err("execution plan: value '", v, "' of node '", n.name, "' is missing from a memory plan");
        }
        return ValueRef{it->second, width};
    };
    auto tensor = [&](const FusedNode& n, const std::string& w) -> Result<const Tensor*> {
        const Tensor* t = m.find(w);
        if (!t) return err("execution plan: node '", n.name, "' needs tensor '", w, "' that the model lacks");
        return t;
    };
    if (max_seq > plan_max_seq(plan, c))
        return err("execution plan: sized for ", plan_max_seq(plan, c), " positions, ", max_seq, " asked for");

    for (const FusedNode& n : plan.nodes) {
        Step s;
        s.name = n.name;
        auto in = [&](size_t i, int width) -> Status {
            if (i >= n.inputs.size()) return err("execution plan: node '", n.name, "' has too few inputs");
            auto r = value(n, n.inputs[i], width);
            if (!r.ok()) return r.error();
            s.in.push_back(*r);
            return {};
        };
        auto out = [&](size_t i, int width) -> Status {
            if (i >= n.outputs.size()) return err("execution plan: node '", n.name, "' has too few outputs");
            const bool logits = n.outputs[i] == "logits";
            auto r = value(n, n.outputs[i], width, logits);
            if (!r.ok()) return r.error();
            s.out.push_back(*r);
            if (logits) s.writes_logits = true;
            return {};
        };
        const bool matmul =
            n.kind == "linear" || n.kind == "qkv_matmul" || n.kind == "concat_matmul" || n.kind == "gate_up_swiglu";
        if (matmul) {
            if (n.weights.empty()) return err("execution plan: matmul node '", n.name, "' has no weights");
            for (const auto& w : n.weights) {
                auto t = tensor(n, w);
                if (!t.ok()) return t.error();
                if ((*t)->shape.size() != 2)
                    return err("execution plan: weight '", w, "' of node '", n.name, "' is not a matrix");
                if (!s.weights.empty() && (*t)->cols() != s.weights[0]->cols())
                    return err("execution plan: weights of node '", n.name, "' disagree on their input width");
                s.weights.push_back(*t);
            }
            const int in_w = int(s.weights[0]->cols());
            rp.max_in_width = std::max(rp.max_in_width, in_w);
            EDGE_TRY(in(0, in_w));
            if (n.kind == "gate_up_swiglu") {
                if (s.weights.size() != 2 || s.weights[0]->rows() != s.weights[1]->rows())
                    return err("execution plan: gate_up_swiglu node '", n.name,
                               "' needs two weights of the same shape");
                s.kind = StepKind::GateUpSwiglu;
                rp.max_ffn = std::max(rp.max_ffn, int(s.weights[1]->rows()));
                EDGE_TRY(out(0, int(s.weights[0]->rows())));
            } else {
                if (n.outputs.size() != s.weights.size())
                    return err("execution plan: node '", n.name, "' has ", n.outputs.size(), " outputs for ",
                               s.weights.size(), " weights");
                s.kind = StepKind::MatMul;
                for (size_t i = 0; i < s.weights.size(); ++i) EDGE_TRY(out(i, int(s.weights[i]->rows())));
                // A weight's bias travels beside it by name (<name>.bias; Qwen2's Q/K/V).
                for (const Tensor* w : s.weights) {
                    const Tensor* b = nullptr;
                    if (w->name.size() > 7 && w->name.ends_with(".weight"))
                        b = m.find(w->name.substr(0, w->name.size() - 7) + ".bias");
                    if (b && (b->type != DType::F32 || b->shape.size() != 1 || b->numel() != w->rows()))
                        return err("execution plan: bias '", b->name, "' of node '", n.name, "' is ",
                                   dtype_name(b->type), " ", b->shape_str(), "; it must be F32 [", w->rows(), "]");
                    s.biases.push_back(b);
                }
            }
            if (n.prologue == "rmsnorm") {
                auto t = tensor(n, n.prologue_weight);
                if (!t.ok()) return t.error();
                if ((*t)->numel() != in_w)
                    return err("execution plan: prologue norm of node '", n.name, "' has the wrong width");
                s.prologue_rmsnorm = true;
                s.norm = *t;
            } else if (!n.prologue.empty()) {
                return err("execution plan: node '", n.name, "' has an unknown prologue '", n.prologue, "'");
            }
            if (n.epilogue == "residual_add") {
                auto r = value(n, n.epilogue_input, s.out[0].width);
                if (!r.ok()) return r.error();
                s.epilogue_residual = true;
                s.residual = *r;
            } else if (!n.epilogue.empty()) {
                return err("execution plan: node '", n.name, "' has an unknown epilogue '", n.epilogue, "'");
            }
            if (s.writes_logits) {
                if (s.kind != StepKind::MatMul || s.weights.size() != 1 || s.epilogue_residual)
                    return err("execution plan: node '", n.name,
                               "' writes the logits; it must be one matmul without an epilogue");
                rp.logits_width = s.out[0].width;
            }
        } else if (n.kind == "embedding") {
            s.kind = StepKind::Embedding;
            if (n.weights.size() != 1) return err("execution plan: embedding node '", n.name, "' needs one weight");
            auto t = tensor(n, n.weights[0]);
            if (!t.ok()) return t.error();
            s.weights.push_back(*t);
            EDGE_TRY(out(0, int((*t)->cols())));
        } else if (n.kind == "rmsnorm") {
            s.kind = StepKind::RMSNorm;
            if (n.weights.size() != 1) return err("execution plan: rmsnorm node '", n.name, "' needs one weight");
            auto t = tensor(n, n.weights[0]);
            if (!t.ok()) return t.error();
            s.norm = *t;
            EDGE_TRY(in(0, int((*t)->numel())));
            EDGE_TRY(out(0, int((*t)->numel())));
        } else if (n.kind == "rope") {
            s.kind = StepKind::Rope;
            EDGE_TRY(in(0, c.q_dim()));
            EDGE_TRY(in(1, c.kv_dim()));
            EDGE_TRY(out(0, c.q_dim()));
            EDGE_TRY(out(1, c.kv_dim()));
        } else if (n.kind == "attention") {
            s.kind = StepKind::Attention;
            s.layer = block_of(n.name);
            if (s.layer < 0 || s.layer >= c.n_layers)
                return err("execution plan: attention node '", n.name, "' names no layer of the model");
            EDGE_TRY(in(0, c.q_dim()));
            EDGE_TRY(in(1, c.kv_dim()));
            EDGE_TRY(in(2, c.kv_dim()));
            EDGE_TRY(out(0, c.q_dim()));
            auto sc = value(n, n.name + ".scores", c.n_heads * max_seq, true);
            if (!sc.ok()) return sc.error();
            s.scores = *sc;
        } else if (n.kind == "swiglu") {
            s.kind = StepKind::Swiglu;
            EDGE_TRY(in(0, c.hidden_dim));
            EDGE_TRY(in(1, c.hidden_dim));
            EDGE_TRY(out(0, c.hidden_dim));
        } else if (n.kind == "add") {
            s.kind = StepKind::Add;
            EDGE_TRY(in(0, c.dim));
            EDGE_TRY(in(1, c.dim));
            EDGE_TRY(out(0, c.dim));
        } else {
            return err("execution plan: node '", n.name, "' of kind '", n.kind, "' has no kernel in the runtime");
        }
        if (s.kind != StepKind::MatMul && s.kind != StepKind::GateUpSwiglu && s.writes_logits)
            return err("execution plan: node '", n.name, "' of kind '", n.kind,
                       "' writes the logits; only the output matmul may");
        rp.steps.push_back(std::move(s));
    }
    if (rp.steps.empty() || rp.steps.front().kind != StepKind::Embedding)
        return err("execution plan: the first node is not the token embedding");
    if (rp.logits_width != c.vocab_size)
        return err("execution plan: no node writes the logits (", c.vocab_size, " wide)");
    return rp;
}

Result<BackendProgram> resolve_for_backend(const Model& m, const runtime::ExecProgram& plan, int requested_max_seq) {
    EDGE_TRY(validate_llama(m));
    const LlamaConfig& c = m.config;
    int max_seq =
        requested_max_seq > 0 ? requested_max_seq : std::min(c.context_length > 0 ? c.context_length : 2048, 4096);
    if (requested_max_seq <= 0) max_seq = std::min(max_seq, plan_max_seq(plan, c));
    if (max_seq <= 0)
        return err(m.source_path, ": the execution plan has no attention scratch to size the KV cache by");
    auto rp = resolve_program(m, plan, max_seq);
    if (!rp.ok()) return err(m.source_path, ": ", rp.message());
    return BackendProgram{max_seq, std::move(rp).value()};
}

}  // namespace edge::runtime
