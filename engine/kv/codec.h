// Compression of cold KV blocks for the host tier.
//   Lz4          lossless: the float32 bytes through LZ4
//   Int8Lz4      INT8 with one scale per (slab, head) (slab = one layer's K or V), then LZ4
//   Int8DeltaLz4 INT8 as above, then each int8 replaced by its difference (mod 256, so exactly
//                invertible) with the same (head, dim) element of the previous token, then LZ4
// Input layout: [slab][token][head][head_dim] float32, which is one PagedKv block when
// slabs = 2 * n_layers and tokens = block_tokens. INT8 error per element <= scale / 2, with
// scale = max|x| / 127 over the (slab, head).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace edge::kv {

enum class Codec : uint8_t { Lz4 = 1, Int8Lz4 = 2, Int8DeltaLz4 = 3 };
std::string codec_name(Codec c);

struct SlabShape {
    int slabs = 0;
    int tokens = 0;
    int heads = 0;
    int head_dim = 0;
    size_t floats() const { return size_t(slabs) * size_t(tokens) * size_t(heads) * size_t(head_dim); }
};

// Stream header, little-endian, followed by the LZ4 payload.
#pragma pack(push, 1)
struct CodecHeader {
    uint32_t magic;    // kCodecMagic
    uint16_t version;  // kCodecVersion
    uint8_t codec;     // Codec
    uint8_t reserved;
    uint32_t slabs, tokens, heads, head_dim;
    uint32_t raw_bytes;      // payload before LZ4
    uint32_t payload_bytes;  // LZ4 bytes after the header
};
#pragma pack(pop)
static_assert(sizeof(CodecHeader) == 32, "the KV codec header is pinned at 32 bytes");
inline constexpr uint32_t kCodecMagic = 0x43564b45;  // "EKVC"
inline constexpr uint16_t kCodecVersion = 1;

Status validate_slab_shape(const SlabShape& s);
Result<std::vector<uint8_t>> compress(const float* x, const SlabShape& s, Codec c);
// Decodes into out (s.floats() floats); the stream must describe exactly shape s.
Status decompress(std::span<const uint8_t> in, const SlabShape& s, float* out);

}  // namespace edge::kv
