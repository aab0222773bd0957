#include "remote/agent/frame_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace edge::agent {

Status FrameWriter::write_all(const uint8_t* p, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd_, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            broken_ = true;
            return err("agent: writing to the client failed: ", std::strerror(errno));
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return {};
}

Status FrameWriter::send_raw(const uint8_t* p, size_t n) {
    std::lock_guard lk(mu_);
    if (broken_) return err("agent: the client stream is closed");
    return write_all(p, n);
}

Status FrameWriter::send(const protocol::Message& m) {
    auto bytes = protocol::encode_frame(m, max_payload_);
    if (!bytes.ok()) return bytes.error();
    return send_raw(bytes->data(), bytes->size());
}

}  // namespace edge::agent
