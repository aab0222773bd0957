// One agent session over a byte stream (stdin/stdout under an SSH exec channel, or pipes in
// tests): handshake, hello, then requests until stop or end of input.
#pragma once
#include <cstdint>
#include <string>

#include "remote/agent/worker.h"

namespace edge::agent {

inline constexpr const char* kAgentVersion = "0.1.0";

struct SessionOptions {
    WorkerOptions worker;
    std::string lock_path;  // one client per board: a second session that cannot lock is "busy"
    uint32_t max_frame = protocol::kDefaultMaxFrameBytes;
    std::string sys_root = "/sys", proc_root = "/proc";  // sensors (tests fake a board)
};

enum ExitCode : int {
    kExitOk = 0,
    kExitBadHandshake = 2,
    kExitVersionMismatch = 3,
    kExitBusy = 4,
    kExitProtocolError = 5,
    kExitIoError = 6,
};

// Serves one client; returns the process exit code. Diagnostics go to stderr.
int run_session(int in_fd, int out_fd, const SessionOptions& opts);

}  // namespace edge::agent
