#include "llama_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attention.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/rope.h"
#include "engine/runtime/one_sequence.h"
#include "kernels.h"
#include "qkernels.h"

using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::validate_llama;

namespace edge::runtime {

struct LlamaCpu::Layer {
    const float* attn_norm;
    const Tensor *wq, *wk, *wv, *wo;
    const float* ffn_norm;
    const Tensor *w_gate, *w_up, *w_down;
    const float *bq, *bk, *bv;  // Q/K/V biases (LlamaConfig::attn_qkv_bias), else null
};

LlamaCpu::LlamaCpu(std::shared_ptr<const Model> m, const RuntimeOptions& o)
    : model_(std::move(m)), cfg_(model_->config), max_seq_(0), pool_(o.threads) {}

LlamaCpu::~LlamaCpu() = default;

runtime::ExecutorCaps LlamaCpu::capabilities() const {
    runtime::ExecutorCaps c;
    c.name = compat_ ? "cpu (llama.cpp numerics: contiguous prefill/forward only, no batch step)"
                     : "cpu (FP32 arithmetic, " + runtime::cpu_kernels_and_threads(threads()) + ")";
    c.stored_types = {DType::F32, DType::F16, DType::QI8, DType::QI4};
    c.max_seq = compat_ ? 0 : max_seq_;
    c.max_batch_tokens = 0;
    c.batch_invariant = true;
    return c;
}

Result<std::unique_ptr<LlamaCpu>> LlamaCpu::create(const std::shared_ptr<const Model>& model,
                                                   const RuntimeOptions& opts) {
    if (!model) return err("no model given to the CPU executor");
    EDGE_TRY(validate_llama(*model));
    std::unique_ptr<LlamaCpu> rt(new LlamaCpu(model, opts));
    const LlamaConfig& c = rt->cfg_;
    int max_seq = opts.max_seq > 0 ? opts.max_seq : std::min(c.context_length > 0 ? c.context_length : 2048, 4096);
    if (max_seq > (1 << 20)) return err("KV cache length ", max_seq, " is absurd");
    rt->max_seq_ = max_seq;

    const Model& m = *model;
    auto w = [&](const std::string& n) { return m.find(n)->f32(); };
    auto t = [&](const std::string& n) { return m.find(n); };
    auto bias = [&](const std::string& n) -> const float* { return c.attn_qkv_bias ? w(n) : nullptr; };
    rt->embd_tensor_ = t("token_embd.weight");
    rt->head_tensor_ = m.output_head();
    for (const Tensor& x : m.tensors)
        if (!qkernels::supported(x))
            return err(m.source_path, ": tensor '", x.name, "' of type ", dtype_name(x.type),
                       " cannot run on the CPU executor");
    rt->embd_ = rt->embd_tensor_->type == DType::F32 ? rt->embd_tensor_->f32() : nullptr;
    rt->out_norm_ = w("output_norm.weight");
    rt->head_ = rt->head_tensor_->type == DType::F32 ? rt->head_tensor_->f32() : nullptr;
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        rt->layers_.push_back(Layer{w(p + "attn_norm.weight"), t(p + "attn_q.weight"), t(p + "attn_k.weight"),
                                    t(p + "attn_v.weight"), t(p + "attn_output.weight"), w(p + "ffn_norm.weight"),
                                    t(p + "ffn_gate.weight"), t(p + "ffn_up.weight"), t(p + "ffn_down.weight"),
                                    bias(p + "attn_q.bias"), bias(p + "attn_k.bias"), bias(p + "attn_v.bias")});
    }
    if (opts.numerics == Numerics::LlamaCpp) {
        auto compat = ggml_compat::Executor::create(*model, max_seq, opts.llamacpp);
        if (!compat.ok()) return compat.error();
        rt->compat_ = std::move(compat).value();
    }

    // Rotary tables: pair i of every head rotates by pos * theta^(-2i/rope_dim) / factor_i.
    model::RopeTables rope = model::rope_tables(c, max_seq);
    rt->rope_cos_ = std::move(rope.cos);
    rt->rope_sin_ = std::move(rope.sin);
    rt->ensure_batch(1);
    return rt;
}

size_t LlamaCpu::kv_cache_bytes() const {
    if (compat_) return compat_->kv_cache_bytes();
    return own_.kv_bytes();
}

runtime::ExecutorMemory LlamaCpu::held_memory() const {
    runtime::ExecutorMemory m;
    m.mapped_weight_bytes = model_->weight_bytes();  // read in place from the model as loaded
    m.kv_bytes = kv_cache_bytes();                   // its own sequence (forward, prefill)
    for (const auto* v : {&rope_cos_, &rope_sin_, &x_, &xb_, &xb2_, &q_, &k_, &v_, &att_, &hb_, &hb2_, &logits_,
                          &paged_x_, &paged_logits_})
        m.scratch_bytes += v->capacity() * sizeof(float);
    return m;
}

