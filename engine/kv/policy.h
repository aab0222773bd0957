// Device-tier eviction (and prefetch) policies for the tiered KV cache. The simulator (and later
// the scheduler) owns residency; a policy only orders the resident blocks and says where an
// evicted block goes. Blocks are named by a 64-bit key (the trace's block id).
//
// References are counted per request turn ("correlated reference period", O'Neil et al. LRU-K):
// a decode step re-reads every block of its sequence, so counting each step as a new reference
// would make every block look "frequent" after two tokens. on_hit/on_insert carry the turn; a
// policy that counts frequency counts at most one reference per block per turn.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace edge::kv {

using BlockKey = uint64_t;

enum class Placement { Host, Drop };  // an evicted block is compressed to the host tier, or dropped

struct Access {
    BlockKey key;
    uint32_t turn;  // request turn reading it
    uint64_t now;   // trace step
};

class EvictionPolicy {
public:
    virtual ~EvictionPolicy() = default;
    virtual std::string name() const = 0;
    // A block that is not resident is needed now (called before room is made for it).
    virtual void on_miss(const Access&) {}
    // A block became resident (after a miss, a fetch, a fresh compute, or a prefetch).
    virtual void on_insert(const Access& a, bool prefetched) = 0;
    // A resident block was read.
    virtual void on_hit(const Access& a) = 0;
    // The resident block to evict next; blocks for which pinned() is true must not be chosen.
    virtual std::optional<BlockKey> victim(const std::function<bool(BlockKey)>& pinned) = 0;
    // The block left the device tier (evicted, or freed: then forget its history too).
    virtual void on_remove(BlockKey key, bool freed) = 0;
    // Where an evicted block goes. Default: the compressed host tier.
    virtual Placement placement(BlockKey) const { return Placement::Host; }
    // After a trace step: blocks worth bringing in before the next one. Default: none.
    virtual void prefetch(std::span<const BlockKey> /*step*/, uint64_t /*now*/,
                          const std::function<bool(BlockKey)>& /*resident*/, std::vector<BlockKey>& /*out*/) {}
};

std::unique_ptr<EvictionPolicy> make_lru();
std::unique_ptr<EvictionPolicy> make_lru_k(int k);  // k >= 1; LRU-2 is the usual one
std::unique_ptr<EvictionPolicy> make_arc(int64_t capacity_blocks);

struct LocalityOptions {
    double alpha = 0.95;          // EWMA decay per turn: hot = alpha * hot + (1 - alpha) * referenced
    int window = 2;               // neighbours on each side of a hot block
    double hot_threshold = 0.08;  // prefetch neighbours of blocks at least this hot
    double drop_threshold = 0.0;  // evicted blocks colder than this are dropped (recompute), not kept
    int max_prefetch = 16;        // blocks per step at most
};
std::unique_ptr<EvictionPolicy> make_locality(const LocalityOptions& o = {});

// By name: "lru", "lru2" (or "lru-k"), "arc", "locality". Error for an unknown name.
Result<std::unique_ptr<EvictionPolicy>> make_policy(const std::string& name, int64_t capacity_blocks);
// The four names in table order.
std::vector<std::string> policy_names();

}  // namespace edge::kv
