// llama.cpp-compatible numerics for GGUF Llama models: a second forward pass that runs the
// arithmetic of ggml's CPU backend (x86 AVX2 build) instead of our FP32 executor, so that a user
// comparing with llama.cpp gets its greedy text token for token.
//
// What it reproduces (docs/quant-formats.md, "llama.cpp numerics"):
// - weights stay in the blocks the GGUF stores; each product meets activations converted to the
//   weight type's vec_dot type: Q8_1 blocks for Q4_1/Q5_1 (d and s = d*sum(q) stored as FP16),
//   Q8_0 blocks for Q8_0/Q4_0/Q5_0 (d FP16), F16 for F16, BF16 for BF16; integer block sums are
//   exact, and the float accumulation follows the AVX2 kernels (8 lanes of 4-element sums, FMA
//   with the product of the scales, horizontal sum at the end);
// - token_embd rows dequantized (get_rows); RMSNorm with a double sum of squares;
// - RoPE with theta advanced by repeated float multiplication, rotation contracted to FMA;
// - K/V cache in F16; flash attention as ggml_compute_forward_flash_attn_ext_f16: Q rounded to
//   F16, online softmax with expf, the V accumulator held in F16;
// - SwiGLU through ggml's vectorised expf (ggml_v_expf, AVX2) for 8-wide chunks;
// - optionally, the split-KV decode that recent ggml-cpu runs over long KV views.
// Each ingredient can be switched off (Ingredients) to measure what it moves. Not covered:
// the tiled flash attention recent ggml-cpu runs for batches of >= 64 queries (long prompts,
// perplexity windows), ARM/AVX-512 lane orders, repacked (Q4_0 8x8) weights.
//
// No Qt, no LibTorch. Single sequence, contiguous F16 cache.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/core/thread_pool.h"
#include "engine/model/ir.h"

namespace edge::runtime {

// Which arithmetic the CPU executor runs.
enum class Numerics : uint8_t {
    Fp32,      // default: weights dequantized to FP32, FP32 activations and KV cache
    LlamaCpp,  // llama.cpp's CPU arithmetic (GGUF models whose tensors are as the file stores them)
};
const char* numerics_name(Numerics n);
// "fp32" or "llamacpp"; anything else is an error naming the accepted values.
Result<Numerics> parse_numerics(std::string_view s);

namespace ggml_compat {

// The ingredients of llama.cpp's CPU arithmetic; all on = llama.cpp.
struct Ingredients {
    // Activations converted to the weight's vec_dot type (Q8_1 / Q8_0 blocks, F16, BF16) and
    // multiplied with the stored blocks; off: dequantized weights times FP32 activations.
    bool quantized_activations = true;
    // Q8_0/Q8_1 activation scale d (and Q8_1's s) rounded to FP16 as block_q8_x stores them.
    bool fp16_act_scales = true;
    // The AVX2 kernels' accumulation: 8 float lanes of 4-element integer sums, FMA with the scale
    // product, ggml's horizontal sum; off: the generic C kernels' per-block float sum.
    bool simd_lanes = true;
    // K and V stored in F16 (ggml's default cache type); off: FP32.
    bool f16_kv = true;
    // ggml's CPU flash attention (online softmax, V accumulated in F16); off: softmax in float,
    // probabilities rounded to F16 for the V product (ggml's non-flash path).
    bool flash_attn = true;
    // SiLU through ggml_v_expf for 8-wide chunks (AVX2 + FMA); off: libm expf everywhere.
    bool vec_expf = true;
    // a*b+c in one expression contracted to FMA, as GCC/Clang compile ggml-cpu with -march=native
    // (RoPE rotation, Q4_1 min term, flash-attention mad and running sum).
    bool fma_contract = true;
    // RoPE angles advanced by theta *= theta_scale in float (ggml_rope_cache_init); off:
    // pos * powf(base, -2i/n) per pair.
    bool rope_iterative = true;
    // Split-KV decode of recent ggml-cpu: a one-token step whose KV view holds >= 512 cells cuts
    // the view into one chunk per thread (ceil(view / threads) cells), each with its own F16
    // accumulator, merged in float. llama.cpp's thread count (-t); 0 = never split.
    int split_kv_threads = 0;
    // The KV view llama.cpp attends over: the sequence rounded up to this many cells (at least
    // this many; llama.cpp's cache is assumed at least that large). Only the split decision and
    // the chunk size depend on it.
    int kv_view_pad = 256;
};

class Executor {
public:
    // Re-opens model.source_path (a GGUF file) for the stored blocks. Errors: not a GGUF model,
    // tensors changed since import (types or shapes differ from the file), or a tensor type the
    // compatible kernels do not cover (K-quants), each naming the file and the tensor.
    static Result<std::unique_ptr<Executor>> create(const model::Model& model, int max_seq,
                                                    const Ingredients& ing = {});
    ~Executor();

    // Runs n tokens at positions pos..pos+n-1 (one ubatch); returns the logits of the last token
    // (valid until the next call) and, when all_logits is not null, fills n*vocab logits.
    const float* prefill(const int32_t* tokens, int n, int pos, float* all_logits, ThreadPool& pool);
    size_t kv_cache_bytes() const;

    struct Impl;

private:
    explicit Executor(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ggml_compat
}  // namespace edge::runtime