void LlamaCpu::ensure_batch(int n) {
    if (n <= batch_cap_) return;
    batch_cap_ = n;
    const size_t N = size_t(n);
    x_.resize(N * cfg_.dim);
    xb_.resize(N * std::max(cfg_.dim, cfg_.q_dim()));
    xb2_.resize(N * cfg_.dim);
    q_.resize(N * cfg_.q_dim());
    k_.resize(N * cfg_.kv_dim());
    v_.resize(N * cfg_.kv_dim());
    att_.resize(N * size_t(cfg_.n_heads) * max_seq_);
    hb_.resize(N * cfg_.hidden_dim);
    hb2_.resize(N * cfg_.hidden_dim);
    logits_.resize(size_t(cfg_.vocab_size));
}

// out[t][o] = sum_i w[o][i] * in[t][i] for n tokens; parallel over output rows, and each weight
// row is reused across a small tile of tokens while it is in cache.
void LlamaCpu::matmul(float* out, const float* in, const float* w, int n, int in_dim, int out_dim) {
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max(1, in_dim));
    pool_.parallel_for(
        out_dim,
        [&](int64_t b, int64_t e) {
            constexpr int kTile = 8;
            for (int t0 = 0; t0 < n; t0 += kTile) {
                const int t1 = std::min(n, t0 + kTile);
                for (int64_t o = b; o < e; ++o) {
                    const float* row = w + o * int64_t(in_dim);
                    for (int t = t0; t < t1; ++t)
                        out[int64_t(t) * out_dim + o] = kernels::dot(row, in + int64_t(t) * in_dim, in_dim);
                }
            }
        },
        grain);
}

void LlamaCpu::matmul(float* out, const float* in, const Tensor& w, int n) {
    if (w.type == DType::F32)
        matmul(out, in, w.f32(), n, int(w.cols()), int(w.rows()));
    else
        qkernels::matmul(out, in, w, n, pool_);
}

const float* LlamaCpu::forward(int32_t token, int pos) { return prefill(&token, 1, pos, nullptr); }

// The rest of decoder block l after attention, for n tokens whose attention output is in xb_:
// output projection + residual, RMSNorm, gate/up + SwiGLU, down projection + residual.
void LlamaCpu::finish_block(int l, int n) {
    const LlamaConfig& c = cfg_;
    const Layer& L = layers_[size_t(l)];
    const int D = c.dim, F = c.hidden_dim, QD = c.q_dim();
    hook(l, "attn_output", xb_.data(), n, QD);
    matmul(xb2_.data(), xb_.data(), *L.wo, n);
    kernels::add(x_.data(), xb2_.data(), int64_t(n) * D);

    for (int t = 0; t < n; ++t) kernels::rmsnorm(&xb_[size_t(t) * D], &x_[size_t(t) * D], L.ffn_norm, D, c.norm_eps);
    if (linear_hook_)
        for (const char* kind : {"ffn_gate", "ffn_up"}) hook(l, kind, xb_.data(), n, D);
    qkernels::matmul_gate_up_swiglu(hb_.data(), hb2_.data(), xb_.data(), *L.w_gate, *L.w_up, n, pool_);
    hook(l, "ffn_down", hb_.data(), n, F);
    matmul(xb2_.data(), hb_.data(), *L.w_down, n);
    kernels::add(x_.data(), xb2_.data(), int64_t(n) * D);
}

const float* LlamaCpu::prefill(const int32_t* tokens, int n, int pos, float* all_logits) {
    if (compat_) return compat_->prefill(tokens, n, pos, all_logits, pool_);
    auto r = own_.run(*this, tokens, n, pos, all_logits);
    return r ? *r : nullptr;
}

