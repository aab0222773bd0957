// libFuzzer target: the agent's wire protocol, both directions. The first 16 bytes go to both
// handshake decoders (request: the agent's side; reply: the client's), the rest is fed to a
// FrameReader in two chunks and every frame decoded (every message type, agent- and client-bound);
// a frame that decodes is encoded again, and that encoding must survive a decode and re-encode
// byte for byte (the canonical form is a fixed point; bytes, not ==, so NaNs compare).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "remote/protocol/frame.h"
#include "remote/protocol/handshake.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace edge::protocol;
    const size_t hs = size < 16 ? size : 16;
    (void)decode_handshake_request(std::span<const uint8_t>(data, hs));
    (void)decode_handshake_reply(std::span<const uint8_t>(data, hs));
    FrameReader r(1u << 20);
    const size_t rest = size - hs, half = rest / 2;
    r.feed(data + hs, half);
    for (int pass = 0; pass < 2; ++pass) {
        for (int frames = 0; frames < 256; ++frames) {
            auto m = r.next();
            if (!m.ok() || !m.value()) break;
            const uint16_t type = uint16_t(type_of(*m.value()));
            const auto once = encode_payload(*m.value());
            auto back = decode_message(type, once);
            if (!back.ok() || encode_payload(back.value()) != once) std::abort();
        }
        if (pass == 0) r.feed(data + hs + half, rest - half);
    }
    return 0;
}
