// The Llama analysis path's LibTorch forward (mirroring the CPU executor,
// engine/runtime/cpu/llama_cpu.cpp, op for op), an AdamW trainer, gradients, logits and the
// whole-model curvature reference, and the block-by-block curvature: one LibTorch translation unit
// (DESIGN.md: torch stays inside .cpp files, and each such file costs ~20 s to compile).
#include "engine/analysis/torch_llama.h"
#include "engine/model/rope.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <vector>

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

// "blk.3." + what
std::string blk(int l, const char* what);

// One decoder block's weights as LibTorch tensors.
struct TLayer {
    torch::Tensor attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
    torch::Tensor bq, bk, bv;  // Q/K/V biases (Qwen2); undefined when none
};

// The rotary tables exactly as the CPU executor has them: [max_pos, rope_dim/2].
struct Rope {
    torch::Tensor cos, sin;
    int64_t rope_dim = 0;
};
Rope torch_rope(const model::LlamaConfig& c, int max_pos);

torch::Tensor rmsnorm(const torch::Tensor& x, const torch::Tensor& w, float eps);
// x: [B, T, H, HD]; rotates pairs (2i, 2i+1) of the first rope_dim dimensions of every head.
torch::Tensor rope(const Rope& r, const torch::Tensor& x);
// One decoder block: x [B, T, dim] -> [B, T, dim].
torch::Tensor block_forward(const model::LlamaConfig& c, const Rope& r, const TLayer& L, const torch::Tensor& x);
// The final norm and the output head: x [B, T, dim] -> logits [B, T, vocab].
torch::Tensor head_forward(const model::LlamaConfig& c, const torch::Tensor& out_norm, const torch::Tensor& head,
                           const torch::Tensor& x);
// Mean next-token cross-entropy of logits [B, T, vocab] against targets [B, T] (-100 = not scored).
torch::Tensor mean_loss(const model::LlamaConfig& c, const torch::Tensor& logits, const torch::Tensor& targets);

Status check_tokens(const model::Model& m, const std::vector<int32_t>& ids);

// One training batch: inputs [B, T] and targets [B, T] (-100 = not scored).
struct Batch {
    torch::Tensor inputs, targets;
    int64_t scored = 0;
};
// B windows of T+1 tokens from randomly chosen usable sequences (from the start or, for longer
// ones, at a random offset); short ones padded, the padding not scored.
Batch sample_batch(const std::vector<std::vector<int32_t>>& seqs, const std::vector<size_t>& usable, int B, int T,
                   std::mt19937_64& rng);
// The first `count` usable sequences, each cut to T+1 tokens from its start, as one batch.
Batch fixed_batch(const std::vector<std::vector<int32_t>>& seqs, const std::vector<size_t>& usable, int count, int T);

// The options' and tokens' checks of the curvature analysis; `usable` gets the sequences of two
// tokens or more.
Status check_curvature_options(const model::Model& m, const std::vector<std::vector<int32_t>>& seqs,
                               const CurvatureOptions& o, std::vector<size_t>& usable);
// Lanczos with full reorthogonalisation: the top-k Ritz values by magnitude of the operator hvp.
std::vector<double> lanczos_top(const std::function<std::vector<double>(const std::vector<double>&)>& hvp, int64_t n,
                                int steps, int k, uint64_t seed);

// torch_layer_curvature one block's weights at a time (below).
Result<std::vector<LayerCurvature>> streamed_curvature(const model::Model& m,
                                                       const std::vector<std::vector<int32_t>>& seqs,
                                                       const CurvatureOptions& o, Progress* progress);

}  // namespace edge::analysis::detail