Result<const float*> LlamaCpu::forward_paged(kv::PagedKv& kv, std::span<const PagedStep> batch) {
    const LlamaConfig& c = cfg_;
    if (compat_)
        return err("paged forward runs FP32 numerics only (this executor runs ", numerics_name(Numerics::LlamaCpp),
                   ")");
    const kv::KvShape& sh = kv.shape();
    // Positions, the block demand and every check, before anything changes.
    auto layout = runtime::plan_batch(kv, batch, c, max_seq_, "cpu");
    if (!layout) return layout.error();
    const std::vector<int>& start = layout->start;
    const std::vector<int>& first = layout->first;
    const int n = layout->rows;
    for (const PagedStep& st : batch) EDGE_TRY(kv.apply(kv::op::Append{st.seq, st.tokens}));

    ensure_batch(n);
    const int D = c.dim, KV = c.kv_dim(), QD = c.q_dim(), HD = c.head_dim;
    const int half = c.rope_dim / 2;
    const int B = sh.block_tokens;
    const float inv_sqrt = 1.0f / std::sqrt(float(HD));
    const std::vector<int>& tok_item = layout->row_item;
    const std::vector<int>& tok_pos = layout->row_pos;
    for (int t = 0; t < n; ++t) {
        int32_t tok = batch[size_t(tok_item[size_t(t)])].tokens[size_t(t - first[size_t(tok_item[size_t(t)])])];
        if (tok < 0 || tok >= c.vocab_size) tok = 0;
        if (embd_)
            std::memcpy(&x_[size_t(t) * D], embd_ + int64_t(tok) * D, sizeof(float) * D);
        else
            qkernels::dequantize_row(*embd_tensor_, tok, &x_[size_t(t) * D]);
    }
    std::vector<std::span<const kv::BlockId>> tables(batch.size());

    for (int l = 0; l < c.n_layers; ++l) {
        const Layer& L = layers_[l];
        for (int t = 0; t < n; ++t)
            kernels::rmsnorm(&xb_[size_t(t) * D], &x_[size_t(t) * D], L.attn_norm, D, c.norm_eps);
        if (linear_hook_)
            for (const char* kind : {"attn_q", "attn_k", "attn_v"}) hook(l, kind, xb_.data(), n, D);
        {
            // Q, K and V in one parallel region, the activations prepared once.
            const qkernels::MatmulJob qkv[3] = {{q_.data(), L.wq}, {k_.data(), L.wk}, {v_.data(), L.wv}};
            qkernels::matmul_multi(qkv, 3, xb_.data(), n, pool_);
            if (L.bq) {
                kernels::add_rows(q_.data(), L.bq, n, QD);
                kernels::add_rows(k_.data(), L.bk, n, KV);
                kernels::add_rows(v_.data(), L.bv, n, KV);
            }
        }
        for (int t = 0; t < n; ++t) {
            const int p = tok_pos[size_t(t)];
            const float* cs = &rope_cos_[size_t(p) * half];
            const float* sn = &rope_sin_[size_t(p) * half];
            auto rotate = [&](float* vec, int heads) { kernels::rope_interleaved(vec, heads, HD, half, cs, sn); };
            rotate(&q_[size_t(t) * QD], c.n_heads);
            rotate(&k_[size_t(t) * KV], c.n_kv_heads);
        }
        for (size_t i = 0; i < batch.size(); ++i) {
            const size_t t0 = size_t(first[i]);
            EDGE_TRY(kv.apply(
                kv::op::Write{batch[i].seq, l, start[i], int(batch[i].tokens.size()), &k_[t0 * KV], &v_[t0 * KV]}));
            tables[i] = kv.block_table(batch[i].seq);
        }

        // Attention through the block tables: token t attends to positions 0..pos of its own sequence.
        struct Ctx {
            const kv::PagedKv* kv;
            const std::vector<std::span<const kv::BlockId>>* tables;
            const int* item;
            int layer;
        } ctx{&kv, &tables, tok_item.data(), l};
        const kernels::KvBlocks blocks{&ctx, [](const void* p, int t, int block, bool values) {
                                           const Ctx& x = *static_cast<const Ctx*>(p);
                                           const kv::BlockId b = (*x.tables)[size_t(x.item[t])][size_t(block)];
                                           return values ? x.kv->values(b, x.layer) : x.kv->keys(b, x.layer);
                                       }};
        const kernels::AttentionShape shape{c.n_heads, c.n_kv_heads, HD, B, KV, int64_t(max_seq_), inv_sqrt};
        kernels::causal_attention(xb_.data(), q_.data(), n, tok_pos.data(), tok_item.data(), shape, blocks, att_.data(),
                                  pool_);
        finish_block(l, n);
    }

    // The rows whose logits are wanted (each sequence's last, or all of it) through the final norm
    // and the head.
    const std::vector<int> out_rows = runtime::logit_rows(batch, *layout);
    const int m = int(out_rows.size());
    paged_x_.resize(size_t(m) * D);
    paged_logits_.resize(size_t(m) * c.vocab_size);
    for (int i = 0; i < m; ++i)
        kernels::rmsnorm(&paged_x_[size_t(i) * D], &x_[size_t(out_rows[size_t(i)]) * D], out_norm_, D, c.norm_eps);
    hook(-1, "output", paged_x_.data(), m, D);
    matmul(paged_logits_.data(), paged_x_.data(), *head_tensor_, m);
    return paged_logits_.data();
}

}  // namespace edge::runtime
