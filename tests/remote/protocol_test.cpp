// Protocol: every message round-trips; the handshake keeps its frozen shape; the stream reader
// assembles frames from arbitrary chunks.
#include <gtest/gtest.h>

#include <random>

#include "remote/protocol/frame.h"
#include "remote/protocol/handshake.h"
#include "remote/protocol/trace.h"
#include "test_support.h"

using namespace edge::protocol;

namespace {

TelemetrySample full_sample() {
    TelemetrySample s;
    s.timestamp_ns = 1'700'000'000'123'456'789ull;
    s.request_id = 7, s.prompt_index = 2, s.tokens_generated = 33;
    s.token_latency_ms = 1.25, s.ttft_ms = 12.5, s.tpot_ms = 1.1, s.tokens_per_s = 812.0;
    s.rss_bytes = 123456789, s.device_mem_used_bytes = 5ull << 30, s.device_mem_total_bytes = 64ull << 30;
    s.mem_available_bytes = 9ull << 30;
    s.kv_blocks_used = 3, s.kv_blocks_free = 13, s.kv_hit_rate = 0.75, s.kv_evictions = 4;
    s.kv_compression_ratio = 2.0, s.power_w = 14.5, s.temperature_c = 51.25;
    s.batch_size = 8, s.queue_length = 3, s.preemptions = 2;
    return s;
}

std::vector<Message> every_message() {
    RunWorkload run;
    run.request_id = 3;
    run.prompts = {"Once upon a time", "", "\xe4\xbd\xa0\xe5\xa5\xbd"};
    run.max_tokens = 99, run.temperature = 0.7f, run.top_k = 40, run.top_p = 0.9f, run.seed = 1234567890123ull;
    run.telemetry_hz = 10;
    run.chat = true;
    run.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    LoadEngine load{2, "current/model.gguf", Sha256{}, "tok.bin", run.traceparent};
    (*load.expected_sha256)[0] = 0xab, (*load.expected_sha256)[31] = 0xcd;
    TelemetryBatch batch;
    batch.dropped = 5;
    batch.samples.push_back(full_sample());
    TelemetrySample sparse;  // absent is not zero
    sparse.timestamp_ns = 1, sparse.rss_bytes = 0;
    batch.samples.push_back(sparse);
    LogLine log{42, LogLevel::Warn, {}, {}, "hello\nworld"};
    log.trace_id[0] = 0x4b, log.span_id[7] = 0xb7;
    ServeWorkload serve{21,
                        "edge-workload 1\nreq 0 - 10 5\n",
                        8,
                        72,
                        16,
                        64,
                        32,
                        PreemptMode::SwapInt8,
                        1.5,
                        10,
                        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                        true};
    ServeReport report;
    report.request_id = 21;
    report.backend = "cpu (compiled program)";
    report.requests = {{10, 5, 1, 0.0, 3.5, 1.25, 12.0, 9, 0, 0x0123456789abcdefull},
                       {20, 7, 0, 2.0, 1.5, 0.75, 9.0, 19, 16, 0}};
    report.steps = 30, report.preemptions = 1, report.queue_max = 2;
    report.output_tokens = 12, report.prompt_tokens = 30, report.recomputed_tokens = 9;
    report.swap_out_bytes = 7, report.swap_in_bytes = 5, report.peak_blocks = 4, report.budget_blocks = 72;
    report.makespan_ms = 12, report.tokens_per_s = 1000, report.ttft_mean_ms = 2.5, report.ttft_p95_ms = 3.5;
    report.tpot_mean_ms = 1, report.kv_hit_rate = 16.0 / 28.0, report.queue_mean = 0.5;
    return {Hello{"agent", "0.1.0", "orin", "ARMv8 Cortex-A78AE", 12, 64ull << 30, "cpu"},
            load,
            LoadEngine{9, "x", std::nullopt, "", ""},
            run,
            batch,
            TelemetryBatch{},
            log,
            ErrorMsg{3, ErrorCode::LoadFailed, "bad file"},
            Stop{4, StopScope::Cancel},
            Stop{5, StopScope::Shutdown},
            Ack{6, MsgType::RunWorkload, "done"},
            RunResult{3, 1, 5, 64, 3.5, 900.5, "text"},
            MetricsRequest{11},
            Metrics{11, "# HELP x_total y\n# TYPE x_total counter\nx_total 1\n"},
            serve,
            ServeWorkload{},
            report,
            ServeReport{}};
}

}  // namespace

TEST(Protocol, EveryMessageRoundTrips) {
    for (const Message& m : every_message()) {
        auto bytes = encode_frame(m);
        ASSERT_TRUE(bytes.ok()) << bytes.message();
        FrameReader r;
        r.feed(bytes.value());
        auto back = r.next();
        ASSERT_TRUE(back.ok()) << back.message();
        ASSERT_TRUE(back.value().has_value()) << msg_type_name(type_of(m));
        EXPECT_EQ(*back.value(), m) << msg_type_name(type_of(m));
        EXPECT_EQ(r.buffered(), 0u);
    }
}

