// Launchers of the CUDA backend's kernels (cuda_kernels.cu). Plain C++17, no CUDA header: the
// host side of the backend (cuda_backend.cpp) and the standalone GPU check (tests/gpu) include it.
// All pointers are device pointers; `stream` is a cudaStream_t. Each launcher returns the
// cudaError_t of the launch (0 = success) so that the caller can check it with
// EDGE_CUDA_CHECK_LAUNCH (cuda_check.h).
#pragma once
#include <cstddef>
#include <cstdint>

namespace edge::runtime::cuda {

// A weight matrix [rows, cols] as the kernels read it: F32, F16, or EdgeStudio's row-mode QI8 /
// QI4 (engine/core/quant_format.h: codes rows of row_bytes, one scale (float or half) and, when asymmetric,
// one int8 zero per group of group_size along a row; INT4 nibbles in block-local order, byte j
// of a 32-element block = element j (low nibble) and j+16 (high nibble)).
enum WeightType : int { kWF32 = 0, kWF16 = 1, kWQI8 = 2, kWQI4 = 3 };
struct DevWeight {
    int type = kWF32;
    int rows = 0, cols = 0;
    const void* data = nullptr;    // F32/F16 values, or codes
    const void* scales = nullptr;  // [rows][groups_per_row], float, or IEEE half when scales_f16
    int scales_f16 = 0;
    const int8_t* zeros = nullptr;  // [rows][groups_per_row], null when symmetric
    long long row_bytes = 0;        // codes per row (QI8: padded cols, QI4: padded cols / 2)
    int groups_per_row = 0;
    int group_size = 0;
};

using Stream = void*;

int launch_embedding(float* out, const int32_t* tokens, int n, const DevWeight& w, Stream s);
int launch_rmsnorm(float* out, const float* x, const float* w, int rows, int dim, float eps, Stream s);
// In place on q [n][n_heads*head_dim] and k [n][n_kv*head_dim]; cos/sin tables [pos][half].
int launch_rope(float* q, float* k, const float* cos_t, const float* sin_t, int n, int pos, int n_heads, int n_kv,
                int head_dim, int half, Stream s);
// Decode: out[o] = sum_i W[o][i] x[i], dequantizing on the fly (one warp per output row).
int launch_gemv(float* out, const float* x, const DevWeight& w, Stream s);
// Prefill: out[t][o] = sum_i W[o][i] in[t][i] for n tokens; 32x32 tiles in shared memory,
// weights dequantized as the tile is loaded.
int launch_gemm(float* out, const float* in, const DevWeight& w, int n, Stream s);
// Writes k/v rows of n tokens (positions pos..) into the block pools of one layer through the
// block table (backend.h: kKvBlock positions per block, [block][16][kv_dim]).
int launch_kv_append(float* k_pool, float* v_pool, const int32_t* table, const float* k, const float* v, int n, int pos,
                     int kv_dim, Stream s);
// Causal attention for n tokens at positions pos..; scores scratch [n][n_heads][score_stride].
int launch_attention(float* out, const float* q, const float* k_pool, const float* v_pool, const int32_t* table,
                     float* scores, int n, int pos, int n_heads, int n_kv, int head_dim, int score_stride, Stream s);
int launch_swiglu(float* a, const float* b, size_t n, Stream s);               // a = silu(a) * b
int launch_add(float* y, const float* a, const float* b, size_t n, Stream s);  // y = a + b (y may alias)
int launch_argmax(int32_t* out, const float* logits, int n, Stream s);
// Top-k sampling with temperature: the k largest logits (ties: lower index first), softmax of
// logit/temperature over them, the first whose cumulative probability exceeds u in [0, 1).
int launch_topk_sample(int32_t* out, const float* logits, int n, int k, float temperature, float u, Stream s);

const char* error_string(int e);

}  // namespace edge::runtime::cuda
