#include "sensitivity.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "engine/core/memory_budget.h"
#include "engine/model/weights.h"
#include "engine/quant/block_runner.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/one_sequence.h"

using edge::model::block_of;
using edge::model::LayerInfo;
using edge::model::list_layers;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

namespace edge::quant {

namespace {

// KL(P_model || P_variant) and the next-token NLL change, summed over scored positions.
struct Score {
    double kl_sum = 0.0, kl_max = 0.0, nll = 0.0;
    size_t positions = 0;
    void add(const std::vector<double>& ref, const std::vector<double>& got, int32_t target) {
        double kl = 0;
        for (size_t v = 0; v < ref.size(); ++v) kl += std::exp(ref[v]) * (ref[v] - got[v]);
        kl = std::max(0.0, kl);
        kl_sum += kl;
        kl_max = std::max(kl_max, kl);
        nll += ref[size_t(target)] - got[size_t(target)];
        ++positions;
    }
    void into(LayerSensitivity& s) const {
        s.kl_mean = kl_sum / double(std::max<size_t>(1, positions));
        s.kl_max = kl_max;
        s.nll_delta = nll / double(std::max<size_t>(1, positions));
    }
};

LayerSensitivity describe(const LayerInfo& L, const Tensor& t, const Tensor& q) {
    LayerSensitivity s;
    s.layer = L.name;
    s.kind = L.kind;
    s.block = L.block;
    s.shape = t.shape;
    s.bytes = q.nbytes;
    return s;
}

// `s`'s sequences with hidden states `h` (what a variant starts from).
CalibStates with_states(const CalibStates& s, std::vector<float> h) {
    CalibStates out;
    out.starts = s.starts;
    out.lengths = s.lengths;
    out.longest = s.longest;
    out.total = s.total;
    out.dim = s.dim;
    out.h = std::move(h);
    return out;
}

Status check_sequences(const std::vector<std::vector<int32_t>>& seqs) {
    if (seqs.empty()) return err("sensitivity needs at least one calibration sequence");
    for (const auto& s : seqs)
        if (s.size() < 2) return err("a sensitivity sequence needs at least 2 tokens");
    return {};
}

std::vector<int32_t> next_tokens(const std::vector<std::vector<int32_t>>& seqs) {
    std::vector<int32_t> targets;
    for (const auto& s : seqs)
        for (size_t i = 1; i < s.size(); ++i) targets.push_back(s[i]);
    return targets;
}

// ---- the whole-model path (tests' oracle) ---------------------------------------------------------

// Log-probabilities of every scored position of every sequence.
Result<std::vector<std::vector<double>>> run_logprobs(const std::shared_ptr<const Model>& m,
                                                      const std::vector<std::vector<int32_t>>& seqs, int threads) {
    int longest = 0;
    for (const auto& s : seqs) longest = std::max(longest, int(s.size()));
    auto rt = LlamaCpu::create(m, RuntimeOptions{threads, longest});
    if (!rt.ok()) return rt.error();
    auto scorer = runtime::Scorer::create(**rt, longest);
    if (!scorer) return scorer.error();
    const int V = m->config.vocab_size;
    std::vector<std::vector<double>> out;
    for (const auto& s : seqs) {
        auto logits = scorer->score(s);
        if (!logits) return logits.error();
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            out.emplace_back();
            runtime::kernels::log_softmax(*logits + i * size_t(V), V, out.back());
        }
    }
    return out;
}

Result<std::vector<LayerSensitivity>> whole_model_sensitivity(const Model& m,
                                                              const std::vector<std::vector<int32_t>>& seqs,
                                                              const SensitivityOptions& opts, Progress* progress) {
    auto base = std::make_shared<const Model>(m);
    auto ref = run_logprobs(base, seqs, opts.threads);
    if (!ref.ok()) return ref.error();
    const std::vector<int32_t> targets = next_tokens(seqs);
    const std::vector<LayerInfo> layers = list_layers(m);
    std::vector<LayerSensitivity> res;
    for (size_t li = 0; li < layers.size(); ++li) {
        const LayerInfo& L = layers[li];
        if (is_cancelled(progress)) return err("sensitivity cancelled");
        const Tensor* t = m.find(L.tensor);
        if (!t || t->type != DType::F32) continue;
        auto q = quantize_rtn(*t, opts.spec);
        if (!q.ok()) return err(L.name, ": ", q.message());
        LayerSensitivity s = describe(L, *t, *q);
        Model mq = m;  // tensors share storage; only this one is replaced
        *mq.find_mut(L.tensor) = std::move(q).value();
        auto lp = run_logprobs(std::make_shared<const Model>(std::move(mq)), seqs, opts.threads);
        if (!lp.ok()) return err(L.name, ": ", lp.message());
        Score sc;
        for (size_t p = 0; p < ref->size(); ++p) sc.add((*ref)[p], (*lp)[p], targets[p]);
        sc.into(s);
        res.push_back(std::move(s));
        report(progress, double(li + 1) / double(layers.size()), "layer sensitivity");
    }
    return res;
}

// ---- the block-streamed path ------------------------------------------------------------------

// The decoder blocks of `m` read one at a time into a working copy (tensors share storage): an
// unread tensor is read as F32 when its block is held and let go when it is dropped.
class HeldBlocks {
public:
    explicit HeldBlocks(const Model& m) : m_(m), work_(m) {}
    Model& work() { return work_; }
    Status hold(int block) {
        for (Tensor& t : work_.tensors) {
            if (block_of(t.name) != block || !model::is_unread(t)) continue;
            auto r = model::weight_f32(m_, t);
            if (!r.ok()) return r.error();
            model::release_weight(m_, t);
            t = std::move(r).value();
        }
        return {};
    }
    void drop(int block) {
        for (size_t i = 0; i < work_.tensors.size(); ++i)
            if (block_of(work_.tensors[i].name) == block && model::is_unread(m_.tensors[i]))
                work_.tensors[i] = m_.tensors[i];
    }
    // Runs block `block` over every state set (held for the call).
    Status run(int block, BlockRunner& runner, const std::vector<CalibStates*>& states) {
        EDGE_TRY(hold(block));
        auto w = block_weights(work_, block);
        if (!w.ok()) return w.error();
        for (CalibStates* s : states) run_block(runner, *s, *w, nullptr);
        drop(block);
        return {};
    }

private:
    const Model& m_;
    Model work_;
};

// Log-probabilities at every scored position (each sequence's tokens but its last), sequence after
// sequence: the states through the final norm and `head`, as LlamaCpu's head computes them.
template <class Use>
void head_logprobs(CalibStates s, const float* norm, const Tensor& head, const model::LlamaConfig& c, ThreadPool& pool,
                   Use&& use) {
    final_norm(s, norm, c.norm_eps);
    const int V = c.vocab_size;
    std::vector<float> logits(size_t(s.longest) * size_t(V));
    std::vector<double> lp;
    size_t p = 0;
    for (size_t i = 0; i < s.starts.size(); ++i) {
        const int n = s.lengths[i] - 1;
        runtime::qkernels::matmul(logits.data(), &s.h[size_t(s.starts[i]) * size_t(s.dim)], head, n, pool);
        for (int j = 0; j < n; ++j) {
            runtime::kernels::log_softmax(&logits[size_t(j) * size_t(V)], V, lp);
            use(p++, lp);
        }
    }
}

Result<std::vector<LayerSensitivity>> streamed_sensitivity(const Model& m,
                                                           const std::vector<std::vector<int32_t>>& seqs,
                                                           const SensitivityOptions& opts, Progress* progress) {
    const model::LlamaConfig& c = m.config;
    ThreadPool pool(opts.threads);
    CalibSet calib;
    calib.sequences = seqs;
    const Tensor* e = m.find("token_embd.weight");
    const Tensor* norm_t = m.find("output_norm.weight");
    const Tensor* head_t = m.output_head();
    if (!e || !norm_t || !head_t) return err(m.source_path, ": no token embedding, output_norm.weight or output head");
    {
        // What the pass holds: one block and the head as F32, the states before every block and
        // the variants carried together, the reference log-probabilities, the block runner's scratch.
        const uint64_t block_f32 = model::largest_block_f32_bytes(m);
        uint64_t tokens = 0, positions = 0, longest = 0;
        for (const auto& q : seqs) {
            tokens += q.size();
            positions += q.size() - 1;
            longest = std::max<uint64_t>(longest, q.size());
        }
        const uint64_t state = tokens * uint64_t(c.dim) * sizeof(float);
        const uint64_t per_token = uint64_t(3 * c.dim + std::max(c.dim, c.q_dim()) + 3 * c.hidden_dim) * sizeof(float);
        EDGE_TRY(
            check_memory(m.source_path + ": layer sensitivity",
                         {{"one block and the head as F32", block_f32 + uint64_t(head_t->numel()) * sizeof(float)},
                          {"the calibration states", state * uint64_t(c.n_layers + 2)},
                          {"the quantized-layer variants' states",
                           std::min<uint64_t>(uint64_t(7 * c.n_layers) * state,
                                              std::max<uint64_t>(opts.variant_state_bytes, 7 * state))},
                          {"the reference log-probabilities", positions * uint64_t(c.vocab_size) * sizeof(double)},
                          {"the block runner", longest * (per_token + longest * uint64_t(c.n_heads) * sizeof(float))}},
                         memory_budget(), "use fewer or shorter calibration sequences, or a machine with more memory"));
    }
    CalibStates s;
    {
        // Only the calibration tokens' rows are converted (an F16 embedding stays F16).
        auto embd = model::weight_as_stored(m, *e);
        if (!embd.ok()) return embd.error();
        if (!runtime::qkernels::supported(*embd))
            return err(m.source_path, ": token_embd.weight is held as ", dtype_name(embd->type),
                       ", which the sensitivity pass cannot read");
        s = embed_calibration(calib, *embd, c);
        if (model::is_unread(*e)) model::release_weight(m, *e);
    }
    // The final norm and the head stay held for the whole run (the head as F32 when unread).
    auto norm = model::weight_f32(m, *norm_t);
    if (!norm.ok()) return norm.error();
    auto head = model::is_unread(*head_t) ? model::weight_f32(m, *head_t) : Result<Tensor>(*head_t);
    if (!head.ok()) return head.error();
    if (!runtime::qkernels::supported(*head))
        return err(m.source_path, ": ", head_t->name, " is held as ", dtype_name(head->type),
                   ", which the sensitivity pass cannot read");

    // The reference: every calibration token's state before each block, and the log-probabilities.
    HeldBlocks blocks(m);
    BlockRunner runner(c, s.longest, pool);
    const int L = c.n_layers;
    std::vector<std::vector<float>> before(static_cast<size_t>(L));
    for (int b = 0; b < L; ++b) {
        if (is_cancelled(progress)) return err("sensitivity cancelled");
        before[size_t(b)] = s.h;
        EDGE_TRY(blocks.run(b, runner, {&s}));
    }
    std::vector<std::vector<double>> ref;
    head_logprobs(s, norm->f32(), *head, c, pool, [&](size_t, const std::vector<double>& lp) { ref.push_back(lp); });
    report(progress, 1.0 / double(L + 2), "layer sensitivity");
    const std::vector<int32_t> targets = next_tokens(seqs);

    const std::vector<LayerInfo> layers = list_layers(m);
    std::vector<std::optional<LayerSensitivity>> found(layers.size());
    // A quantized-layer variant: the states it carries, from its block to the head.
    struct Variant {
        size_t layer;
        CalibStates s;
        std::optional<Tensor> head;  // the quantized head, for the head's own variant
    };
    // The variants of one layer each, scored against the reference once they leave the last block.
    auto score = [&](std::vector<Variant>& vs) {
        for (Variant& v : vs) {
            Score sc;
            head_logprobs(std::move(v.s), norm->f32(), v.head ? *v.head : *head, c, pool,
                          [&](size_t p, const std::vector<double>& lp) { sc.add(ref[p], lp, targets[p]); });
            sc.into(*found[v.layer]);
        }
        vs.clear();
    };
    // Passes over the blocks: each pass starts the variants of a run of source blocks (as many as
    // their states fit opts.variant_state_bytes, at least one block's) and carries all of them
    // through every later block, so a pass reads each block once.
    std::vector<int> per_block(size_t(L), 0);
    for (const LayerInfo& li : layers) {
        const Tensor* t = m.find(li.tensor);
        if (li.block >= 0 && li.block < L && t && t->type == DType::F32) ++per_block[size_t(li.block)];
    }
    const size_t state_bytes = std::max<size_t>(1, s.h.size() * sizeof(float));
    const size_t fit = opts.variant_state_bytes / state_bytes;
    std::vector<std::pair<int, int>> passes;  // [first, end) source blocks
    for (int b0 = 0; b0 < L;) {
        int b1 = b0;
        size_t n = 0;
        while (b1 < L && (b1 == b0 || n + size_t(per_block[size_t(b1)]) <= fit)) n += size_t(per_block[size_t(b1++)]);
        passes.emplace_back(b0, b1);
        b0 = b1;
    }
    double steps = 0, done = 0;
    for (const auto& [b0, b1] : passes) steps += double(L - b0);
    for (const auto& [b0, b1] : passes) {
        std::vector<Variant> vs;
        for (int k = b0; k < L; ++k) {
            if (is_cancelled(progress)) return err("sensitivity cancelled");
            EDGE_TRY(blocks.hold(k));
            auto w = block_weights(blocks.work(), k);
            if (!w.ok()) return w.error();
            for (Variant& v : vs) run_block(runner, v.s, *w, nullptr);  // started in earlier blocks
            for (size_t li = 0; k < b1 && li < layers.size(); ++li) {
                if (layers[li].block != k) continue;
                Tensor& t = *blocks.work().find_mut(layers[li].tensor);
                if (t.type != DType::F32 || !t.data) continue;
                auto q = quantize_rtn(t, opts.spec);
                if (!q.ok()) return err(layers[li].name, ": ", q.message());
                found[li] = describe(layers[li], t, *q);
                // Block k with this one layer quantized (BlockWeights points at the tensors).
                const Tensor held = t;
                t = std::move(q).value();
                Variant v{li, with_states(s, before[size_t(k)]), std::nullopt};
                run_block(runner, v.s, *w, nullptr);
                t = held;
                vs.push_back(std::move(v));
            }
            if (k < b1) before[size_t(k)] = {};
            blocks.drop(k);
            report(progress, (1.0 + double(L) * (++done) / steps) / double(L + 2), "layer sensitivity");
        }
        score(vs);
    }
    // The layers outside the blocks: the head (tied to the embedding, its variant starts there).
    for (size_t li = 0; li < layers.size(); ++li) {
        if (layers[li].block >= 0) continue;
        if (layers[li].tensor != head_t->name || head->type != DType::F32) continue;
        auto q = quantize_rtn(*head, opts.spec);
        if (!q.ok()) return err(layers[li].name, ": ", q.message());
        found[li] = describe(layers[li], *head, *q);
        std::vector<Variant> vs;
        const bool tied = head_t == e;
        vs.push_back(Variant{li, tied ? embed_calibration(calib, *q, c) : s, std::move(q).value()});
        if (tied)  // the embedding changes too: from the first block on
            for (int k = 0; k < L; ++k) EDGE_TRY(blocks.run(k, runner, {&vs.back().s}));
        score(vs);
    }
    std::vector<LayerSensitivity> res;
    for (auto& f : found)
        if (f) res.push_back(std::move(*f));
    report(progress, 1.0, "layer sensitivity");
    return res;
}

}  // namespace

