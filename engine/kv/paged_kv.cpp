#include "paged_kv.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace edge::kv {

namespace {
uint64_t mix64(uint64_t x) {  // splitmix64 finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
int64_t blocks_for(int64_t tokens, int b) { return (tokens + b - 1) / b; }
}  // namespace

uint64_t block_hash(uint64_t parent_hash, std::span<const int32_t> tokens) {
    uint64_t h = mix64(parent_hash ^ 0x6a09e667f3bcc909ull);
    for (int32_t t : tokens) h = mix64(h ^ (uint64_t(uint32_t(t)) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
    return mix64(h ^ tokens.size());
}

PagedKv::PagedKv(const KvConfig& cfg) : cfg_(cfg) {}

Result<PagedKv> PagedKv::create(const KvConfig& cfg) {
    EDGE_TRY(validate_budget(cfg.shape, cfg.budget_blocks, "KV device tier"));
    PagedKv kv(cfg);
    const size_t n = size_t(cfg.budget_blocks);
    kv.blocks_.resize(n);
    for (Block& b : kv.blocks_) b.tokens.assign(size_t(cfg.shape.block_tokens), 0);
    kv.free_.reserve(n);
    for (size_t i = n; i-- > 0;) kv.free_.push_back(BlockId(i));  // block 0 is handed out first
    if (cfg.store_data) kv.data_.assign(n * cfg.shape.block_floats(), 0.0f);
    return kv;
}

Result<KvApplied> PagedKv::apply(const KvOp& o) {
    return std::visit(
        [this](const auto& x) -> Result<KvApplied> {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, op::Append>)
                return append(x);
            else if constexpr (std::is_same_v<T, op::AttachPrefix>)
                return attach(x);
            else if constexpr (std::is_same_v<T, op::Fork>)
                return fork(x);
            else if constexpr (std::is_same_v<T, op::Write>)
                return write(x);
            else if constexpr (std::is_same_v<T, op::Truncate>)
                return truncate(x);
            else
                return remove(x);
        },
        o);
}

int PagedKv::seq_len(SeqId s) const {
    auto it = seqs_.find(s);
    return it == seqs_.end() ? 0 : it->second.len;
}

std::span<const BlockId> PagedKv::block_table(SeqId s) const {
    auto it = seqs_.find(s);
    if (it == seqs_.end()) return {};
    return it->second.table;
}

BlockId PagedKv::take() {
    const BlockId b = free_.back();
    free_.pop_back();
    Block& blk = blocks_[size_t(b)];
    blk.ref = 1;
    blk.filled = 0;
    blk.indexed = false;
    return b;
}

// A private copy of `old` holding its first `filled` tokens (and their K/V when data is stored).
BlockId PagedKv::copy_block(BlockId old, int filled) {
    const BlockId nb = take();
    Block& dst = blocks_[size_t(nb)];
    dst.filled = filled;
    dst.tokens = blocks_[size_t(old)].tokens;
    if (cfg_.store_data) std::memcpy(slab(nb, 0, 0), slab(old, 0, 0), cfg_.shape.block_bytes());
    return nb;
}

void PagedKv::release(BlockId b, KvApplied& out) {
    Block& blk = blocks_[size_t(b)];
    if (--blk.ref > 0) return;
    if (blk.indexed) {
        auto it = index_.find(blk.hash);
        if (it != index_.end() && it->second == b) index_.erase(it);
        blk.indexed = false;
    }
    blk.filled = 0;
    free_.push_back(b);
    ++out.blocks_freed;
}

uint64_t PagedKv::parent_hash_of(const Seq& s, size_t idx) const {
    return idx == 0 ? kHashSeed : blocks_[size_t(s.table[idx - 1])].hash;
}

void PagedKv::on_full(Seq& s, size_t idx, KvApplied& out) {
    const BlockId b = s.table[idx];
    Block& blk = blocks_[size_t(b)];
    blk.parent_hash = parent_hash_of(s, idx);
    blk.hash = block_hash(blk.parent_hash, blk.tokens);
    if (!cfg_.prefix_sharing || s.no_share) return;
    auto it = index_.find(blk.hash);
    if (it == index_.end()) {
        index_.emplace(blk.hash, b);
        blk.indexed = true;
        return;
    }
    const BlockId e = it->second;
    const Block& other = blocks_[size_t(e)];
    if (e == b || other.parent_hash != blk.parent_hash || other.tokens != blk.tokens) return;  // collision: keep own
    // Same tokens after the same prefix: same K and V. Share the cached block, free ours.
    blocks_[size_t(e)].ref++;
    s.table[idx] = e;
    release(b, out);
    ++out.dedup_hits;
}

Result<KvApplied> PagedKv::append(const op::Append& a) {
    if ((a.k == nullptr) != (a.v == nullptr))
        return err("KV append to sequence ", a.seq, ": K given without V or V without K");
    const int B = cfg_.shape.block_tokens;
    auto it = seqs_.find(a.seq);
    const int64_t len = it == seqs_.end() ? 0 : it->second.len;
    const int64_t n = int64_t(a.tokens.size());
    if (len + n > std::numeric_limits<int32_t>::max())
        return err("KV append to sequence ", a.seq, ": length ", len + n, " tokens is absurd");
    const bool partial = len % B != 0;
    const bool cow = partial && blocks_[size_t(it->second.table.back())].ref > 1;
    const int64_t need = blocks_for(len + n, B) - blocks_for(len, B) + (cow && n > 0 ? 1 : 0);
    if (need > int64_t(free_.size()))
        return err("KV budget exhausted: appending ", n, " tokens to sequence ", a.seq, " needs ", need, " blocks, ",
                   free_.size(), " free of ", blocks_.size());
    KvApplied out;
    if (n == 0) {
        seqs_.try_emplace(a.seq);
        return out;
    }
    Seq& s = seqs_[a.seq];
    s.no_share = s.no_share || a.no_share;
    const size_t kvd = size_t(cfg_.shape.kv_dim());
    const bool data = cfg_.store_data && a.k != nullptr;
    if (cow) {  // copy the shared partial block before writing into it
        const BlockId old = s.table.back();
        s.table.back() = copy_block(old, int(s.len % B));
        release(old, out);
        ++out.cow_copies;
        ++out.blocks_allocated;
    }
    for (int64_t i = 0; i < n; ++i) {
        if (s.len % B == 0) {
            s.table.push_back(take());
            ++out.blocks_allocated;
        }
        const size_t idx = s.table.size() - 1;
        const BlockId b = s.table[idx];
        Block& blk = blocks_[size_t(b)];
        const int slot = blk.filled;
        blk.tokens[size_t(slot)] = a.tokens[size_t(i)];
        if (data)
            for (int l = 0; l < cfg_.shape.n_layers; ++l) {
                const size_t src = (size_t(i) * size_t(cfg_.shape.n_layers) + size_t(l)) * kvd;
                std::memcpy(slab(b, l, 0) + size_t(slot) * kvd, a.k + src, kvd * sizeof(float));
                std::memcpy(slab(b, l, 1) + size_t(slot) * kvd, a.v + src, kvd * sizeof(float));
            }
        blk.filled++;
        s.len++;
        if (blk.filled == B) on_full(s, idx, out);
    }
    return out;
}

Result<KvApplied> PagedKv::attach(const op::AttachPrefix& a) {
    auto it = seqs_.find(a.seq);
    if (it != seqs_.end() && it->second.len > 0)
        return err("KV attach-prefix: sequence ", a.seq, " already holds ", it->second.len, " tokens");
    const size_t B = size_t(cfg_.shape.block_tokens);
    Seq& s = seqs_[a.seq];
    KvApplied out;
    uint64_t parent = kHashSeed;
    for (size_t i = 0; (i + 1) * B <= a.tokens.size(); ++i) {
        const auto toks = a.tokens.subspan(i * B, B);
        const uint64_t h = block_hash(parent, toks);
        auto f = index_.find(h);
        if (f == index_.end()) break;
        Block& blk = blocks_[size_t(f->second)];
        if (blk.parent_hash != parent || !std::equal(toks.begin(), toks.end(), blk.tokens.begin())) break;
        blk.ref++;
        s.table.push_back(f->second);
        s.len += int(B);
        parent = h;
    }
    out.tokens_shared = s.len;
    return out;
}

Result<KvApplied> PagedKv::fork(const op::Fork& f) {
    auto src = seqs_.find(f.src);
    if (src == seqs_.end()) return err("KV fork: source sequence ", f.src, " does not exist");
    if (seqs_.count(f.dst)) return err("KV fork: target sequence ", f.dst, " already exists");
    Seq copy = src->second;
    for (BlockId b : copy.table) blocks_[size_t(b)].ref++;
    seqs_.emplace(f.dst, std::move(copy));
    return KvApplied{};
}

Result<KvApplied> PagedKv::remove(const op::Remove& r) {
    auto it = seqs_.find(r.seq);
    if (it == seqs_.end()) return err("KV remove: sequence ", r.seq, " does not exist");
    KvApplied out;
    for (BlockId b : it->second.table) release(b, out);
    seqs_.erase(it);
    return out;
}

Result<KvApplied> PagedKv::truncate(const op::Truncate& t) {
    auto it = seqs_.find(t.seq);
    if (it == seqs_.end()) return err("KV truncate: sequence ", t.seq, " does not exist");
    Seq& s = it->second;
    if (t.len < 0 || t.len > s.len)
        return err("KV truncate: sequence ", t.seq, " holds ", s.len, " tokens, cannot keep ", t.len);
    KvApplied out;
    if (t.len == s.len) return out;
    const int B = cfg_.shape.block_tokens;
    const size_t keep = size_t(blocks_for(t.len, B));
    const int partial = t.len % B;
    if (partial != 0 && blocks_[size_t(s.table[keep - 1])].ref > 1 && free_.empty())
        return err("KV truncate: sequence ", t.seq, " shares its block at token ", t.len,
                   " and no free block is left to copy it into");
    for (size_t i = keep; i < s.table.size(); ++i) release(s.table[i], out);
    s.table.resize(keep);
    s.len = t.len;
    if (partial == 0) return out;
    const BlockId b = s.table.back();
    Block& blk = blocks_[size_t(b)];
    if (blk.ref > 1) {  // shared: our copy keeps the first tokens, the others keep the block
        s.table.back() = copy_block(b, partial);
        release(b, out);
        ++out.cow_copies;
        ++out.blocks_allocated;
        return out;
    }
    if (blk.indexed) {  // no longer full: it cannot serve another sequence's prefix
        auto f = index_.find(blk.hash);
        if (f != index_.end() && f->second == b) index_.erase(f);
        blk.indexed = false;
    }
    blk.filled = partial;
    return out;
}

int64_t PagedKv::blocks_needed(SeqId seq, int64_t n) const {
    const int B = cfg_.shape.block_tokens;
    auto it = seqs_.find(seq);
    const int64_t len = it == seqs_.end() ? 0 : it->second.len;
    const bool cow = len % B != 0 && n > 0 && blocks_[size_t(it->second.table.back())].ref > 1;
    return blocks_for(len + n, B) - blocks_for(len, B) + (cow ? 1 : 0);
}

Result<KvApplied> PagedKv::write(const op::Write& w) {
    auto it = seqs_.find(w.seq);
    if (it == seqs_.end()) return err("KV write: sequence ", w.seq, " does not exist");
    if (data_.empty()) return err("KV write to sequence ", w.seq, ": the cache stores no data (bookkeeping only)");
    if (w.k == nullptr || w.v == nullptr) return err("KV write to sequence ", w.seq, ": K or V rows missing");
    if (w.layer < 0 || w.layer >= cfg_.shape.n_layers)
        return err("KV write to sequence ", w.seq, ": layer ", w.layer, " out of range (", cfg_.shape.n_layers,
                   " layers)");
    if (w.pos < 0 || w.n < 0 || int64_t(w.pos) + w.n > it->second.len)
        return err("KV write to sequence ", w.seq, ": tokens ", w.pos, "..", int64_t(w.pos) + w.n - 1,
                   " are not all appended (length ", it->second.len, ")");
    const int B = cfg_.shape.block_tokens;
    const size_t kvd = size_t(cfg_.shape.kv_dim());
    for (int i = 0; i < w.n; ++i) {
        const int p = w.pos + i;
        const BlockId b = it->second.table[size_t(p / B)];
        std::memcpy(slab(b, w.layer, 0) + size_t(p % B) * kvd, w.k + size_t(i) * kvd, kvd * sizeof(float));
        std::memcpy(slab(b, w.layer, 1) + size_t(p % B) * kvd, w.v + size_t(i) * kvd, kvd * sizeof(float));
    }
    return KvApplied{};
}

const float* PagedKv::slab(BlockId b, int layer, int kv) const {
    if (data_.empty()) return nullptr;
    return data_.data() + size_t(b) * cfg_.shape.block_floats() + cfg_.shape.slab_offset(layer, kv);
}
float* PagedKv::slab(BlockId b, int layer, int kv) {
    return data_.data() + size_t(b) * cfg_.shape.block_floats() + cfg_.shape.slab_offset(layer, kv);
}

const float* PagedKv::row(SeqId s, int layer, int pos, int kv) const {
    auto it = seqs_.find(s);
    if (it == seqs_.end() || pos < 0 || pos >= it->second.len || data_.empty()) return nullptr;
    const int B = cfg_.shape.block_tokens;
    return slab(it->second.table[size_t(pos / B)], layer, kv) + size_t(pos % B) * size_t(cfg_.shape.kv_dim());
}

KvUsage PagedKv::usage() const {
    KvUsage u;
    u.blocks_total = int64_t(blocks_.size());
    u.blocks_used = u.blocks_total - int64_t(free_.size());
    u.block_bytes = cfg_.shape.block_bytes();
    u.block_tokens = cfg_.shape.block_tokens;
    for (const Block& b : blocks_)
        if (b.ref > 0) u.tokens_held += b.filled;
    for (const auto& [id, s] : seqs_) u.tokens_logical += s.len;
    return u;
}

Status PagedKv::check() const {
    const int B = cfg_.shape.block_tokens;
    std::vector<int> refs(blocks_.size(), 0);
    for (const auto& [id, s] : seqs_) {
        if (int64_t(s.table.size()) != blocks_for(s.len, B))
            return err("sequence ", id, ": ", s.table.size(), " blocks for ", s.len, " tokens");
        for (size_t i = 0; i < s.table.size(); ++i) {
            const BlockId b = s.table[i];
            if (b < 0 || size_t(b) >= blocks_.size()) return err("sequence ", id, ": block id ", b, " out of range");
            refs[size_t(b)]++;
            const int want = i + 1 < s.table.size() ? B : s.len - int(i) * B;
            if (blocks_[size_t(b)].filled != want)
                return err("sequence ", id, ": block ", b, " holds ", blocks_[size_t(b)].filled, " tokens, expected ",
                           want);
        }
    }
    std::vector<char> in_free(blocks_.size(), 0);
    for (BlockId b : free_) {
        if (in_free[size_t(b)]) return err("block ", b, " is twice in the free list");
        in_free[size_t(b)] = 1;
    }
    for (size_t b = 0; b < blocks_.size(); ++b) {
        if (refs[b] != blocks_[b].ref)
            return err("block ", b, ": refcount ", blocks_[b].ref, " but ", refs[b], " references");
        if ((refs[b] == 0) != bool(in_free[b]))
            return err("block ", b, ": free-list membership disagrees with refcount");
    }
    for (const auto& [h, b] : index_) {
        const Block& blk = blocks_[size_t(b)];
        if (blk.ref == 0 || blk.filled != B || !blk.indexed || blk.hash != h)
            return err("hash index entry for block ", b, " is stale");
    }
    return {};
}

}  // namespace edge::kv
