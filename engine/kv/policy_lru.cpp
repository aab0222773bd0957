// LRU and LRU-K (O'Neil, O'Neil, Weikum 1993) with the request turn as the correlated reference
// period: several reads of a block within one turn count as one reference.
#include <algorithm>
#include <list>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "policy.h"

namespace edge::kv {

namespace {

class Lru final : public EvictionPolicy {
public:
    std::string name() const override { return "LRU"; }
    void on_insert(const Access& a, bool) override { touch(a.key); }
    void on_hit(const Access& a) override { touch(a.key); }
    std::optional<BlockKey> victim(const std::function<bool(BlockKey)>& pinned) override {
        for (BlockKey k : order_)
            if (!pinned(k)) return k;
        return std::nullopt;
    }
    void on_remove(BlockKey key, bool) override {
        auto it = pos_.find(key);
        if (it == pos_.end()) return;
        order_.erase(it->second);
        pos_.erase(it);
    }

private:
    void touch(BlockKey k) {
        auto it = pos_.find(k);
        if (it != pos_.end()) order_.erase(it->second);
        order_.push_back(k);  // back = most recent
        pos_[k] = std::prev(order_.end());
    }
    std::list<BlockKey> order_;
    std::unordered_map<BlockKey, std::list<BlockKey>::iterator> pos_;
};

class LruK final : public EvictionPolicy {
public:
    // A block read in the last crp_steps trace steps is inside its correlated reference period
    // and not eligible for eviction (else the new blocks of running turns, with one reference,
    // would always go first).
    LruK(int k, uint64_t crp_steps) : k_(k), crp_(crp_steps) {}
    std::string name() const override { return "LRU-" + std::to_string(k_); }
    void on_insert(const Access& a, bool prefetched) override {
        now_ = std::max(now_, a.now);
        History& h = hist_[a.key];
        if (!prefetched) reference(h, a);  // a prefetch is not a reference
        h.last = a.now;
        h.resident = true;
        order_.insert(rank(a.key, h));
    }
    void on_hit(const Access& a) override {
        now_ = std::max(now_, a.now);
        History& h = hist_[a.key];
        order_.erase(rank(a.key, h));
        reference(h, a);
        h.last = a.now;
        order_.insert(rank(a.key, h));
    }
    std::optional<BlockKey> victim(const std::function<bool(BlockKey)>& pinned) override {
        std::optional<BlockKey> fallback;
        for (const auto& r : order_) {
            if (pinned(std::get<2>(r))) continue;
            if (std::get<1>(r) + crp_ <= now_) return std::get<2>(r);
            if (!fallback) fallback = std::get<2>(r);
        }
        return fallback;
    }
    void on_remove(BlockKey key, bool freed) override {
        auto it = hist_.find(key);
        if (it == hist_.end()) return;
        if (it->second.resident) order_.erase(rank(key, it->second));
        it->second.resident = false;
        if (freed) hist_.erase(it);  // otherwise keep the history (retained information)
    }

private:
    struct History {
        std::vector<uint64_t> refs;  // most recent first, at most k, one per turn
        uint32_t turn = UINT32_MAX;
        uint64_t last = 0;
        bool resident = false;
    };
    using Rank = std::tuple<int64_t, uint64_t, BlockKey>;  // (K-th most recent ref or -1, last access, key)
    void reference(History& h, const Access& a) {
        if (h.turn == a.turn && !h.refs.empty()) return;  // same correlated period
        h.turn = a.turn;
        h.refs.insert(h.refs.begin(), a.now);
        if (int(h.refs.size()) > k_) h.refs.pop_back();
    }
    Rank rank(BlockKey k, const History& h) const {
        const int64_t kth = int(h.refs.size()) >= k_ ? int64_t(h.refs[size_t(k_ - 1)]) : -1;
        return {kth, h.last, k};
    }
    int k_;
    uint64_t crp_;
    uint64_t now_ = 0;
    std::unordered_map<BlockKey, History> hist_;
    std::set<Rank> order_;  // first = victim: fewest references / oldest K-th reference
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_lru() { return std::make_unique<Lru>(); }
std::unique_ptr<EvictionPolicy> make_lru_k(int k) { return std::make_unique<LruK>(k < 1 ? 1 : k, 32); }

}  // namespace edge::kv
