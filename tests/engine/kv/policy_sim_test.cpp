#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/kv/policy.h"
#include "engine/kv/tier_sim.h"
#include "engine/kv/trace_gen.h"
#include "test_support.h"

using namespace edge::kv;

namespace {

// one block per step, one turn per step
Trace single_blocks(std::initializer_list<uint64_t> keys) {
    Trace t;
    t.name = "hand";
    uint32_t turn = 0;
    for (uint64_t k : keys) t.events.push_back(TraceEvent{TraceEvent::Step, turn++, 1, {{k, k}}});
    return t;
}

SimMetrics run(const std::string& policy, const Trace& t, int64_t device, int64_t host = 16) {
    auto p = make_policy(policy, device);
    EXPECT_TRUE(p.ok());
    auto m = simulate(t, **p, SimConfig{device, host, 100, 10});
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.message());
    return m.ok() ? m.value() : SimMetrics{};
}

}  // namespace

TEST(KvPolicy, LruEvictsTheLeastRecentBlock) {
    // capacity 3: 1 2 3 1 4 (evicts 2) 2 (miss, evicts 3) 3 (miss)
    const SimMetrics m = run("lru", single_blocks({1, 2, 3, 1, 4, 2, 3}), 3);
    EXPECT_EQ(m.compulsory, 4);
    EXPECT_EQ(m.hits, 1);
    EXPECT_EQ(m.misses, 2);
    EXPECT_EQ(m.host_fetches, 2);
    EXPECT_EQ(m.evictions, 3);
    EXPECT_EQ(m.bytes_moved, 5u * 10u);  // 3 offloads + 2 fetches of 10 compressed bytes
    EXPECT_NEAR(m.hit_rate(), 1.0 / 3.0, 1e-12);
}

TEST(KvPolicy, FrequencyAwarePoliciesKeepTheBlockSeenInTwoTurns) {
    // capacity 2: A A B C A. LRU evicts A for C; LRU-2, ARC and the EWMA policy evict B
    // (one reference) and keep A (references in two turns).
    const Trace t = single_blocks({10, 10, 20, 30, 10});
    EXPECT_EQ(run("lru", t, 2).misses, 1);
    for (const char* p : {"lru2", "arc", "locality"}) {
        const SimMetrics m = run(p, t, 2);
        EXPECT_EQ(m.misses, 0) << p;
        EXPECT_EQ(m.hits, 2) << p;
    }
}

TEST(KvPolicy, RereadsInOneTurnAreOneReference) {
    // A read twice in turn 0 counts once: B (turn 1) and A tie on references, so A (older) goes
    // for C under LRU-2 and ARC alike.
    Trace t;
    t.name = "crp";
    t.events = {{TraceEvent::Step, 0, 1, {{10, 10}}},
                {TraceEvent::Step, 0, 1, {{10, 10}}},
                {TraceEvent::Step, 1, 1, {{20, 20}}},
                {TraceEvent::Step, 2, 1, {{30, 30}}},
                {TraceEvent::Step, 3, 1, {{20, 20}}}};
    for (const char* p : {"lru2", "arc", "locality"}) EXPECT_EQ(run(p, t, 2).misses, 0) << p;
}

TEST(KvPolicy, LocalityPrefetchesTheNeighbourOfAHotBlock) {
    // capacity 3: 10-11 (turn 0), 20, 21 evicts 10 to the host; reading 11 again makes it hot
    // and its neighbour 10 is fetched before the step that needs it.
    Trace t;
    t.name = "prefetch";
    t.events = {{TraceEvent::Step, 0, 1, {{10, 11}}},
                {TraceEvent::Step, 1, 1, {{20, 20}}},
                {TraceEvent::Step, 2, 1, {{21, 21}}},
                {TraceEvent::Step, 3, 1, {{11, 11}}},
                {TraceEvent::Step, 4, 1, {{10, 10}}}};
    const SimMetrics m = run("locality", t, 3);
    EXPECT_EQ(m.prefetches, 1);
    EXPECT_EQ(m.prefetch_used, 1);
    EXPECT_EQ(m.misses, 0);
    EXPECT_DOUBLE_EQ(m.prefetch_accuracy(), 1.0);
    EXPECT_EQ(run("lru", t, 3).misses, 1);
}

