#include "remote/agent/session.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/telemetry/memory.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/telemetry/system_info.h"
#include "remote/protocol/handshake.h"

using edge::telemetry::cpu_count;
using edge::telemetry::cpu_model;
using edge::telemetry::process_memory;
using edge::telemetry::Stopwatch;

namespace edge::agent {
namespace {

// Holds an exclusive flock for the session's lifetime; false when another process holds it.
class BoardLock {
public:
    bool acquire(const std::string& path) {
        if (path.empty()) return true;
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd_ < 0) {
            std::fprintf(stderr, "edge-agent: cannot open lock %s: %s (continuing unlocked)\n", path.c_str(),
                         std::strerror(errno));
            return true;
        }
        return ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
    }
    ~BoardLock() {
        if (fd_ >= 0) ::close(fd_);
    }

private:
    int fd_ = -1;
};

std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf;
}

// Reads until n raw bytes are buffered; false on end of input or a read error.
bool read_raw(int fd, protocol::FrameReader& reader, size_t n, std::vector<uint8_t>& out) {
    uint8_t buf[4096];
    for (;;) {
        if (auto b = reader.take_raw(n)) {
            out = std::move(*b);
            return true;
        }
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        reader.feed(buf, static_cast<size_t>(r));
    }
}

}  // namespace

