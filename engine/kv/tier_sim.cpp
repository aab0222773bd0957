#include "tier_sim.h"

#include <algorithm>
#include <cstdio>
#include <list>
#include <unordered_map>
#include <unordered_set>

namespace edge::kv {

namespace {

enum class Where : uint8_t { Device, Host, Dropped };

struct Block {
    Where where = Where::Device;
    bool prefetched = false;  // brought in by a prefetch and not read since
    std::list<BlockKey>::iterator host_pos;
};

class Sim {
public:
    Sim(EvictionPolicy& p, const SimConfig& c, SimMetrics& m) : p_(p), c_(c), m_(m) {}

    Status step(const TraceEvent& e, uint64_t now) {
        keys_.clear();
        for (auto [a, b] : e.ranges)
            for (uint64_t k = a; k <= b; ++k) keys_.push_back(k);
        pinned_.clear();
        pinned_.insert(keys_.begin(), keys_.end());
        if (int64_t(pinned_.size()) > c_.device_blocks)
            return err("a step of turn ", e.turn, " reads ", pinned_.size(), " blocks but the device tier holds ",
                       c_.device_blocks);
        const int64_t rep = e.repeat;
        for (BlockKey k : keys_) {
            const Access a{k, e.turn, now};
            auto it = blocks_.find(k);
            if (it != blocks_.end() && it->second.where == Where::Device) {
                m_.hits += rep;
                if (it->second.prefetched) {
                    ++m_.prefetch_used;
                    it->second.prefetched = false;
                }
                p_.on_hit(a);
                continue;
            }
            if (it == blocks_.end()) {
                ++m_.compulsory;
                m_.hits += rep - 1;
            } else {
                ++m_.misses;
                m_.hits += rep - 1;
                if (it->second.where == Where::Host) {
                    ++m_.host_fetches;
                    m_.bytes_moved += c_.host_block_bytes;
                    leave_host(it->second);
                } else {
                    ++m_.recomputes;
                }
                p_.on_miss(a);
            }
            EDGE_TRY(make_room());
            Block& b = blocks_[k];
            b.where = Where::Device;
            b.prefetched = false;
            ++resident_;
            p_.on_insert(a, false);
        }
        // prefetch for the next step
        cand_.clear();
        p_.prefetch(
            keys_, now, [this](BlockKey k) { return is_resident(k); }, cand_);
        for (BlockKey k : cand_) {
            auto it = blocks_.find(k);
            if (it == blocks_.end() || it->second.where != Where::Host) continue;
            EDGE_TRY(make_room());
            leave_host(it->second);
            it->second.where = Where::Device;
            it->second.prefetched = true;
            ++resident_;
            ++m_.prefetches;
            m_.bytes_moved += c_.host_block_bytes;
            p_.on_insert(Access{k, e.turn, now}, true);
        }
        return {};
    }

    void release(const TraceEvent& e) {
        for (auto [a, b] : e.ranges)
            for (uint64_t k = a; k <= b; ++k) {
                auto it = blocks_.find(k);
                if (it == blocks_.end()) continue;
                if (it->second.where == Where::Device) --resident_;
                if (it->second.where == Where::Host) leave_host(it->second);
                p_.on_remove(k, true);
                blocks_.erase(it);
            }
    }

private:
    bool is_resident(BlockKey k) const {
        auto it = blocks_.find(k);
        return it != blocks_.end() && it->second.where == Where::Device;
    }
    void leave_host(Block& b) {
        host_.erase(b.host_pos);
        b.where = Where::Dropped;
    }
    Status make_room() {
        while (resident_ >= c_.device_blocks) {
            auto v = p_.victim([this](BlockKey k) { return pinned_.count(k) != 0; });
            if (!v) return err("eviction policy ", p_.name(), " found no block to evict");
            auto it = blocks_.find(*v);
            if (it == blocks_.end() || it->second.where != Where::Device)
                return err("eviction policy ", p_.name(), " chose block ", *v, ", which is not resident");
            const Placement where = c_.host_blocks > 0 ? p_.placement(*v) : Placement::Drop;
            p_.on_remove(*v, false);
            --resident_;
            ++m_.evictions;
            Block& b = it->second;
            b.prefetched = false;
            if (where == Placement::Drop) {
                b.where = Where::Dropped;
                ++m_.drops;
                continue;
            }
            m_.bytes_moved += c_.host_block_bytes;
            b.where = Where::Host;
            host_.push_back(*v);
            b.host_pos = std::prev(host_.end());
            if (int64_t(host_.size()) > c_.host_blocks) {  // the host tier drops its least recent block
                Block& old = blocks_[host_.front()];
                leave_host(old);
                ++m_.drops;
            }
        }
        return {};
    }

