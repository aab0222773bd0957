// ggml's Q8_0 and Q4_0 blocks and the rounding rules llama.cpp's quantizer uses to make them
// (ggml-quants.c quantize_row_q8_0_ref / quantize_row_q4_0_ref, written out here from their
// published definitions). EdgeStudio's QI8/QI4 tensors with symmetric groups of 32 and half scales
// hold the same numbers in a different arrangement (codes and scales in separate sections), so a
// layer quantized with these rules exports to GGUF byte for byte (docs/quant-formats.md).
//
//   Q8_0  d = max|x| / 127; q = roundf(x * (1/d))  (half away from zero; 1/d of the float d)
//         block: f16 d, then 32 int8 codes;              value = d * q
//   Q4_0  m = the element of largest |x| (the first such, with its sign); d = m / -8;
//         u = min(15, (int8)(x * (1/d) + 8.5))  (truncation toward zero)
//         block: f16 d, then 16 bytes: element j in the low nibble of byte j, j + 16 in the high;
//         value = d * (u - 8)
// A block of zeros gets d = 0 and codes 0 (Q8_0) or 8 (Q4_0).
// Header-only: rtn.cpp is also compiled alone into the GPU check and the aarch64 kernel tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/core/half.h"

namespace edge {

inline constexpr int kGgmlBlock = 32;        // elements per Q8_0 / Q4_0 block
inline constexpr size_t kQ80Bytes = 2 + 32;  // f16 scale + 32 int8
inline constexpr size_t kQ40Bytes = 2 + 16;  // f16 scale + 16 bytes of nibbles

// The scale (as float: the float d before it is stored as half) and codes of one block of 32
// values. q8: codes[i] in -127..127. q4: codes[i] in 0..15 (element order, not packed).
// ggml_q*_block: whole blocks as ggml stores them, from 32 values.

inline float ggml_q8_0_codes(const float* x, int8_t codes[kGgmlBlock]) {
    float amax = 0.0f;
    for (int j = 0; j < kGgmlBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kGgmlBlock; ++j) codes[j] = int8_t(std::round(x[j] * id));
    return d;
}

inline float ggml_q4_0_codes(const float* x, uint8_t codes[kGgmlBlock]) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kGgmlBlock; ++j)
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kGgmlBlock; ++j) codes[j] = uint8_t(std::min(15, int(int8_t(x[j] * id + 8.5f))));
    return d;
}

inline void ggml_q8_0_block(const float* x, uint8_t out[kQ80Bytes]) {
    int8_t q[kGgmlBlock];
    const uint16_t d = f32_to_f16(ggml_q8_0_codes(x, q));
    std::memcpy(out, &d, 2);
    std::memcpy(out + 2, q, kGgmlBlock);
}

inline void ggml_q4_0_block(const float* x, uint8_t out[kQ40Bytes]) {
    uint8_t q[kGgmlBlock];
    const uint16_t d = f32_to_f16(ggml_q4_0_codes(x, q));
    std::memcpy(out, &d, 2);
    for (int j = 0; j < kGgmlBlock / 2; ++j) out[2 + j] = uint8_t(q[j] | (q[j + kGgmlBlock / 2] << 4));
}

}  // namespace edge
