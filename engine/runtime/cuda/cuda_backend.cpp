// Host side of the CUDA backend (compiled into edge_runtime when nvcc was found; the kernels are
// in cuda_kernels.cu). See cuda_backend.h.
#include "cuda_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "cuda_check.h"
#include "cuda_kernels.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/rope.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/one_sequence.h"
#include "engine/runtime/resolved_program.h"

using edge::model::LlamaConfig;
using edge::model::Model;

namespace edge::runtime::cuda {

namespace {

class CudaBackend final : public Backend {
public:
    ~CudaBackend() override {
        free_pools(own_pools_);
        free_pools(ext_pools_);
        for (void* p : owned_) cudaFree(p);
        if (stream_) cudaStreamDestroy(stream_);
    }
    std::string name() const override { return "cuda (" + device_ + ")"; }

    Result<void*> allocate(size_t bytes) override {
        void* p = nullptr;
        EDGE_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 256)));
        return p;
    }
    void release(void* p) override { cudaFree(p); }
    Status upload(void* dst, const void* src, size_t bytes) override {
        EDGE_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
        return {};
    }
    Status download(void* dst, const void* src, size_t bytes) override {
        EDGE_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
        return {};
    }
    Status synchronize() override {
        EDGE_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return {};
    }
    const LlamaConfig& config() const override { return cfg_; }
    int max_seq() const override { return max_seq_; }

    BackendMemory memory() const override {
        BackendMemory m;
        m.weight_bytes = weight_bytes_;
        m.arena_bytes = plan_.arena_bytes;
        m.kv_bytes = own_pools_.bytes;
        m.scratch_bytes = scratch_bytes_;
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) == cudaSuccess) {
            m.device_free = fr;
            m.device_total = tot;
        }
        return m;
    }

    Status load(std::shared_ptr<const Model> model, const runtime::ExecProgram& plan,
                const BackendOptions& opts) override {
        if (!model) return err("cuda backend: no model given");
        auto rp = resolve_for_backend(*model, plan, opts.max_seq);
        if (!rp.ok()) return rp.error();
        const LlamaConfig& c = model->config;
        const int max_seq = rp->max_seq;
        EDGE_CUDA_CHECK(cudaSetDevice(0));
        cudaDeviceProp prop{};
        EDGE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        device_ = prop.name;
        EDGE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        model_ = std::move(model);
        cfg_ = c;
        plan_ = std::move(rp->program);
        max_seq_ = max_seq;

        for (const Step& s : plan_.steps) {
            for (const Tensor* t : s.weights) EDGE_TRY(upload_weight(*t));
            for (const Tensor* t : s.biases)
                if (t) EDGE_TRY(upload_weight(*t));  // 1-D F32, kept beside the norms
            if (s.norm) EDGE_TRY(upload_weight(*s.norm));
        }
        auto dev = [&](size_t bytes, size_t* counter) -> Result<void*> {
            auto p = allocate(bytes);
            if (!p.ok()) return p.error();
            owned_.push_back(*p);
            if (counter) *counter += bytes;
            return *p;
        };
        auto a = dev(std::max<size_t>(plan_.arena_bytes, 256), nullptr);
        if (!a.ok()) return a.error();
        arena_ = static_cast<uint8_t*>(*a);
        const model::RopeTables rope = model::rope_tables(c, max_seq);
        const std::vector<float>& cs = rope.cos;
        const std::vector<float>& sn = rope.sin;
        auto dc = dev(std::max<size_t>(cs.size(), 1) * sizeof(float), &scratch_bytes_);
        auto ds = dev(std::max<size_t>(sn.size(), 1) * sizeof(float), &scratch_bytes_);
        if (!dc.ok()) return dc.error();
        if (!ds.ok()) return ds.error();
        cos_ = static_cast<float*>(*dc);
        sin_ = static_cast<float*>(*ds);
        EDGE_TRY(upload(cos_, cs.data(), cs.size() * sizeof(float)));
        EDGE_TRY(upload(sin_, sn.data(), sn.size() * sizeof(float)));
        const size_t rows = size_t(std::max(plan_.batch[0], plan_.batch[1]));
        auto nb = dev(rows * size_t(std::max(plan_.max_in_width, 1)) * sizeof(float), &scratch_bytes_);
        auto ub = dev(rows * size_t(std::max(plan_.max_ffn, 1)) * sizeof(float), &scratch_bytes_);
        auto tk = dev(rows * sizeof(int32_t) + 256, &scratch_bytes_);
        if (!nb.ok()) return nb.error();
        if (!ub.ok()) return ub.error();
        if (!tk.ok()) return tk.error();
        norm_ = static_cast<float*>(*nb);
        up_ = static_cast<float*>(*ub);
        tokens_ = static_cast<int32_t*>(*tk);
        sampled_ = tokens_ + rows;
        logits_.assign(size_t(c.vocab_size), 0.0f);
        EDGE_TRY(synchronize());
        return {};
    }

    // One sequence of its own, through step() on a books-only PagedKv (runtime::OwnSequence), so
    // run() and a served request share one KV storage and one arithmetic.
    Result<const float*> run(const int32_t* tokens, int n, int pos, float* all_logits) override {
        if (!model_) return err("cuda backend: run before load");
        return own_.run(*this, tokens, n, pos, all_logits);
    }

    // runtime::Executor. The K/V rows of a PagedKv's blocks live here, on the device, in pools of
    // kv.total_blocks() + 1 blocks per layer indexed by the PagedKv's block ids (the extra block
    // takes writes that must not land: see step_sequence); the PagedKv keeps the books. Each
    // sequence of the batch runs the program on its own (its rows never meet another sequence's
    // in a kernel), so a row's logits do not depend on the rest of the batch.
    Result<const float*> step(kv::PagedKv& kv, std::span<const runtime::PagedStep> batch) override {
        if (!model_) return err("cuda: step before load");
        if (kv.shape().block_tokens != kKvBlock)
            return err("cuda: the KV memory's blocks hold ", kv.shape().block_tokens,
                       " tokens; the CUDA kernels read blocks of ", kKvBlock);
        auto layout = runtime::plan_batch(kv, batch, cfg_, max_seq_, "cuda");
        if (!layout) return layout.error();
        auto pools = bind_paged(kv);
        if (!pools) return pools.error();
        std::vector<std::vector<kv::BlockId>> before(batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
            const auto t = kv.block_table(batch[i].seq);
            before[i].assign(t.begin(), t.end());
        }
        for (const runtime::PagedStep& st : batch) EDGE_TRY(kv.apply(kv::op::Append{st.seq, st.tokens}));
        const int V = cfg_.vocab_size;
        step_logits_.resize(size_t(layout->out_rows) * size_t(V));
        for (size_t i = 0; i < batch.size(); ++i) {
            float* out = step_logits_.data() + size_t(layout->out_first[i]) * size_t(V);
            EDGE_TRY(
                step_sequence(kv, **pools, batch[i], layout->start[i], before[i], batch[i].all_logits ? out : nullptr));
            if (!batch[i].all_logits) std::copy(logits_.begin(), logits_.end(), out);
        }
        return static_cast<const float*>(step_logits_.data());
    }

    runtime::ExecutorCaps capabilities() const override {
        runtime::ExecutorCaps c;
        c.name = name();
        c.stored_types = {DType::F32, DType::F16, DType::BF16, DType::QI8, DType::QI4};
        c.max_seq = max_seq_;
        c.max_batch_tokens = 0;
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) == cudaSuccess) c.device_memory_bytes = tot;
        c.batch_invariant = true;
        c.kv_on_device = true;
        return c;
    }

    runtime::ExecutorMemory held_memory() const override {
        const BackendMemory b = memory();
        runtime::ExecutorMemory m;
        m.weight_bytes = b.weight_bytes;
        m.scratch_bytes = b.arena_bytes + b.scratch_bytes;
        m.kv_bytes = b.kv_bytes + ext_pools_.bytes;
        m.device_total = b.device_total;
        m.device_free = b.device_free;
        return m;
    }

    Result<int32_t> sample(float temperature, int top_k, float u) {
        if (!last_logits_) return err("cuda backend: sample before run");
        EDGE_CUDA_CHECK_LAUNCH(
            launch_topk_sample(sampled_, last_logits_, cfg_.vocab_size, top_k, temperature, u, stream_));
        int32_t tok = 0;
        EDGE_CUDA_CHECK(cudaMemcpyAsync(&tok, sampled_, sizeof(int32_t), cudaMemcpyDeviceToHost, stream_));
        EDGE_TRY(synchronize());
        return tok;
    }

