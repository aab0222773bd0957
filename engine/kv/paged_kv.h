// Paged KV storage: a fixed pool of blocks (the device-tier budget), a free-list allocator,
// a block table per sequence, content-hash prefix sharing with reference counts, and
// copy-on-write when a sequence appends into a block it shares.
//
// As in llama.cpp's memory interface, exactly one method mutates: apply(op). Everything else
// reads. apply() is all-or-nothing: on error (unknown sequence, budget exhausted, ...) the cache
// is unchanged.
#pragma once
#include <cstdint>
#include <span>
#include <unordered_map>
#include <variant>
#include <vector>

#include "engine/core/result.h"
#include "engine/kv/kv_shape.h"

namespace edge::kv {

using SeqId = int32_t;
using BlockId = int32_t;

struct KvConfig {
    KvShape shape;
    int64_t budget_blocks = 0;   // blocks in the pool
    bool store_data = true;      // false: bookkeeping only (simulation, waste measurement)
    bool prefix_sharing = true;  // false: no hash index, every sequence keeps its own blocks
};

namespace op {
// Appends tokens to a sequence (created if new). k and v hold the new rows as
// [token][layer][kv_dim] floats, or are null (rows left as they are; bookkeeping only).
struct Append {
    SeqId seq;
    std::span<const int32_t> tokens;
    const float* k = nullptr;
    const float* v = nullptr;
    // The rows are not exact (restored from a lossy tier): the sequence's blocks are never shared
    // or indexed from now on, so no other sequence attaches to approximate K/V. Sticky.
    bool no_share = false;
};
// Writes the K and V rows of tokens pos..pos+n-1 of one layer of a sequence (rows [n][kv_dim])
// through its block table; the tokens must already be appended. The executor appends a batch's
// tokens first (bookkeeping) and fills their rows layer by layer as it computes them.
struct Write {
    SeqId seq;
    int layer = 0;
    int pos = 0;
    int n = 0;
    const float* k = nullptr;
    const float* v = nullptr;
};
// Starts a new (or empty) sequence by sharing the longest run of cached FULL blocks whose tokens
// (and every token before them) equal the prefix of `tokens`. Allocates nothing. The caller then
// appends the rest (applied.tokens_shared tells where to start).
struct AttachPrefix {
    SeqId seq;
    std::span<const int32_t> tokens;
};
// dst becomes a copy of src sharing every block, the partial last one included.
struct Fork {
    SeqId src;
    SeqId dst;
};
// Releases a sequence; blocks whose count drops to zero return to the free list.
struct Remove {
    SeqId seq;
};
// Keeps the first `len` tokens of a sequence and forgets the rest (llama.cpp's seq_rm from len):
// blocks past them are released; a last block left partial stops being indexed for sharing, and
// one that other sequences still share is copied first (copy-on-write), so theirs is untouched.
// A later Append continues at position len. What a single-sequence caller does to reuse the
// prompt prefix a new request has in common with the previous one.
struct Truncate {
    SeqId seq;
    int len = 0;
};
}  // namespace op

using KvOp = std::variant<op::Append, op::AttachPrefix, op::Fork, op::Remove, op::Write, op::Truncate>;

// What one apply() did.
struct KvApplied {
    int tokens_shared = 0;     // AttachPrefix: tokens now served by shared blocks
    int blocks_allocated = 0;  // taken from the free list (COW copies included)
    int blocks_freed = 0;      // returned to the free list
    int cow_copies = 0;        // shared partial blocks copied before a write
    int dedup_hits = 0;        // blocks that filled up and were found identical to a cached one
};

struct KvUsage {
    int64_t blocks_total = 0;
    int64_t blocks_used = 0;
    int64_t tokens_held = 0;     // filled token slots in used blocks (a shared block counts once)
    int64_t tokens_logical = 0;  // sum of sequence lengths
    size_t block_bytes = 0;
    // share of allocated KV bytes not holding a token
    double waste() const {
        const double token_slots = double(blocks_used) * double(block_tokens);
        return token_slots > 0 ? 1.0 - double(tokens_held) / token_slots : 0.0;
    }
    int block_tokens = 0;
};

class PagedKv {
public:
    static Result<PagedKv> create(const KvConfig& cfg);

