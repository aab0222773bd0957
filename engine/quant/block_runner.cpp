#include "engine/quant/block_runner.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/model/rope.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/qkernels.h"

using edge::model::LlamaConfig;
using edge::model::Model;

namespace edge::quant {

Result<BlockWeights> block_weights(const Model& m, int l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    std::string missing;
    auto t = [&](const char* n) -> const Tensor* {
        const Tensor* x = m.find(p + n);
        if ((!x || !x->data) && missing.empty()) missing = p + n + "' is not held";
        return x;
    };
    auto v = [&](const char* n) -> const float* {
        const Tensor* x = t(n);
        if (!x || !x->data) return nullptr;
        if (x->type != DType::F32 && missing.empty()) missing = p + n + "' is not F32";
        return x->f32();
    };
    BlockWeights w{v("attn_norm.weight"), t("attn_q.weight"),      t("attn_k.weight"),
                   t("attn_v.weight"),    t("attn_output.weight"), v("ffn_norm.weight"),
                   t("ffn_gate.weight"),  t("ffn_up.weight"),      t("ffn_down.weight")};
    if (m.config.attn_qkv_bias) {
        w.bq = v("attn_q.bias");
        w.bk = v("attn_k.bias");
        w.bv = v("attn_v.bias");
    }
    if (!missing.empty()) return err(m.source_path, ": tensor '", missing);
    return w;
}

BlockRunner::BlockRunner(const LlamaConfig& c, int max_n, ThreadPool& pool) : c_(c), pool_(pool) {
    model::RopeTables rope = model::rope_tables(c, max_n);
    cos_ = std::move(rope.cos);
    sin_ = std::move(rope.sin);
    const size_t N = size_t(max_n);
    xb_.resize(N * size_t(std::max(c.dim, c.q_dim())));
    xb2_.resize(N * size_t(c.dim));
    q_.resize(N * size_t(c.q_dim()));
    k_.resize(N * size_t(c.kv_dim()));
    v_.resize(N * size_t(c.kv_dim()));
    att_.resize(N * size_t(c.n_heads) * N);
    hb_.resize(N * size_t(c.hidden_dim));
    hb2_.resize(N * size_t(c.hidden_dim));
}

void BlockRunner::run(float* x, int n, const BlockWeights& L, BlockInputs* cap) {
    const LlamaConfig& c = c_;
    const int D = c.dim, KV = c.kv_dim(), QD = c.q_dim(), F = c.hidden_dim, HD = c.head_dim;
    const int kv_mul = c.n_heads / c.n_kv_heads;
    const int half = c.rope_dim / 2;
    const int S = int(att_.size() / (size_t(std::max(1, n)) * size_t(c.n_heads)));  // attention row stride >= n
    const float inv_sqrt = 1.0f / std::sqrt(float(HD));
    auto capture = [&](const char* key, const float* in, int dim) {
        if (!cap) return;
        Captured& k = (*cap)[key];
        k.dim = dim;
        k.x.insert(k.x.end(), in, in + int64_t(n) * dim);
        k.rows += n;
    };
    for (int t = 0; t < n; ++t)
        runtime::kernels::rmsnorm(&xb_[size_t(t) * D], &x[size_t(t) * D], L.attn_norm, D, c.norm_eps);
    capture("attn", xb_.data(), D);
    runtime::qkernels::matmul(q_.data(), xb_.data(), *L.wq, n, pool_);
    runtime::qkernels::matmul(k_.data(), xb_.data(), *L.wk, n, pool_);
    runtime::qkernels::matmul(v_.data(), xb_.data(), *L.wv, n, pool_);
    if (L.bq) {
        runtime::kernels::add_rows(q_.data(), L.bq, n, QD);
        runtime::kernels::add_rows(k_.data(), L.bk, n, KV);
        runtime::kernels::add_rows(v_.data(), L.bv, n, KV);
    }
    for (int t = 0; t < n; ++t) {
        const float* cs = &cos_[size_t(t) * half];
        const float* sn = &sin_[size_t(t) * half];
        auto rotate = [&](float* vec, int heads) { runtime::kernels::rope_interleaved(vec, heads, HD, half, cs, sn); };
        rotate(&q_[size_t(t) * QD], c.n_heads);
        rotate(&k_[size_t(t) * KV], c.n_kv_heads);
    }
    pool_.parallel_for(int64_t(n) * c.n_heads, [&](int64_t b, int64_t e) {
        for (int64_t job = b; job < e; ++job) {
            const int t = int(job / c.n_heads), h = int(job % c.n_heads);
            const int len = t + 1;
            const float* qh = &q_[size_t(t) * QD + size_t(h) * HD];
            float* att = &att_[(size_t(t) * c.n_heads + h) * size_t(S)];
            const int kvh = h / kv_mul;
            for (int s = 0; s < len; ++s)
                att[s] = runtime::kernels::dot(qh, &k_[size_t(s) * KV + size_t(kvh) * HD], HD) * inv_sqrt;
            runtime::kernels::softmax(att, len);
            float* out = &xb_[size_t(t) * QD + size_t(h) * HD];
            std::fill(out, out + HD, 0.0f);
            for (int s = 0; s < len; ++s) {
                const float a = att[s];
                const float* vs = &v_[size_t(s) * KV + size_t(kvh) * HD];
                runtime::kernels::axpy(out, a, vs, HD);
            }
        }
    });
    capture("attn_output", xb_.data(), QD);
    runtime::qkernels::matmul(xb2_.data(), xb_.data(), *L.wo, n, pool_);
    runtime::kernels::add(x, xb2_.data(), int64_t(n) * D);
    for (int t = 0; t < n; ++t)
        runtime::kernels::rmsnorm(&xb_[size_t(t) * D], &x[size_t(t) * D], L.ffn_norm, D, c.norm_eps);
    capture("ffn", xb_.data(), D);
    runtime::qkernels::matmul(hb_.data(), xb_.data(), *L.w_gate, n, pool_);
    runtime::qkernels::matmul(hb2_.data(), xb_.data(), *L.w_up, n, pool_);
    for (int t = 0; t < n; ++t) runtime::kernels::swiglu(&hb_[size_t(t) * F], &hb2_[size_t(t) * F], F);
    capture("ffn_down", hb_.data(), F);
    runtime::qkernels::matmul(xb2_.data(), hb_.data(), *L.w_down, n, pool_);
    runtime::kernels::add(x, xb2_.data(), int64_t(n) * D);
}

CalibStates embed_calibration(const CalibSet& calib, const Tensor& embd, const LlamaConfig& c) {
    CalibStates s;
    s.dim = c.dim;
    for (const auto& q : calib.sequences) {
        s.starts.push_back(s.total);
        s.lengths.push_back(int(q.size()));
        s.total += int64_t(q.size());
        s.longest = std::max(s.longest, int(q.size()));
    }
    const int D = c.dim;
    s.h.resize(size_t(s.total) * size_t(D));
    for (size_t i = 0; i < calib.sequences.size(); ++i)
        for (size_t j = 0; j < calib.sequences[i].size(); ++j) {
            int32_t tok = calib.sequences[i][j];
            if (tok < 0 || tok >= c.vocab_size) tok = 0;
            runtime::qkernels::dequantize_row(embd, tok, &s.h[(size_t(s.starts[i]) + j) * size_t(D)]);
        }
    return s;
}

void run_block(BlockRunner& runner, CalibStates& s, const BlockWeights& w, BlockInputs* cap) {
    std::vector<float> x;
    for (size_t i = 0; i < s.starts.size(); ++i) {
        float* row = &s.h[size_t(s.starts[i]) * size_t(s.dim)];
        const int n = s.lengths[i];
        if (cap) {
            x.assign(row, row + int64_t(n) * s.dim);
            runner.run(x.data(), n, w, cap);
        } else {
            runner.run(row, n, w, nullptr);
        }
    }
}

void final_norm(CalibStates& s, const float* norm, float eps) {
    const int D = s.dim;
    for (int64_t t = 0; t < s.total; ++t)
        runtime::kernels::rmsnorm(&s.h[size_t(t) * D], &s.h[size_t(t) * D], norm, D, eps);
}

}  // namespace edge::quant
