// A byte stream to an agent: an SSH exec channel (ssh_transport) or a local child process over
// pipes (local_transport, for profiling on this machine and for tests).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace edge::client {
class SshSession;
}

namespace edge::client {

class Transport {
public:
    virtual ~Transport() = default;
    virtual Status write_all(const uint8_t* p, size_t n) = 0;
    // Up to n bytes; 0 when nothing arrived within timeout_ms; an error when the stream ended
    // (the agent exited or the link dropped).
    virtual Result<size_t> read_some(uint8_t* p, size_t n, int timeout_ms) = 0;
    // Closes our side and waits up to timeout_ms for the agent to exit; returns its exit status
    // (-1 when unknown).
    virtual int close(int timeout_ms) = 0;
    virtual std::string describe() const = 0;  // "agent on root@board:22" / "local agent pid 42"
    virtual std::string stderr_text() = 0;     // what the agent wrote to stderr so far (bounded)
};

// Starts `argv` as a child process with its stdin/stdout on pipes.
Result<std::unique_ptr<Transport>> start_local_agent(const std::vector<std::string>& argv);
// Starts `command` on the board over an exec channel of `session` (which must outlive it).
Result<std::unique_ptr<Transport>> start_ssh_agent(SshSession& session, const std::string& command);

}  // namespace edge::client
