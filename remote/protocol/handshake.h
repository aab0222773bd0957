// The handshake: the first bytes each side sends. Its shape is frozen forever (see
// docs/protocol.md) so that any two builds, however far apart their versions, can tell each other
// exactly why they cannot talk. Everything after it is framed (frame.h) and may change with
// kProtocolVersion.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "engine/core/result.h"

namespace edge::protocol {

// Bumped whenever a frame type, a payload layout or a field's meaning changes.
// 3: serve-workload / serve-report frames (batched serving through the scheduler), telemetry
// samples carry batch size, queue length and preemptions (152 bytes).
// 2: metrics-request / metrics frames (Prometheus text). 1: the first version.
inline constexpr uint32_t kProtocolVersion = 5;
inline constexpr std::array<uint8_t, 8> kMagic = {'E', 'D', 'G', 'E', 'W', 'I', 'R', 'E'};

// client -> agent: magic, u32 version, u32 reserved (0).
struct HandshakeRequestLayout {
    uint8_t magic[8];
    uint32_t version;
    uint32_t reserved;
};
static_assert(sizeof(HandshakeRequestLayout) == 16, "the handshake request is frozen at 16 bytes");

// agent -> client: magic, u32 status, u32 agent version, u32 the client version it saw.
struct HandshakeReplyLayout {
    uint8_t magic[8];
    uint32_t status;
    uint32_t agent_version;
    uint32_t client_version;
};
static_assert(sizeof(HandshakeReplyLayout) == 20, "the handshake reply is frozen at 20 bytes");

inline constexpr size_t kHandshakeRequestBytes = sizeof(HandshakeRequestLayout);
inline constexpr size_t kHandshakeReplyBytes = sizeof(HandshakeReplyLayout);

enum class HandshakeStatus : uint32_t {
    Welcome = 0,          // frames follow
    VersionMismatch = 1,  // both versions are in the reply; the agent closes the stream
    Busy = 2,             // another client holds the board; the agent closes the stream
};
static_assert(static_cast<uint32_t>(HandshakeStatus::Busy) == 2, "handshake status values are frozen");

struct HandshakeReply {
    HandshakeStatus status = HandshakeStatus::Welcome;
    uint32_t agent_version = kProtocolVersion;
    uint32_t client_version = kProtocolVersion;
};

std::array<uint8_t, kHandshakeRequestBytes> encode_handshake_request(uint32_t version = kProtocolVersion);
// Returns the client's version; a wrong size or magic is an error (not a version mismatch).
Result<uint32_t> decode_handshake_request(std::span<const uint8_t> bytes);

std::array<uint8_t, kHandshakeReplyBytes> encode_handshake_reply(const HandshakeReply& r);
Result<HandshakeReply> decode_handshake_reply(std::span<const uint8_t> bytes);

// A sentence for the user ("agent speaks protocol 2, this studio speaks 1: ...").
std::string describe(const HandshakeReply& r);

}  // namespace edge::protocol
