// ARC (Megiddo & Modha, FAST 2003): T1 holds blocks referenced in one turn, T2 blocks referenced
// in two or more turns; ghost lists B1/B2 remember recent evictions and steer the target size p
// of T1. A second read inside the same turn does not promote to T2 (see policy.h).
#include <algorithm>
#include <list>
#include <unordered_map>

#include "policy.h"

namespace edge::kv {

namespace {

class Arc final : public EvictionPolicy {
public:
    explicit Arc(int64_t c) : c_(std::max<int64_t>(c, 1)) {}
    std::string name() const override { return "ARC"; }

    void on_miss(const Access& a) override {
        incoming_in_b2_ = false;
        auto it = where_.find(a.key);
        if (it == where_.end()) return;
        Entry& e = it->second;
        if (e.list == B1) {
            const double d = std::max(1.0, double(lists_[B2].size()) / double(std::max<size_t>(lists_[B1].size(), 1)));
            p_ = std::min(double(c_), p_ + d);
            promote_ = true;
        } else if (e.list == B2) {
            const double d = std::max(1.0, double(lists_[B1].size()) / double(std::max<size_t>(lists_[B2].size(), 1)));
            p_ = std::max(0.0, p_ - d);
            promote_ = true;
            incoming_in_b2_ = true;
        }
        if (e.list == B1 || e.list == B2) unlink(it);
    }
    void on_insert(const Access& a, bool prefetched) override {
        auto it = where_.find(a.key);
        if (it != where_.end()) unlink(it);
        const int to = promote_ && !prefetched ? T2 : T1;
        promote_ = false;
        link(a.key, to, prefetched ? UINT32_MAX : a.turn);
    }
    void on_hit(const Access& a) override {
        auto it = where_.find(a.key);
        if (it == where_.end()) return;
        const Entry e = it->second;
        int to = e.list;
        if (e.list == T1 && e.turn != a.turn) to = T2;  // referenced again in another turn
        unlink(it);
        link(a.key, to, to == T1 && e.turn != UINT32_MAX ? e.turn : a.turn);
    }
    std::optional<BlockKey> victim(const std::function<bool(BlockKey)>& pinned) override {
        const double t1 = double(lists_[T1].size());
        const bool from_t1 = t1 > 0 && (t1 > p_ || (incoming_in_b2_ && t1 == p_));
        const int first = from_t1 ? T1 : T2, second = from_t1 ? T2 : T1;
        for (int l : {first, second})
            for (BlockKey k : lists_[l])
                if (!pinned(k)) return k;
        return std::nullopt;
    }
    void on_remove(BlockKey key, bool freed) override {
        auto it = where_.find(key);
        if (it == where_.end()) return;
        const int from = it->second.list;
        unlink(it);
        if (freed || (from != T1 && from != T2)) return;
        link(key, from == T1 ? B1 : B2, UINT32_MAX);
        // ghost lists: |T1| + |B1| <= c, total <= 2c
        while (!lists_[B1].empty() && lists_[T1].size() + lists_[B1].size() > size_t(c_)) drop_lru(B1);
        while (!lists_[B2].empty() && total() > size_t(2 * c_)) drop_lru(B2);
        while (!lists_[B1].empty() && total() > size_t(2 * c_)) drop_lru(B1);
    }

private:
    enum { T1 = 0, T2 = 1, B1 = 2, B2 = 3 };
    struct Entry {
        int list;
        uint32_t turn;
        std::list<BlockKey>::iterator pos;
    };
    void link(BlockKey k, int l, uint32_t turn) {
        lists_[l].push_back(k);  // back = most recent
        where_[k] = Entry{l, turn, std::prev(lists_[l].end())};
    }
    void unlink(std::unordered_map<BlockKey, Entry>::iterator it) {
        lists_[it->second.list].erase(it->second.pos);
        where_.erase(it);
    }
    void drop_lru(int l) { unlink(where_.find(lists_[l].front())); }
    size_t total() const { return lists_[0].size() + lists_[1].size() + lists_[2].size() + lists_[3].size(); }

    int64_t c_;
    double p_ = 0;
    bool promote_ = false, incoming_in_b2_ = false;
    std::list<BlockKey> lists_[4];
    std::unordered_map<BlockKey, Entry> where_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_arc(int64_t capacity_blocks) { return std::make_unique<Arc>(capacity_blocks); }

}  // namespace edge::kv
