#include "cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "attention.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/rope.h"
#include "kernels.h"
#include "qkernels.h"

using edge::model::LlamaConfig;
using edge::model::Model;

namespace edge::runtime {

Result<void*> CpuBackend::allocate(size_t bytes) {
    void* p = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) / 256 * 256);
    if (!p) return err("cpu backend: cannot allocate ", bytes, " bytes");
    return p;
}
void CpuBackend::release(void* p) { std::free(p); }
Status CpuBackend::upload(void* dst, const void* src, size_t bytes) {
    if (bytes) std::memcpy(dst, src, bytes);
    return {};
}
Status CpuBackend::download(void* dst, const void* src, size_t bytes) {
    if (bytes) std::memcpy(dst, src, bytes);
    return {};
}

Status CpuBackend::load(std::shared_ptr<const Model> model, const runtime::ExecProgram& plan,
                        const BackendOptions& opts) {
    if (!model) return err("cpu backend: no model given");
    auto rp = resolve_for_backend(*model, plan, opts.max_seq);
    if (!rp.ok()) return rp.error();
    for (const Tensor& t : model->tensors)
        if (!qkernels::supported(t))
            return err(model->source_path, ": tensor '", t.name, "' of type ", dtype_name(t.type),
                       " cannot run on the CPU backend");
    const LlamaConfig& c = model->config;
    const int max_seq = rp->max_seq;
    model_ = std::move(model);
    cfg_ = c;
    plan_ = std::move(rp->program);
    max_seq_ = max_seq;
    pool_ = std::make_unique<ThreadPool>(opts.threads);
    arena_ = alloc_aligned(std::max<size_t>(plan_.arena_bytes, 64));

    // run()'s own sequence is made on its first call: a caller that runs batch steps through its
    // PagedKv (the agent, the scheduler) holds no second KV memory.
    own_ = runtime::OwnSequence{};

    model::RopeTables rope = model::rope_tables(c, max_seq);
    rope_cos_ = std::move(rope.cos);
    rope_sin_ = std::move(rope.sin);
    const size_t rows = size_t(std::max(plan_.batch[0], plan_.batch[1]));
    norm_scratch_.assign(rows * size_t(plan_.max_in_width), 0.0f);
    up_scratch_.assign(rows * size_t(plan_.max_ffn), 0.0f);
    logits_.assign(size_t(c.vocab_size), 0.0f);
    return {};
}

BackendMemory CpuBackend::memory() const {
    BackendMemory m;
    if (model_) m.mapped_weight_bytes = model_->weight_bytes();
    m.arena_bytes = plan_.arena_bytes;
    m.kv_bytes = own_.kv_bytes();
    m.scratch_bytes =
        (rope_cos_.size() + rope_sin_.size() + norm_scratch_.size() + up_scratch_.size() + logits_.size()) *
        sizeof(float);
    return m;
}

runtime::ExecutorMemory CpuBackend::held_memory() const {
    const BackendMemory b = memory();
    runtime::ExecutorMemory m;
    m.mapped_weight_bytes = b.mapped_weight_bytes;
    m.scratch_bytes = b.arena_bytes + b.scratch_bytes;
    m.kv_bytes = b.kv_bytes;  // its own single-sequence cache (Backend::run); step() uses the caller's
    return m;
}

