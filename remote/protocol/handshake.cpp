#include "remote/protocol/handshake.h"

#include <algorithm>
#include <vector>

#include "remote/protocol/wire.h"

namespace edge::protocol {
namespace {

bool magic_ok(std::span<const uint8_t> b) {
    return b.size() >= kMagic.size() && std::equal(kMagic.begin(), kMagic.end(), b.begin());
}

template <size_t N>
std::array<uint8_t, N> to_array(const std::vector<uint8_t>& v) {
    std::array<uint8_t, N> a{};
    std::copy_n(v.begin(), N, a.begin());
    return a;
}

}  // namespace

std::array<uint8_t, kHandshakeRequestBytes> encode_handshake_request(uint32_t version) {
    std::vector<uint8_t> out;
    WireWriter w(out);
    w.bytes(kMagic);
    w.u32(version);
    w.u32(0);
    return to_array<kHandshakeRequestBytes>(out);
}

Result<uint32_t> decode_handshake_request(std::span<const uint8_t> bytes) {
    if (bytes.size() != kHandshakeRequestBytes)
        return err("handshake: expected ", kHandshakeRequestBytes, " bytes, got ", bytes.size());
    if (!magic_ok(bytes)) return err("handshake: bad magic (the peer is not an EdgeStudio client)");
    WireReader r(bytes.subspan(kMagic.size()));
    uint32_t version = r.u32();
    (void)r.u32();  // reserved: ignored so that a future client may use it
    return version;
}

std::array<uint8_t, kHandshakeReplyBytes> encode_handshake_reply(const HandshakeReply& rep) {
    std::vector<uint8_t> out;
    WireWriter w(out);
    w.bytes(kMagic);
    w.u32(static_cast<uint32_t>(rep.status));
    w.u32(rep.agent_version);
    w.u32(rep.client_version);
    return to_array<kHandshakeReplyBytes>(out);
}

Result<HandshakeReply> decode_handshake_reply(std::span<const uint8_t> bytes) {
    if (bytes.size() != kHandshakeReplyBytes)
        return err("handshake reply: expected ", kHandshakeReplyBytes, " bytes, got ", bytes.size());
    if (!magic_ok(bytes)) return err("handshake reply: bad magic (the remote program is not edge-agent)");
    WireReader r(bytes.subspan(kMagic.size()));
    uint32_t status = r.u32();
    HandshakeReply rep;
    rep.agent_version = r.u32();
    rep.client_version = r.u32();
    if (status > static_cast<uint32_t>(HandshakeStatus::Busy))
        return err("handshake reply: unknown status ", status, " (agent protocol ", rep.agent_version, ")");
    rep.status = static_cast<HandshakeStatus>(status);
    return rep;
}

std::string describe(const HandshakeReply& r) {
    switch (r.status) {
        case HandshakeStatus::Welcome: return "agent accepted protocol " + std::to_string(r.client_version);
        case HandshakeStatus::VersionMismatch:
            return "protocol version mismatch: the agent speaks " + std::to_string(r.agent_version) +
                   ", this client speaks " + std::to_string(r.client_version) + " (deploy a matching edge-agent)";
        case HandshakeStatus::Busy:
            return "the agent is busy serving another client (protocol " + std::to_string(r.agent_version) + ")";
    }
    return "unknown handshake status";
}

}  // namespace edge::protocol
