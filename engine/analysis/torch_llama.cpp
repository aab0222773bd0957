// The only LibTorch translation unit of the Llama analysis path: a differentiable forward that
// mirrors the CPU executor (engine/runtime/llama_cpu.cpp) op for op, and an AdamW trainer.
#include "engine/analysis/torch_llama.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <numbers>
#include <random>
#include <string>

namespace edge {

namespace {

std::string blk(int l, const char* what) { return "blk." + std::to_string(l) + "." + what; }

struct TLayer {
    torch::Tensor attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
};

// Weights as LibTorch leaves (copies of the IR tensors) plus the rotary tables.
struct TorchLlama {
    LlamaConfig c;
    torch::Tensor embd, out_norm, head;
    std::vector<TLayer> layers;
    torch::Tensor rope_cos, rope_sin;  // [max_pos, rope_dim/2]
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
            {&L.attn_norm, "attn_norm.weight"}, {&L.wq, "attn_q.weight"},       {&L.wk, "attn_k.weight"},
            {&L.wv, "attn_v.weight"},           {&L.wo, "attn_output.weight"},  {&L.ffn_norm, "ffn_norm.weight"},
            {&L.w_gate, "ffn_gate.weight"},     {&L.w_up, "ffn_up.weight"},      {&L.w_down, "ffn_down.weight"}};
        for (auto& [dst, suffix] : parts) {
            auto r = get(blk(l, suffix));
            if (!r) return r.error();
            *dst = *r;
        }
        t.layers.push_back(std::move(L));
    }
    // Rotary tables computed exactly as the CPU executor does (double angle, float cos/sin).
    const int half = c.rope_dim / 2;
    std::vector<float> cs(size_t(max_pos) * half), sn(size_t(max_pos) * half);
    for (int pos = 0; pos < max_pos; ++pos)
        for (int i = 0; i < half; ++i) {
            const double freq = std::pow(double(c.rope_theta), -2.0 * i / double(c.rope_dim));
            const double a = double(pos) * freq;
            cs[size_t(pos) * half + i] = float(std::cos(float(a)));
            sn[size_t(pos) * half + i] = float(std::sin(float(a)));
        }
    t.rope_cos = torch::from_blob(cs.data(), {max_pos, half}, torch::kFloat32).clone();
    t.rope_sin = torch::from_blob(sn.data(), {max_pos, half}, torch::kFloat32).clone();
    return t;
}

torch::Tensor rmsnorm(const torch::Tensor& x, const torch::Tensor& w, float eps) {
    return w * (x * torch::rsqrt(x.pow(2).mean(-1, true) + eps));
}

// x: [B, T, H, HD]; rotates pairs (2i, 2i+1) of the first rope_dim dimensions of every head.
torch::Tensor rope(const TorchLlama& t, const torch::Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), H = x.size(2), HD = x.size(3);
    const int64_t rd = t.c.rope_dim, half = rd / 2;
    auto xr = x.narrow(3, 0, rd).reshape({B, T, H, half, 2});
    auto a = xr.select(4, 0), b = xr.select(4, 1);
    auto cs = t.rope_cos.narrow(0, 0, T).view({1, T, 1, half});
    auto sn = t.rope_sin.narrow(0, 0, T).view({1, T, 1, half});
    auto rot = torch::stack({a * cs - b * sn, a * sn + b * cs}, 4).reshape({B, T, H, rd});
    if (rd == HD) return rot;
    return torch::cat({rot, x.narrow(3, rd, HD - rd)}, 3);
}

// tokens: [B, T] int64 -> logits [B, T, vocab].
torch::Tensor forward(const TorchLlama& t, const torch::Tensor& tokens) {
    const LlamaConfig& c = t.c;
    const int64_t B = tokens.size(0), T = tokens.size(1);
    const int64_t H = c.n_heads, KVH = c.n_kv_heads, HD = c.head_dim;
    const float inv_sqrt = 1.0f / std::sqrt(float(HD));
    auto mask = torch::ones({T, T}, torch::kBool).triu(1);  // true above the diagonal = future
    torch::Tensor x = t.embd.index_select(0, tokens.reshape({-1})).view({B, T, c.dim});
    for (const TLayer& L : t.layers) {
        auto h = rmsnorm(x, L.attn_norm, c.norm_eps);
        auto q = rope(t, torch::matmul(h, L.wq.t()).view({B, T, H, HD})).transpose(1, 2);
        auto k = rope(t, torch::matmul(h, L.wk.t()).view({B, T, KVH, HD})).transpose(1, 2);
        auto v = torch::matmul(h, L.wv.t()).view({B, T, KVH, HD}).transpose(1, 2);
        if (H != KVH) {  // query head h reads KV head h / (H / KVH)
            k = k.repeat_interleave(H / KVH, 1);
            v = v.repeat_interleave(H / KVH, 1);
        }
        auto att = torch::matmul(q, k.transpose(2, 3)) * inv_sqrt;  // [B, H, T, T]
        att = torch::softmax(att.masked_fill(mask, -std::numeric_limits<float>::infinity()), -1);
        auto o = torch::matmul(att, v).transpose(1, 2).reshape({B, T, H * HD});
        x = x + torch::matmul(o, L.wo.t());
        auto f = rmsnorm(x, L.ffn_norm, c.norm_eps);
        auto g = torch::silu(torch::matmul(f, L.w_gate.t())) * torch::matmul(f, L.w_up.t());
        x = x + torch::matmul(g, L.w_down.t());
    }
    x = rmsnorm(x, t.out_norm, c.norm_eps);
    return torch::matmul(x, t.head.t());
}

torch::Tensor to_tokens(const std::vector<int32_t>& ids) {
    std::vector<int64_t> v(ids.begin(), ids.end());
    return torch::from_blob(v.data(), {1, int64_t(v.size())}, torch::kInt64).clone();
}

Status check_tokens(const Model& m, const std::vector<int32_t>& ids) {
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= m.config.vocab_size)
            return err("token ", ids[i], " at position ", i, " is outside the vocabulary of ", m.config.vocab_size);
    return {};
}

// One training batch: inputs [B, T] and targets [B, T] (-100 = not scored).
struct Batch {
    torch::Tensor inputs, targets;
    int64_t scored = 0;
};

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
        auto logits = forward(t, b.inputs);
        auto loss = torch::nn::functional::cross_entropy(
            logits.view({-1, t.c.vocab_size}), b.targets.view({-1}),
            torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
        loss.backward();
        if (o.grad_clip > 0) torch::nn::utils::clip_grad_norm_(leaves, o.grad_clip);
        opt.step();

        const double l = loss.item<double>();
        if (!std::isfinite(l)) return err("training diverged at step ", step, " (loss ", l, ")");
        if (step == 0) rep.first_loss = l;
        recent.push_back(l);
        if (recent.size() > 10) recent.erase(recent.begin());
        rep.steps = step + 1;
        rep.tokens += b.scored;
        const double frac = o.steps > 0 ? double(step + 1) / o.steps
                                        : std::min(1.0, elapsed / std::max(1e-9, o.seconds));
        edge::report(progress, frac, "training (loss " + std::to_string(l) + ")");
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (double l : recent) rep.last_loss += l / double(recent.size());
    EDGE_TRY(write_back(m, t));
    if (report) *report = rep;
    return {};
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

}  // namespace edge
