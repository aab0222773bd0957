#include "trace_gen.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <random>

namespace edge::kv {

namespace {

constexpr int kBlockTokens = 16;         // tokens per block
constexpr uint64_t kSeqStride = 100000;  // block ids of sequence s: s * kSeqStride + i

uint64_t blocks_of(uint64_t tokens) { return (tokens + kBlockTokens - 1) / kBlockTokens; }

// One running request turn: `prefix` blocks it reads but does not own (a shared system prompt
// or document), then its own blocks base .. base + n - 1.
struct Turn {
    uint32_t id = 0;
    std::vector<std::pair<uint64_t, uint64_t>> prefix;
    uint64_t base = 0;
    uint64_t own_tokens = 0;  // tokens in own blocks after the prompt
    int out_left = 0;
    bool release_own = false;  // free the own blocks at the end
};

class Scheduler {
public:
    Scheduler(Trace& t, int concurrent) : t_(t), concurrent_(concurrent) {}
    uint32_t next_turn_id() { return next_id_++; }
    // Admits a turn (its prefill step is emitted at once), running the others while full.
    void admit(Turn turn) {
        while (int(running_.size()) >= concurrent_) round();
        step(turn, 1);
        running_.push_back(std::move(turn));
    }
    void drain() {
        while (!running_.empty()) round();
    }

private:
    void step(const Turn& turn, uint32_t repeat) {
        TraceEvent e;
        e.turn = turn.id;
        e.repeat = repeat;
        e.ranges = turn.prefix;
        const uint64_t n = blocks_of(turn.own_tokens);
        if (n > 0) e.ranges.push_back({turn.base, turn.base + n - 1});
        if (!e.ranges.empty()) t_.events.push_back(std::move(e));
    }
    void round() {  // every running turn decodes up to one block's worth of tokens
        for (size_t i = 0; i < running_.size();) {
            Turn& turn = running_[i];
            const int r = std::min(turn.out_left, kBlockTokens);
            turn.own_tokens += uint64_t(r);
            turn.out_left -= r;
            step(turn, uint32_t(std::max(r, 1)));
            if (turn.out_left > 0) {
                ++i;
                continue;
            }
            if (turn.release_own && turn.own_tokens > 0) {
                TraceEvent f;
                f.kind = TraceEvent::Free;
                f.ranges.push_back({turn.base, turn.base + blocks_of(turn.own_tokens) - 1});
                t_.events.push_back(std::move(f));
            }
            if (on_done_) on_done_(turn);
            running_.erase(running_.begin() + long(i));
        }
    }

public:
    std::function<void(const Turn&)> on_done_;

private:
    Trace& t_;
    int concurrent_;
    uint32_t next_id_ = 0;
    std::deque<Turn> running_;
};

// Zipf(s) over [0, n).
int zipf(std::mt19937_64& rng, int n, double s) {
    double total = 0;
    for (int i = 1; i <= n; ++i) total += 1.0 / std::pow(i, s);
    double u = std::uniform_real_distribution<double>(0, total)(rng);
    for (int i = 1; i <= n; ++i) {
        u -= 1.0 / std::pow(i, s);
        if (u <= 0) return i - 1;
    }
    return n - 1;
}

int uni(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

Trace start(const char* name) {
    Trace t;
    t.name = name;
    t.block_tokens = kBlockTokens;
    return t;
}

}  // namespace

namespace {
// Conversations picked by Zipf(zipf_s) (0: uniform) with probability p_regular, otherwise a
// one-shot chat that never comes back.
Trace chat_like(const char* name, uint64_t seed, int turns, int regulars, double p_regular, double zipf_s) {
    Trace t = start(name);
    std::mt19937_64 rng(seed);
    const int kRegulars = regulars;
    std::vector<uint64_t> ctx(kRegulars, 0);  // tokens so far per regular conversation
    std::vector<uint64_t> seq(kRegulars, 0);  // its current sequence id
    std::vector<bool> busy(kRegulars, false);
    uint64_t next_seq = 1;
    for (auto& s : seq) s = next_seq++;
    Scheduler sch(t, 4);
    sch.on_done_ = [&](const Turn& turn) {
        for (int c = 0; c < kRegulars; ++c)
            if (seq[size_t(c)] * kSeqStride == turn.base) {
                ctx[size_t(c)] = turn.own_tokens;
                busy[size_t(c)] = false;
            }
    };
    for (int i = 0; i < turns; ++i) {
        Turn turn;
        turn.id = sch.next_turn_id();
        const int prompt = uni(rng, 16, 128);
        turn.out_left = uni(rng, 32, 256);
        int c = -1;
        if (std::uniform_real_distribution<double>(0, 1)(rng) < p_regular) c = zipf(rng, kRegulars, zipf_s);
        if (c >= 0 && !busy[size_t(c)]) {
            if (ctx[size_t(c)] + uint64_t(prompt) + uint64_t(turn.out_left) > 2048) {  // context full: start over
                seq[size_t(c)] = next_seq++;
                ctx[size_t(c)] = 0;
            }
            busy[size_t(c)] = true;
            turn.base = seq[size_t(c)] * kSeqStride;
            turn.own_tokens = ctx[size_t(c)] + uint64_t(prompt);
        } else {  // a one-shot chat (or the regular is mid-turn): a new conversation
            turn.base = next_seq++ * kSeqStride;
            turn.own_tokens = uint64_t(prompt) + uint64_t(uni(rng, 0, 512));  // pasted context
        }
        sch.admit(std::move(turn));
    }
    sch.drain();
    return t;
}

}  // namespace

Trace gen_multi_turn_chat(uint64_t seed, int turns) { return chat_like("multi_turn_chat", seed, turns, 24, 0.6, 1.0); }

Trace gen_shared_system_prompt(uint64_t seed, int requests) {
    Trace t = start("shared_system_prompt");
    std::mt19937_64 rng(seed);
    const uint64_t sys_blocks = 32;  // a 512-token system prompt, sequence 0
    Scheduler sch(t, 8);
    for (int i = 0; i < requests; ++i) {
        Turn turn;
        turn.id = sch.next_turn_id();
        turn.prefix = {{0, sys_blocks - 1}};
        turn.base = uint64_t(i + 1) * kSeqStride;
        turn.own_tokens = uint64_t(uni(rng, 32, 256));
        turn.out_left = uni(rng, 16, 256);
        turn.release_own = true;
        sch.admit(std::move(turn));
    }
    sch.drain();
    return t;
}

Trace gen_long_doc_qa(uint64_t seed, int questions) {
    Trace t = start("long_doc_qa");
    std::mt19937_64 rng(seed);
    constexpr int kDocs = 6;
    std::vector<uint64_t> doc_blocks(kDocs);
    for (auto& d : doc_blocks) d = blocks_of(uint64_t(uni(rng, 4000, 8000)));
    Scheduler sch(t, 2);
    for (int i = 0; i < questions; ++i) {
        const int d = zipf(rng, kDocs, 0.8);
        Turn turn;
        turn.id = sch.next_turn_id();
        turn.prefix = {{uint64_t(d + 1) * kSeqStride, uint64_t(d + 1) * kSeqStride + doc_blocks[size_t(d)] - 1}};
        turn.base = uint64_t(kDocs + 1 + i) * kSeqStride;
        turn.own_tokens = uint64_t(uni(rng, 16, 64));
        turn.out_left = uni(rng, 16, 128);
        turn.release_own = true;
        sch.admit(std::move(turn));
    }
    sch.drain();
    return t;
}

Trace gen_random(uint64_t seed, int turns) { return chat_like("random", seed, turns, 60, 1.0, 0.0); }

std::vector<Trace> all_generated_traces() {
    return {gen_multi_turn_chat(), gen_shared_system_prompt(), gen_long_doc_qa(), gen_random()};
}

}  // namespace edge::kv
