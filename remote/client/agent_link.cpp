#include "remote/client/agent_link.h"

#include <chrono>

namespace edge::client {
namespace {
using Clock = std::chrono::steady_clock;
int ms_left(Clock::time_point deadline) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return ms > 0 ? static_cast<int>(ms) : 0;
}
}  // namespace

Result<std::vector<uint8_t>> AgentLink::read_raw(size_t n, int timeout_ms) {
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    uint8_t buf[4096];
    for (;;) {
        if (auto b = reader_.take_raw(n)) return std::move(*b);
        int left = ms_left(deadline);
        if (left == 0) return err(t_->describe(), ": no handshake reply within ", timeout_ms, " ms");
        auto r = t_->read_some(buf, std::min(sizeof buf, n - reader_.buffered()), left);
        if (!r.ok()) return err("handshake: ", r.message());
        reader_.feed(buf, r.value());
    }
}

Result<std::unique_ptr<AgentLink>> AgentLink::open(std::unique_ptr<Transport> t, const LinkOptions& o) {
    std::unique_ptr<AgentLink> l(new AgentLink(std::move(t), o));
    auto hs = protocol::encode_handshake_request();
    EDGE_TRY(l->t_->write_all(hs.data(), hs.size()));
    auto raw = l->read_raw(protocol::kHandshakeReplyBytes, o.handshake_timeout_ms);
    if (!raw.ok()) return raw.error();
    auto reply = protocol::decode_handshake_reply(raw.value());
    if (!reply.ok()) return err(l->t_->describe(), ": ", reply.message());
    if (reply->status != protocol::HandshakeStatus::Welcome)
        return err(l->t_->describe(), ": ", protocol::describe(reply.value()));
    protocol::Hello mine;
    mine.role = "studio";
    mine.software_version = o.software_version;
    EDGE_TRY(l->send(mine));
    auto deadline = Clock::now() + std::chrono::milliseconds(o.handshake_timeout_ms);
    for (;;) {
        auto m = l->receive(ms_left(deadline));
        if (!m.ok()) return m.error();
        if (!m.value()) {
            if (ms_left(deadline) == 0) return err(l->t_->describe(), ": no hello from the agent");
            continue;
        }
        if (auto* h = std::get_if<protocol::Hello>(&*m.value())) {
            l->hello_ = *h;
            return l;
        }
        return err(l->t_->describe(), ": expected hello, got ", protocol::msg_type_name(protocol::type_of(*m.value())));
    }
}

Status AgentLink::send(const protocol::Message& m) {
    auto bytes = protocol::encode_frame(m, opts_.max_frame);
    if (!bytes.ok()) return bytes.error();
    return t_->write_all(bytes->data(), bytes->size());
}

Result<std::optional<protocol::Message>> AgentLink::receive(int timeout_ms) {
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    uint8_t buf[64 << 10];
    for (;;) {
        auto m = reader_.next();
        if (!m.ok()) return err(t_->describe(), ": ", m.message());
        if (m.value()) return m;
        auto r = t_->read_some(buf, sizeof buf, ms_left(deadline));
        if (!r.ok()) return r.error();
        if (r.value() == 0) {
            if (ms_left(deadline) == 0) return std::optional<protocol::Message>{};
            continue;
        }
        reader_.feed(buf, r.value());
    }
}

Result<int> AgentLink::stop(int timeout_ms, void (*other)(const protocol::Message&, void*), void* ctx) {
    uint32_t id = next_request_id();
    EDGE_TRY(send(protocol::Stop{id, protocol::StopScope::Shutdown}));
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        auto m = receive(ms_left(deadline));
        if (!m.ok()) return m.error();
        if (!m.value()) {
            if (ms_left(deadline) == 0) break;
            continue;
        }
        auto* ack = std::get_if<protocol::Ack>(&*m.value());
        if (ack && ack->of == protocol::MsgType::Stop && ack->request_id == id) break;
        if (other) other(*m.value(), ctx);
    }
    return t_->close(ms_left(deadline) + 1000);
}

}  // namespace edge::client
