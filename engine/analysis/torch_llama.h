// A differentiable Llama forward built from an IR Model with LibTorch (autograd), and a small
// trainer that updates the IR weights in place. Plain C++ interface: LibTorch stays inside
// torch_llama.cpp (DESIGN.md: no torch header in any interface).
//
// The forward follows build_llama_graph() and the IR conventions in ir.h exactly: RMSNorm
// (x * 1/sqrt(mean(x^2) + eps) * w), interleaved-pair RoPE on the first rope_dim dimensions of
// every head (pair i = dims (2i, 2i+1), angle pos * theta^(-2i/rope_dim)), GQA attention with a
// causal mask (query head h reads KV head h / (n_heads / n_kv_heads)), SwiGLU FFN
// (down(silu(gate x) * up x)), final RMSNorm and the output head (token_embd when tied).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::analysis {

struct TrainOptions {
    int steps = 200;        // optimizer steps; <= 0: bounded by `seconds` only
    double seconds = 0.0;   // wall-clock bound; <= 0: none. With both, whichever ends first
                            // (a step bound alone is deterministic; a time bound is not)
    float lr = 3e-3f;       // peak learning rate (linear warm-up, cosine decay to lr/10)
    int warmup_steps = -1;  // < 0: steps/20
    int batch = 16;         // sequences per step
    int seq_len = 128;      // tokens per sequence (targets are the next tokens)
    uint64_t seed = 1;      // batch sampling
    float weight_decay = 0.0f;
    float grad_clip = 1.0f;  // global gradient-norm clip; <= 0: off
    int threads = 0;         // LibTorch intra-op threads; <= 0: leave LibTorch's default
    // Optional 0/1 masks by tensor name (same element count): multiplied into those weights
    // before the first step and after every step, so masked weights stay zero (structured
    // pruning: engine/analysis/prune_finetune.h).
    const std::map<std::string, std::vector<float>>* masks = nullptr;
};

struct TrainReport {
    int steps = 0;
    double seconds = 0.0;
    double first_loss = 0.0;  // mean cross-entropy (nats/token) of the first step
    double last_loss = 0.0;   // mean over the last min(10, steps) steps
    int64_t tokens = 0;       // target tokens seen
};

// Trains every F32 weight of a llama Model in place with AdamW on next-token cross-entropy.
// Each batch row is a window of seq_len+1 tokens from a randomly chosen sequence (from its start
// or, for longer sequences, at a random offset); shorter sequences are padded and the padding
// is not scored. The updated weights get fresh owned buffers, so a mapped file or another Model
// sharing the buffers is never written. Cancellation via progress returns an error and leaves
// the model unchanged.
Status train_llama(model::Model& m, const std::vector<std::vector<int32_t>>& sequences, const TrainOptions& opts,
                   Progress* progress = nullptr, TrainReport* report = nullptr);

// Mean gradient of the next-token cross-entropy w.r.t. every F32 weight tensor of a llama Model,
// by tensor name, over `batches` batches of `batch` windows of seq_len+1 tokens sampled as
// train_llama samples them (seeded). Taylor importance for structured pruning.
Result<std::map<std::string, std::vector<float>>> torch_llama_gradients(
    const model::Model& m, const std::vector<std::vector<int32_t>>& sequences, int batches, int batch, int seq_len,
    uint64_t seed = 1);

// Logits of every position of `tokens` (positions 0..n-1), row-major [n][vocab], computed by the
// LibTorch forward in FP32 — for cross-checking the runtime's executors.
Result<std::vector<float>> torch_logits(const model::Model& m, const std::vector<int32_t>& tokens);

// Mean next-token cross-entropy (nats) of the sequences under the LibTorch forward (every token
// after the first is scored). Sequences longer than the model context are cut.
Result<double> torch_mean_nll(const model::Model& m, const std::vector<std::vector<int32_t>>& sequences);

// --- Curvature and gradient statistics per layer (sensitivity analysis, docs/analysis.md) -------

struct CurvatureOptions {
    int topk = 5;                     // eigenvalues per layer (largest |lambda| first)
    int lanczos_steps = 30;           // Lanczos iterations (Hessian-vector products) per layer, >= topk
    int hessian_sequences = 8;        // the Hessian batch: the first N sequences, cut to seq_len+1 tokens
    int batches = 8;                  // T batches for the gradient-norm statistics
    int batch_size = 4;               // windows per gradient batch
    int seq_len = 64;                 // tokens per window (targets are the next tokens)
    uint64_t seed = 1;                // gradient-batch sampling and the Lanczos start vectors
    int threads = 0;                  // LibTorch intra-op threads; <= 0: leave LibTorch's default
    std::vector<std::string> layers;  // canonical layer names (blk.0.attn_q); empty: every layer
    // The whole model as LibTorch leaves in one graph (every weight copied as F32): the oracle the
    // block-by-block pass is tested against. Off: one block's weights alive at a time.
    bool whole_model_reference = false;
};

struct LayerCurvature {
    std::string layer;   // blk.0.attn_q
    std::string tensor;  // blk.0.attn_q.weight
    int64_t params = 0;
    std::vector<double> eigenvalues;  // top min(topk, params) by |lambda|, sorted by decreasing |lambda|
    std::vector<double> grad_norms;   // ||dL/dW||_2 on each of the T batches
};

// Per layer: top eigenvalues of the Hessian of the mean next-token cross-entropy on the Hessian
// batch w.r.t. that layer's weights (Lanczos with full reorthogonalisation on Hessian-vector
// products; the Hessian is never formed), and the gradient norm on each of the T batches.
// Block by block (unless whole_model_reference): the final norm and head held as F32, one decoder
// block's weights read (from the file, when opened lazily) when its turn comes; gradients from a
// reverse pass over the blocks from the saved block inputs, Hessian-vector products by a forward
// sweep of tangents and a reverse sweep of gradient derivatives (forward-over-reverse). A memory
// preflight stops with the figures first. Deterministic for fixed options. Cancellation via
// progress returns an error.
Result<std::vector<LayerCurvature>> torch_layer_curvature(const model::Model& m,
                                                          const std::vector<std::vector<int32_t>>& sequences,
                                                          const CurvatureOptions& opts, Progress* progress = nullptr);

// Reference for tests: the Hessian of the same loss on the same Hessian batch w.r.t. one layer,
// formed explicitly with autograd (one backward pass per row), row-major params x params.
// Refused above 8192 parameters.
Result<std::vector<double>> torch_layer_hessian(const model::Model& m,
                                                const std::vector<std::vector<int32_t>>& sequences,
                                                const CurvatureOptions& opts, const std::string& layer);

// Eigenvalues of a symmetric n x n matrix (row-major), ascending (LibTorch eigvalsh, float64).
Result<std::vector<double>> symmetric_eigenvalues(const std::vector<double>& a, int64_t n);

}  // namespace edge::analysis
