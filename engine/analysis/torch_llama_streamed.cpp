// The block-by-block curvature of the Llama analysis path (detail::streamed_curvature: what
// analysis::torch_layer_curvature runs unless CurvatureOptions::whole_model_reference asks for the
// whole-model graph of torch_llama.cpp): the same statistics with one decoder block's weights alive
// at a time.
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/analysis/torch_llama_detail.h"
#include "engine/core/memory_budget.h"
#include "engine/model/ir.h"
#include "engine/model/weights.h"
#include "engine/runtime/cpu/qkernels.h"

using edge::model::LayerInfo;
using edge::model::list_layers;
using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::validate_llama;

namespace edge::analysis::detail {

namespace {

// ---- block by block ------------------------------------------------------------------------------
//
// The same statistics with one decoder block's weights alive at a time (as F32, read from the file
// when the model is opened lazily) and the final norm and head held throughout. The calibration
// batch's hidden states before every block are saved on a forward pass; gradients come from a
// reverse pass over the blocks (each block run again from its saved input and back-propagated
// with the gradient that reached its output), and Hessian-vector products from the same reverse
// pass carrying, beside the gradient, its directional derivative (forward-over-reverse): a
// forward sweep carries the tangent of the hidden state from the layer's block to the head, the
// reverse sweep the derivative of the gradient back to the layer.

// An F32 model tensor as a LibTorch leaf without a copy (autograd never writes its leaves).
torch::Tensor view_leaf(const Tensor& t, bool grad) {
    auto x = torch::from_blob(const_cast<float*>(t.f32()), t.shape, torch::kFloat32);
    x.set_requires_grad(grad);
    return x;
}

// One block's weights as leaves over F32 buffers that live as long as it does.
struct HeldBlock {
    TLayer L;
    std::vector<Tensor> keep;
    std::vector<std::pair<std::string, torch::Tensor>> leaves;
    torch::Tensor leaf(const std::string& name) const {
        for (const auto& [n, x] : leaves)
            if (n == name) return x;
        return {};
    }
};

class BlockStream {
public:
    BlockStream(const Model& m, int max_pos) : m_(m), rope_(torch_rope(m.config, max_pos)) {}

    Status open() {
        const Tensor* e = m_.find("token_embd.weight");
        const Tensor* norm = m_.find("output_norm.weight");
        const Tensor* head = m_.output_head();
        if (!e || !norm || !head) return err(m_.source_path, ": no token embedding, output_norm.weight or output head");
        tied_ = head == e;
        auto n = model::weight_f32(m_, *norm);
        if (!n.ok()) return n.error();
        norm_ = std::move(n).value();
        auto h = model::weight_f32(m_, *head);
        if (!h.ok()) return h.error();
        head_ = std::move(h).value();
        if (model::is_unread(*head)) model::release_weight(m_, *head);
        if (!tied_) {  // only the batch's rows are converted (an F16 embedding stays F16)
            auto s = model::weight_as_stored(m_, *e);
            if (!s.ok()) return s.error();
            if (!runtime::qkernels::supported(*s))
                return err(m_.source_path, ": token_embd.weight is held as ", dtype_name(s->type),
                           ", which the analysis cannot read");
            embd_ = std::move(s).value();
        }
        return {};
    }
    const LlamaConfig& config() const { return m_.config; }
    const Rope& rope() const { return rope_; }
    bool tied() const { return tied_; }
    torch::Tensor out_norm() const { return view_leaf(norm_, false); }
    torch::Tensor head(bool grad) const { return view_leaf(head_, grad); }

    // The tokens' embedding rows, [B, T, dim], as the whole-model graph looks them up.
    torch::Tensor embed(const torch::Tensor& tokens) const {
        const int64_t B = tokens.size(0), T = tokens.size(1), D = config().dim;
        if (tied_) return head(false).index_select(0, tokens.reshape({-1})).view({B, T, D});
        auto x = torch::empty({B * T, D}, torch::kFloat32);
        auto ids = tokens.reshape({-1}).contiguous();
        for (int64_t i = 0; i < B * T; ++i)
            runtime::qkernels::dequantize_row(embd_, ids.data_ptr<int64_t>()[i], x.data_ptr<float>() + i * D);
        return x.view({B, T, D});
    }

