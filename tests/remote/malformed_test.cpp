// Malformed input from either side is a clean error: unknown types, bad or oversized lengths,
// truncated payloads, trailing bytes, out-of-range enums, hostile counts, random garbage.
#include <gtest/gtest.h>

#include <random>

#include "remote/protocol/frame.h"
#include "remote/protocol/handshake.h"
#include "remote/protocol/wire.h"
#include "test_support.h"

using namespace edge::protocol;

namespace {

std::vector<uint8_t> header(uint32_t len, uint16_t type, uint16_t flags = 0) {
    std::vector<uint8_t> out;
    WireWriter w(out);
    w.u32(len), w.u16(type), w.u16(flags);
    return out;
}

std::string first_error(FrameReader& r) {
    for (int i = 0; i < 100; ++i) {
        auto m = r.next();
        if (!m.ok()) return m.message();
        if (!m.value()) return "";
    }
    return "";
}

}  // namespace

TEST(Malformed, UnknownTypeIsAnErrorAtTheHeader) {
    for (uint16_t type : {uint16_t(0), uint16_t(kLastMsgType + 1), uint16_t(0xffff)}) {
        FrameReader r;
        r.feed(header(4, type));  // payload not sent: reported without waiting for it
        std::string e = first_error(r);
        EXPECT_NE(e.find("unknown frame type " + std::to_string(type)), std::string::npos) << e;
        EXPECT_TRUE(r.failed());
        // Sticky: more bytes do not resynchronise.
        auto ok = encode_frame(Stop{});
        r.feed(ok.value());
        EXPECT_TRUE(edge::test::fails_with(r.next(), {"unknown frame type " + std::to_string(type)}));
    }
    EXPECT_TRUE(edge::test::fails_with(decode_message(0, {}), {"protocol", "unknown frame type 0"}));
    EXPECT_TRUE(edge::test::fails_with(decode_message(100, {}), {"protocol", "unknown frame type 100"}));
}

TEST(Malformed, OversizedLengthIsRejectedBeforeBuffering) {
    FrameReader r(1024);
    r.feed(header(1025, static_cast<uint16_t>(MsgType::LogLine)));
    std::string e = first_error(r);
    EXPECT_NE(e.find("over the limit of 1024"), std::string::npos) << e;
    FrameReader big;  // default 16 MiB
    big.feed(header(0xffffffffu, static_cast<uint16_t>(MsgType::Hello)));
    EXPECT_NE(first_error(big).find("over the limit"), std::string::npos);
    // The sender refuses too.
    LogLine l;
    l.text.assign(2000, 'x');
    auto enc = encode_frame(l, 1024);
    ASSERT_FALSE(enc.ok());
    EXPECT_NE(enc.message().find("exceeds the frame limit"), std::string::npos);
}

TEST(Malformed, ReservedFlagsAreRejected) {
    FrameReader r;
    r.feed(header(0, static_cast<uint16_t>(MsgType::Hello), 1));
    EXPECT_NE(first_error(r).find("reserved flags"), std::string::npos);
}

TEST(Malformed, TruncatedPayloadsOfEveryTypeAreErrors) {
    // Take a valid payload of each type, cut it, and re-frame it with the shorter length.
    std::vector<Message> msgs = {Hello{"a", "b", "c", "d", 1, 2, "e"},
                                 LoadEngine{1, "p", Sha256{}, "t", "tp"},
                                 RunWorkload{1, {"x", "y"}, 5, 0, 0, 1, 2, 20, ""},
                                 TelemetryBatch{0, {TelemetrySample{}}},
                                 LogLine{1, LogLevel::Info, {}, {}, "t"},
                                 ErrorMsg{1, ErrorCode::Internal, "m"},
                                 Stop{1, StopScope::Cancel},
                                 Ack{1, MsgType::Stop, "d"},
                                 RunResult{1, 2, 3, 4, 5, 6, "t"}};
    for (const auto& m : msgs) {
        auto payload = encode_payload(m);
        for (size_t cut = 0; cut < payload.size(); ++cut) {
            auto res = decode_message(static_cast<uint16_t>(type_of(m)), std::span(payload.data(), cut));
            ASSERT_FALSE(res.ok()) << msg_type_name(type_of(m)) << " cut at " << cut;
            EXPECT_NE(res.message().find(msg_type_name(type_of(m))), std::string::npos) << res.message();
        }
        // Trailing bytes are a bad length too.
        payload.push_back(0);
        auto res = decode_message(static_cast<uint16_t>(type_of(m)), payload);
        ASSERT_FALSE(res.ok());
        EXPECT_NE(res.message().find("trailing"), std::string::npos) << res.message();
    }
}