namespace edge::analysis {
namespace detail {

std::string blk(int l, const char* what) { return "blk." + std::to_string(l) + "." + what; }

Rope torch_rope(const LlamaConfig& c, int max_pos) {
    model::RopeTables rope = model::rope_tables(c, max_pos);
    Rope r;
    r.cos = torch::from_blob(rope.cos.data(), {max_pos, rope.half}, torch::kFloat32).clone();
    r.sin = torch::from_blob(rope.sin.data(), {max_pos, rope.half}, torch::kFloat32).clone();
    r.rope_dim = c.rope_dim;
    return r;
}

torch::Tensor rmsnorm(const torch::Tensor& x, const torch::Tensor& w, float eps) {
    return w * (x * torch::rsqrt(x.pow(2).mean(-1, true) + eps));
}

torch::Tensor rope(const Rope& r, const torch::Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), H = x.size(2), HD = x.size(3);
    const int64_t rd = r.rope_dim, half = rd / 2;
    auto xr = x.narrow(3, 0, rd).reshape({B, T, H, half, 2});
    auto a = xr.select(4, 0), b = xr.select(4, 1);
    auto cs = r.cos.narrow(0, 0, T).view({1, T, 1, half});
    auto sn = r.sin.narrow(0, 0, T).view({1, T, 1, half});
    auto rot = torch::stack({a * cs - b * sn, a * sn + b * cs}, 4).reshape({B, T, H, rd});
    if (rd == HD) return rot;
    return torch::cat({rot, x.narrow(3, rd, HD - rd)}, 3);
}

// The stages of the forward, shared by the whole-model graph and the block-by-block passes so
// both compute the same operations in the same order.

// One decoder block: x [B, T, dim] -> [B, T, dim].
torch::Tensor block_forward(const LlamaConfig& c, const Rope& r, const TLayer& L, const torch::Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1);
    const int64_t H = c.n_heads, KVH = c.n_kv_heads, HD = c.head_dim;
    const float inv_sqrt = 1.0f / std::sqrt(float(HD));
    auto mask = torch::ones({T, T}, torch::kBool).triu(1);  // true above the diagonal = future
    auto h = rmsnorm(x, L.attn_norm, c.norm_eps);
    auto proj = [&](const torch::Tensor& w, const torch::Tensor& b) {
        auto y = torch::matmul(h, w.t());
        return b.defined() ? y + b : y;
    };
    auto q = rope(r, proj(L.wq, L.bq).view({B, T, H, HD})).transpose(1, 2);
    auto k = rope(r, proj(L.wk, L.bk).view({B, T, KVH, HD})).transpose(1, 2);
    auto v = proj(L.wv, L.bv).view({B, T, KVH, HD}).transpose(1, 2);
    if (H != KVH) {  // query head h reads KV head h / (H / KVH)
        k = k.repeat_interleave(H / KVH, 1);
        v = v.repeat_interleave(H / KVH, 1);
    }
    auto att = torch::matmul(q, k.transpose(2, 3)) * inv_sqrt;  // [B, H, T, T]
    att = torch::softmax(att.masked_fill(mask, -std::numeric_limits<float>::infinity()), -1);
    auto o = torch::matmul(att, v).transpose(1, 2).reshape({B, T, H * HD});
    auto y = x + torch::matmul(o, L.wo.t());
    auto f = rmsnorm(y, L.ffn_norm, c.norm_eps);
    auto g = torch::silu(torch::matmul(f, L.w_gate.t())) * torch::matmul(f, L.w_up.t());
    return y + torch::matmul(g, L.w_down.t());
}

// The final norm and the output head: x [B, T, dim] -> logits [B, T, vocab].
torch::Tensor head_forward(const LlamaConfig& c, const torch::Tensor& out_norm, const torch::Tensor& head,
                           const torch::Tensor& x) {
    return torch::matmul(rmsnorm(x, out_norm, c.norm_eps), head.t());
}

// Mean next-token cross-entropy of logits [B, T, vocab] against targets [B, T] (-100 = not scored).
torch::Tensor mean_loss(const LlamaConfig& c, const torch::Tensor& logits, const torch::Tensor& targets) {
    return torch::nn::functional::cross_entropy(logits.view({-1, c.vocab_size}), targets.view({-1}),
                                                torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
}

Status check_tokens(const Model& m, const std::vector<int32_t>& ids) {
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= m.config.vocab_size)
            return err("token ", ids[i], " at position ", i, " is outside the vocabulary of ", m.config.vocab_size);
    return {};
}