TEST(KvPolicy, RepeatedStepsAndDropsAndFrees) {
    Trace t;
    t.name = "repeat";
    t.events = {{TraceEvent::Step, 0, 16, {{1, 2}}},  // 2 compulsory, 2 x 15 hits
                {TraceEvent::Step, 1, 1, {{3, 4}}},   // evicts 1 and 2; no host tier: dropped
                {TraceEvent::Step, 2, 4, {{1, 1}}},   // recompute, 3 hits
                {TraceEvent::Free, 0, 1, {{1, 4}}}};
    const SimMetrics m = run("lru", t, 2, 0);
    EXPECT_EQ(m.compulsory, 4);
    EXPECT_EQ(m.hits, 30 + 3);
    EXPECT_EQ(m.recomputes, 1);
    EXPECT_EQ(m.drops, 3);
    EXPECT_EQ(m.bytes_moved, 0u);
}

TEST(KvPolicy, BadConfigurationIsAClearError) {
    EXPECT_TRUE(edge::test::fails_with(make_policy("mru", 4),
                                       {"unknown eviction policy 'mru' (known", "lru, lru2, arc, locality)"}));
    EXPECT_TRUE(edge::test::fails_with(make_policy("lru", 0),
                                       {"eviction policy 'lru'", "capacity must be at least one block"}));
    auto p = make_policy("lru", 4);
    ASSERT_TRUE(p.ok());
    const Trace t = single_blocks({1, 2});
    EXPECT_TRUE(edge::test::fails_with(simulate(t, **p, SimConfig{0, 4, 1, 1}),
                                       {"KV simulation", "the device tier needs at least one block (got 0)"}));
    EXPECT_TRUE(edge::test::fails_with(simulate(t, **p, SimConfig{int64_t(1) << 40, 4, 1, 1}),
                                       {"KV simulation", "tier budget of 1099511627776 blocks is absurd"}));
    Trace wide;
    wide.name = "wide";
    wide.events = {{TraceEvent::Step, 0, 1, {{0, 9}}}};
    auto r = simulate(wide, **p, SimConfig{4, 4, 1, 1});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("reads 10 blocks"), std::string::npos) << r.message();
}

TEST(KvTrace, FormatRoundTripAndBadLines) {
    const Trace t = gen_shared_system_prompt(5, 10);
    auto back = parse_trace(format_trace(t));
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(format_trace(*back), format_trace(t));
    EXPECT_EQ(back->name, "shared_system_prompt");
    for (const char* bad :
         {"", "hello\n", "edge-kv-trace 2\n", "edge-kv-trace 1\ns 0 1\n", "edge-kv-trace 1\ns 0 0 5\n",
          "edge-kv-trace 1\ns 0 1 9-3\n", "edge-kv-trace 1\nx 1\n", "edge-kv-trace 1\ns 0 1 4-x\n",
          "edge-kv-trace 1\nblock_tokens 0\n", "edge-kv-trace 1\nf\n"}) {
        auto r = parse_trace(bad, "t.trace");
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.message().find("t.trace"), std::string::npos) << r.message();
    }
    auto line = parse_trace("edge-kv-trace 1\n# ok\ns 0 1 1-2\nbogus\n", "t.trace");
    ASSERT_FALSE(line.ok());
    EXPECT_NE(line.message().find("t.trace:4"), std::string::npos) << line.message();
    EXPECT_TRUE(
        edge::test::fails_with(read_trace("/nonexistent/x.trace"), {"/nonexistent/x.trace", "cannot open the trace"}));
}

TEST(KvTrace, CommittedTracesMatchTheGenerators) {
    for (const Trace& t : all_generated_traces()) {
        const std::string path = std::string(EDGE_SOURCE_DIR) + "/tests/data/kv_traces/" + t.name + ".trace";
        auto r = read_trace(path);
        ASSERT_TRUE(r.ok()) << r.message() << " (regenerate: edge-kv-bench --write-traces tests/data/kv_traces)";
        EXPECT_EQ(format_trace(*r), format_trace(t)) << path;
    }
}

TEST(KvTrace, ArcAndLocalityBeatLruOnMultiTurnChat) {
    // The finding recorded in docs/kv.md, at the table's device size (0.15 of the distinct blocks).
    const Trace t = gen_multi_turn_chat();
    const SimConfig c = default_sim_config(t, 100, 25, 0.15);
    double rate[3] = {};
    int i = 0;
    for (const char* name : {"lru", "arc", "locality"}) {
        auto p = make_policy(name, c.device_blocks);
        ASSERT_TRUE(p.ok());
        auto m = simulate(t, **p, c);
        ASSERT_TRUE(m.ok()) << m.message();
        rate[i++] = m->hit_rate();
    }
    EXPECT_GT(rate[1], rate[0]);
    EXPECT_GT(rate[2], rate[0]);
}