private:
    std::shared_ptr<const Model> model_;
    LlamaConfig cfg_;
    ResolvedProgram plan_;
    int max_seq_ = 0;
    std::string device_ = "not loaded";
    cudaStream_t stream_ = nullptr;
    std::vector<void*> owned_;
    std::unordered_map<const Tensor*, DevWeight> weights_;
    std::unordered_map<const Tensor*, const float*> norms_;
    uint8_t* arena_ = nullptr;
    float *cos_ = nullptr, *sin_ = nullptr, *norm_ = nullptr, *up_ = nullptr;
    int32_t *tokens_ = nullptr, *sampled_ = nullptr;
    const float* last_logits_ = nullptr;
    size_t weight_bytes_ = 0, scratch_bytes_ = 0;
    std::vector<float> logits_;

    // Where one run of the program reads and writes K/V: per-layer pools (layer_stride floats
    // apart), the block table attention reads through and the one new rows are written through.
    struct KvView {
        float* k = nullptr;
        float* v = nullptr;
        size_t layer_stride = 0;
        const int32_t* read = nullptr;
        const int32_t* write = nullptr;
    };

    // The device pools behind a PagedKv's block ids, and two device tables: one set for run()'s
    // own sequence, one for the KV memory a caller's step() brings.
    struct DevicePools {
        const kv::PagedKv* owner = nullptr;
        int64_t blocks = 0;  // the PagedKv's blocks; the pools hold one more (the write sink)
        float *k = nullptr, *v = nullptr;
        int32_t *read = nullptr, *write = nullptr;
        size_t bytes = 0;
    };
    DevicePools own_pools_, ext_pools_;
    runtime::OwnSequence own_;        // run()'s one sequence
    std::vector<float> step_logits_;  // [batch][vocab]

    static void free_pools(DevicePools& p) {
        for (void* d : {static_cast<void*>(p.k), static_cast<void*>(p.v), static_cast<void*>(p.read),
                        static_cast<void*>(p.write)})
            if (d) cudaFree(d);
        p = DevicePools{};
    }

    // Device pools for the blocks of `kv`, made when a KV memory (or its size) is new to this
    // executor. A memory met for the first time must be empty: rows computed elsewhere are not
    // here to read.
    Result<const DevicePools*> bind_paged(const kv::PagedKv& kv) {
        DevicePools& p = &kv == own_.kv() ? own_pools_ : ext_pools_;
        if (&kv == p.owner && kv.total_blocks() == p.blocks) return &p;
        if (kv.usage().tokens_logical > 0)
            return err("cuda: the KV memory already holds ", kv.usage().tokens_logical,
                       " tokens this executor did not compute (its rows would live on this device); give it an "
                       "empty one");
        free_pools(p);
        const size_t pool =
            size_t(cfg_.n_layers) * size_t(kv.total_blocks() + 1) * kKvBlock * size_t(cfg_.kv_dim()) * sizeof(float);
        const size_t tables = size_t((max_seq_ + kKvBlock - 1) / kKvBlock) * sizeof(int32_t);
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) == cudaSuccess && 2 * pool + 2 * tables > fr)
            return err("cuda: a KV pool of ", kv.total_blocks(), " blocks needs ", (2 * pool) >> 20,
                       " MiB of device memory, ", fr >> 20, " MiB free of ", tot >> 20, " (a smaller --kv-budget)");
        void *k = nullptr, *v = nullptr, *r = nullptr, *w = nullptr;
        const cudaError_t e1 = cudaMalloc(&k, pool), e2 = cudaMalloc(&v, pool), e3 = cudaMalloc(&r, tables),
                          e4 = cudaMalloc(&w, tables);
        p.k = static_cast<float*>(k);
        p.v = static_cast<float*>(v);
        p.read = static_cast<int32_t*>(r);
        p.write = static_cast<int32_t*>(w);
        for (cudaError_t e : {e1, e2, e3, e4})
            if (e != cudaSuccess) {
                free_pools(p);
                return err("cuda: allocating the KV pool of ", kv.total_blocks(), " blocks: ", cudaGetErrorString(e));
            }
        EDGE_CUDA_CHECK(cudaMemsetAsync(p.k, 0, pool, stream_));
        EDGE_CUDA_CHECK(cudaMemsetAsync(p.v, 0, pool, stream_));
        p.bytes = 2 * pool + 2 * tables;
        p.owner = &kv;
        p.blocks = kv.total_blocks();
        return &p;
    }

    // One sequence of a step, after its tokens were appended to the books. `before` is its block
    // table before the append: a shared partial last block the PagedKv replaced by a private copy
    // (copy-on-write) is copied on the device too. New rows go through a write table in which
    // blocks still shared after the append (a block that filled up and was deduplicated into a
    // cached one holding the same K/V) point to the sink block, so another sequence's rows are
    // never rewritten.
    // all_logits: every token's logits go there (tokens × vocab), as run()'s do.
    Status step_sequence(const kv::PagedKv& kv, const DevicePools& pools, const runtime::PagedStep& st, int start,
                         const std::vector<kv::BlockId>& before, float* all_logits) {
        const auto table = kv.block_table(st.seq);
        const size_t kvd = size_t(cfg_.kv_dim());
        const size_t block_floats = kKvBlock * kvd;
        const size_t layer_stride = size_t(pools.blocks + 1) * block_floats;
        const size_t last = before.size();
        if (start % kKvBlock != 0 && last > 0 && table[last - 1] != before[last - 1] &&
            kv.refcount(table[last - 1]) == 1) {
            for (int l = 0; l < cfg_.n_layers; ++l)
                for (float* pool : {pools.k, pools.v}) {
                    float* base = pool + size_t(l) * layer_stride;
                    EDGE_CUDA_CHECK(cudaMemcpyAsync(base + size_t(table[last - 1]) * block_floats,
                                                    base + size_t(before[last - 1]) * block_floats,
                                                    block_floats * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
                }
        }
        std::vector<int32_t> read(table.begin(), table.end()), write(read);
        for (size_t b = size_t(start / kKvBlock); b < write.size(); ++b)
            if (kv.refcount(write[b]) > 1) write[b] = int32_t(pools.blocks);
        EDGE_CUDA_CHECK(
            cudaMemcpyAsync(pools.read, read.data(), read.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_));
        EDGE_CUDA_CHECK(cudaMemcpyAsync(pools.write, write.data(), write.size() * sizeof(int32_t),
                                        cudaMemcpyHostToDevice, stream_));
        const KvView view{pools.k, pools.v, layer_stride, pools.read, pools.write};
        // run_chunk synchronises the stream at its end, so `read` and `write` outlive their copies.
        return run_in_chunks("cuda", st.tokens.data(), int(st.tokens.size()), start, max_seq_, plan_.batch[1],
                             cfg_.vocab_size, all_logits,
                             [&](const int32_t* t, int m, int p, float* l) { return run_chunk(t, m, p, l, view); });
    }

    Status upload_weight(const Tensor& t) {
        if (weights_.count(&t) || norms_.count(&t)) return {};
        auto put = [&](const void* src, size_t bytes) -> Result<uint8_t*> {
            auto p = allocate(bytes);
            if (!p.ok()) return p.error();
            owned_.push_back(*p);
            weight_bytes_ += bytes;
            EDGE_TRY(upload(*p, src, bytes));
            return static_cast<uint8_t*>(*p);
        };
        if (t.shape.size() == 1) {  // norm weights: F32 by validate_llama
            auto p = put(t.raw(), t.nbytes);
            if (!p.ok()) return p.error();
            norms_[&t] = reinterpret_cast<const float*>(*p);
            return {};
        }
        DevWeight w;
        w.rows = int(t.rows());
        w.cols = int(t.cols());
        const bool qrow = (t.type == DType::QI8 || t.type == DType::QI4) && t.quant && t.quant->row_mode();
        if (t.type == DType::F32 || t.type == DType::F16 || qrow) {
            auto p = put(t.raw(), t.nbytes);
            if (!p.ok()) return p.error();
            w.data = *p;
            if (t.type == DType::F32) w.type = kWF32;
            if (t.type == DType::F16) w.type = kWF16;
            if (qrow) {
                const QuantInfo& q = *t.quant;
                w.type = q.bits == 8 ? kWQI8 : kWQI4;
                w.scales = *p + q.scales_offset;
                w.scales_f16 = q.scale_type == QScale::F16;
                w.zeros = q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(*p + q.zeros_offset);
                w.row_bytes = q.row_bytes;
                w.groups_per_row = int(q.groups_per_row);
                w.group_size = int(q.group_size);
            }
        } else {  // BF16, flat-grouped QI8/QI4: dequantized to F32 once, on the host
            const std::vector<float> f = qkernels::dequantize(t);
            auto p = put(f.data(), f.size() * sizeof(float));
            if (!p.ok()) return p.error();
            w.data = *p;
            w.type = kWF32;
        }
        weights_[&t] = w;
        return {};
    }

    Status matmul(float* out, const float* in, const Tensor& t, int rows) {
        const DevWeight& w = weights_.at(&t);
        if (rows == 1)
            EDGE_CUDA_CHECK_LAUNCH(launch_gemv(out, in, w, stream_));
        else
            EDGE_CUDA_CHECK_LAUNCH(launch_gemm(out, in, w, rows, stream_));
        return {};
    }

    // A weight's bias added to each of `rows` rows of `width` (through the element-wise add the
    // residual epilogue uses; no kernel of its own).
    Status add_bias_rows(float* y, const Tensor* bias, int rows, int width) {
        for (int r = 0; r < rows; ++r)
            EDGE_CUDA_CHECK_LAUNCH(
                launch_add(y + size_t(r) * width, y + size_t(r) * width, norms_.at(bias), size_t(width), stream_));
        return {};
    }

    // The output head: the last row only, or every row W at a time when all_logits is asked
    // for; the logits buffer holds W rows. last_logits_ points at the last row's.
    Status run_head(const Step& s, const float* in_all, float* lg, int n, int W, float* all_logits) {
        const LlamaConfig& c = cfg_;
        const int in_w = s.in[0].width, V = s.out[0].width;
        for (int r0 = all_logits ? 0 : n - 1; r0 < n; r0 += W) {
            const int rows = std::min(W, n - r0);
            const float* in = in_all + size_t(r0) * in_w;
            if (s.prologue_rmsnorm) {
                EDGE_CUDA_CHECK_LAUNCH(launch_rmsnorm(norm_, in, norms_.at(s.norm), rows, in_w, c.norm_eps, stream_));
                in = norm_;
            }
            EDGE_TRY(matmul(lg, in, *s.weights[0], rows));
            if (s.biases[0]) EDGE_TRY(add_bias_rows(lg, s.biases[0], rows, V));
            if (all_logits)
                EDGE_CUDA_CHECK(cudaMemcpyAsync(all_logits + size_t(r0) * V, lg, sizeof(float) * size_t(rows) * V,
                                                cudaMemcpyDeviceToHost, stream_));
            last_logits_ = lg + size_t(rows - 1) * V;
        }
        EDGE_CUDA_CHECK(
            cudaMemcpyAsync(logits_.data(), last_logits_, sizeof(float) * V, cudaMemcpyDeviceToHost, stream_));
        return {};
    }

    Status run_chunk(const int32_t* tokens, int n, int pos, float* all_logits, const KvView& kvv) {
        const LlamaConfig& c = cfg_;
        const int k = n == 1 ? 0 : 1;
        const int wide = plan_.wide_rows[size_t(k)];  // rows of the logits and of the score scratch
        auto P = [&](const ValueRef& v) { return reinterpret_cast<float*>(arena_ + v.off[size_t(k)]); };
        EDGE_CUDA_CHECK(cudaMemcpyAsync(tokens_, tokens, sizeof(int32_t) * size_t(n), cudaMemcpyHostToDevice, stream_));
        for (const Step& s : plan_.steps) {
            switch (s.kind) {
                case StepKind::Embedding:
                    EDGE_CUDA_CHECK_LAUNCH(
                        launch_embedding(P(s.out[0]), tokens_, n, weights_.at(s.weights[0]), stream_));
                    break;
                case StepKind::RMSNorm:
                    EDGE_CUDA_CHECK_LAUNCH(launch_rmsnorm(P(s.out[0]), P(s.in[0]), norms_.at(s.norm), n, s.out[0].width,
                                                          c.norm_eps, stream_));
                    break;
                case StepKind::MatMul:
                case StepKind::GateUpSwiglu: {
                    if (s.writes_logits) {
                        EDGE_TRY(run_head(s, P(s.in[0]), P(s.out[0]), n, wide, all_logits));
                        break;
                    }
                    const int rows = n;
                    const int in_w = s.in[0].width;
                    const float* in = P(s.in[0]);
                    if (s.prologue_rmsnorm) {
                        EDGE_CUDA_CHECK_LAUNCH(
                            launch_rmsnorm(norm_, in, norms_.at(s.norm), rows, in_w, c.norm_eps, stream_));
                        in = norm_;
                    }
                    if (s.kind == StepKind::GateUpSwiglu) {
                        const int F = s.out[0].width;
                        float* a = P(s.out[0]);
                        EDGE_TRY(matmul(a, in, *s.weights[0], rows));
                        EDGE_TRY(matmul(up_, in, *s.weights[1], rows));
                        EDGE_CUDA_CHECK_LAUNCH(launch_swiglu(a, up_, size_t(rows) * F, stream_));
                    } else {
                        for (size_t j = 0; j < s.weights.size(); ++j) {
                            float* y = P(s.out[j]);
                            EDGE_TRY(matmul(y, in, *s.weights[j], rows));
                            if (j < s.biases.size() && s.biases[j])
                                EDGE_TRY(add_bias_rows(y, s.biases[j], rows, s.out[j].width));
                        }
                    }
                    if (s.epilogue_residual) {
                        float* y = P(s.out[0]);
                        EDGE_CUDA_CHECK_LAUNCH(launch_add(y, y, P(s.residual), size_t(rows) * s.out[0].width, stream_));
                    }
                    break;
                }
                case StepKind::Rope: {
                    EDGE_CUDA_CHECK(cudaMemcpyAsync(P(s.out[0]), P(s.in[0]), sizeof(float) * size_t(n) * c.q_dim(),
                                                    cudaMemcpyDeviceToDevice, stream_));
                    EDGE_CUDA_CHECK(cudaMemcpyAsync(P(s.out[1]), P(s.in[1]), sizeof(float) * size_t(n) * c.kv_dim(),
                                                    cudaMemcpyDeviceToDevice, stream_));
                    EDGE_CUDA_CHECK_LAUNCH(launch_rope(P(s.out[0]), P(s.out[1]), cos_, sin_, n, pos, c.n_heads,
                                                       c.n_kv_heads, c.head_dim, c.rope_dim / 2, stream_));
                    break;
                }
                case StepKind::Attention: {
                    float* kp = kvv.k + size_t(s.layer) * kvv.layer_stride;
                    float* vp = kvv.v + size_t(s.layer) * kvv.layer_stride;
                    EDGE_CUDA_CHECK_LAUNCH(
                        launch_kv_append(kp, vp, kvv.write, P(s.in[1]), P(s.in[2]), n, pos, c.kv_dim(), stream_));
                    // `wide` rows at a time: the score scratch holds that many rows.
                    for (int t0 = 0; t0 < n; t0 += wide)
                        EDGE_CUDA_CHECK_LAUNCH(
                            launch_attention(P(s.out[0]) + size_t(t0) * c.q_dim(), P(s.in[0]) + size_t(t0) * c.q_dim(),
                                             kp, vp, kvv.read, P(s.scores), std::min(wide, n - t0), pos + t0, c.n_heads,
                                             c.n_kv_heads, c.head_dim, max_seq_, stream_));
                    break;
                }
                case StepKind::Swiglu: {
                    const size_t N = size_t(n) * s.out[0].width;
                    if (P(s.out[0]) != P(s.in[0]))
                        EDGE_CUDA_CHECK(cudaMemcpyAsync(P(s.out[0]), P(s.in[0]), N * sizeof(float),
                                                        cudaMemcpyDeviceToDevice, stream_));
                    EDGE_CUDA_CHECK_LAUNCH(launch_swiglu(P(s.out[0]), P(s.in[1]), N, stream_));
                    break;
                }
                case StepKind::Add:
                    EDGE_CUDA_CHECK_LAUNCH(
                        launch_add(P(s.out[0]), P(s.in[0]), P(s.in[1]), size_t(n) * s.out[0].width, stream_));
                    break;
            }
        }
        EDGE_TRY(synchronize());
        return {};
    }
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

Result<int32_t> sample_on_device(Backend& be, float temperature, int top_k, float u) {
    auto* cb = dynamic_cast<CudaBackend*>(&be);
    if (!cb) return err("sample_on_device: backend '", be.name(), "' is not a CUDA backend");
    return cb->sample(temperature, top_k, u);
}

}  // namespace edge::runtime::cuda
