// One decoder block over calibration sequences, in FP32 activations with the block's weights as
// they are held (F32, or already converted: F16, QI8, QI4 through qkernels::matmul), exactly as
// LlamaCpu::prefill computes it, op for op with the same kernels. The block-streamed quantizers
// (apply_plan's calibrated path, layer-wise GPTQ) carry the hidden states of every calibration
// token from block to block through it instead of running the whole model for every block.
#pragma once
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/model/ir.h"
#include "engine/quant/calib.h"

namespace edge::quant {

struct BlockWeights {
    const float* attn_norm;
    const Tensor *wq, *wk, *wv, *wo;
    const float* ffn_norm;
    const Tensor *w_gate, *w_up, *w_down;
    const float *bq = nullptr, *bk = nullptr, *bv = nullptr;  // Q/K/V biases (Qwen2), else null
};

// Block l's tensors in `m` (every one must be held; norms and biases F32). Errors name the tensor.
Result<BlockWeights> block_weights(const model::Model& m, int l);

// One decoder block over one sequence (n tokens at positions 0..n-1), in place on x [n][dim].
// With `cap`, the inputs of the linears are appended (keys as capture_key: "attn",
// "attn_output", "ffn", "ffn_down").
class BlockRunner {
public:
    BlockRunner(const model::LlamaConfig& c, int max_n, ThreadPool& pool);
    void run(float* x, int n, const BlockWeights& L, BlockInputs* cap);

private:
    const model::LlamaConfig& c_;
    ThreadPool& pool_;
    std::vector<float> cos_, sin_, xb_, xb2_, q_, k_, v_, att_, hb_, hb2_;
};

// The hidden states of every calibration token, [token][dim], sequence after sequence, carried
// from block to block: what the block-streamed quantizers keep between blocks (besides nothing).
struct CalibStates {
    std::vector<int64_t> starts;  // first row of each sequence
    std::vector<int> lengths;
    int longest = 0;
    int64_t total = 0;
    int dim = 0;
    std::vector<float> h;
};
// The states before block 0: the embedding rows of the calibration tokens (out-of-range ids read
// row 0), from `embd` [vocab][dim] in any type the CPU kernels read (qkernels::dequantize_row:
// F32, F16, BF16, QI8, QI4, ggml blocks), so only the rows used are converted.
CalibStates embed_calibration(const CalibSet& calib, const Tensor& embd, const model::LlamaConfig& c);
// Runs block weights `w` over every sequence of `s`: with `cap`, on a copy (the inputs captured,
// the states unchanged); without, in place (the states advance through the block).
void run_block(BlockRunner& runner, CalibStates& s, const BlockWeights& w, BlockInputs* cap);
// After the last block: the states through the final RMSNorm (`norm`, dim floats), in place - the
// output head's inputs, every token, as LlamaCpu's head sees them.
void final_norm(CalibStates& s, const float* norm, float eps);

}  // namespace edge::quant
