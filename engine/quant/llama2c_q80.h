// Reader of llama2.c "version 2" (Q8_0) exports, as written by llama2.c's export.py:
//   256-byte header (Llama2cV2Header below, zero padded), then the RMSNorm weights in float32
//   (attention norms of every layer, FFN norms of every layer, the final norm), then each weight
//   matrix as int8 codes followed by its float32 group scales, in the order
//   token embedding, wq x L, wk x L, wv x L, wo x L, w1 x L, w2 x L, w3 x L, [classifier].
// Groups of group_size run over each flattened matrix (they cross rows), scale = max|w|/127.
// The matrices come back as QI8 tensors with Flat grouping under their canonical names
// (w1 = ffn_gate, w2 = ffn_down, w3 = ffn_up).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/core/tensor.h"
#include "engine/model/ir.h"

namespace edge::quant {

#pragma pack(push, 1)
struct Llama2cV2Header {
    uint32_t magic;   // 0x616b3432, "24ka" on disk
    int32_t version;  // 2
    int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    uint8_t shared_classifier;
    int32_t group_size;
};
#pragma pack(pop)
static_assert(sizeof(Llama2cV2Header) == 41, "llama2.c v2 header fields are packed");
inline constexpr uint32_t kLlama2cMagic = 0x616b3432u;
inline constexpr size_t kLlama2cV2HeaderBytes = 256;

struct Llama2cQ80 {
    Llama2cV2Header header{};
    std::vector<Tensor> norms;    // F32: blk.N.attn_norm.weight, blk.N.ffn_norm.weight, output_norm.weight
    std::vector<Tensor> weights;  // QI8 flat, export order
};

Result<Llama2cQ80> read_llama2c_q80(const std::string& path);

}  // namespace edge::quant