TEST(Protocol, AbsentTelemetryFieldsStayAbsent) {
    TelemetrySample s;
    s.rss_bytes = 0;  // present, and zero
    auto bytes = encode_payload(TelemetryBatch{0, {s}});
    ASSERT_EQ(bytes.size(), 8 + kTelemetrySampleBytes);
    auto back = decode_message(static_cast<uint16_t>(MsgType::TelemetryBatch), bytes);
    ASSERT_TRUE(back.ok()) << back.message();
    const auto& got = std::get<TelemetryBatch>(back.value()).samples.at(0);
    EXPECT_TRUE(got.rss_bytes.has_value());
    EXPECT_EQ(*got.rss_bytes, 0u);
    EXPECT_FALSE(got.power_w.has_value());
    EXPECT_FALSE(got.temperature_c.has_value());
    EXPECT_FALSE(got.device_mem_used_bytes.has_value());
    EXPECT_FALSE(got.kv_hit_rate.has_value());
}

TEST(Protocol, FrameHeaderBytesAreLittleEndian) {
    auto bytes = encode_frame(Stop{0x01020304, StopScope::Shutdown});
    ASSERT_TRUE(bytes.ok());
    // length 5, type 7, flags 0, then request id LE, scope.
    std::vector<uint8_t> want = {5, 0, 0, 0, 7, 0, 0, 0, 4, 3, 2, 1, 1};
    EXPECT_EQ(bytes.value(), want);
}

TEST(Protocol, HandshakeShapeIsFrozen) {
    auto req = encode_handshake_request(1);
    std::vector<uint8_t> want = {'E', 'D', 'G', 'E', 'W', 'I', 'R', 'E', 1, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(std::vector<uint8_t>(req.begin(), req.end()), want);
    auto v = decode_handshake_request(req);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v.value(), 1u);

    HandshakeReply mismatch{HandshakeStatus::VersionMismatch, 2, 1};
    auto rep = encode_handshake_reply(mismatch);
    std::vector<uint8_t> want_rep = {'E', 'D', 'G', 'E', 'W', 'I', 'R', 'E', 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0};
    EXPECT_EQ(std::vector<uint8_t>(rep.begin(), rep.end()), want_rep);
    auto back = decode_handshake_reply(rep);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->agent_version, 2u);
    EXPECT_EQ(back->client_version, 1u);
    std::string text = describe(back.value());
    EXPECT_NE(text.find("agent speaks 2"), std::string::npos) << text;
    EXPECT_NE(text.find("client speaks 1"), std::string::npos) << text;
    EXPECT_NE(describe(HandshakeReply{HandshakeStatus::Busy, 1, 1}).find("busy"), std::string::npos);
}

TEST(Protocol, ReaderAssemblesFramesFromArbitraryChunks) {
    std::vector<uint8_t> stream;
    auto hs = encode_handshake_request();
    stream.insert(stream.end(), hs.begin(), hs.end());
    auto msgs = every_message();
    for (const auto& m : msgs) {
        auto b = encode_frame(m);
        ASSERT_TRUE(b.ok());
        stream.insert(stream.end(), b->begin(), b->end());
    }
    std::mt19937 rng(1);
    for (int trial = 0; trial < 50; ++trial) {
        FrameReader r;
        std::vector<Message> got;
        bool have_hs = false;
        size_t pos = 0;
        while (pos < stream.size()) {
            size_t n = std::min<size_t>(stream.size() - pos, 1 + rng() % (trial < 10 ? 3 : 200));
            r.feed(stream.data() + pos, n);
            pos += n;
            if (!have_hs) {
                auto raw = r.take_raw(kHandshakeRequestBytes);
                if (!raw) continue;
                ASSERT_TRUE(decode_handshake_request(*raw).ok());
                have_hs = true;
            }
            for (;;) {
                auto m = r.next();
                ASSERT_TRUE(m.ok()) << m.message();
                if (!m.value()) break;
                got.push_back(std::move(*m.value()));
            }
        }
        ASSERT_EQ(got.size(), msgs.size());
        for (size_t i = 0; i < msgs.size(); ++i) EXPECT_EQ(got[i], msgs[i]);
    }
}

TEST(Protocol, TraceparentRoundTripsAndRejectsGarbage) {
    const std::string h = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    auto t = parse_traceparent(h);
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ(format_traceparent(t.value()), h);
    EXPECT_EQ(t->trace_id[0], 0x4b);
    EXPECT_TRUE(edge::test::fails_with(
        parse_traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
        {"traceparent '00-00000000000000000000000000000000-00f067aa0ba", "all-zero trace or span id"}));
    EXPECT_TRUE(edge::test::fails_with(
        parse_traceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"),
        {"traceparent '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba", "ids must be lower-case hex"}));
    EXPECT_TRUE(edge::test::fails_with(
        parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        {"traceparent '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba", "unsupported version 01"}));
    EXPECT_TRUE(edge::test::fails_with(parse_traceparent("garbage"),
                                       {"traceparent 'garbage' is not version-00 shaped (00-<32 hex>-<16"}));
    auto fresh = new_trace();
    EXPECT_TRUE(fresh.valid());
    EXPECT_TRUE(parse_traceparent(format_traceparent(fresh)).ok());
}
