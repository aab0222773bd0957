#include "layerwise.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "engine/core/thread_pool.h"
#include "engine/model/rope.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/qkernels.h"
#include "methods.h"

namespace edge::quant {

namespace {

// True when address p lies in a mapping of a file (an inode in /proc/self/maps): only then may
// its pages be dropped, since anonymous memory would read back as zeros.
bool file_backed(const void* p) {
    FILE* f = std::fopen("/proc/self/maps", "r");
    if (!f) return false;
    const auto a = reinterpret_cast<uintptr_t>(p);
    char line[512];
    bool yes = false;
    while (std::fgets(line, sizeof line, f)) {
        unsigned long lo = 0, hi = 0, off = 0, inode = 0;
        char perms[8] = {}, dev[16] = {};
        if (std::sscanf(line, "%lx-%lx %7s %lx %15s %lu", &lo, &hi, perms, &off, dev, &inode) == 6 && a >= lo &&
            a < hi) {
            yes = inode != 0;
            break;
        }
    }
    std::fclose(f);
    return yes;
}

// Drops the pages of [p, p+n) from this process's resident set when they map a file (they are
// read again from the file if touched later). Rounded inward to whole pages.
void release(const void* p, size_t n) {
    if (!file_backed(p)) return;
    static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    uintptr_t a = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
    if (e > a) madvise(reinterpret_cast<void*>(a), e - a, MADV_DONTNEED);
}

struct BlockWeights {
    const float* attn_norm;
    const Tensor *wq, *wk, *wv, *wo;
    const float* ffn_norm;
    const Tensor *w_gate, *w_up, *w_down;
    const float *bq = nullptr, *bk = nullptr, *bv = nullptr;  // Q/K/V biases (Qwen2), else null
};

// One decoder block over one sequence (n tokens at positions 0..n-1), in place on x [n][dim],
// exactly as LlamaCpu::prefill computes it. With `cap`, the inputs of the linears are appended
// (keys as capture_key: "attn", "attn_output", "ffn", "ffn_down").
class BlockRunner {
public:
    BlockRunner(const LlamaConfig& c, int max_n, ThreadPool& pool) : c_(c), pool_(pool) {
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

    void run(float* x, int n, const BlockWeights& L, BlockInputs* cap) {
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
            kernels::rmsnorm(&xb_[size_t(t) * D], &x[size_t(t) * D], L.attn_norm, D, c.norm_eps);
        capture("attn", xb_.data(), D);
        qkernels::matmul(q_.data(), xb_.data(), *L.wq, n, pool_);
        qkernels::matmul(k_.data(), xb_.data(), *L.wk, n, pool_);
        qkernels::matmul(v_.data(), xb_.data(), *L.wv, n, pool_);
        if (L.bq) {
            kernels::add_rows(q_.data(), L.bq, n, QD);
            kernels::add_rows(k_.data(), L.bk, n, KV);
            kernels::add_rows(v_.data(), L.bv, n, KV);
        }
        for (int t = 0; t < n; ++t) {
            const float* cs = &cos_[size_t(t) * half];
            const float* sn = &sin_[size_t(t) * half];
            auto rotate = [&](float* vec, int heads) { kernels::rope_interleaved(vec, heads, HD, half, cs, sn); };
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
                    att[s] = kernels::dot(qh, &k_[size_t(s) * KV + size_t(kvh) * HD], HD) * inv_sqrt;
                kernels::softmax(att, len);
                float* out = &xb_[size_t(t) * QD + size_t(h) * HD];
                std::fill(out, out + HD, 0.0f);
                for (int s = 0; s < len; ++s) {
                    const float a = att[s];
                    const float* vs = &v_[size_t(s) * KV + size_t(kvh) * HD];
                    kernels::axpy(out, a, vs, HD);
                }
            }
        });
        capture("attn_output", xb_.data(), QD);
        qkernels::matmul(xb2_.data(), xb_.data(), *L.wo, n, pool_);
        kernels::add(x, xb2_.data(), int64_t(n) * D);
        for (int t = 0; t < n; ++t) kernels::rmsnorm(&xb_[size_t(t) * D], &x[size_t(t) * D], L.ffn_norm, D, c.norm_eps);
        capture("ffn", xb_.data(), D);
        qkernels::matmul(hb_.data(), xb_.data(), *L.w_gate, n, pool_);
        qkernels::matmul(hb2_.data(), xb_.data(), *L.w_up, n, pool_);
        for (int t = 0; t < n; ++t) kernels::swiglu(&hb_[size_t(t) * F], &hb2_[size_t(t) * F], F);
        capture("ffn_down", hb_.data(), F);
        qkernels::matmul(xb2_.data(), hb_.data(), *L.w_down, n, pool_);
        kernels::add(x, xb2_.data(), int64_t(n) * D);
    }

private:
    const LlamaConfig& c_;
    ThreadPool& pool_;
    std::vector<float> cos_, sin_, xb_, xb2_, q_, k_, v_, att_, hb_, hb2_;
};

}  // namespace

