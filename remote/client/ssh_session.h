// An authenticated SSH connection to a board (libssh), following the user's OpenSSH
// conventions: host aliases from ~/.ssh/config, a key file or ssh-agent, and host keys checked
// against known_hosts. No password is ever asked for or stored. Errors name the host and step.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "engine/core/result.h"

struct ssh_session_struct;
struct ssh_channel_struct;

namespace edge::client {

struct SshOptions {
    std::string host;           // name, address or ~/.ssh/config alias
    int port = 0;               // 0: from ssh config, else 22
    std::string user;           // "": from ssh config, else the local user
    std::string identity_file;  // private key file; "": ssh-agent, then the default keys
    bool use_agent = true;      // try ssh-agent (SSH_AUTH_SOCK) when no key file is given
    std::string known_hosts;    // "": ~/.ssh/known_hosts
    // An unknown host key is an error unless the user accepted it explicitly (GUI prompt, CLI
    // flag); accepting appends it to known_hosts. A changed key is always refused.
    bool accept_unknown_host = false;
    // Asked (on the connecting thread) when the host key is unknown and accept_unknown_host is
    // false: fingerprint ("ssh-ed25519 SHA256:...") and "user@host:port"; true accepts it (and
    // appends it to known_hosts), false refuses. A changed key is refused without asking.
    std::function<bool(const std::string& fingerprint, const std::string& where)> confirm_unknown_host;
    bool read_ssh_config = true;
    std::string ssh_config;  // "": ~/.ssh/config
    int timeout_s = 10;
};

struct ExecResult {
    int exit_status = -1;
    std::string out, err;
};

class SshSession {
public:
    static Result<std::unique_ptr<SshSession>> connect(const SshOptions& opts);
    ~SshSession();
    SshSession(const SshSession&) = delete;
    SshSession& operator=(const SshSession&) = delete;

    // Runs a command to completion and captures its output (timeout_ms for the whole run).
    Result<ExecResult> exec(const std::string& command, int timeout_ms = 60000);
    // Runs a command and fails (with its stderr) unless it exits 0.
    Result<std::string> exec_checked(const std::string& command, const std::string& step, int timeout_ms = 60000);
    // An exec channel with the command started; the caller owns (and frees) it.
    Result<ssh_channel_struct*> open_exec(const std::string& command);

    ssh_session_struct* raw() { return s_; }
    // Whether the TCP connection is still up (false after the link dropped).
    bool alive() const;
    const std::string& where() const { return where_; }  // "user@host:port"
    const std::string& host_key_fingerprint() const { return fingerprint_; }
    // The libssh error text of the session, for messages.
    std::string last_error() const;

private:
    SshSession() = default;
    Status verify_host_key(const SshOptions& o);
    Status authenticate(const SshOptions& o);
    ssh_session_struct* s_ = nullptr;
    std::string where_, fingerprint_, host_;
    int port_ = 22;
};

// A single-quoted POSIX shell word.
std::string shell_quote(const std::string& s);

}  // namespace edge::client
