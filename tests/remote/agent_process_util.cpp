// Helpers of the agent tests and benches: collecting one request's frames, checking telemetry.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>

#include "remote_test_util.h"

using namespace edge::protocol;

namespace {

uint64_t realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

namespace edge::test {

Collected collect(client::AgentLink& link, uint32_t id, int timeout_ms) {
    Collected c;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        auto m = link.receive(200);
        EXPECT_TRUE(m.ok()) << m.message();
        if (!m.ok()) break;
        if (!m.value()) continue;
        Message& msg = *m.value();
        if (auto* b = std::get_if<TelemetryBatch>(&msg)) {
            if (!b->samples.empty())
                c.ages_ms.push_back((double(realtime_ns()) - double(b->samples.back().timestamp_ns)) / 1e6);
            c.batches.push_back(std::move(*b));
        } else if (auto* r = std::get_if<RunResult>(&msg)) {
            c.results.push_back(*r);
        } else if (auto* sr = std::get_if<ServeReport>(&msg); sr && sr->request_id == id) {
            c.serve = *sr;
        } else if (auto* l = std::get_if<LogLine>(&msg)) {
            c.logs.push_back(*l);
        } else if (auto* a = std::get_if<Ack>(&msg); a && a->request_id == id) {
            c.ack = *a;
            break;
        } else if (auto* e = std::get_if<ErrorMsg>(&msg); e && e->request_id == id) {
            c.error = *e;
            break;
        }
    }
    return c;
}

void expect_live_telemetry(const Collected& c, size_t prompts) {
    ASSERT_TRUE(c.ack.has_value()) << (c.error ? c.error->message : "no ack");
    ASSERT_EQ(c.results.size(), prompts);
    ASSERT_FALSE(c.batches.empty());
    size_t samples = 0;
    for (const auto& b : c.batches) {
        for (const auto& s : b.samples) {
            ++samples;
            EXPECT_GT(s.timestamp_ns, 0u);
            EXPECT_TRUE(s.token_latency_ms.has_value());
            EXPECT_TRUE(s.ttft_ms.has_value());
            EXPECT_TRUE(s.tokens_per_s.has_value());
            EXPECT_TRUE(s.rss_bytes.has_value());
            EXPECT_GT(s.rss_bytes.value_or(0), 0u);
            EXPECT_TRUE(s.mem_available_bytes.has_value());
            EXPECT_TRUE(s.kv_blocks_used.has_value() && s.kv_blocks_free.has_value());
            // Prompt positions reused from the cache (a shared prefix, BOS at least).
            ASSERT_TRUE(s.kv_hit_rate.has_value());
            EXPECT_GE(*s.kv_hit_rate, 0.0);
            EXPECT_LE(*s.kv_hit_rate, 1.0);
            EXPECT_FALSE(s.kv_evictions.has_value());
            EXPECT_FALSE(s.device_mem_used_bytes.has_value());
        }
    }
    EXPECT_GT(samples, 0u);
    for (const auto& r : c.results) {
        EXPECT_GT(r.generated_tokens, 0u);
        EXPECT_FALSE(r.text.empty());
    }
}

}  // namespace edge::test
