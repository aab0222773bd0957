// Trace-driven simulation of the two-tier KV cache: a device tier of device_blocks blocks, a
// compressed host tier of host_blocks blocks, and an eviction policy deciding what leaves the
// device and whether it is kept (host) or dropped (recomputed when needed again).
//
// Per trace step (one request turn reading its blocks `repeat` times):
//   - resident on the device: a hit (repeat hits);
//   - on the host: fetched (decompress, bytes moved), then repeat - 1 hits;
//   - dropped earlier: recomputed, then repeat - 1 hits;
//   - never seen: computed for the first time (compulsory; not part of the hit rate).
// Hit rate = hits / (hits + misses) over the blocks decode steps need, compulsory excluded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/kv/kv_shape.h"
#include "engine/kv/policy.h"
#include "engine/kv/trace.h"

namespace edge::kv {

struct SimConfig {
    int64_t device_blocks = 0;
    int64_t host_blocks = 0;        // 0: no host tier (evicted blocks are dropped)
    uint64_t block_bytes = 0;       // uncompressed (device) block size
    uint64_t host_block_bytes = 0;  // compressed size of a block on the host (what crosses the link)
};

struct SimMetrics {
    std::string trace, policy;
    int64_t device_blocks = 0;
    int64_t hits = 0, misses = 0, compulsory = 0;
    int64_t host_fetches = 0, recomputes = 0;
    int64_t evictions = 0, drops = 0;  // drops: evicted without a host copy, or pushed off the host
    int64_t prefetches = 0, prefetch_used = 0;
    uint64_t bytes_moved = 0;  // device<->host, compressed bytes, prefetch included
    double hit_rate() const { return hits + misses ? double(hits) / double(hits + misses) : 1.0; }
    double prefetch_accuracy() const { return prefetches ? double(prefetch_used) / double(prefetches) : 0.0; }
};

Result<SimMetrics> simulate(const Trace& t, EvictionPolicy& policy, const SimConfig& cfg);

// The tier sizes the table uses for a trace: device = max(1.25 x the largest step + 1,
// device_fraction x the distinct blocks), host = 1/2 of the distinct blocks.
SimConfig default_sim_config(const Trace& t, uint64_t block_bytes, uint64_t host_block_bytes,
                             double device_fraction = 0.25);

// Every policy (policy_names()) on every trace with default_sim_config.
Result<std::vector<SimMetrics>> policy_table(const std::vector<Trace>& traces, uint64_t block_bytes,
                                             uint64_t host_block_bytes, double device_fraction = 0.25);
// Markdown table: trace, policy, device blocks, hit rate, misses, evictions, recomputes,
// bytes moved, prefetch accuracy.
std::string format_policy_table(const std::vector<SimMetrics>& rows);

}  // namespace edge::kv
