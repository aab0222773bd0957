// Causal attention of a batch step's tokens over their sequences' paged K/V: the one loop both CPU
// executors run (LlamaCpu for model files, CpuBackend for compiled programs).
//
// Per (token, head) the arithmetic is fixed: scores = dot(q, k_p)·scale with kernels::dot's sum
// order, kernels::softmax, then out = Σ_p a_p·v_p added position after position (a multiply, then
// an add). Where the processor has AVX2+FMA and head_dim is a multiple of 8 the work is laid out
// for speed without changing a bit of it:
//   keys in lanes  a KV block's keys of one KV head are transposed once (8 keys per vector; 16
//                  with AVX-512) and shared by every query head of the group and every token of a
//                  run of the same sequence (a prefill chunk): a score vector is 8 (16) keys' dot
//                  products, computed with the dot kernel's partial sums lane by lane, no
//                  horizontal sum per key. With AVX-512 up to four heads share each key vector.
//   values         the output of a (token, head) stays in registers over all positions instead of
//                  being loaded and stored once per position (with AVX-512, up to four heads of a
//                  token share each loaded value vector).
// Elsewhere (no AVX2, other head sizes) it runs kernels::dot_rows / axpy_rows per (token, head).
#pragma once
#include <cstdint>

#include "engine/core/thread_pool.h"

namespace edge::runtime::kernels {

struct AttentionShape {
    int n_heads = 0, n_kv_heads = 0, head_dim = 0;
    int block_tokens = 0;      // positions per KV block
    int64_t kv_width = 0;      // floats per K or V row (all KV heads)
    int64_t score_stride = 0;  // floats per (token, head) row of the scores scratch
    float scale = 1.0f;        // applied to each dot product (1/sqrt(head_dim))
};

// Where token t's sequence keeps block `block` of this layer's keys (values = false) or values:
// its first row (block_tokens rows of kv_width floats follow).
struct KvBlocks {
    const void* ctx = nullptr;
    const float* (*rows)(const void* ctx, int t, int block, bool values) = nullptr;
};

// out[t·QD + h·HD + i] for n tokens (QD = n_heads·head_dim), token t attending to positions
// 0..pos[t] of its sequence seq[t] (tokens of one sequence are consecutive; their keys' repacking is
// shared). q: n × QD; scores: scratch of n × n_heads × score_stride floats.
void causal_attention(float* out, const float* q, int n, const int* pos, const int* seq, const AttentionShape& s,
                      const KvBlocks& kv, float* scores, ThreadPool& pool);

// Tests: the per-(token, head) loop (kernels::dot_rows, softmax, axpy_rows) whatever the processor.
void causal_attention_rows(float* out, const float* q, int n, const int* pos, const AttentionShape& s,
                           const KvBlocks& kv, float* scores, ThreadPool& pool);

}  // namespace edge::runtime::kernels