    // The only mutating entry point.
    Result<KvApplied> apply(const KvOp& op);

    const KvShape& shape() const { return cfg_.shape; }
    bool has_seq(SeqId s) const { return seqs_.count(s) != 0; }
    int seq_len(SeqId s) const;
    std::span<const BlockId> block_table(SeqId s) const;
    int refcount(BlockId b) const { return blocks_[size_t(b)].ref; }
    int filled(BlockId b) const { return blocks_[size_t(b)].filled; }
    int64_t free_blocks() const { return int64_t(free_.size()); }
    int64_t total_blocks() const { return int64_t(blocks_.size()); }
    // Blocks an Append of n tokens to s would take from the free list (copy-on-write included);
    // what a scheduler plans with before it applies.
    int64_t blocks_needed(SeqId s, int64_t n) const;
    // All slabs of a block, [layer][K|V][token][kv_dim] (shape().block_floats() floats); null when
    // store_data is false. What the host tier compresses.
    const float* block_data(BlockId b) const { return slab(b, 0, 0); }
    // [block_tokens][kv_dim] rows of one layer of a block; null when store_data is false.
    const float* keys(BlockId b, int layer) const { return slab(b, layer, 0); }
    const float* values(BlockId b, int layer) const { return slab(b, layer, 1); }
    // The K (or V) row of token `pos` of a sequence at `layer`, read through the block table.
    const float* key_row(SeqId s, int layer, int pos) const { return row(s, layer, pos, 0); }
    const float* value_row(SeqId s, int layer, int pos) const { return row(s, layer, pos, 1); }
    KvUsage usage() const;
    // Verifies every invariant (reference counts match the block tables, free list holds exactly
    // the unreferenced blocks, hash index points at full live blocks). For tests.
    Status check() const;

private:
    struct Block {
        int ref = 0;
        int filled = 0;
        bool indexed = false;
        uint64_t hash = 0;         // chained content hash, valid once full
        uint64_t parent_hash = 0;  // hash of the block before it (kSeed for the first)
        std::vector<int32_t> tokens;
    };
    struct Seq {
        std::vector<BlockId> table;
        int len = 0;
        bool no_share = false;
    };
    explicit PagedKv(const KvConfig& cfg);
    Result<KvApplied> append(const op::Append& a);
    Result<KvApplied> attach(const op::AttachPrefix& a);
    Result<KvApplied> fork(const op::Fork& f);
    Result<KvApplied> remove(const op::Remove& r);
    Result<KvApplied> write(const op::Write& w);
    Result<KvApplied> truncate(const op::Truncate& t);
    BlockId take();
    BlockId copy_block(BlockId old, int filled);
    void release(BlockId b, KvApplied& out);
    void on_full(Seq& s, size_t idx, KvApplied& out);
    uint64_t parent_hash_of(const Seq& s, size_t idx) const;
    const float* slab(BlockId b, int layer, int kv) const;
    float* slab(BlockId b, int layer, int kv);
    const float* row(SeqId s, int layer, int pos, int kv) const;

    KvConfig cfg_;
    std::vector<Block> blocks_;
    std::vector<BlockId> free_;
    std::vector<float> data_;
    std::unordered_map<SeqId, Seq> seqs_;
    std::unordered_map<uint64_t, BlockId> index_;
};

// The chained content hash of a full block: H(parent_hash, tokens).
uint64_t block_hash(uint64_t parent_hash, std::span<const int32_t> tokens);
inline constexpr uint64_t kHashSeed = 0x9e3779b97f4a7c15ull;

}  // namespace edge::kv
