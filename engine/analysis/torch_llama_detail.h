// Private to engine/analysis (DESIGN.md: LibTorch stays inside the analysis modules; no torch
// header outside them): what the Llama analysis path's two LibTorch translation units share.
// torch_llama.cpp holds the whole-model forward, the trainer, gradients, logits and the
// whole-model curvature reference; torch_llama_streamed.cpp the block-by-block curvature.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/analysis/torch_llama.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

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
