#include "kv_shape.h"

namespace edge::kv {

Status validate_shape(const KvShape& s) {
    if (s.block_tokens <= 0) return err("KV block size must be at least 1 token (got ", s.block_tokens, ")");
    if (s.block_tokens > 4096) return err("KV block size ", s.block_tokens, " tokens is absurd (at most 4096)");
    if (s.n_layers <= 0 || s.n_layers > 4096) return err("KV layer count ", s.n_layers, " is out of range [1, 4096]");
    if (s.n_kv_heads <= 0 || s.n_kv_heads > 4096)
        return err("KV head count ", s.n_kv_heads, " is out of range [1, 4096]");
    if (s.head_dim <= 0 || s.head_dim > 65536)
        return err("KV head dimension ", s.head_dim, " is out of range [1, 65536]");
    if (s.block_bytes() > kMaxTierBytes)
        return err("one KV block of ", s.block_tokens, " tokens would take ", s.block_bytes(), " bytes: absurd");
    return {};
}

Status validate_budget(const KvShape& s, int64_t blocks, const char* what) {
    EDGE_TRY(validate_shape(s));
    if (blocks <= 0) return err(what, " budget must be at least one block (got ", blocks, ")");
    if (blocks > kMaxTierBlocks)
        return err(what, " budget of ", blocks, " blocks is absurd (at most ", kMaxTierBlocks, ")");
    if (uint64_t(blocks) * s.block_bytes() > kMaxTierBytes)
        return err(what, " budget of ", blocks, " blocks x ", s.block_bytes(), " bytes exceeds 1 TiB: absurd");
    return {};
}

}  // namespace edge::kv