    // Block l's weights; those whose tensor is named in `grad` require gradients.
    Result<HeldBlock> hold(int l, const std::vector<std::string>& grad) const {
        HeldBlock b;
        const bool bias = config().attn_qkv_bias;
        const std::pair<torch::Tensor*, const char*> parts[] = {{&b.L.attn_norm, "attn_norm.weight"},
                                                                {&b.L.wq, "attn_q.weight"},
                                                                {&b.L.wk, "attn_k.weight"},
                                                                {&b.L.wv, "attn_v.weight"},
                                                                {&b.L.wo, "attn_output.weight"},
                                                                {&b.L.ffn_norm, "ffn_norm.weight"},
                                                                {&b.L.w_gate, "ffn_gate.weight"},
                                                                {&b.L.w_up, "ffn_up.weight"},
                                                                {&b.L.w_down, "ffn_down.weight"},
                                                                {&b.L.bq, "attn_q.bias"},
                                                                {&b.L.bk, "attn_k.bias"},
                                                                {&b.L.bv, "attn_v.bias"}};
        for (const auto& [dst, suffix] : parts) {
            if (!bias && std::strstr(suffix, ".bias")) continue;
            const std::string name = blk(l, suffix);
            const Tensor* t = m_.find(name);
            if (!t) return err(m_.source_path, ": tensor '", name, "' is missing");
            auto r = model::weight_f32(m_, *t);
            if (!r.ok()) return r.error();
            if (model::is_unread(*t)) model::release_weight(m_, *t);
            b.keep.push_back(std::move(r).value());
            const bool g = std::find(grad.begin(), grad.end(), name) != grad.end();
            *dst = view_leaf(b.keep.back(), g);
            b.leaves.emplace_back(name, *dst);
        }
        return b;
    }

private:
    const Model& m_;
    Rope rope_;
    bool tied_ = false;
    Tensor norm_, head_, embd_;
};

// Gradients of sum(out * grad_out) w.r.t. `inputs`; an input `out` does not depend on gets zeros.
std::vector<torch::Tensor> vjp(const torch::Tensor& out, const std::vector<torch::Tensor>& inputs,
                               const torch::Tensor& grad_out, bool create) {
    if (!out.requires_grad()) {  // nothing that requires gradients reaches `out` (a constant)
        std::vector<torch::Tensor> z;
        for (const torch::Tensor& x : inputs) z.push_back(torch::zeros_like(x));
        return z;
    }
    auto g = torch::autograd::grad({out}, inputs, {grad_out}, /*retain_graph=*/true, create, /*allow_unused=*/true);
    for (size_t i = 0; i < g.size(); ++i)
        if (!g[i].defined()) g[i] = torch::zeros_like(inputs[i]);
    return g;
}

// The directional derivative of `out` along `tangents` of `inputs` (J t), by the double-backward
// trick: the vector-Jacobian product with a dummy u is linear in u, and its gradient is J t.
torch::Tensor jvp(const torch::Tensor& out, const std::vector<torch::Tensor>& inputs,
                  const std::vector<torch::Tensor>& tangents) {
    auto u = torch::zeros_like(out).requires_grad_(true);
    auto g = vjp(out, inputs, u, true);
    torch::Tensor s = torch::zeros({}, torch::kFloat32);
    for (size_t i = 0; i < g.size(); ++i) s = s + (g[i] * tangents[i]).sum();
    if (!s.requires_grad()) return torch::zeros_like(out);
    auto r = torch::autograd::grad({s}, {u}, {}, true, false, true)[0];
    return r.defined() ? r : torch::zeros_like(out);
}

// The block inputs of the batch (hs[k] before block k, hs[L] before the head), no graph kept.
Result<std::vector<torch::Tensor>> block_inputs(const BlockStream& bs, const torch::Tensor& tokens) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> hs{bs.embed(tokens)};
    for (int k = 0; k < bs.config().n_layers; ++k) {
        auto b = bs.hold(k, {});
        if (!b.ok()) return b.error();
        hs.push_back(block_forward(bs.config(), bs.rope(), b->L, hs.back()));
    }
    return hs;
}

}  // namespace