// A caller's PagedKv: rows [row0, row0 + n) of a batch step; each row reads its own sequence's
// blocks. K/V are written through the memory's one mutating entry point (apply(Write)).
struct CpuBackend::PagedAccess {
    kv::PagedKv& kv;
    std::span<const runtime::PagedStep> batch;
    const runtime::BatchLayout& L;
    int row0 = 0;
    std::vector<std::span<const kv::BlockId>> tables;
    Status write(int layer, int n, const int*, const float* k, const float* v) {
        const int KV = kv.shape().kv_dim();
        for (int t = 0; t < n;) {
            const int item = L.row_item[size_t(row0) + size_t(t)];
            int m = 1;
            while (t + m < n && L.row_item[size_t(row0) + size_t(t) + size_t(m)] == item) ++m;
            EDGE_TRY(kv.apply(kv::op::Write{batch[size_t(item)].seq, layer, L.row_pos[size_t(row0) + size_t(t)], m,
                                            k + size_t(t) * KV, v + size_t(t) * KV}));
            tables[size_t(item)] = kv.block_table(batch[size_t(item)].seq);
            t += m;
        }
        return {};
    }
    int block_tokens() const { return kv.shape().block_tokens; }
    const float* key(int row, int layer, int p) { return at(row, layer, p, false); }
    const float* value(int row, int layer, int p) { return at(row, layer, p, true); }
    const float* at(int row, int layer, int p, bool values) const {
        const int B = kv.shape().block_tokens;
        const kv::BlockId b = tables[size_t(L.row_item[size_t(row0) + size_t(row)])][size_t(p / B)];
        return (values ? kv.values(b, layer) : kv.keys(b, layer)) + size_t(p % B) * size_t(kv.shape().kv_dim());
    }
};

Result<const float*> CpuBackend::run(const int32_t* tokens, int n, int pos, float* all_logits) {
    if (!model_) return err("cpu backend: run before load");
    return own_.run(*this, tokens, n, pos, all_logits);
}

runtime::ExecutorCaps CpuBackend::capabilities() const {
    runtime::ExecutorCaps c;
    c.name = "cpu (compiled program, " + runtime::cpu_kernels_and_threads(pool_ ? pool_->size() : 0) + ")";
    c.stored_types = {DType::F32, DType::F16, DType::QI8, DType::QI4};
    c.max_seq = max_seq_;
    c.batch_invariant = true;
    return c;
}

Result<const float*> CpuBackend::step(kv::PagedKv& kv, std::span<const runtime::PagedStep> batch) {
    if (!model_) return err("cpu backend: step before load");
    auto layout = runtime::plan_batch(kv, batch, cfg_, max_seq_, "cpu");
    if (!layout) return layout.error();
    for (const runtime::PagedStep& st : batch) EDGE_TRY(kv.apply(kv::op::Append{st.seq, st.tokens}));
    const runtime::BatchLayout& L = *layout;
    const int V = cfg_.vocab_size;
    step_logits_.resize(size_t(L.out_rows) * size_t(V));
    const std::vector<int> out_rows = runtime::logit_rows(batch, L);
    std::vector<int32_t> toks(size_t(L.rows));
    for (size_t i = 0; i < batch.size(); ++i)
        std::copy(batch[i].tokens.begin(), batch[i].tokens.end(), toks.begin() + L.first[i]);
    PagedAccess access{kv, batch, L, 0, std::vector<std::span<const kv::BlockId>>(batch.size())};
    // Chunks of the prefill program's batch (one row: the decode program), as run() cuts them.
    const int chunk = std::max(1, plan_.batch[1]);
    for (int r0 = 0; r0 < L.rows; r0 += chunk) {
        const int m = std::min(chunk, L.rows - r0);
        std::vector<std::pair<int, float*>> want;
        for (size_t o = 0; o < out_rows.size(); ++o)
            if (out_rows[o] >= r0 && out_rows[o] < r0 + m)
                want.emplace_back(out_rows[o] - r0, step_logits_.data() + o * size_t(V));
        access.row0 = r0;
        EDGE_TRY(run_rows(Rows{toks.data() + r0, L.row_pos.data() + r0, m, want}, access));
    }
    return static_cast<const float*>(step_logits_.data());
}