    EvictionPolicy& p_;
    const SimConfig& c_;
    SimMetrics& m_;
    std::unordered_map<BlockKey, Block> blocks_;
    std::list<BlockKey> host_;  // front = least recently offloaded
    int64_t resident_ = 0;
    std::vector<BlockKey> keys_, cand_;
    std::unordered_set<BlockKey> pinned_;
};

}  // namespace

Result<SimMetrics> simulate(const Trace& t, EvictionPolicy& policy, const SimConfig& cfg) {
    if (cfg.device_blocks <= 0)
        return err("KV simulation: the device tier needs at least one block (got ", cfg.device_blocks, ")");
    if (cfg.host_blocks < 0) return err("KV simulation: negative host tier budget ", cfg.host_blocks);
    if (cfg.device_blocks > kMaxTierBlocks || cfg.host_blocks > kMaxTierBlocks)
        return err("KV simulation: tier budget of ", std::max(cfg.device_blocks, cfg.host_blocks), " blocks is absurd");
    SimMetrics m;
    m.trace = t.name;
    m.policy = policy.name();
    m.device_blocks = cfg.device_blocks;
    Sim sim(policy, cfg, m);
    uint64_t now = 0;
    for (const TraceEvent& e : t.events) {
        if (e.kind == TraceEvent::Free) {
            sim.release(e);
            continue;
        }
        auto s = sim.step(e, ++now);
        if (!s) return err(t.name, ": ", s.message());
    }
    return m;
}

SimConfig default_sim_config(const Trace& t, uint64_t block_bytes, uint64_t host_block_bytes, double device_fraction) {
    std::unordered_set<uint64_t> distinct;
    uint64_t max_step = 0;
    for (const TraceEvent& e : t.events) {
        uint64_t n = 0;
        for (auto [a, b] : e.ranges) {
            n += b - a + 1;
            for (uint64_t k = a; k <= b; ++k) distinct.insert(k);
        }
        if (e.kind == TraceEvent::Step) max_step = std::max(max_step, n);
    }
    SimConfig c;
    c.device_blocks =
        std::max<int64_t>(int64_t(max_step * 5 / 4) + 1, int64_t(double(distinct.size()) * device_fraction));
    c.host_blocks = int64_t(distinct.size() / 2);
    c.block_bytes = block_bytes;
    c.host_block_bytes = host_block_bytes;
    return c;
}

Result<std::vector<SimMetrics>> policy_table(const std::vector<Trace>& traces, uint64_t block_bytes,
                                             uint64_t host_block_bytes, double device_fraction) {
    std::vector<SimMetrics> rows;
    for (const Trace& t : traces) {
        const SimConfig c = default_sim_config(t, block_bytes, host_block_bytes, device_fraction);
        for (const std::string& name : policy_names()) {
            auto p = make_policy(name, c.device_blocks);
            if (!p) return p.error();
            auto m = simulate(t, **p, c);
            if (!m) return m.error();
            rows.push_back(std::move(m.value()));
        }
    }
    return rows;
}

std::string format_policy_table(const std::vector<SimMetrics>& rows) {
    std::string out =
        "| trace | policy | device blocks | hit rate | misses | evictions | recomputes | bytes moved (MiB) | prefetch "
        "acc. |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    char buf[256];
    for (const SimMetrics& m : rows) {
        std::string pf = "-";
        if (m.prefetches) {
            std::snprintf(buf, sizeof buf, "%.1f%% of %lld", 100.0 * m.prefetch_accuracy(), (long long)m.prefetches);
            pf = buf;
        }
        std::snprintf(buf, sizeof buf, "| %s | %s | %lld | %.2f%% | %lld | %lld | %lld | %.1f | %s |\n",
                      m.trace.c_str(), m.policy.c_str(), (long long)m.device_blocks, 100.0 * m.hit_rate(),
                      (long long)m.misses, (long long)m.evictions, (long long)m.recomputes,
                      double(m.bytes_moved) / (1024.0 * 1024.0), pf.c_str());
        out += buf;
    }
    return out;
}

}  // namespace edge::kv
