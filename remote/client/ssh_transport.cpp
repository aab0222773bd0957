// The agent on the board over an SSH exec channel: its stdin/stdout are the channel's data.
#include <libssh/libssh.h>

#include <chrono>
#include <thread>

#include "remote/client/ssh_session.h"
#include "remote/client/transport.h"

namespace edge::client {
namespace {

class SshTransport final : public Transport {
public:
    SshTransport(SshSession& s, ssh_channel ch, std::string command) : s_(s), ch_(ch), command_(std::move(command)) {}
    ~SshTransport() override { close(2000); }

    Status write_all(const uint8_t* p, size_t n) override {
        if (!ch_) return err(describe(), ": channel closed");
        while (n > 0) {
            uint32_t chunk = static_cast<uint32_t>(std::min<size_t>(n, 1 << 20));
            int w = ssh_channel_write(ch_, p, chunk);
            if (w == SSH_ERROR || w <= 0) return err(describe(), ": writing to the agent: ", s_.last_error());
            p += w, n -= static_cast<size_t>(w);
        }
        return {};
    }

    Result<size_t> read_some(uint8_t* p, size_t n, int timeout_ms) override {
        if (!ch_) return err(describe(), ": channel closed");
        drain_stderr();
        int r = ssh_channel_read_timeout(ch_, p, static_cast<uint32_t>(n), 0, timeout_ms);
        if (r == SSH_ERROR) return err(describe(), ": the link failed: ", s_.last_error());
        if (r > 0) return static_cast<size_t>(r);
        if (ssh_channel_is_eof(ch_) || ssh_channel_is_closed(ch_)) {
            drain_stderr();
            int status = close(1000);
            return err(describe(), ": the agent ended the stream (",
                       status >= 0 ? "exit status " + std::to_string(status)
                                   : std::string("no exit status: killed by a signal, or the link dropped"),
                       ")", err_text_.empty() ? std::string() : "; stderr: " + err_text_);
        }
        return size_t{0};
    }

    int close(int timeout_ms) override {
        if (!ch_) return status_;
        ssh_channel_send_eof(ch_);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        char sink[4096];
        while (!ssh_channel_is_eof(ch_) && std::chrono::steady_clock::now() < deadline)
            if (ssh_channel_read_timeout(ch_, sink, sizeof sink, 0, 50) == SSH_ERROR) break;
        drain_stderr();
        if (ssh_channel_is_eof(ch_)) status_ = ssh_channel_get_exit_status(ch_);
        ssh_channel_close(ch_);
        ssh_channel_free(ch_);
        ch_ = nullptr;
        return status_;
    }

    std::string describe() const override { return "agent on " + s_.where(); }
    std::string stderr_text() override {
        drain_stderr();
        return err_text_;
    }

private:
    void drain_stderr() {
        if (!ch_) return;
        char buf[4096];
        int r;
        while ((r = ssh_channel_read_nonblocking(ch_, buf, sizeof buf, 1)) > 0) {
            err_text_.append(buf, static_cast<size_t>(r));
            if (err_text_.size() > 16384) err_text_.erase(0, err_text_.size() - 16384);
        }
    }
    SshSession& s_;
    ssh_channel ch_;
    std::string command_;
    int status_ = -1;
    std::string err_text_;
};

}  // namespace

Result<std::unique_ptr<Transport>> start_ssh_agent(SshSession& session, const std::string& command) {
    auto ch = session.open_exec(command);
    if (!ch.ok()) return ch.error();
    return std::unique_ptr<Transport>(new SshTransport(session, ch.value(), command));
}

}  // namespace edge::client
