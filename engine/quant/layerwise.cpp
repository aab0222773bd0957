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
#include "engine/quant/block_runner.h"
#include "methods.h"

using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::validate_llama;

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
    CalibStates states = embed_calibration(calib, *embd, c);
    std::vector<float>& h = states.h;
    const int64_t total = states.total;
    // The embedding rows are copied; its pages (random tokens touch most of them) are let go.
    if (opts.release_pages) release(embd->data.get(), embd->nbytes);
    ThreadPool pool(opts.threads);
    BlockRunner runner(c, states.longest, pool);
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
        auto held = block_weights(model, l);
        if (!held.ok()) return held.error();
        const BlockWeights& fw = *held;
        // 1. inputs of the block's linears, block l in FP32 (on a copy of the hidden states).
        BlockInputs cap;
        {
            const auto tc = Clock::now();
            run_block(runner, states, fw, &cap);
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
                              // NOLINTNEXTLINE(bugprone-use-after-move): moved only for the last kind
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
        run_block(runner, states, qw, nullptr);
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
        final_norm(states, norm, c.norm_eps);
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