Batch sample_batch(const std::vector<std::vector<int32_t>>& seqs, const std::vector<size_t>& usable, int B, int T,
                   std::mt19937_64& rng) {
    std::vector<int64_t> in(size_t(B) * T, 0), tg(size_t(B) * T, -100);
    Batch b;
    for (int r = 0; r < B; ++r) {
        const auto& s = seqs[usable[rng() % usable.size()]];
        size_t off = 0;
        if (s.size() > size_t(T) + 1 && (rng() & 1)) off = rng() % (s.size() - size_t(T));
        const size_t n = std::min(s.size() - off, size_t(T) + 1);
        for (size_t i = 0; i + 1 < n; ++i) {
            in[size_t(r) * T + i] = s[off + i];
            tg[size_t(r) * T + i] = s[off + i + 1];
            ++b.scored;
        }
    }
    b.inputs = torch::from_blob(in.data(), {B, T}, torch::kInt64).clone();
    b.targets = torch::from_blob(tg.data(), {B, T}, torch::kInt64).clone();
    return b;
}

// The first `count` usable sequences, each cut to T+1 tokens from its start, as one batch.
Batch fixed_batch(const std::vector<std::vector<int32_t>>& seqs, const std::vector<size_t>& usable, int count, int T) {
    const int B = std::max(1, std::min(count, int(usable.size())));
    std::vector<int64_t> in(size_t(B) * T, 0), tg(size_t(B) * T, -100);
    Batch b;
    for (int r = 0; r < B; ++r) {
        const auto& s = seqs[usable[size_t(r)]];
        const size_t n = std::min(s.size(), size_t(T) + 1);
        for (size_t i = 0; i + 1 < n; ++i) {
            in[size_t(r) * T + i] = s[i];
            tg[size_t(r) * T + i] = s[i + 1];
            ++b.scored;
        }
    }
    b.inputs = torch::from_blob(in.data(), {B, T}, torch::kInt64).clone();
    b.targets = torch::from_blob(tg.data(), {B, T}, torch::kInt64).clone();
    return b;
}

Status check_curvature_options(const Model& m, const std::vector<std::vector<int32_t>>& seqs, const CurvatureOptions& o,
                               std::vector<size_t>& usable) {
    if (o.topk < 1) return err("topk must be at least 1 (got ", o.topk, ")");
    if (o.lanczos_steps < o.topk)
        return err("lanczos steps (", o.lanczos_steps, ") must be at least topk (", o.topk, ")");
    if (o.batches < 1 || o.batch_size < 1 || o.seq_len < 1 || o.hessian_sequences < 1)
        return err("batches, batch size, sequence length and Hessian sequences must be positive");
    if (m.config.context_length > 0 && o.seq_len > m.config.context_length)
        return err("sequence length ", o.seq_len, " exceeds the model context ", m.config.context_length);
    for (size_t i = 0; i < seqs.size(); ++i) {
        EDGE_TRY(check_tokens(m, seqs[i]));
        if (seqs[i].size() >= 2) usable.push_back(i);
    }
    if (usable.empty()) return err("no calibration sequence has two tokens or more");
    return {};
}

