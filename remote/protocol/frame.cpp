// Frame encoding and the stream reader that assembles frames from arbitrary chunks.
#include "remote/protocol/frame.h"

#include <type_traits>

#include "remote/protocol/wire.h"

namespace edge::protocol {

// The variant's order is the type numbering (index + 1).
static_assert(std::is_same_v<std::variant_alternative_t<0, Message>, Hello>);
static_assert(std::is_same_v<std::variant_alternative_t<5, Message>, ErrorMsg>);
static_assert(std::is_same_v<std::variant_alternative_t<8, Message>, RunResult>);
static_assert(std::is_same_v<std::variant_alternative_t<10, Message>, Metrics>);
static_assert(std::is_same_v<std::variant_alternative_t<11, Message>, ServeWorkload>);
static_assert(std::is_same_v<std::variant_alternative_t<kLastMsgType - 1, Message>, ServeReport>);
static_assert(std::variant_size_v<Message> == kLastMsgType);

Result<std::vector<uint8_t>> encode_frame(const Message& m, uint32_t max_payload) {
    std::vector<uint8_t> payload = encode_payload(m);
    if (payload.size() > max_payload)
        return err("protocol: ", msg_type_name(type_of(m)), " message of ", payload.size(),
                   " bytes exceeds the frame limit of ", max_payload, " bytes");
    std::vector<uint8_t> out;
    out.reserve(kFrameHeaderBytes + payload.size());
    WireWriter w(out);
    w.u32(static_cast<uint32_t>(payload.size()));
    w.u16(static_cast<uint16_t>(type_of(m)));
    w.u16(0);
    w.bytes(payload.data(), payload.size());
    return out;
}

void FrameReader::feed(const uint8_t* data, size_t n) {
    if (failed_ || n == 0) return;
    compact();
    buf_.insert(buf_.end(), data, data + n);
}

void FrameReader::compact() {
    if (pos_ > 0 && (pos_ == buf_.size() || pos_ > (64u << 10))) {
        buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos_));
        pos_ = 0;
    }
}

std::optional<std::vector<uint8_t>> FrameReader::take_raw(size_t n) {
    if (failed_ || buffered() < n) return std::nullopt;
    std::vector<uint8_t> out(buf_.begin() + static_cast<std::ptrdiff_t>(pos_),
                             buf_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return out;
}

Result<std::optional<Frame>> FrameReader::next_frame() {
    if (failed_) return *failed_;
    if (buffered() < kFrameHeaderBytes) return std::optional<Frame>{};
    WireReader h(std::span<const uint8_t>(buf_.data() + pos_, kFrameHeaderBytes));
    uint32_t length = h.u32();
    uint16_t type = h.u16();
    uint16_t flags = h.u16();
    if (type < kFirstMsgType || type > kLastMsgType)
        failed_ = err("protocol: unknown frame type ", type, " (payload length ", length, ")");
    else if (flags != 0)
        failed_ =
            err("protocol: ", msg_type_name(static_cast<MsgType>(type)), " frame has reserved flags 0x", flags, " set");
    else if (length > max_payload_)
        failed_ = err("protocol: ", msg_type_name(static_cast<MsgType>(type)), " frame announces ", length,
                      " bytes, over the limit of ", max_payload_, " bytes");
    if (failed_) return *failed_;
    if (buffered() - kFrameHeaderBytes < length) return std::optional<Frame>{};
    Frame f;
    f.type = type;
    auto begin = buf_.begin() + static_cast<std::ptrdiff_t>(pos_ + kFrameHeaderBytes);
    f.payload.assign(begin, begin + length);
    pos_ += kFrameHeaderBytes + length;
    compact();
    return std::optional<Frame>(std::move(f));
}

Result<std::optional<Message>> FrameReader::next() {
    auto f = next_frame();
    if (!f.ok()) return f.error();
    if (!f.value()) return std::optional<Message>{};
    auto m = decode_message(f.value()->type, f.value()->payload);
    if (!m.ok()) {
        failed_ = m.error();
        return m.error();
    }
    return std::optional<Message>(std::move(m).value());
}

}  // namespace edge::protocol
