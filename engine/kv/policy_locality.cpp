// Locality-aware policy: per-block EWMA hotness over request turns (alpha = 0.95 by default),
// eviction of the coldest block, and prefetch of the non-resident neighbours (key +- 1..window,
// i.e. the adjacent blocks of the same sequence) of hot blocks.
//
// hot(t) = hot(t0) * alpha^(t - t0), and one reference in turn t adds (1 - alpha). The order of two
// blocks by hotness does not change as time passes, so the resident set is kept sorted by
// ln(hot) - t0 * ln(alpha), which is hot's logarithm up to a common term.
#include <cmath>
#include <set>
#include <unordered_map>
#include <utility>

#include "policy.h"

namespace edge::kv {

namespace {

class Locality final : public EvictionPolicy {
public:
    explicit Locality(const LocalityOptions& o) : o_(o), ln_alpha_(std::log(o.alpha)) {}
    std::string name() const override { return "Locality"; }

    void on_insert(const Access& a, bool prefetched) override {
        State& s = state_[a.key];
        if (!prefetched) reference(s, a);
        s.last = a.now;
        s.resident = true;
        order_.insert(rank(a.key, s));
    }
    void on_hit(const Access& a) override {
        State& s = state_[a.key];
        order_.erase(rank(a.key, s));
        reference(s, a);
        s.last = a.now;
        order_.insert(rank(a.key, s));
    }
    std::optional<BlockKey> victim(const std::function<bool(BlockKey)>& pinned) override {
        for (const auto& r : order_)
            if (!pinned(r.key)) return r.key;
        return std::nullopt;
    }
    void on_remove(BlockKey key, bool freed) override {
        auto it = state_.find(key);
        if (it == state_.end()) return;
        if (it->second.resident) order_.erase(rank(key, it->second));
        it->second.resident = false;
        if (freed) state_.erase(it);
    }
    Placement placement(BlockKey key) const override {
        auto it = state_.find(key);
        if (it == state_.end()) return Placement::Drop;
        return hot_now(it->second) < o_.drop_threshold ? Placement::Drop : Placement::Host;
    }
    void prefetch(std::span<const BlockKey> step, uint64_t, const std::function<bool(BlockKey)>& resident,
                  std::vector<BlockKey>& out) override {
        for (BlockKey k : step) {
            auto it = state_.find(k);
            if (it == state_.end() || hot_now(it->second) < o_.hot_threshold) continue;
            for (int d = 1; d <= o_.window; ++d)
                for (BlockKey n : {k - BlockKey(d), k + BlockKey(d)}) {
                    if (int(out.size()) >= o_.max_prefetch) return;
                    if (state_.count(n) && !resident(n)) out.push_back(n);
                }
        }
    }

private:
    struct State {
        double hot = 0;
        uint32_t turn = UINT32_MAX;  // turn of the last reference (the hotness clock)
        uint64_t last = 0;
        bool resident = false;
    };
    struct Rank {
        double score;
        uint64_t last;
        BlockKey key;
        bool operator<(const Rank& o) const {
            if (score != o.score) return score < o.score;
            if (last != o.last) return last < o.last;
            return key < o.key;
        }
    };
    void reference(State& s, const Access& a) {
        if (s.turn == a.turn) return;  // one reference per turn
        if (s.turn != UINT32_MAX && a.turn > s.turn) s.hot *= std::pow(o_.alpha, double(a.turn - s.turn));
        s.hot += 1.0 - o_.alpha;
        s.turn = a.turn;
        clock_ = std::max(clock_, a.turn);
    }
    double hot_now(const State& s) const {
        if (s.turn == UINT32_MAX) return 0;
        return s.hot * std::pow(o_.alpha, double(clock_ - std::min(clock_, s.turn)));
    }
    Rank rank(BlockKey k, const State& s) const {
        const double score = s.turn == UINT32_MAX ? -1e300 : std::log(s.hot) - double(s.turn) * ln_alpha_;
        return {score, s.last, k};
    }
    LocalityOptions o_;
    double ln_alpha_;
    uint32_t clock_ = 0;
    std::unordered_map<BlockKey, State> state_;
    std::set<Rank> order_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_locality(const LocalityOptions& o) { return std::make_unique<Locality>(o); }

}  // namespace edge::kv