// The output head on the rows whose logits are wanted only, W at a time: their inputs gathered
// (normalised when the head has the final norm as its prologue) into the prologue scratch, the
// product into the logits buffer's first rows, each row copied out to its caller. A row's logits
// do not depend on which rows run beside it (the kernels are batch-invariant).
void CpuBackend::run_head(const Step& s, const float* in, float* logits, int W,
                          std::span<const std::pair<int, float*>> want) {
    const int in_w = s.in[0].width, V = s.out[0].width;
    for (size_t w0 = 0; w0 < want.size(); w0 += size_t(W)) {
        const int m = int(std::min(want.size() - w0, size_t(W)));
        float* x = norm_scratch_.data();
        for (int j = 0; j < m; ++j) {
            const float* src = in + size_t(want[w0 + size_t(j)].first) * in_w;
            if (s.prologue_rmsnorm)
                kernels::rmsnorm(x + size_t(j) * in_w, src, s.norm->f32(), in_w, cfg_.norm_eps);
            else
                std::memcpy(x + size_t(j) * in_w, src, sizeof(float) * size_t(in_w));
        }
        const qkernels::MatmulJob job{logits, s.weights[0]};
        qkernels::matmul_multi(&job, 1, x, m, *pool_);
        if (s.biases[0]) kernels::add_rows(logits, s.biases[0]->f32(), m, s.biases[0]->numel());
        for (int j = 0; j < m; ++j)
            std::memcpy(want[w0 + size_t(j)].second, logits + size_t(j) * V, sizeof(float) * size_t(V));
    }
}

