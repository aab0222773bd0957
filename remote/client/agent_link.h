// The client side of the protocol over any Transport: handshake, hello, then typed messages.
// Single-threaded: one thread owns a link (libssh sessions are not thread-safe).
#pragma once
#include <memory>
#include <optional>

#include "remote/client/transport.h"
#include "remote/protocol/frame.h"
#include "remote/protocol/handshake.h"

namespace edge::client {

struct LinkOptions {
    uint32_t max_frame = protocol::kDefaultMaxFrameBytes;
    int handshake_timeout_ms = 15000;
    std::string software_version = "0.1.0";
};

class AgentLink {
public:
    // Handshake and hello over an already started transport. A version mismatch or a busy agent
    // is an error whose message says which (and carries both versions).
    static Result<std::unique_ptr<AgentLink>> open(std::unique_ptr<Transport> t, const LinkOptions& o = {});

    Status send(const protocol::Message& m);
    // The next message, nothing after timeout_ms, or an error: the agent died or the link
    // dropped (named, with the agent's stderr), or a malformed frame arrived.
    Result<std::optional<protocol::Message>> receive(int timeout_ms);
    // Sends stop(shutdown), waits for its ack (passing other messages to `other` when given), then
    // closes the transport. Returns the agent's exit status.
    Result<int> stop(int timeout_ms, void (*other)(const protocol::Message&, void*) = nullptr, void* ctx = nullptr);

    const protocol::Hello& agent_hello() const { return hello_; }
    Transport& transport() { return *t_; }
    uint32_t next_request_id() { return ++request_id_; }

private:
    AgentLink(std::unique_ptr<Transport> t, const LinkOptions& o) : t_(std::move(t)), opts_(o), reader_(o.max_frame) {}
    Result<std::vector<uint8_t>> read_raw(size_t n, int timeout_ms);
    std::unique_ptr<Transport> t_;
    LinkOptions opts_;
    protocol::FrameReader reader_;
    protocol::Hello hello_;
    uint32_t request_id_ = 0;
};

}  // namespace edge::client
