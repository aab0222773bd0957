// Writes frames to a file descriptor (the agent's stdout), whole frames at a time, from any
// thread. A closed peer (EPIPE) marks the writer broken; later sends fail fast.
#pragma once
#include <atomic>
#include <mutex>

#include "engine/core/result.h"
#include "remote/protocol/frame.h"

namespace edge::agent {

class FrameWriter {
public:
    explicit FrameWriter(int fd, uint32_t max_payload = protocol::kDefaultMaxFrameBytes)
        : fd_(fd), max_payload_(max_payload) {}
    Status send(const protocol::Message& m);
    Status send_raw(const uint8_t* p, size_t n);  // the handshake reply
    bool broken() const { return broken_; }

private:
    Status write_all(const uint8_t* p, size_t n);
    int fd_;
    uint32_t max_payload_;
    std::mutex mu_;
    std::atomic<bool> broken_{false};
};

}  // namespace edge::agent
