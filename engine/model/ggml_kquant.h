// Quantizers to ggml's Q4_K and Q6_K super-blocks (256 elements; the byte layouts are described
// beside their structs in ggml_dequant.cpp), so that EdgeStudio can write K-quant GGUF files of
// its own: `synth --type q4_k_m` for the K-quant kernels' tests and benches.
//
// The rule is a plain one, not llama.cpp's search for the best scale (make_qkx2_quants):
//   Q4_K  per sub-block of 32: min mn = min(0, min x), scale s = (max x - mn) / 15; the eight
//         scales and the eight -mn are quantized to six bits against d = max s / 63 and
//         dmin = max(-mn) / 63 (both stored as half), then q = round((x + dmin·m) / (d·sc)),
//         clamped to 0..15.
//   Q6_K  per sub-block of 16: s = max|x| / 31; the sixteen scales are quantized to int8
//         against d = max|s| / 127 (half), then q = round(x / (d·sc)) clamped to -32..31, stored
//         as q + 32.
// The blocks are valid ggml blocks that dequantize() reads back within half a step per element.
#pragma once
#include <cstdint>

namespace edge::model {

inline constexpr int kGgmlSuperBlock = 256;
inline constexpr int kQ4KBytes = 144, kQ6KBytes = 210;

// n (a multiple of 256) values into n / 256 blocks at out.
void quantize_row_q4_k(const float* x, int64_t n, uint8_t* out);
void quantize_row_q6_k(const float* x, int64_t n, uint8_t* out);

}  // namespace edge::model