Result<std::vector<LayerCurvature>> streamed_curvature(const Model& m, const std::vector<std::vector<int32_t>>& seqs,
                                                       const CurvatureOptions& o, Progress* progress) {
    std::vector<size_t> usable;
    EDGE_TRY(check_curvature_options(m, seqs, o, usable));
    EDGE_TRY(validate_llama(m));
    const LlamaConfig& c = m.config;
    const int L = c.n_layers;
    // The layers, as targets() finds them in the whole-model graph.
    std::vector<LayerInfo> layers;
    for (const LayerInfo& li : list_layers(m))
        if (o.layers.empty() || std::find(o.layers.begin(), o.layers.end(), li.name) != o.layers.end())
            layers.push_back(li);
    for (const std::string& name : o.layers)
        if (std::none_of(layers.begin(), layers.end(), [&](const LayerInfo& x) { return x.name == name; }))
            return err(m.source_path, ": no layer named '", name, "'");
    if (layers.empty()) return err(m.source_path, ": the model has no layer to analyse");
    const Tensor* head_t = m.output_head();
    std::vector<std::vector<size_t>> in_block(static_cast<size_t>(L));
    std::optional<size_t> head_layer;
    for (size_t i = 0; i < layers.size(); ++i) {
        if (layers[i].block >= 0 && layers[i].block < L)
            in_block[size_t(layers[i].block)].push_back(i);
        else if (head_t && layers[i].tensor == head_t->name)
            head_layer = i;
        else
            return err(m.source_path, ": layer '", layers[i].name, "' is neither in a block nor the output head");
    }
    {
        // What the pass holds: one block and the head as F32, the batch's saved states (block
        // inputs, their gradients, a tangent per block), one block's double-backward graph and the
        // head's logits with their gradients.
        const uint64_t block_f32 = model::largest_block_f32_bytes(m);
        const uint64_t rows = uint64_t(std::max(o.batch_size, o.hessian_sequences)) * uint64_t(o.seq_len);
        const uint64_t state = rows * uint64_t(c.dim) * sizeof(float);
        const uint64_t graph =
            3 * rows *
            (uint64_t(8 * c.dim + 4 * c.q_dim() + 2 * c.kv_dim() + 6 * c.hidden_dim) * sizeof(float) +
             uint64_t(4 * c.n_heads) * uint64_t(o.seq_len) * sizeof(float));
        EDGE_TRY(check_memory(
            m.source_path + ": sensitivity analysis",
            {{"one block and the head as F32", block_f32 + uint64_t(head_t ? head_t->numel() : 0) * sizeof(float)},
             {"the saved block inputs, gradients and tangents", 3 * uint64_t(L + 1) * state},
             {"one block's second-order graph", graph},
             {"the head's logits and gradients", 4 * rows * uint64_t(c.vocab_size) * sizeof(float)}},
            memory_budget(), "use a shorter --seq-len or fewer sequences per batch"));
    }
    if (o.threads > 0) torch::set_num_threads(o.threads);
    BlockStream bs(m, o.seq_len);
    EDGE_TRY(bs.open());
    std::vector<LayerCurvature> out;
    for (const LayerInfo& li : layers) {
        LayerCurvature lc;
        lc.layer = li.name;
        lc.tensor = li.tensor;
        lc.params = li.params;
        out.push_back(std::move(lc));
    }
    auto names_of = [&](int k) {
        std::vector<std::string> n;
        for (size_t i : in_block[size_t(k)]) n.push_back(layers[i].tensor);
        return n;
    };
    auto detached = [](const torch::Tensor& x) { return x.detach().requires_grad_(true); };
    const torch::Tensor norm = bs.out_norm();
    const int64_t D = c.dim;
    const double total = double(o.batches) + double(layers.size());

    // Gradient norms over T sampled batches: a forward pass saving block inputs, then the reverse.
    std::mt19937_64 rng(o.seed);
    for (int bi = 0; bi < o.batches; ++bi) {
        if (is_cancelled(progress)) return err("sensitivity analysis cancelled");
        Batch batch = sample_batch(seqs, usable, o.batch_size, o.seq_len, rng);
        auto hs = block_inputs(bs, batch.inputs);
        if (!hs.ok()) return hs.error();
        torch::Tensor head_grad, delta;
        {
            auto h = detached((*hs)[size_t(L)]);
            auto w = bs.head(head_layer.has_value());
            auto loss = mean_loss(c, head_forward(c, norm, w, h), batch.targets);
            std::vector<torch::Tensor> in{h};
            if (head_layer) in.push_back(w);
            auto g = vjp(loss, in, torch::ones_like(loss), false);
            delta = g[0];
            if (head_layer) head_grad = g[1];
        }
        for (int k = L - 1; k >= 0; --k) {
            const std::vector<std::string> names = names_of(k);
            auto b = bs.hold(k, names);
            if (!b.ok()) return b.error();
            auto h = detached((*hs)[size_t(k)]);
            auto y = block_forward(c, bs.rope(), b->L, h);
            std::vector<torch::Tensor> in{h};
            for (const std::string& n : names) in.push_back(b->leaf(n));
            auto g = vjp(y, in, delta, false);
            delta = g[0];
            for (size_t j = 0; j < names.size(); ++j)
                out[in_block[size_t(k)][j]].grad_norms.push_back(g[j + 1].norm().item<double>());
        }
        if (head_layer) {
            if (bs.tied())  // the embedding's rows: the lookup's gradient, as index_select's backward makes it
                head_grad = head_grad +
                            torch::zeros_like(head_grad).index_add_(0, batch.inputs.reshape({-1}), delta.view({-1, D}));
            out[*head_layer].grad_norms.push_back(head_grad.norm().item<double>());
        }
        edge::report(progress, (bi + 1) / total, "gradient statistics (batch " + std::to_string(bi + 1) + ")");
    }

    // The Hessian batch: its block inputs and the loss gradient at each of them (delta[k] = dL/dhs[k]).
    Batch hb = fixed_batch(seqs, usable, o.hessian_sequences, o.seq_len);
    auto hs_r = block_inputs(bs, hb.inputs);
    if (!hs_r.ok()) return hs_r.error();
    const std::vector<torch::Tensor>& hs = *hs_r;
    std::vector<torch::Tensor> delta(size_t(L) + 1);
    {
        auto h = detached(hs[size_t(L)]);
        auto loss = mean_loss(c, head_forward(c, norm, bs.head(false), h), hb.targets);
        delta[size_t(L)] = vjp(loss, {h}, torch::ones_like(loss), false)[0];
        for (int k = L - 1; k >= 0; --k) {
            auto b = bs.hold(k, {});
            if (!b.ok()) return b.error();
            auto hk = detached(hs[size_t(k)]);
            delta[size_t(k)] = vjp(block_forward(c, bs.rope(), b->L, hk), {hk}, delta[size_t(k) + 1], false)[0];
        }
    }
    // The reverse sweep from the head down to block `to`: the derivative of the gradient at each
    // block input along the tangents `dh` (dh[k] at hs[k]), starting from its value at the head.
    auto reverse = [&](torch::Tensor ddelta, const std::vector<torch::Tensor>& dh, int to) -> Result<torch::Tensor> {
        for (int k = L - 1; k >= to; --k) {
            auto b = bs.hold(k, {});
            if (!b.ok()) return b.error();
            auto hk = detached(hs[size_t(k)]);
            auto y = block_forward(c, bs.rope(), b->L, hk);
            auto gh = vjp(y, {hk}, delta[size_t(k) + 1], true)[0];  // J^T delta, as a function of hk
            // d/dhk of <J^T delta, dh> (the second-order term) plus J^T ddelta, in one backward pass
            auto s = (gh * dh[size_t(k)]).sum() + (y * ddelta).sum();
            ddelta = vjp(s, {hk}, torch::ones({}), false)[0];
        }
        return ddelta;
    };
    // The tangents from block `from` on: dh[k + 1] = J_k dh[k] through blocks from..L-1.
    auto forward_tangents = [&](std::vector<torch::Tensor>& dh, int from) -> Status {
        for (int k = from; k < L; ++k) {
            auto b = bs.hold(k, {});
            if (!b.ok()) return b.error();
            auto hk = detached(hs[size_t(k)]);
            dh[size_t(k) + 1] = jvp(block_forward(c, bs.rope(), b->L, hk), {hk}, {dh[size_t(k)]});
        }
        return {};
    };
    // The head's part for a tangent dh[L] at its input and a perturbation v of its weight (when
    // `w_grad`): the derivative of the gradient at its input, and its contribution to H v.
    auto head_part = [&](const torch::Tensor& dhL, const torch::Tensor& v, bool w_grad, torch::Tensor& ddelta,
                         torch::Tensor& hv) {
        auto h = detached(hs[size_t(L)]);
        auto w = bs.head(w_grad);
        auto loss = mean_loss(c, head_forward(c, norm, w, h), hb.targets);
        std::vector<torch::Tensor> in{h};
        if (w_grad) in.push_back(w);
        auto g = vjp(loss, in, torch::ones_like(loss), true);
        torch::Tensor s = (g[0] * dhL).sum();
        if (w_grad) s = s + (g[1] * v).sum();
        auto sec = vjp(s, in, torch::ones({}), false);
        ddelta = sec[0];
        if (w_grad) hv = sec[1];
    };

    for (size_t i = 0; i < layers.size(); ++i) {
        if (is_cancelled(progress)) return err("sensitivity analysis cancelled");
        const LayerInfo& li = layers[i];
        const int b0 = li.block;
        auto hvp_t = [&](const torch::Tensor& v) -> Result<torch::Tensor> {
            std::vector<torch::Tensor> dh(size_t(L) + 1);
            torch::Tensor ddelta, hv;
            if (b0 >= 0) {  // a block's layer: the tangent starts at its block's output
                {
                    auto b = bs.hold(b0, {li.tensor});
                    if (!b.ok()) return b.error();
                    dh[size_t(b0) + 1] =
                        jvp(block_forward(c, bs.rope(), b->L, hs[size_t(b0)]), {b->leaf(li.tensor)}, {v});
                }
                EDGE_TRY(forward_tangents(dh, b0 + 1));
                head_part(dh[size_t(L)], v, false, ddelta, hv);
                auto dd = reverse(ddelta, dh, b0 + 1);
                if (!dd.ok()) return dd.error();
                auto b = bs.hold(b0, {li.tensor});
                if (!b.ok()) return b.error();
                auto w = b->leaf(li.tensor);
                auto y = block_forward(c, bs.rope(), b->L, hs[size_t(b0)]);
                auto gw = vjp(y, {w}, delta[size_t(b0) + 1], true)[0];
                return vjp((gw * v).sum() + (y * *dd).sum(), {w}, torch::ones({}), false)[0];
            }
            if (!bs.tied()) {  // an own head: nothing before it depends on its weight
                head_part(torch::zeros_like(hs[size_t(L)]), v, true, ddelta, hv);
                return hv;
            }
            // The tied head is the embedding too: its tangent starts at the lookup.
            dh[0] = v.index_select(0, hb.inputs.reshape({-1})).view({hb.inputs.size(0), hb.inputs.size(1), D});
            EDGE_TRY(forward_tangents(dh, 0));
            head_part(dh[size_t(L)], v, true, ddelta, hv);
            auto dd = reverse(ddelta, dh, 0);
            if (!dd.ok()) return dd.error();
            return hv + torch::zeros_like(hv).index_add_(0, hb.inputs.reshape({-1}), dd->view({-1, D}));
        };
        const Tensor* wt = m.find(li.tensor);
        const std::vector<int64_t> shape = wt->shape;
        Status failed;
        auto hvp = [&](const std::vector<double>& v) {
            auto vt = torch::from_blob(const_cast<double*>(v.data()), shape, torch::kFloat64).to(torch::kFloat32);
            auto hv = hvp_t(vt);
            if (!hv.ok()) {
                if (failed.ok()) failed = hv.error();
                return std::vector<double>(v.size(), 0.0);
            }
            auto hd = hv->to(torch::kFloat64).contiguous();
            return std::vector<double>(hd.data_ptr<double>(), hd.data_ptr<double>() + hd.numel());
        };
        out[i].eigenvalues = lanczos_top(hvp, li.params, o.lanczos_steps, o.topk, o.seed + i);
        if (!failed.ok()) return failed.error();
        edge::report(progress, (double(o.batches) + i + 1) / total, "Hessian spectrum of " + out[i].layer);
    }
    return out;
}

}  // namespace edge::analysis::detail
