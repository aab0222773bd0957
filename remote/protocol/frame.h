// Frames: an 8-byte header (u32 payload length, u16 type, u16 flags = 0) then the payload, all
// little-endian. encode_frame() turns a message into bytes; FrameReader assembles frames from
// arbitrary byte chunks (a pipe, an SSH channel) and decode_message() turns a payload back into
// a message. Malformed input is a Result error, never undefined behaviour.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/core/result.h"
#include "remote/protocol/messages.h"

namespace edge::protocol {

struct FrameHeaderLayout {
    uint32_t payload_length;
    uint16_t type;
    uint16_t flags;  // reserved, must be 0 in version 1
};
static_assert(sizeof(FrameHeaderLayout) == 8, "the frame header is 8 bytes");
inline constexpr size_t kFrameHeaderBytes = sizeof(FrameHeaderLayout);

// A telemetry sample's fixed layout (field order as encoded; no padding in this order).
struct TelemetrySampleLayout {
    uint64_t timestamp_ns;
    uint32_t present;  // presence bits, kSample* below
    uint32_t request_id, prompt_index, tokens_generated;
    double token_latency_ms, ttft_ms, tpot_ms, tokens_per_s;
    uint64_t rss_bytes, device_mem_used_bytes, device_mem_total_bytes, mem_available_bytes;
    uint32_t kv_blocks_used, kv_blocks_free;
    double kv_hit_rate;
    uint64_t kv_evictions;
    double kv_compression_ratio, power_w, temperature_c;
    uint32_t batch_size, queue_length;  // protocol 3
    uint64_t preemptions;
};
static_assert(sizeof(TelemetrySampleLayout) == 152, "a telemetry sample is 152 bytes on the wire");
inline constexpr size_t kTelemetrySampleBytes = sizeof(TelemetrySampleLayout);
inline constexpr size_t kMaxSamplesPerBatch = 4096;

// Presence bits of TelemetrySampleLayout::present. Bits not listed must be 0.
enum SamplePresence : uint32_t {
    kSampleTokenLatency = 1u << 0,
    kSampleTtft = 1u << 1,
    kSampleTpot = 1u << 2,
    kSampleTokensPerS = 1u << 3,
    kSampleRss = 1u << 4,
    kSampleDeviceMemUsed = 1u << 5,
    kSampleDeviceMemTotal = 1u << 6,
    kSampleMemAvailable = 1u << 7,
    kSampleKvBlocks = 1u << 8,
    kSampleKvHitRate = 1u << 9,
    kSampleKvEvictions = 1u << 10,
    kSampleKvCompression = 1u << 11,
    kSamplePower = 1u << 12,
    kSampleTemperature = 1u << 13,
    kSampleBatch = 1u << 14,  // batch_size and queue_length
    kSamplePreemptions = 1u << 15,
    kSampleAllKnown = (1u << 16) - 1,
};

// One ServedRequest on the wire.
struct ServedRequestLayout {
    uint32_t prompt_tokens, output_tokens, preemptions, reserved;
    double arrival_ms, ttft_ms, tpot_ms, finish_ms;
    uint64_t context_tokens, shared_tokens, logits_digest;
};
static_assert(sizeof(ServedRequestLayout) == 72, "a served request is 72 bytes on the wire");

inline constexpr uint32_t kDefaultMaxFrameBytes = 16u << 20;  // 16 MiB of payload

// Header + payload. An error when the payload would exceed max_payload.
Result<std::vector<uint8_t>> encode_frame(const Message& m, uint32_t max_payload = kDefaultMaxFrameBytes);
// The payload alone (what the header's length counts).
std::vector<uint8_t> encode_payload(const Message& m);
// Decodes a payload of the given type; every byte must be consumed.
Result<Message> decode_message(uint16_t type, std::span<const uint8_t> payload);

struct Frame {
    uint16_t type = 0;
    std::vector<uint8_t> payload;
};

class FrameReader {
public:
    explicit FrameReader(uint32_t max_payload = kDefaultMaxFrameBytes) : max_payload_(max_payload) {}

    void feed(const uint8_t* data, size_t n);
    void feed(std::span<const uint8_t> s) { feed(s.data(), s.size()); }
    // Takes exactly n raw bytes (the handshake) once they are buffered.
    std::optional<std::vector<uint8_t>> take_raw(size_t n);
    // The next whole frame, nothing while one is incomplete, or an error. A bad header (unknown
    // type, nonzero flags, oversized length) is reported as soon as the header is in, without
    // waiting for the payload; after an error the reader stays failed (the stream cannot resync).
    Result<std::optional<Frame>> next_frame();
    // next_frame() + decode_message().
    Result<std::optional<Message>> next();

    size_t buffered() const { return buf_.size() - pos_; }
    bool failed() const { return failed_.has_value(); }

private:
    void compact();
    uint32_t max_payload_;
    std::vector<uint8_t> buf_;
    size_t pos_ = 0;
    std::optional<Error> failed_;
};

}  // namespace edge::protocol