Result<std::vector<LayerSensitivity>> layer_sensitivity(const Model& m, const std::vector<std::vector<int32_t>>& seqs,
                                                        const SensitivityOptions& opts, Progress* progress) {
    EDGE_TRY(check_sequences(seqs));
    if (opts.whole_model_reference) return whole_model_sensitivity(m, seqs, opts, progress);
    return streamed_sensitivity(m, seqs, opts, progress);
}

Result<SensitivitySplit> split_by_sensitivity(const std::vector<LayerSensitivity>& s, int k) {
    if (k < 0 || size_t(k) > s.size()) return err("k = ", k, " is outside 0..", s.size(), " layers");
    std::vector<size_t> order(s.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a].kl_mean > s[b].kl_mean; });
    SensitivitySplit r;
    std::vector<bool> used(s.size(), false);
    for (int i = 0; i < k; ++i) {
        r.most.push_back(s[order[size_t(i)]].layer);
        used[order[size_t(i)]] = true;
    }
    for (int i = 0; i < k; ++i) {
        const auto& shape = s[order[size_t(i)]].shape;
        bool found = false;
        for (size_t j = order.size(); j-- > 0;) {
            const size_t c = order[j];
            if (used[c] || s[c].shape != shape) continue;
            used[c] = found = true;
            r.least.push_back(s[c].layer);
            break;
        }
        if (!found) {
            // No layer of that shape left (the output head): the least sensitive layers whose
            // element counts add up to exactly the same number.
            int64_t left = 1;
            for (int64_t d : shape) left *= d;
            std::vector<size_t> picked;
            for (size_t j = order.size(); j-- > 0 && left > 0;) {
                const size_t c = order[j];
                int64_t n = 1;
                for (int64_t d : s[c].shape) n *= d;
                if (used[c] || n > left) continue;
                picked.push_back(c);
                left -= n;
            }
            if (left == 0) {
                for (size_t c : picked) {
                    used[c] = true;
                    r.least.push_back(s[c].layer);
                }
                found = true;
            }
        }
        if (!found) {
            std::string dims;
            for (int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
            return err("no same-size counterpart for ", s[order[size_t(i)]].layer, " (", dims,
                       "): too few layers of that shape outside the ", k, " most sensitive");
        }
    }
    return r;
}

QuantPlan mixed_plan(const std::vector<std::string>& layers, Precision high, const QuantSpec& high_spec,
                     const QuantSpec& base_spec) {
    QuantPlan p = uniform_plan(Precision(base_spec.bits == 8 ? Precision::INT8 : Precision::INT4), base_spec.method,
                               base_spec.group_size, base_spec.symmetric, base_spec.grouping);
    if (p.defaults) p.defaults->clip = base_spec.clip;
    for (const std::string& l : layers) {
        LayerRule r;
        r.pattern = l;
        r.precision = high;
        if (high == Precision::INT8 || high == Precision::INT4) {
            r.method = high_spec.method;
            r.grouping = high_spec.grouping;
            r.group_size = high_spec.group_size;
            r.symmetric = high_spec.symmetric;
            r.clip = high_spec.clip;
        }
        p.rules.push_back(std::move(r));
    }
    p.source = "<mixed plan>";
    return p;
}

}  // namespace edge::quant