// Lanczos with full reorthogonalisation: the Ritz values of the largest magnitude.
std::vector<double> lanczos_top(const std::function<std::vector<double>(const std::vector<double>&)>& hvp, int64_t n,
                                int steps, int k, uint64_t seed) {
    const int m = int(std::min<int64_t>(n, steps));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> nd;
    auto dot = [n](const std::vector<double>& a, const std::vector<double>& b) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += a[size_t(i)] * b[size_t(i)];
        return s;
    };
    std::vector<std::vector<double>> V;
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v) x = nd(rng);
    double nv = std::sqrt(dot(v, v));
    for (auto& x : v) x /= nv;
    std::vector<double> alpha, beta;
    for (int j = 0; j < m; ++j) {
        V.push_back(v);
        std::vector<double> w = hvp(v);
        const double a = dot(w, v);
        alpha.push_back(a);
        for (int pass = 0; pass < 2; ++pass)  // full reorthogonalisation, twice
            for (const auto& q : V) {
                const double c = dot(w, q);
                for (int64_t i = 0; i < n; ++i) w[size_t(i)] -= c * q[size_t(i)];
            }
        const double b = std::sqrt(dot(w, w));
        if (j + 1 == m) break;
        if (b <= 1e-12 * std::max(1.0, std::abs(a))) break;  // invariant subspace: the Ritz values are exact
        beta.push_back(b);
        for (int64_t i = 0; i < n; ++i) v[size_t(i)] = w[size_t(i)] / b;
    }
    const int64_t r = int64_t(alpha.size());
    auto T = torch::zeros({r, r}, torch::kFloat64);
    auto acc = T.accessor<double, 2>();
    for (int64_t i = 0; i < r; ++i) {
        acc[i][i] = alpha[size_t(i)];
        if (i + 1 < r) acc[i][i + 1] = acc[i + 1][i] = beta[size_t(i)];
    }
    auto ev = torch::linalg_eigvalsh(T).contiguous();
    std::vector<double> theta(ev.data_ptr<double>(), ev.data_ptr<double>() + r);
    std::sort(theta.begin(), theta.end(), [](double x, double y) { return std::abs(x) > std::abs(y); });
    theta.resize(size_t(std::min<int64_t>(k, r)));
    return theta;
}

}  // namespace detail