Result<LayerwiseStats> gptq_layerwise(const Model& model, const CalibSet& calib, const TensorSink& sink,
                                      const LayerwiseOptions& opts, Progress* progress) {
    const auto t0 = std::chrono::steady_clock::now();
    EDGE_TRY(validate_llama(model));
    if (calib.sequences.empty()) return err("layer-wise GPTQ: no calibration sequences");
    const LlamaConfig& c = model.config;
    const int D = c.dim;
    for (const Tensor& t : model.tensors)
        if (t.type != DType::F32)
            return err(model.source_path, ": tensor '", t.name, "' is ", dtype_name(t.type),
                       "; layer-wise GPTQ starts from F32 weights");
    const Tensor* embd = model.find("token_embd.weight");
    const Tensor* head = model.output_head();
    if (!embd || !head) return err(model.source_path, ": no token embedding or output head");
    if (c.tied_embeddings || head == embd) return err(model.source_path, ": GPTQ of a tied output head is refused");

    // Hidden states of every calibration token, [token][dim], sequence after sequence.
    std::vector<int> starts;
    int64_t total = 0;
    int longest = 0;
    for (const auto& s : calib.sequences) {
        starts.push_back(int(total));
        total += int64_t(s.size());
        longest = std::max(longest, int(s.size()));
    }
    std::vector<float> h(size_t(total) * size_t(D));
    for (size_t i = 0; i < calib.sequences.size(); ++i)
        for (size_t j = 0; j < calib.sequences[i].size(); ++j) {
            int32_t tok = calib.sequences[i][j];
            if (tok < 0 || tok >= c.vocab_size) tok = 0;
            std::memcpy(&h[(size_t(starts[i]) + j) * size_t(D)], embd->f32() + int64_t(tok) * D,
                        sizeof(float) * size_t(D));
        }

    // The embedding rows are copied; its pages (random tokens touch most of them) are let go.
    if (opts.release_pages) release(embd->data.get(), embd->nbytes);
    ThreadPool pool(opts.threads);
    BlockRunner runner(c, longest, pool);
    LayerwiseStats stats;
    QuantSpec spec = opts.spec;
    spec.method = QMethod::GPTQ;
    const int blocks = opts.max_blocks < 0 ? c.n_layers : std::min(opts.max_blocks, c.n_layers);
    auto f32 = [&](const std::string& n) { return model.find(n); };
    // The Hessian is handed over (copied only when another layer still needs it).
    using Clock = std::chrono::steady_clock;
    auto secs = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    auto gptq = [&](const Tensor& w, std::vector<double>&& hess) -> Result<Tensor> {
        const auto tg = Clock::now();
        auto q = quantize_gptq(w.name, w.f32(), w.rows(), w.cols(), std::move(hess), spec, opts.gptq, &pool);
        stats.seconds_gptq += secs(tg);
        if (!q.ok()) return q.error();
        q->source_type = w.source_type;
        return q;
    };
    for (int l = 0; l < blocks; ++l) {
        if (is_cancelled(progress)) return err("layer-wise GPTQ cancelled");
        const std::string p = "blk." + std::to_string(l) + ".";
        BlockWeights fw{
            f32(p + "attn_norm.weight")->f32(), f32(p + "attn_q.weight"),      f32(p + "attn_k.weight"),
            f32(p + "attn_v.weight"),           f32(p + "attn_output.weight"), f32(p + "ffn_norm.weight")->f32(),
            f32(p + "ffn_gate.weight"),         f32(p + "ffn_up.weight"),      f32(p + "ffn_down.weight")};
        if (c.attn_qkv_bias) {
            fw.bq = f32(p + "attn_q.bias")->f32();
            fw.bk = f32(p + "attn_k.bias")->f32();
            fw.bv = f32(p + "attn_v.bias")->f32();
        }
        // 1. inputs of the block's linears, block l in FP32 (on a copy of the hidden states).
        BlockInputs cap;
        {
            const auto tc = Clock::now();
            std::vector<float> x;
            for (size_t i = 0; i < calib.sequences.size(); ++i) {
                const int n = int(calib.sequences[i].size());
                x.assign(h.begin() + int64_t(starts[i]) * D, h.begin() + (int64_t(starts[i]) + n) * D);
                runner.run(x.data(), n, fw, &cap);
            }
            stats.seconds_capture += secs(tc);
        }
        // 2. GPTQ, one Hessian per input (q/k/v and gate/up share theirs), each freed after use.
        std::map<std::string, Tensor> qt;
        const std::vector<std::pair<const char*, std::vector<const char*>>> order = {
            {"attn", {"attn_q", "attn_k", "attn_v"}},
            {"attn_output", {"attn_output"}},
            {"ffn", {"ffn_gate", "ffn_up"}},
            {"ffn_down", {"ffn_down"}}};
        for (const auto& [key, kinds] : order) {
            Captured& x = cap[key];
            if (x.rows == 0) return err(p, key, ": no calibration inputs were captured");
            const auto th = Clock::now();
            std::vector<double> hess = hessian_from_inputs(x.x.data(), x.rows, x.dim);
            stats.seconds_hessian += secs(th);
            std::vector<float>().swap(x.x);
            for (size_t i = 0; i < kinds.size(); ++i) {
                const char* kind = kinds[i];
                auto q = gptq(*f32(p + kind + ".weight"),
                              i + 1 < kinds.size() ? std::vector<double>(hess) : std::move(hess));
                if (!q.ok()) return err(p, kind, ": ", q.message());
                qt.emplace(kind, std::move(q).value());
            }
        }
        // 3. the hidden states through the quantized block.
        const BlockWeights qw{fw.attn_norm,
                              &qt.at("attn_q"),
                              &qt.at("attn_k"),
                              &qt.at("attn_v"),
                              &qt.at("attn_output"),
                              fw.ffn_norm,
                              &qt.at("ffn_gate"),
                              &qt.at("ffn_up"),
                              &qt.at("ffn_down"),
                              fw.bq,
                              fw.bk,
                              fw.bv};
        const auto tq = Clock::now();
        for (size_t i = 0; i < calib.sequences.size(); ++i)
            runner.run(&h[size_t(starts[i]) * size_t(D)], int(calib.sequences[i].size()), qw, nullptr);
        stats.seconds_requant_forward += secs(tq);
        for (auto& [kind, t] : qt) EDGE_TRY(sink(std::move(t)));
        if (opts.release_pages)
            for (const Tensor* t : {fw.wq, fw.wk, fw.wv, fw.wo, fw.w_gate, fw.w_up, fw.w_down})
                release(t->data.get(), t->nbytes);
        stats.blocks_done = l + 1;
        report(progress, double(l + 1) / double(c.n_layers + 1), "layer-wise GPTQ");
    }
    if (blocks == c.n_layers) {
        // The head reads the final norm of the hidden states (every token, as apply_plan captures it).
        const float* norm = f32("output_norm.weight")->f32();
        for (int64_t t = 0; t < total; ++t) kernels::rmsnorm(&h[size_t(t) * D], &h[size_t(t) * D], norm, D, c.norm_eps);
        const auto th = Clock::now();
        std::vector<double> hess = hessian_from_inputs(h.data(), total, D);
        stats.seconds_hessian += secs(th);
        std::vector<float>().swap(h);
        auto q = gptq(*head, std::move(hess));
        if (!q.ok()) return err("output: ", q.message());
        EDGE_TRY(sink(std::move(q).value()));
        if (opts.release_pages) release(head->data.get(), head->nbytes);
        stats.head_done = true;
    }
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return stats;
}

}  // namespace edge::quant
