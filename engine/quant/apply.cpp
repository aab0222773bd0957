#include "apply.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "engine/core/half.h"
#include "engine/core/memory_budget.h"
#include "engine/core/thread_pool.h"
#include "engine/model/weights.h"
#include "engine/quant/block_runner.h"
#include "engine/runtime/cpu/qkernels.h"
#include "methods.h"

using edge::model::block_of;
using edge::model::finalize_llama;
using edge::model::LlamaConfig;
using edge::model::Model;

namespace edge::quant {

namespace {

const char* method_tag(QMethod m) { return m == QMethod::AWQ ? " awq" : m == QMethod::GPTQ ? " gptq" : " rtn"; }

// An F32 tensor this function may modify (copies shared storage first).
Tensor& writable(Model& m, const std::string& name, std::map<std::string, bool>& owned) {
    Tensor& t = *m.find_mut(name);
    if (!owned[name]) {
        Tensor c = Tensor::alloc(t.name, DType::F32, t.shape);
        std::memcpy(c.data.get(), t.data.get(), t.nbytes);
        c.source_type = t.source_type;
        t = std::move(c);
        owned[name] = true;
    }
    return t;
}

Tensor to_f16(const Tensor& w) {
    Tensor h = Tensor::alloc(w.name, DType::F16, w.shape);
    h.source_type = w.source_type;
    auto* p = reinterpret_cast<uint16_t*>(h.data.get());
    for (int64_t i = 0; i < w.numel(); ++i) p[i] = f32_to_f16(w.f32()[i]);
    return h;
}

struct AwqGroup {
    const char* input;               // capture key
    std::vector<const char*> kinds;  // layers reading that input
    const char* prev_norm;           // RMSNorm weight to divide (or null)
    const char* prev_linear;         // linear whose rows to divide (or null)
};

bool integer(const LayerChoice& c) { return c.precision == Precision::INT8 || c.precision == Precision::INT4; }
// AWQ and GPTQ run the model over calibration text.
bool calibrated(const LayerChoice& c) { return integer(c) && c.spec.method != QMethod::RTN; }
bool any_calibrated(const std::vector<LayerChoice>& choices) {
    return std::any_of(choices.begin(), choices.end(), calibrated);
}

}  // namespace

ApplyEstimate estimate_apply(const Model& model, const std::vector<LayerChoice>& choices, bool streaming,
                             const CalibSet* calib) {
    std::map<std::string, const LayerChoice*> by_tensor;
    const bool needs_calib = any_calibrated(choices);
    for (const LayerChoice& c : choices) by_tensor[c.tensor] = &c;
    ApplyEstimate e;
    std::map<int, uint64_t> per_block;         // converted bytes by block (-1: outside blocks)
    std::map<int, uint64_t> unread_per_block;  // F32 bytes read by block (-1: outside blocks)
    uint64_t largest_unread = 0;
    for (const Tensor& t : model.tensors) {
        const bool unread = model::is_unread(t);
        if (unread) {
            unread_per_block[block_of(t.name)] += t.nbytes;
            largest_unread = std::max<uint64_t>(largest_unread, t.nbytes);
        }
        auto it = by_tensor.find(t.name);
        const LayerChoice* c = it == by_tensor.end() ? nullptr : it->second;
        const uint64_t n = uint64_t(t.numel());
        if (!c || c->precision == Precision::FP32) {
            if (!unread) e.resident += t.nbytes;
        } else if (c->precision == Precision::FP16) {
            per_block[c->block] += n * 2;
        } else {
            const int64_t g =
                c->spec.grouping == QGrouping::PerChannel ? t.cols() : std::max<int64_t>(c->spec.group_size, 1);
            const uint64_t groups = (n + uint64_t(g) - 1) / uint64_t(g);
            per_block[c->block] += n * uint64_t(c->spec.bits) / 8 + groups * (c->spec.symmetric ? 4 : 8);
        }
    }
    for (const auto& [block, bytes] : per_block)
        e.converted = streaming ? std::max(e.converted, bytes) : e.converted + bytes;
    if (!needs_calib) {
        e.f32_working = largest_unread;
        return e;
    }
    // One block's weights as F32 (or the tensors outside blocks: embedding, head, norm), and the
    // calibration activations: the carried states, a copy, the captured inputs of one block and
    // the block runner's scratch.
    uint64_t block_f32 = 0;
    for (const auto& [block, bytes] : unread_per_block) block_f32 = std::max(block_f32, bytes);
    const LlamaConfig& c = model.config;
    uint64_t tokens = 0, longest = 0;
    if (calib)
        for (const auto& q : calib->sequences) {
            tokens += q.size();
            longest = std::max<uint64_t>(longest, q.size());
        }
    const uint64_t per_token = uint64_t(3 * c.dim + std::max(c.dim, c.q_dim()) + 3 * c.hidden_dim) * sizeof(float);
    e.f32_working = block_f32 + tokens * per_token + longest * longest * uint64_t(c.n_heads) * sizeof(float);
    return e;
}

Result<QuantizeResult> apply_plan(const Model& model, const QuantPlan& plan, const CalibSet* calib, Progress* progress,
                                  const ApplyOptions& opts) {
    auto resolved = resolve_plan(model, plan);
    if (!resolved.ok()) return resolved.error();
    const std::vector<LayerChoice>& choices = *resolved;
    for (const LayerChoice& c : choices) {
        const Tensor* t = model.find(c.tensor);
        if (c.precision != Precision::FP32 && (!t || t->type != DType::F32))
            return err(c.layer, ": is held as ", t ? dtype_name(t->type) : "nothing",
                       "; quantization starts from F32 weights");
    }
    const bool needs_calib = any_calibrated(choices);
    if (needs_calib && (!calib || calib->sequences.empty()))
        return err(plan.source, ": awq and gptq need calibration text (none given, or it gave no sequences)");
    {
        const ApplyEstimate e = estimate_apply(model, choices, bool(opts.sink), calib);
        EDGE_TRY(check_memory(
            model.source_path + ": quantizing with " + (plan.source.empty() ? std::string("the plan") : plan.source),
            {{"converted layers", e.converted},
             {needs_calib ? "one block as F32 and the calibration activations (AWQ/GPTQ)" : "one tensor as F32",
              e.f32_working}},
            memory_budget(),
            needs_calib ? "use RTN for the largest layers, or a machine with more memory"
                        : "quantize to fewer bits, or use a machine with more memory"));
    }

    QuantizeResult res;
    if (calib && !calib->warning.empty()) res.warnings.push_back(calib->warning);
    // Tensors share storage until changed. Tensors of a lazily opened model stay unread until
    // their layer is converted (RTN, FP16: one tensor's F32 copy at a time; a layer left at FP32
    // stays unread for the writer to stream). AWQ and GPTQ carry the calibration tokens' hidden
    // states from block to block, reading each block as F32 when its turn comes.
    const bool streamed_calib = needs_calib && !opts.whole_model_reference;
    if (needs_calib && opts.whole_model_reference && !model::weights_resident(model)) {
        Model loaded = model;
        EDGE_TRY(model::load_weights(loaded, progress));
        res.model = std::move(loaded);
    } else {
        res.model = model;
    }
    Model& out = res.model;
    std::map<std::string, bool> owned;
    std::map<std::string, double> alpha_of;
    ThreadPool pool(opts.threads);
    const LlamaConfig& cfg = model.config;

    // Block-streamed calibration: the hidden states of every calibration token, carried through
    // the blocks as they are converted (block_runner.h).
    std::optional<CalibStates> states;
    std::optional<BlockRunner> runner;
    if (streamed_calib) {
        const Tensor* e = out.find("token_embd.weight");
        if (!e) return err(model.source_path, ": no token embedding to run the calibration text through");
        // Only the calibration tokens' rows are converted (an F16 embedding stays F16).
        auto stored = model::weight_as_stored(out, *e);
        if (!stored.ok()) return stored.error();
        if (!runtime::qkernels::supported(*stored))
            return err(model.source_path, ": token_embd.weight is held as ", dtype_name(stored->type),
                       ", which the calibration cannot read");
        states = embed_calibration(*calib, *stored, cfg);
        if (model::is_unread(*e)) model::release_weight(out, *e);
        runner.emplace(cfg, states->longest, pool);
    }
    // Reads every unread tensor of decoder block `block` as F32: the block in hand.
    auto hold_block = [&](int block) -> Status {
        for (Tensor& t : out.tensors) {
            if (block_of(t.name) != block || !model::is_unread(t)) continue;
            auto r = model::weight_f32(out, t);
            if (!r.ok()) return r.error();
            model::release_weight(out, t);
            t = std::move(r).value();
        }
        return {};
    };
    // Runs decoder block `block`, read as F32 where unread, over the states: capturing its
    // linears' inputs (cap), or advancing the states through it.
    auto run_held_block = [&](int block, BlockInputs* cap) -> Status {
        EDGE_TRY(hold_block(block));
        auto w = block_weights(out, block);
        if (!w.ok()) return w.error();
        run_block(*runner, *states, *w, cap);
        return {};
    };
    // The inputs of block `block`'s linears (-1: the output head's), with the blocks before it
    // already converted.
    auto capture = [&](int block) -> Result<BlockInputs> {
        if (!streamed_calib)
            return capture_block_inputs(std::make_shared<const Model>(out), *calib, block, opts.threads, progress);
        if (is_cancelled(progress)) return err("calibration cancelled");
        BlockInputs cap;
        if (block >= 0) {
            EDGE_TRY(run_held_block(block, &cap));
            return cap;
        }
        // The head reads the final norm of every token's state (the last use of the states).
        const Tensor* norm = out.find("output_norm.weight");
        if (!norm) return err(model.source_path, ": no output_norm.weight");
        EDGE_TRY(model::use_weight(out, *norm, [&](const Tensor& n) -> Status {
            if (n.type != DType::F32) return err(model.source_path, ": output_norm.weight is not F32");
            final_norm(*states, n.f32(), cfg.norm_eps);
            return {};
        }));
        Captured& x = cap["output"];
        x.dim = cfg.dim;
        x.rows = states->total;
        x.x = std::move(states->h);
        return cap;
    };

    std::unique_ptr<BlockInputs> captured;
    int captured_block = -2;
    // Converts one layer in `out` and describes it in `rep`. RTN and FP16 layers touch only their
    // own tensor, so a block's run in parallel (GPTQ shares the captured inputs and the pool).
    auto convert = [&](const LayerChoice& c, LayerReport& rep) -> Status {
        Tensor& t = *out.find_mut(c.tensor);
        if (model::is_unread(t) && c.precision != Precision::FP32) {
            // Lazily opened: read this one tensor, convert it, and let its F32 copy go.
            auto r = model::weight_f32(out, t);
            if (!r.ok()) return r.error();
            model::release_weight(out, t);
            t = std::move(r).value();
        }
        rep.layer = c.layer;
        rep.bytes_before = t.nbytes;
        rep.awq_alpha = alpha_of.count(c.layer) ? alpha_of.at(c.layer) : -1.0;
        if (c.precision == Precision::FP32) {
            rep.format = "fp32";
        } else if (c.precision == Precision::FP16) {
            rep.format = "fp16";
            Tensor h = to_f16(t);
            rep.error = error_report(t, h);
            t = std::move(h);
        } else {
            Result<Tensor> q = Error{};
            if (c.spec.method == QMethod::GPTQ) {
                const std::string key = capture_key(c.kind);
                // Inputs captured once per block, with the earlier blocks already quantized.
                if (captured_block != c.block || !captured) {
                    auto in = capture(c.block);
                    if (!in.ok()) return in.error();
                    captured = std::make_unique<BlockInputs>(std::move(in).value());
                    captured_block = c.block;
                }
                const Captured& x = (*captured)[key];
                if (x.rows == 0) return err(c.layer, ": no calibration inputs were captured");
                q = quantize_gptq(t.name, t.f32(), t.rows(), t.cols(), hessian_from_inputs(x.x.data(), x.rows, x.dim),
                                  c.spec, plan.gptq, &pool);
            } else {
                QuantSpec s = c.spec;
                q = quantize_rtn(t, s);
                if (q.ok() && c.spec.method == QMethod::AWQ) {
                    auto info = std::make_shared<QuantInfo>(*q->quant);
                    info->method = QMethod::AWQ;
                    q->quant = info;
                }
            }
            if (!q.ok()) return err(c.layer, ": ", q.message());
            rep.format = spec_name(c.spec) + method_tag(c.spec.method);
            rep.error = error_report(t, *q);
            const QuantInfo& qi = *q->quant;
            rep.scale_min = 0.0f;
            for (int64_t g = 0; g < qi.n_groups; ++g) {
                const float s = std::fabs(quant_scale(qi, q->data.get(), g));
                rep.scale_max = std::max(rep.scale_max, s);
                if (s > 0 && (rep.scale_min == 0.0f || s < rep.scale_min)) rep.scale_min = s;
            }
            q->source_type = t.source_type;
            t = std::move(q).value();
        }
        rep.bytes_after = t.nbytes;
        return {};
    };

    // Streaming (opts.sink): a block's tensors leave as soon as the block is done.
    std::vector<char> emitted(out.tensors.size(), 0);
    auto emit_block = [&](int block) -> Status {
        for (size_t i = 0; i < out.tensors.size(); ++i) {
            Tensor& t = out.tensors[i];
            if (emitted[i] || block_of(t.name) != block) continue;
            EDGE_TRY(model::use_weight(out, t, opts.sink));  // an unread one: left as it is by the plan
            t.data.reset();
            emitted[i] = 1;
        }
        return {};
    };
    auto emit_all = [&]() -> Status {
        for (int b = 0; b < cfg.n_layers; ++b) EDGE_TRY(emit_block(b));
        return emit_block(-1);
    };

    const std::vector<AwqGroup> groups = {
        {"attn", {"attn_q", "attn_k", "attn_v"}, "attn_norm", nullptr},
        {"ffn", {"ffn_gate", "ffn_up"}, "ffn_norm", nullptr},
        {"ffn_down", {"ffn_down"}, nullptr, "ffn_up"},
        // attention output follows V only when every head has its own V (no GQA sharing).
        {"attn_output", {"attn_output"}, nullptr, cfg.q_dim() == cfg.kv_dim() ? "attn_v" : nullptr},
    };

    for (int b = -1; b < cfg.n_layers; ++b) {
        const int block = b < cfg.n_layers - 1 ? b + 1 : -1;  // blocks 0..L-1, then the head (-1)
        if (is_cancelled(progress)) return err("quantization cancelled");
        std::vector<const LayerChoice*> mine;
        for (const LayerChoice& c : choices)
            if (c.block == block) mine.push_back(&c);
        auto choice_of = [&](const std::string& kind) -> const LayerChoice* {
            for (const LayerChoice* c : mine)
                if (c->kind == kind) return c;
            return nullptr;
        };
        bool any_awq = false;
        for (const LayerChoice* c : mine)
            any_awq |=
                c->spec.method == QMethod::AWQ && (c->precision == Precision::INT8 || c->precision == Precision::INT4);
        if (any_awq && block >= 0) {
            auto inputs = capture(block);
            if (!inputs.ok()) return inputs.error();
            const std::string pre = "blk." + std::to_string(block) + ".";
            for (const AwqGroup& g : groups) {
                std::vector<AwqMember> members;
                bool searched_any = false;
                for (const char* kind : g.kinds) {
                    const LayerChoice* c = choice_of(kind);
                    const Tensor* t = out.find(pre + kind + ".weight");
                    if (!c || !t) continue;
                    AwqMember m;
                    m.w = t->f32();
                    m.rows = t->rows();
                    m.spec = c->spec;
                    m.searched = c->spec.method == QMethod::AWQ &&
                                 (c->precision == Precision::INT8 || c->precision == Precision::INT4);
                    if (!m.searched) m.spec = QuantSpec{4, true, QGrouping::PerChannel, 0, QMethod::RTN};
                    searched_any |= m.searched;
                    members.push_back(m);
                }
                if (!searched_any || (!g.prev_norm && !g.prev_linear)) continue;
                const Captured& x = (*inputs)[g.input];
                const int64_t in = x.dim;
                auto found = awq_search(members, in, x.x.data(), x.rows, plan.awq);
                if (!found.ok()) return err(pre, g.input, ": ", found.message());
                const std::vector<float>& s = found->scales;
                for (const char* kind : g.kinds) {
                    if (!out.find(pre + kind + ".weight")) continue;
                    Tensor& t = writable(out, pre + kind + ".weight", owned);
                    for (int64_t r = 0; r < t.rows(); ++r)
                        for (int64_t i = 0; i < in; ++i) t.f32_mut()[r * in + i] *= s[size_t(i)];
                    alpha_of[pre + kind] = found->alpha;
                }
                if (g.prev_norm) {
                    Tensor& n = writable(out, pre + g.prev_norm + ".weight", owned);
                    for (int64_t i = 0; i < in; ++i) n.f32_mut()[i] /= s[size_t(i)];
                } else {
                    Tensor& p = writable(out, pre + g.prev_linear + ".weight", owned);
                    for (int64_t r = 0; r < in; ++r)
                        for (int64_t i = 0; i < p.cols(); ++i) p.f32_mut()[r * p.cols() + i] /= s[size_t(r)];
                }
            }
        }
        // ffn_up must be converted after ffn_down's AWQ folded into it: all folding is done above.
        {
            // A block with a GPTQ layer converts in order (its captured inputs see the layers
            // converted before it); otherwise the block's layers convert in parallel.
            std::vector<LayerReport> reps(mine.size());
            std::vector<Status> done(mine.size());
            const bool any_gptq = std::any_of(mine.begin(), mine.end(), [](const LayerChoice* c) {
                return integer(*c) && c->spec.method == QMethod::GPTQ;
            });
            if (any_gptq) {
                for (size_t i = 0; i < mine.size(); ++i) done[i] = convert(*mine[i], reps[i]);
            } else {
                pool.parallel_for(int64_t(mine.size()), [&](int64_t b0, int64_t b1) {
                    for (int64_t i = b0; i < b1; ++i) done[size_t(i)] = convert(*mine[size_t(i)], reps[size_t(i)]);
                });
            }
            for (size_t i = 0; i < mine.size(); ++i) {
                EDGE_TRY(done[i]);
                res.layers.push_back(std::move(reps[i]));
            }
        }
        if (streamed_calib && block >= 0) EDGE_TRY(run_held_block(block, nullptr));  // the states advance
        if (opts.sink && (!needs_calib || streamed_calib)) EDGE_TRY(emit_block(block));
        report(progress, double(b + 2) / double(cfg.n_layers + 1), "quantizing");
    }
    if (opts.sink) EDGE_TRY(emit_all());  // what is left (everything in the whole-model reference)
    for (const LayerReport& r : res.layers) {
        if (!r.error.within_bound && r.format.find("rtn") != std::string::npos &&
            r.format.find("asym") == std::string::npos && r.format.find("clip") == std::string::npos &&
            r.format.find("ggml") == std::string::npos)
            res.warnings.push_back(r.layer + ": RTN error " + std::to_string(r.error.frobenius) +
                                   " exceeds the bound " + std::to_string(r.error.bound));
        if (r.scale_min > 0 && r.scale_max / r.scale_min > 1e6)
            res.warnings.push_back(r.layer + ": scale dynamic range " + std::to_string(r.scale_max / r.scale_min) +
                                   " exceeds 1e6");
    }
    out.metadata.emplace_back("quant.plan", plan.source);
    finalize_llama(out);
    return res;
}

}  // namespace edge::quant