namespace {

using namespace detail;

// Weights as LibTorch leaves (copies of the IR tensors) plus the rotary tables.
struct TorchLlama {
    LlamaConfig c;
    torch::Tensor embd, out_norm, head;
    std::vector<TLayer> layers;
    Rope rope;
    // Every distinct leaf with the IR tensor it came from (a tied head appears once).
    std::vector<std::pair<std::string, torch::Tensor>> params;
};

Result<torch::Tensor> leaf(const Model& m, const std::string& name, bool grad,
                           std::vector<std::pair<std::string, torch::Tensor>>& params) {
    const Tensor* t = m.find(name);
    if (!t) return err(m.source_path, ": tensor '", name, "' is missing");
    if (t->type != DType::F32 || !t->data)
        return err(m.source_path, ": tensor '", name, "' is held as ", dtype_name(t->type),
                   "; the LibTorch forward needs F32");
    std::vector<int64_t> shape = t->shape;
    torch::Tensor x = torch::from_blob(const_cast<float*>(t->f32()), shape, torch::kFloat32).clone();
    x.set_requires_grad(grad);
    params.emplace_back(name, x);
    return x;
}

Result<TorchLlama> build(const Model& m, bool grad, int max_pos) {
    EDGE_TRY(validate_llama(m));
    TorchLlama t;
    t.c = m.config;
    const LlamaConfig& c = t.c;
    auto get = [&](const std::string& name) { return leaf(m, name, grad, t.params); };
    {
        auto e = get("token_embd.weight");
        if (!e) return e.error();
        t.embd = *e;
        auto n = get("output_norm.weight");
        if (!n) return n.error();
        t.out_norm = *n;
        const Tensor* head = m.output_head();
        if (head && head->name != "token_embd.weight") {
            auto h = get(head->name);
            if (!h) return h.error();
            t.head = *h;
        } else {
            t.head = t.embd;
        }
    }
    for (int l = 0; l < c.n_layers; ++l) {
        TLayer L;
        const std::pair<torch::Tensor*, const char*> parts[] = {
            {&L.attn_norm, "attn_norm.weight"}, {&L.wq, "attn_q.weight"},      {&L.wk, "attn_k.weight"},
            {&L.wv, "attn_v.weight"},           {&L.wo, "attn_output.weight"}, {&L.ffn_norm, "ffn_norm.weight"},
            {&L.w_gate, "ffn_gate.weight"},     {&L.w_up, "ffn_up.weight"},    {&L.w_down, "ffn_down.weight"}};
        for (auto& [dst, suffix] : parts) {
            auto r = get(blk(l, suffix));
            if (!r) return r.error();
            *dst = *r;
        }
        if (c.attn_qkv_bias)
            for (auto& [dst, suffix] :
                 {std::pair{&L.bq, "attn_q.bias"}, std::pair{&L.bk, "attn_k.bias"}, std::pair{&L.bv, "attn_v.bias"}}) {
                auto r = get(blk(l, suffix));
                if (!r) return r.error();
                *dst = *r;
            }
        t.layers.push_back(std::move(L));
    }
    t.rope = torch_rope(c, max_pos);
    return t;
}

// tokens: [B, T] int64 -> logits [B, T, vocab].
torch::Tensor forward(const TorchLlama& t, const torch::Tensor& tokens) {
    const int64_t B = tokens.size(0), T = tokens.size(1);
    torch::Tensor x = t.embd.index_select(0, tokens.reshape({-1})).view({B, T, t.c.dim});
    for (const TLayer& L : t.layers) x = block_forward(t.c, t.rope, L, x);
    return head_forward(t.c, t.out_norm, t.head, x);
}

torch::Tensor to_tokens(const std::vector<int32_t>& ids) {
    std::vector<int64_t> v(ids.begin(), ids.end());
    return torch::from_blob(v.data(), {1, int64_t(v.size())}, torch::kInt64).clone();
}

Status write_back(Model& m, const TorchLlama& t) {
    for (const auto& [name, x] : t.params) {
        Tensor* dst = m.find_mut(name);
        if (!dst) return err(m.source_path, ": tensor '", name, "' vanished during training");
        torch::Tensor c = x.detach().contiguous();
        const size_t bytes = size_t(c.numel()) * sizeof(float);
        if (bytes != dst->nbytes && dst->nbytes != 0)
            return err(m.source_path, ": tensor '", name, "' changed size during training");
        auto buf = alloc_aligned(bytes);
        std::memcpy(buf.get(), c.data_ptr<float>(), bytes);
        dst->data = std::move(buf);
        dst->nbytes = bytes;
    }
    return {};
}

Status train_impl(Model& m, const std::vector<std::vector<int32_t>>& seqs, const TrainOptions& o, Progress* progress,
                  TrainReport* report) {
    if (o.steps <= 0 && o.seconds <= 0) return err("training needs a step or a time bound");
    if (o.batch <= 0 || o.seq_len <= 0) return err("training batch and sequence length must be positive");
    if (o.seq_len > m.config.context_length && m.config.context_length > 0)
        return err("training sequence length ", o.seq_len, " exceeds the model context ", m.config.context_length);
    std::vector<size_t> usable;
    for (size_t i = 0; i < seqs.size(); ++i) {
        EDGE_TRY(check_tokens(m, seqs[i]));
        if (seqs[i].size() >= 2) usable.push_back(i);
    }
    if (usable.empty()) return err("no training sequence has two tokens or more");
    if (o.threads > 0) torch::set_num_threads(o.threads);
    torch::manual_seed(o.seed);

    auto built = build(m, true, o.seq_len);
    if (!built) return built.error();
    TorchLlama& t = *built;
    std::vector<torch::Tensor> leaves;
    for (auto& p : t.params) leaves.push_back(p.second);
    torch::optim::AdamW opt(leaves, torch::optim::AdamWOptions(o.lr).betas({0.9, 0.95}).weight_decay(o.weight_decay));
    // Optional masks (structured pruning): masked weights are zero before and after every step.
    std::vector<std::pair<torch::Tensor, torch::Tensor>> masked;
    if (o.masks)
        for (auto& [name, x] : t.params) {
            auto it = o.masks->find(name);
            if (it == o.masks->end()) continue;
            if (int64_t(it->second.size()) != x.numel())
                return err("training mask of '", name, "' has ", it->second.size(), " values; the tensor has ",
                           x.numel());
            masked.emplace_back(
                x, torch::from_blob(const_cast<float*>(it->second.data()), x.sizes(), torch::kFloat32).clone());
        }
    auto apply_masks = [&] {
        torch::NoGradGuard ng;
        for (auto& [x, mk] : masked) x.mul_(mk);
    };
    apply_masks();

    std::mt19937_64 rng(o.seed);
    const auto t0 = std::chrono::steady_clock::now();
    const int warmup = o.warmup_steps >= 0 ? o.warmup_steps : std::max(1, o.steps / 20);
    TrainReport rep;
    std::vector<double> recent;
    for (int step = 0;; ++step) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (o.steps > 0 && step >= o.steps) break;
        if (o.seconds > 0 && elapsed >= o.seconds) break;
        if (is_cancelled(progress)) return err("training cancelled");
        // learning rate: linear warm-up, then cosine to lr/10 (over `steps`, when bounded)
        double lr = o.lr;
        if (step < warmup) {
            lr = o.lr * double(step + 1) / double(warmup);
        } else if (o.steps > 0) {
            const double p = double(step - warmup) / double(std::max(1, o.steps - warmup));
            lr = o.lr * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(std::numbers::pi * p)));
        }
        for (auto& g : opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);

        Batch b = sample_batch(seqs, usable, o.batch, o.seq_len, rng);
        opt.zero_grad();
        auto loss = mean_loss(t.c, forward(t, b.inputs), b.targets);
        loss.backward();
        if (o.grad_clip > 0) torch::nn::utils::clip_grad_norm_(leaves, o.grad_clip);
        opt.step();
        apply_masks();

        const double l = loss.item<double>();
        if (!std::isfinite(l)) return err("training diverged at step ", step, " (loss ", l, ")");
        if (step == 0) rep.first_loss = l;
        recent.push_back(l);
        if (recent.size() > 10) recent.erase(recent.begin());
        rep.steps = step + 1;
        rep.tokens += b.scored;
        const double frac =
            o.steps > 0 ? double(step + 1) / o.steps : std::min(1.0, elapsed / std::max(1e-9, o.seconds));
        edge::report(progress, frac, "training (loss " + std::to_string(l) + ")");
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (double l : recent) rep.last_loss += l / double(recent.size());
    EDGE_TRY(write_back(m, t));
    if (report) *report = rep;
    return {};
}