Status CpuBackend::run_rows(const Rows& r, PagedAccess& kvs) {
    const LlamaConfig& c = cfg_;
    const int n = r.n;
    const int32_t* tokens = r.tokens;
    const int k = n == 1 ? 0 : 1;  // which memory plan
    if (n > plan_.batch[size_t(k)])
        return err("cpu backend: ", n, " rows exceed the plan's batch ", plan_.batch[size_t(k)]);
    uint8_t* base = arena_.get();
    auto P = [&](const ValueRef& v) { return reinterpret_cast<float*>(base + v.off[size_t(k)]); };
    ThreadPool& pool = *pool_;
    const int HD = c.head_dim, QD = c.q_dim(), KV = c.kv_dim(), half = c.rope_dim / 2;
    const float inv_sqrt = 1.0f / std::sqrt(float(HD));
    const int W = plan_.wide_rows[size_t(k)];  // rows of the logits and of the score scratch

    for (const Step& s : plan_.steps) {
        switch (s.kind) {
            case StepKind::Embedding: {
                const Tensor& e = *s.weights[0];
                const int D = s.out[0].width;
                float* x = P(s.out[0]);
                for (int t = 0; t < n; ++t) {
                    int32_t tok = tokens[t];
                    if (tok < 0 || tok >= c.vocab_size) tok = 0;
                    if (e.type == DType::F32)
                        std::memcpy(x + size_t(t) * D, e.f32() + int64_t(tok) * D, sizeof(float) * size_t(D));
                    else
                        qkernels::dequantize_row(e, tok, x + size_t(t) * D);
                }
                break;
            }
            case StepKind::RMSNorm: {
                const int D = s.out[0].width;
                for (int t = 0; t < n; ++t)
                    kernels::rmsnorm(P(s.out[0]) + size_t(t) * D, P(s.in[0]) + size_t(t) * D, s.norm->f32(), D,
                                     c.norm_eps);
                break;
            }
            case StepKind::MatMul:
            case StepKind::GateUpSwiglu: {
                if (s.writes_logits) {
                    run_head(s, P(s.in[0]), P(s.out[0]), W, r.logits);
                    break;
                }
                const int rows = n;
                const int in_w = s.in[0].width;
                const float* in = P(s.in[0]);
                if (s.prologue_rmsnorm) {
                    for (int t = 0; t < rows; ++t)
                        kernels::rmsnorm(norm_scratch_.data() + size_t(t) * in_w, in + size_t(t) * in_w, s.norm->f32(),
                                         in_w, c.norm_eps);
                    in = norm_scratch_.data();
                }
                if (s.kind == StepKind::GateUpSwiglu) {
                    float* a = P(s.out[0]);
                    qkernels::matmul_gate_up_swiglu(a, up_scratch_.data(), in, *s.weights[0], *s.weights[1], rows,
                                                    pool);
                } else {
                    // Fused Q/K/V (several weights, one input): one parallel region.
                    std::vector<qkernels::MatmulJob> jobs;
                    jobs.reserve(s.weights.size());
                    for (size_t j = 0; j < s.weights.size(); ++j) jobs.push_back({P(s.out[j]), s.weights[j]});
                    qkernels::matmul_multi(jobs.data(), int(jobs.size()), in, rows, pool);
                    for (size_t j = 0; j < s.biases.size(); ++j)
                        if (s.biases[j]) kernels::add_rows(jobs[j].out, s.biases[j]->f32(), rows, s.biases[j]->numel());
                }
                if (s.epilogue_residual) kernels::add(P(s.out[0]), P(s.residual), int64_t(rows) * s.out[0].width);
                break;
            }
            case StepKind::Rope: {
                float* q = P(s.out[0]);
                float* kk = P(s.out[1]);
                std::memcpy(q, P(s.in[0]), sizeof(float) * size_t(n) * QD);
                std::memcpy(kk, P(s.in[1]), sizeof(float) * size_t(n) * KV);
                for (int t = 0; t < n; ++t) {
                    const float* cs = &rope_cos_[size_t(r.pos[t]) * half];
                    const float* sn = &rope_sin_[size_t(r.pos[t]) * half];
                    auto rotate = [&](float* vec, int heads) {
                        kernels::rope_interleaved(vec, heads, HD, half, cs, sn);
                    };
                    rotate(q + size_t(t) * QD, c.n_heads);
                    rotate(kk + size_t(t) * KV, c.n_kv_heads);
                }
                break;
            }
            case StepKind::Attention: {
                const float* q = P(s.in[0]);
                const float* kr = P(s.in[1]);
                const float* v = P(s.in[2]);
                EDGE_TRY(kvs.write(s.layer, n, r.pos, kr, v));
                float* out = P(s.out[0]);
                float* scores = P(s.scores);
                struct Ctx {
                    PagedAccess* kvs;
                    int layer, B, t0;
                } ctx{&kvs, s.layer, kvs.block_tokens(), 0};
                const kernels::KvBlocks blocks{&ctx, [](const void* p, int t, int block, bool values) {
                                                   const Ctx& x = *static_cast<const Ctx*>(p);
                                                   return x.kvs->at(x.t0 + t, x.layer, block * x.B, values);
                                               }};
                const kernels::AttentionShape shape{c.n_heads, c.n_kv_heads,      HD,      kvs.block_tokens(),
                                                    KV,        int64_t(max_seq_), inv_sqrt};
                // W rows at a time: the score scratch holds W rows (every row's arithmetic is its
                // own, so the pieces give the bits of one pass).
                for (int t0 = 0; t0 < n; t0 += W) {
                    ctx.t0 = t0;
                    kernels::causal_attention(out + size_t(t0) * QD, q + size_t(t0) * QD, std::min(W, n - t0),
                                              r.pos + t0, kvs.L.row_item.data() + kvs.row0 + t0, shape, blocks, scores,
                                              pool);
                }
                break;
            }
            case StepKind::Swiglu: {
                const int F = s.out[0].width;
                float* a = P(s.out[0]);
                if (a != P(s.in[0])) std::memcpy(a, P(s.in[0]), sizeof(float) * size_t(n) * F);
                for (int t = 0; t < n; ++t) kernels::swiglu(a + size_t(t) * F, P(s.in[1]) + size_t(t) * F, F);
                break;
            }
            case StepKind::Add: {
                const size_t N = size_t(n) * s.out[0].width;
                float* y = P(s.out[0]);
                const float* a = P(s.in[0]);
                const float* b = P(s.in[1]);
                for (size_t i = 0; i < N; ++i) y[i] = a[i] + b[i];
                break;
            }
        }
    }
    return {};
}

}  // namespace edge::runtime
