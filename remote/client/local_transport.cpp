// The agent as a local child process over pipes.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "remote/client/transport.h"

namespace edge::client {
namespace {

class LocalTransport final : public Transport {
public:
    LocalTransport(pid_t pid, int in, int out, int errfd) : pid_(pid), in_(in), out_(out), err_(errfd) {}
    ~LocalTransport() override { close(2000); }

    Status write_all(const uint8_t* p, size_t n) override {
        while (n > 0) {
            ssize_t w = ::write(in_, p, n);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return err(describe(), ": write failed: ", std::strerror(errno));
            p += w, n -= static_cast<size_t>(w);
        }
        return {};
    }

    Result<size_t> read_some(uint8_t* p, size_t n, int timeout_ms) override {
        drain_stderr();
        if (out_ < 0) return err(describe(), ": stream closed");
        pollfd pfd{out_, POLLIN, 0};
        int rc = ::poll(&pfd, 1, timeout_ms);
        if (rc < 0 && errno != EINTR) return err(describe(), ": poll: ", std::strerror(errno));
        if (rc <= 0) return size_t{0};
        ssize_t r = ::read(out_, p, n);
        if (r < 0 && errno == EINTR) return size_t{0};
        if (r <= 0) {
            int status = close(1000);
            drain_stderr();
            return err(describe(), ": the agent closed its output (exit status ", status, ")",
                       err_text_.empty() ? std::string() : "; stderr: " + err_text_);
        }
        return static_cast<size_t>(r);
    }

    int close(int timeout_ms) override {
        if (in_ >= 0) ::close(in_), in_ = -1;
        // Keep reading (and dropping) its output while it exits, so a full pipe cannot block it.
        if (out_ >= 0) ::fcntl(out_, F_SETFL, O_NONBLOCK);
        if (pid_ > 0) {
            auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
            for (;;) {
                int st = 0;
                pid_t r = ::waitpid(pid_, &st, WNOHANG);
                if (r == pid_) {
                    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                    pid_ = -1;
                    break;
                }
                if (std::chrono::steady_clock::now() > deadline) {
                    ::kill(pid_, SIGKILL);  // our own child, by pid
                    ::waitpid(pid_, &st, 0);
                    status_ = 128 + SIGKILL;
                    pid_ = -1;
                    break;
                }
                char sink[65536];
                while (out_ >= 0 && ::read(out_, sink, sizeof sink) > 0) {}
                drain_stderr();
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        }
        if (out_ >= 0) ::close(out_), out_ = -1;
        drain_stderr();
        if (err_ >= 0) ::close(err_), err_ = -1;
        return status_;
    }

    std::string describe() const override { return "local agent (pid " + std::to_string(pid_) + ")"; }
    std::string stderr_text() override {
        drain_stderr();
        return err_text_;
    }

private:
    void drain_stderr() {
        if (err_ < 0) return;
        char buf[4096];
        ssize_t r;
        while ((r = ::read(err_, buf, sizeof buf)) > 0) {
            err_text_.append(buf, static_cast<size_t>(r));
            if (err_text_.size() > 16384) err_text_.erase(0, err_text_.size() - 16384);
        }
    }
    pid_t pid_;
    int in_, out_, err_;
    int status_ = -1;
    std::string err_text_;
};

}  // namespace

Result<std::unique_ptr<Transport>> start_local_agent(const std::vector<std::string>& argv) {
    if (argv.empty()) return err("local agent: no command");
    int in[2], out[2], er[2];
    if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(er, O_CLOEXEC))
        return err("local agent: pipe: ", std::strerror(errno));
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) return err("local agent: fork: ", std::strerror(errno));
    if (pid == 0) {
        ::dup2(in[0], 0), ::dup2(out[1], 1), ::dup2(er[1], 2);
        ::execv(args[0], args.data());
        _exit(127);
    }
    ::close(in[0]), ::close(out[1]), ::close(er[1]);
    ::fcntl(er[0], F_SETFL, O_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);  // a dead agent shows up as a write error
    return std::unique_ptr<Transport>(new LocalTransport(pid, in[1], out[0], er[0]));
}

}  // namespace edge::client