int run_session(int in_fd, int out_fd, const SessionOptions& opts) {
    Stopwatch uptime;
    protocol::FrameReader reader(opts.max_frame);
    FrameWriter out(out_fd, opts.max_frame);
    std::vector<uint8_t> hs;
    if (!read_raw(in_fd, reader, protocol::kHandshakeRequestBytes, hs)) {
        std::fprintf(stderr, "edge-agent: input closed before the handshake\n");
        return kExitBadHandshake;
    }
    auto version = protocol::decode_handshake_request(hs);
    if (!version.ok()) {
        std::fprintf(stderr, "edge-agent: %s\n", version.message().c_str());
        return kExitBadHandshake;
    }
    protocol::HandshakeReply reply{protocol::HandshakeStatus::Welcome, protocol::kProtocolVersion, version.value()};
    BoardLock lock;
    int code = kExitOk;
    if (version.value() != protocol::kProtocolVersion) {
        reply.status = protocol::HandshakeStatus::VersionMismatch;
        code = kExitVersionMismatch;
    } else if (!lock.acquire(opts.lock_path)) {
        reply.status = protocol::HandshakeStatus::Busy;
        code = kExitBusy;
    }
    auto rb = protocol::encode_handshake_reply(reply);
    if (!out.send_raw(rb.data(), rb.size()).ok()) return kExitIoError;
    if (code != kExitOk) {
        std::fprintf(stderr, "edge-agent: %s\n", protocol::describe(reply).c_str());
        return code;
    }

    BoardSensors sensors(opts.sys_root, opts.proc_root);
    protocol::Hello hello;
    hello.role = "agent";
    hello.software_version = kAgentVersion;
    hello.hostname = host_name();
    hello.cpu_model = cpu_model();
    hello.cpu_threads = static_cast<uint32_t>(cpu_count());
    hello.mem_total_bytes = sensors.mem_total_bytes().value_or(0);
    hello.backend = runtime::describe_backends(opts.worker.backend);
    if (!out.send(hello).ok()) return kExitIoError;

    TelemetryPump pump(out);
    Worker worker(out, pump, sensors, opts.worker);
    (void)out.send(
        protocol::LogLine{0,
                          protocol::LogLevel::Info,
                          {},
                          {},
                          "edge-agent " + std::string(kAgentVersion) + " ready; sensors: " + sensors.describe()});
    uint8_t buf[64 << 10];
    for (;;) {
        // Drain every whole frame buffered so far.
        for (;;) {
            auto m = reader.next();
            if (!m.ok()) {
                std::fprintf(stderr, "edge-agent: %s\n", m.message().c_str());
                (void)out.send(protocol::ErrorMsg{0, protocol::ErrorCode::Protocol, m.message()});
                worker.cancel();
                return kExitProtocolError;
            }
            if (!m.value()) break;
            protocol::Message& msg = *m.value();
            if (auto* l = std::get_if<protocol::LoadEngine>(&msg)) {
                worker.submit(std::move(*l));
            } else if (auto* w = std::get_if<protocol::RunWorkload>(&msg)) {
                worker.submit(std::move(*w));
            } else if (auto* sw = std::get_if<protocol::ServeWorkload>(&msg)) {
                worker.submit(std::move(*sw));
            } else if (auto* q = std::get_if<protocol::MetricsRequest>(&msg)) {
                // Answered at once, even mid-run: the counters are read under their own locks.
                AgentMetrics am;
                am.version = kAgentVersion;
                am.protocol = protocol::kProtocolVersion;
                am.host = hello.hostname;
                am.worker = worker.stats();
                // The loaded engine's backend once there is one; before that, what the hello said.
                am.backend = am.worker.backend.empty() ? hello.backend : am.worker.backend;
                am.uptime_s = uptime.millis() / 1000.0;
                am.telemetry_batches = pump.batches_sent();
                am.telemetry_dropped = pump.samples_dropped();
                auto mem = process_memory();
                if (mem.ok) am.rss_bytes = static_cast<uint64_t>(mem.rss_bytes);
                BoardReading b = sensors.read();
                am.mem_available_bytes = b.mem_available_bytes;
                am.mem_total_bytes = sensors.mem_total_bytes();
                am.power_w = b.power_w;
                am.temperature_c = b.temperature_c;
                (void)out.send(protocol::Metrics{q->request_id, prometheus_text(am)});
            } else if (auto* s = std::get_if<protocol::Stop>(&msg); s && s->scope == protocol::StopScope::Request) {
                // One request, the others untouched; an id that is neither queued nor running
                // is an error to this stop request only.
                const auto [what, type] = worker.cancel_request(s->target);
                const std::string target = "request " + std::to_string(s->target);
                if (what == Worker::Cancelled::NotFound) {
                    (void)out.send(protocol::ErrorMsg{s->request_id, protocol::ErrorCode::BadRequest,
                                                      "stop: " + target +
                                                          " is neither queued nor running (finished, cancelled or "
                                                          "never sent); nothing was cancelled"});
                } else {
                    if (what == Worker::Cancelled::Queued)
                        (void)out.send(protocol::Ack{s->target, type, "cancelled before it started"});
                    (void)out.send(protocol::Ack{
                        s->request_id, protocol::MsgType::Stop,
                        target + (what == Worker::Cancelled::Queued ? " cancelled (it was queued)"
                                                                    : " cancelled (it stops between tokens)")});
                }
            } else if (auto* s = std::get_if<protocol::Stop>(&msg)) {
                size_t n = worker.cancel();
                worker.wait_idle();
                pump.flush();
                std::string detail = std::to_string(n) + " request(s) cancelled";
                if (s->scope == protocol::StopScope::Shutdown) detail += "; agent exiting";
                (void)out.send(protocol::Ack{s->request_id, protocol::MsgType::Stop, detail});
                if (s->scope == protocol::StopScope::Shutdown) return kExitOk;
            } else if (std::holds_alternative<protocol::Hello>(msg) ||
                       std::holds_alternative<protocol::ErrorMsg>(msg)) {
                // The studio's hello and errors are informational.
            } else {
                (void)out.send(protocol::ErrorMsg{0, protocol::ErrorCode::BadRequest,
                                                  std::string("agent does not accept ") +
                                                      protocol::msg_type_name(protocol::type_of(msg)) + " frames"});
            }
        }
        ssize_t r = ::read(in_fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;  // end of input: the client went away
        reader.feed(buf, static_cast<size_t>(r));
        if (out.broken()) break;
    }
    worker.cancel();
    worker.wait_idle();
    pump.flush();
    return kExitOk;
}

}  // namespace edge::agent
