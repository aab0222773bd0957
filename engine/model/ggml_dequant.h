// Dequantization of ggml tensor blocks (the layouts GGUF files store) to float32.
//
// Block layouts (all little-endian; f16 = IEEE half; 32-element blocks for the *_0/*_1 types,
// 256-element super-blocks for the K types) are described next to each struct in
// ggml_dequant.cpp, where their sizes are pinned with static_assert.
#pragma once
#include <cstddef>
#include <cstdint>

#include "engine/core/result.h"
#include "engine/core/tensor.h"

namespace edge::model {

// True for the types dequantize() handles: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K.
bool can_dequantize(DType t);

// Converts n elements of type t starting at src (dtype_bytes(t, n) bytes) to float32 in dst.
// n must be a multiple of dtype_block_elems(t). Returns an error for unsupported types or a
// bad n; never reads past src + dtype_bytes(t, n).
Status dequantize(DType t, const void* src, float* dst, int64_t n);

}  // namespace edge::model
