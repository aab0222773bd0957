// The geometry of a paged KV cache: how many layers, KV heads and head dimensions a block holds,
// and how many tokens fit in one block. One block holds K and V of block_tokens consecutive
// tokens for ALL layers (docs/kv.md explains why), laid out as
//   [layer][K=0 | V=1][token][kv_head][head_dim]   (float32)
#pragma once
#include <cstddef>
#include <cstdint>

#include "engine/core/result.h"

namespace edge::kv {

struct KvShape {
    int n_layers = 0;
    int n_kv_heads = 0;
    int head_dim = 0;
    int block_tokens = 16;

    int kv_dim() const { return n_kv_heads * head_dim; }
    // floats in one (layer, K or V) slab of a block: block_tokens * kv_dim
    size_t slab_floats() const { return size_t(block_tokens) * size_t(kv_dim()); }
    size_t block_floats() const { return size_t(n_layers) * 2 * slab_floats(); }
    size_t block_bytes() const { return block_floats() * sizeof(float); }
    // offset of the (layer, K/V) slab inside a block
    size_t slab_offset(int layer, int kv) const { return (size_t(layer) * 2 + size_t(kv)) * slab_floats(); }
};

// Largest budget accepted for one tier: 1 TiB, and at most 2^30 blocks.
inline constexpr uint64_t kMaxTierBytes = uint64_t(1) << 40;
inline constexpr int64_t kMaxTierBlocks = int64_t(1) << 30;

// Checks the geometry: every count positive, block_tokens in [1, 4096], sizes that do not
// overflow.
Status validate_shape(const KvShape& s);
// Checks a tier budget (in blocks) against the geometry: positive, at most kMaxTierBlocks and
// kMaxTierBytes. `what` names the tier in the message ("device tier").
Status validate_budget(const KvShape& s, int64_t blocks, const char* what);

}  // namespace edge::kv
