// Internal to engine/runtime/qkernels*.cpp: the per-row dot products of each kernel family.
#pragma once
#include <cstdint>

#include "engine/core/quant_format.h"

namespace edge::qkernels::detail {

// One token's quantized activations (blocks of 32).
struct ActsView {
    const int8_t* q;
    const float* scale;
    const int32_t* sum;
    int64_t blocks;
};

// Σ_i W[r][i]·x[i] for a row-mode QI8/QI4 tensor whose groups are whole 32-blocks.
float row_dot_q8_portable(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float row_dot_q4_portable(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float dot_f16_portable(const uint16_t* w, const float* x, int64_t n);
float dot_bf16_portable(const uint16_t* w, const float* x, int64_t n);
void quantize_block_portable(const float* x, int64_t n, int8_t* q, float* scale, int32_t* sum);

#if defined(__x86_64__)
float row_dot_q8_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float row_dot_q4_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float dot_f16_avx2(const uint16_t* w, const float* x, int64_t n);
#endif

// Blocks of 32 that make up group g's share of a row: the group of block b.
inline int64_t block_group(const QuantInfo& q, int64_t b) {
    return q.grouping == QGrouping::PerChannel ? 0 : (b * kQBlock) / q.group_size;
}

}  // namespace edge::qkernels::detail