// ---- curvature -----------------------------------------------------------------------------------

torch::Tensor batch_loss(const TorchLlama& t, const Batch& b) {
    return mean_loss(t.c, forward(t, b.inputs), b.targets);
}

struct Target {
    std::string layer, tensor;
    torch::Tensor w;
};

Result<std::vector<Target>> targets(const Model& m, const TorchLlama& t, const std::vector<std::string>& only) {
    std::vector<Target> out;
    for (const LayerInfo& li : list_layers(m)) {
        if (!only.empty() && std::find(only.begin(), only.end(), li.name) == only.end()) continue;
        torch::Tensor w;
        for (const auto& [name, x] : t.params)
            if (name == li.tensor) w = x;
        if (!w.defined() && li.tensor == "output.weight") w = t.head;  // tied head
        if (!w.defined())
            return err(m.source_path, ": layer '", li.name, "' has no differentiable weight '", li.tensor, "'");
        out.push_back({li.name, li.tensor, w});
    }
    for (const std::string& name : only)
        if (std::none_of(out.begin(), out.end(), [&](const Target& x) { return x.layer == name; }))
            return err(m.source_path, ": no layer named '", name, "'");
    if (out.empty()) return err(m.source_path, ": the model has no layer to analyse");
    return out;
}

Result<std::vector<LayerCurvature>> whole_model_curvature(const Model& m, const std::vector<std::vector<int32_t>>& seqs,
                                                          const CurvatureOptions& o, Progress* progress) {
    std::vector<size_t> usable;
    EDGE_TRY(check_curvature_options(m, seqs, o, usable));
    if (o.threads > 0) torch::set_num_threads(o.threads);
    auto built = build(m, true, o.seq_len);
    if (!built) return built.error();
    TorchLlama& t = *built;
    auto tg = targets(m, t, o.layers);
    if (!tg) return tg.error();
    std::vector<LayerCurvature> out;
    std::vector<torch::Tensor> ws;
    for (const Target& x : *tg) {
        LayerCurvature c;
        c.layer = x.layer;
        c.tensor = x.tensor;
        c.params = x.w.numel();
        out.push_back(std::move(c));
        ws.push_back(x.w);
    }
    const double total = double(o.batches) + double(ws.size());
    // gradient norms over T sampled batches
    std::mt19937_64 rng(o.seed);
    for (int b = 0; b < o.batches; ++b) {
        if (is_cancelled(progress)) return err("sensitivity analysis cancelled");
        Batch batch = sample_batch(seqs, usable, o.batch_size, o.seq_len, rng);
        auto g = torch::autograd::grad({batch_loss(t, batch)}, ws);
        for (size_t i = 0; i < ws.size(); ++i) out[i].grad_norms.push_back(g[i].norm().item<double>());
        edge::report(progress, (b + 1) / total, "gradient statistics (batch " + std::to_string(b + 1) + ")");
    }
    // Hessian spectra on the fixed Hessian batch: the gradient graph is built once
    Batch hb = fixed_batch(seqs, usable, o.hessian_sequences, o.seq_len);
    auto grads = torch::autograd::grad({batch_loss(t, hb)}, ws, {}, true, true);
    for (size_t i = 0; i < ws.size(); ++i) {
        if (is_cancelled(progress)) return err("sensitivity analysis cancelled");
        const torch::Tensor& w = ws[i];
        const torch::Tensor& g = grads[i];
        auto hvp = [&](const std::vector<double>& v) {
            auto vt = torch::from_blob(const_cast<double*>(v.data()), w.sizes(), torch::kFloat64).to(torch::kFloat32);
            auto hv = torch::autograd::grad({(g * vt).sum()}, {w}, {}, true, false)[0];
            auto hd = hv.to(torch::kFloat64).contiguous();
            return std::vector<double>(hd.data_ptr<double>(), hd.data_ptr<double>() + hd.numel());
        };
        out[i].eigenvalues = lanczos_top(hvp, w.numel(), o.lanczos_steps, o.topk, o.seed + i);
        edge::report(progress, (double(o.batches) + i + 1) / total, "Hessian spectrum of " + out[i].layer);
    }
    return out;
}

}  // namespace

