// KV memory accounting on synthetic workloads: paged vs contiguous max-length allocation on a
// mixed-length workload, and the memory prefix sharing saves when requests share a system prompt.
#pragma once
#include <cstdint>

#include "engine/core/result.h"
#include "engine/kv/kv_shape.h"

namespace edge::kv {

struct MixedWorkload {
    int requests = 256;   // requests served in total
    int concurrent = 32;  // running at once (a finished one is replaced by the next)
    int prompt_min = 16, prompt_max = 1024;
    int output_min = 16, output_max = 512;
    uint64_t seed = 1;
};

struct WasteReport {
    // waste = share of allocated KV bytes not holding a token, integrated over every decode step
    double paged_waste = 0;
    double contiguous_waste = 0;  // each request reserves prompt_max + output_max tokens
    int64_t paged_peak_bytes = 0;
    int64_t contiguous_peak_bytes = 0;
    int64_t steps = 0;
};

// Runs the workload through a PagedKv (bookkeeping only) and through the contiguous scheme.
Result<WasteReport> measure_waste(const KvShape& shape, const MixedWorkload& w);

struct SharingReport {
    int64_t blocks_unshared = 0;  // every request stores its own copy of the system prompt
    int64_t blocks_shared = 0;    // requests attach the cached system-prompt blocks
    double saving() const { return blocks_unshared ? 1.0 - double(blocks_shared) / double(blocks_unshared) : 0.0; }
};

// `requests` sequences, each the same system prompt of `system_tokens` then `user_tokens` of its own.
Result<SharingReport> measure_prefix_sharing(const KvShape& shape, int requests, int system_tokens, int user_tokens,
                                             uint64_t seed);

}  // namespace edge::kv
