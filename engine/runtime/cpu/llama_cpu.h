// FP32 reference executor for Llama-architecture models on the CPU: a forward pass with a KV
// cache, multi-threaded over output rows. Follows build_llama_graph() op for op.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/core/thread_pool.h"
#include "engine/model/ir.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/ggml/ggml_compat.h"
#include "engine/runtime/one_sequence.h"

namespace edge::runtime {

struct RuntimeOptions {
    int threads = 0;  // <= 0: all hardware threads
    int max_seq = 0;  // longest sequence; <= 0: the model's context length (capped at 4096)
    // Numerics::LlamaCpp runs llama.cpp's CPU arithmetic (engine/runtime/ggml/ggml_compat.h) for GGUF
    // models as the file stores them: prefill/forward only, on its own F16 cache (the batch step
    // and the linear hook belong to the FP32 path).
    Numerics numerics = Numerics::Fp32;
    // Details of that arithmetic (defaults: llama.cpp's x86 CPU build, no split-KV decode).
    ggml_compat::Ingredients llamacpp;
};

// The CPU implementation of runtime::Executor (engine/runtime/executor.h): FP32 arithmetic over
// weights as stored (F32, F16, QI8, QI4 through engine/runtime/qkernels), multi-threaded over
// output rows. forward() and prefill() are the batch step on one sequence in a KV memory of the
// executor's own (created at the first call), for the reference runs and tests; engine callers
// run runtime::OneSequence / runtime::Scorer over the interface.
class LlamaCpu final : public runtime::Executor {
public:
    // The model must stay alive as long as the executor (it reads weights in place).
    static Result<std::unique_ptr<LlamaCpu>> create(const std::shared_ptr<const model::Model>& model,
                                                    const RuntimeOptions& opts);

    // Runs one token at position pos (0-based) and returns the logits [vocab] (valid until the
    // next call).
    const float* forward(int32_t token, int pos);
    // Runs n tokens at positions pos..pos+n-1 in one batched pass (prefill). When all_logits is
    // not null it receives n*vocab logits; the logits of the last token are returned either way.
    // pos may go back (the sequence is cut there: pos 0 starts a new one) but not skip ahead;
    // null when it does or when the sequence would pass max_seq (runtime::OwnSequence).
    const float* prefill(const int32_t* tokens, int n, int pos, float* all_logits = nullptr);

    // Several sequences in one batch, K/V stored in `kv` (blocks of all layers) and read through
    // each sequence's block table, so each token attends only to its own sequence (a
    // block-diagonal causal mask without a mask). Appends every step's tokens to its sequence,
    // fills their K/V rows layer by layer, and returns the logits of each step's last token (or
    // of all its tokens, PagedStep::all_logits), valid until the next call. Errors (shape
    // mismatch, a sequence twice, a position past max_seq, KV budget exhausted) leave kv as it
    // was.
    Result<const float*> forward_paged(kv::PagedKv& kv, std::span<const PagedStep> batch);

    // runtime::Executor: step() is forward_paged().
    Result<const float*> step(kv::PagedKv& kv, std::span<const PagedStep> batch) override {
        return forward_paged(kv, batch);
    }
    runtime::ExecutorCaps capabilities() const override;
    runtime::ExecutorMemory held_memory() const override;

    const model::LlamaConfig& config() const override { return cfg_; }
    Numerics numerics() const { return compat_ ? Numerics::LlamaCpp : Numerics::Fp32; }
    int max_seq() const { return max_seq_; }
    int threads() const { return pool_.size(); }
    size_t kv_cache_bytes() const;
    // The KV memory forward() and prefill() run on (null before the first call).
    const kv::PagedKv* own_kv() const { return own_.kv(); }

    // Calibration (engine/quant): called with the input of every linear layer just before it
    // runs: n tokens x in_dim floats. block is the decoder block (-1 for the output head), kind
    // the layer kind (attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down, output).
    using LinearHook = std::function<void(int block, std::string_view kind, const float* in, int n, int in_dim)>;
    void set_linear_hook(LinearHook hook) { linear_hook_ = std::move(hook); }

private:
    LlamaCpu(std::shared_ptr<const model::Model> m, const RuntimeOptions& o);
    struct Layer;
    std::shared_ptr<const model::Model> model_;
    model::LlamaConfig cfg_;
    int max_seq_;
    ThreadPool pool_;
    std::vector<Layer> layers_;
    const float* embd_ = nullptr;
    const float* out_norm_ = nullptr;
    const float* head_ = nullptr;
    const Tensor* embd_tensor_ = nullptr;  // weights held as stored (F32, F16, QI8, QI4)
    const Tensor* head_tensor_ = nullptr;
    LinearHook linear_hook_;
    std::unique_ptr<ggml_compat::Executor> compat_;  // set in Numerics::LlamaCpp mode
    runtime::OwnSequence own_;                       // forward/prefill's sequence, FP32 mode
    std::vector<float> rope_cos_, rope_sin_;         // [pos][rope_dim/2]
    // scratch, sized for a batch
    int batch_cap_ = 0;
    std::vector<float> x_, xb_, xb2_, q_, k_, v_, att_, hb_, hb2_, logits_;
    std::vector<float> paged_x_, paged_logits_;  // paged mode: last token of each step
    void ensure_batch(int n);
    void matmul(float* out, const float* in, const float* w, int n, int in_dim, int out_dim);
    // Dispatches on the weight's type: F32 to the matmul above, others to engine/runtime/qkernels.
    void matmul(float* out, const float* in, const Tensor& w, int n);
    void finish_block(int l, int n);
    void hook(int block, std::string_view kind, const float* in, int n, int in_dim) {
        if (linear_hook_) linear_hook_(block, kind, in, n, in_dim);
    }

public:
    ~LlamaCpu();
};

struct SamplingParams {
    float temperature = 0.0f;  // 0: greedy argmax
    int top_k = 0;             // 0: off
    float top_p = 1.0f;        // 1: off
    uint64_t seed = 42;
};

class Sampler {
public:
    explicit Sampler(const SamplingParams& p);
    int32_t sample(const float* logits, int n);

private:
    SamplingParams p_;
    uint64_t state_;
    std::vector<std::pair<float, int32_t>> buf_;
    float next_uniform();
};

int32_t argmax(const float* v, int n);

}  // namespace edge::runtime