Status train_llama(Model& m, const std::vector<std::vector<int32_t>>& sequences, const TrainOptions& opts,
                   Progress* progress, TrainReport* report) {
    try {
        return train_impl(m, sequences, opts, progress, report);
    } catch (const std::exception& e) {
        return err("LibTorch training failed: ", e.what());
    }
}

Result<std::map<std::string, std::vector<float>>> torch_llama_gradients(const Model& m,
                                                                        const std::vector<std::vector<int32_t>>& seqs,
                                                                        int batches, int batch, int seq_len,
                                                                        uint64_t seed) {
    if (batches <= 0 || batch <= 0 || seq_len <= 0)
        return err("gradient batches, batch size and length must be positive");
    std::vector<size_t> usable;
    for (size_t i = 0; i < seqs.size(); ++i) {
        EDGE_TRY(check_tokens(m, seqs[i]));
        if (seqs[i].size() >= 2) usable.push_back(i);
    }
    if (usable.empty()) return err("no sequence has two tokens or more");
    auto built = build(m, true, seq_len);
    if (!built) return built.error();
    TorchLlama& t = *built;
    std::mt19937_64 rng(seed);
    for (int k = 0; k < batches; ++k) {
        Batch b = sample_batch(seqs, usable, batch, seq_len, rng);
        (batch_loss(t, b) / double(batches)).backward();
    }
    std::map<std::string, std::vector<float>> out;
    for (auto& [name, x] : t.params) {
        torch::Tensor g = x.grad().defined() ? x.grad().contiguous() : torch::zeros_like(x);
        out[name].assign(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
    }
    return out;
}

Result<std::vector<float>> torch_logits(const Model& m, const std::vector<int32_t>& tokens) {
    try {
        if (tokens.empty()) return std::vector<float>{};
        EDGE_TRY(check_tokens(m, tokens));
        torch::NoGradGuard no_grad;
        auto built = build(m, false, int(tokens.size()));
        if (!built) return built.error();
        torch::Tensor logits = forward(*built, to_tokens(tokens)).contiguous();
        const float* p = logits.data_ptr<float>();
        return std::vector<float>(p, p + logits.numel());
    } catch (const std::exception& e) {
        return err("LibTorch forward failed: ", e.what());
    }
}

Result<double> torch_mean_nll(const Model& m, const std::vector<std::vector<int32_t>>& sequences) {
    try {
        torch::NoGradGuard no_grad;
        int max_len = 1;
        for (const auto& s : sequences) {
            EDGE_TRY(check_tokens(m, s));
            max_len = std::max(max_len, int(s.size()));
        }
        if (m.config.context_length > 0) max_len = std::min(max_len, m.config.context_length);
        auto built = build(m, false, max_len);
        if (!built) return built.error();
        double nll = 0.0;
        int64_t n = 0;
        for (const auto& s : sequences) {
            const size_t len = std::min(s.size(), size_t(max_len));
            if (len < 2) continue;
            std::vector<int32_t> in(s.begin(), s.begin() + len);
            auto logits = forward(*built, to_tokens(in)).squeeze(0);
            auto tg = to_tokens(in).squeeze(0).narrow(0, 1, int64_t(len) - 1);
            auto lp = torch::log_softmax(logits.narrow(0, 0, int64_t(len) - 1), -1);
            nll -= lp.gather(1, tg.unsqueeze(1)).sum().item<double>();
            n += int64_t(len) - 1;
        }
        if (n == 0) return err("no sequence has a token to score");
        return nll / double(n);
    } catch (const std::exception& e) {
        return err("LibTorch forward failed: ", e.what());
    }
}

Result<std::vector<LayerCurvature>> torch_layer_curvature(const Model& m,
                                                          const std::vector<std::vector<int32_t>>& sequences,
                                                          const CurvatureOptions& opts, Progress* progress) {
    try {
        return opts.whole_model_reference ? whole_model_curvature(m, sequences, opts, progress)
                                          : detail::streamed_curvature(m, sequences, opts, progress);
    } catch (const std::exception& e) {
        return err("LibTorch curvature analysis failed: ", e.what());
    }
}

Result<std::vector<double>> torch_layer_hessian(const Model& m, const std::vector<std::vector<int32_t>>& sequences,
                                                const CurvatureOptions& o, const std::string& layer) {
    try {
        std::vector<size_t> usable;
        EDGE_TRY(check_curvature_options(m, sequences, o, usable));
        if (o.threads > 0) torch::set_num_threads(o.threads);
        auto built = build(m, true, o.seq_len);
        if (!built) return built.error();
        auto tg = targets(m, *built, {layer});
        if (!tg) return tg.error();
        torch::Tensor w = tg->front().w;
        const int64_t n = w.numel();
        if (n > 8192) return err("layer '", layer, "' has ", n, " parameters; the explicit Hessian is limited to 8192");
        Batch hb = fixed_batch(sequences, usable, o.hessian_sequences, o.seq_len);
        auto g = torch::autograd::grad({batch_loss(*built, hb)}, {w}, {}, true, true)[0].reshape({-1});
        std::vector<double> h(size_t(n) * size_t(n));
        for (int64_t r = 0; r < n; ++r) {
            auto row = torch::autograd::grad({g[r]}, {w}, {}, true, false, true)[0];
            if (!row.defined()) continue;  // this gradient element does not depend on w
            auto rd = row.reshape({-1}).to(torch::kFloat64).contiguous();
            std::memcpy(&h[size_t(r) * size_t(n)], rd.data_ptr<double>(), size_t(n) * sizeof(double));
        }
        return h;
    } catch (const std::exception& e) {
        return err("LibTorch Hessian failed: ", e.what());
    }
}

Result<std::vector<double>> symmetric_eigenvalues(const std::vector<double>& a, int64_t n) {
    try {
        if (n < 0 || size_t(n) * size_t(n) != a.size())
            return err("symmetric_eigenvalues: ", a.size(), " values do not make a ", n, " x ", n, " matrix");
        if (n == 0) return std::vector<double>{};
        auto t = torch::from_blob(const_cast<double*>(a.data()), {n, n}, torch::kFloat64);
        auto ev = torch::linalg_eigvalsh(t).contiguous();
        return std::vector<double>(ev.data_ptr<double>(), ev.data_ptr<double>() + n);
    } catch (const std::exception& e) {
        return err("LibTorch eigvalsh failed: ", e.what());
    }
}

}  // namespace edge::analysis

// ---- the block-by-block curvature --------------------------------------------------------------

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