TEST(Malformed, TruncatedStreamWaitsThenReportsNothingWrong) {
    auto b = encode_frame(Ack{1, MsgType::Stop, "x"}).value();
    FrameReader r;
    r.feed(b.data(), b.size() - 1);
    auto m = r.next();
    ASSERT_TRUE(m.ok());
    EXPECT_FALSE(m.value().has_value());  // incomplete, not an error
    r.feed(b.data() + b.size() - 1, 1);
    auto m2 = r.next();
    ASSERT_TRUE(m2.ok());
    EXPECT_TRUE(m2.value().has_value());
}

TEST(Malformed, OutOfRangeFieldsAndHostileCountsAreErrors) {
    auto bad = [](MsgType t, const std::vector<uint8_t>& p) {
        auto r = decode_message(static_cast<uint16_t>(t), p);
        return r.ok() ? std::string() : r.message();
    };
    // Stop with scope 9
    EXPECT_NE(bad(MsgType::Stop, {1, 0, 0, 0, 9}), "");
    // Error with code 0 and code 99
    EXPECT_NE(bad(MsgType::Error, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "");
    EXPECT_NE(bad(MsgType::Error, {0, 0, 0, 0, 99, 0, 0, 0, 0, 0}), "");
    // Ack of type 77
    EXPECT_NE(bad(MsgType::Ack, {0, 0, 0, 0, 77, 0, 0, 0, 0, 0}), "");
    // RunWorkload claiming 4 billion prompts in a tiny payload: no huge allocation, an error.
    std::vector<uint8_t> p;
    WireWriter w(p);
    w.u32(1), w.u32(0xffffffffu);
    EXPECT_NE(bad(MsgType::RunWorkload, p), "");
    // String longer than the payload.
    std::vector<uint8_t> s;
    WireWriter ws(s);
    ws.u32(1), ws.u32(1000), ws.u8('x');
    EXPECT_NE(bad(MsgType::LoadEngine, s), "");
    // Telemetry with unknown presence bits.
    auto tb = encode_payload(TelemetryBatch{0, {TelemetrySample{}}});
    tb[8 + 8 + 3] = 0x80;  // presence bit 31
    EXPECT_NE(bad(MsgType::TelemetryBatch, tb).find("outside its range"), std::string::npos);
    // Log level 200.
    auto ll = encode_payload(LogLine{});
    ll[8] = 200;
    EXPECT_NE(bad(MsgType::LogLine, ll), "");
}

TEST(Malformed, HandshakeGarbageIsAnErrorNotAMismatch) {
    std::vector<uint8_t> http = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', '\r', '\n'};
    auto r = decode_handshake_request(http);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("bad magic"), std::string::npos);
    EXPECT_TRUE(edge::test::fails_with(decode_handshake_request(std::span(http.data(), 5)),
                                       {"handshake", "expected 16 bytes, got 5"}));
    std::vector<uint8_t> rep(kHandshakeReplyBytes, 0);
    EXPECT_TRUE(edge::test::fails_with(decode_handshake_reply(rep),
                                       {"handshake reply", "bad magic (the remote program is not edge-agent)"}));
    auto good = encode_handshake_reply({HandshakeStatus::Welcome, 1, 1});
    good[8] = 7;  // unknown status
    EXPECT_TRUE(edge::test::fails_with(decode_handshake_reply(good),
                                       {"handshake reply", "unknown status 7 (agent protocol 1)"}));
}

TEST(Malformed, RandomGarbageNeverCrashes) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 2000; ++trial) {
        std::vector<uint8_t> junk(rng() % 300);
        for (auto& b : junk) b = static_cast<uint8_t>(rng());
        if (junk.size() >= 6 && trial % 2) {  // plausible headers, to reach the payload decoders
            junk[0] = static_cast<uint8_t>(junk.size() - 8 + (rng() % 3) - 1);
            junk[1] = junk[2] = junk[3] = 0;
            junk[4] = static_cast<uint8_t>(1 + rng() % kLastMsgType), junk[5] = 0;
            if (junk.size() > 7) junk[6] = junk[7] = 0;
        }
        FrameReader r(4096);
        r.feed(junk);
        (void)first_error(r);
        for (uint16_t t = kFirstMsgType; t <= kLastMsgType; ++t) (void)decode_message(t, junk);
    }
    SUCCEED();
}
