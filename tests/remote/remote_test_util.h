// Helpers shared by the remote tests (defined in agent_process_test.cpp and sshd_fixture.cpp).
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "remote/client/agent_link.h"

namespace edge::test {

struct Collected {
    std::vector<protocol::TelemetryBatch> batches;
    std::vector<double> ages_ms;  // receive time - board timestamp of each batch's newest sample
    std::vector<protocol::RunResult> results;
    std::vector<protocol::LogLine> logs;
    std::optional<protocol::Ack> ack;
    std::optional<protocol::ErrorMsg> error;
    std::optional<protocol::ServeReport> serve;
};

// Receives until the ack or error of request `id` (or the timeout).
Collected collect(client::AgentLink& link, uint32_t id, int timeout_ms);
// Asserts a finished run with results for every prompt and telemetry with the expected fields.
void expect_live_telemetry(const Collected& c, size_t prompts);

// A real OpenSSH server on 127.0.0.1 with its own host key and an authorized client key, all in a
// temporary folder; stopped by PID when destroyed.
class Sshd {
public:
    // nullptr with *why filled when sshd cannot start. With `netns`, sshd runs inside that network
    // namespace (`ip netns exec`) listening on `address`:`port` there (port 0: a free one here).
    // Sessions run with HOME=dir/home; `session_env`: more "NAME=value" words for their
    // environment, space-separated (e.g. "PATH=..." for a board whose commands differ from this
    // host's).
    static std::unique_ptr<Sshd> start(std::string* why, const std::string& netns = "",
                                       const std::string& address = "127.0.0.1", int port = 0,
                                       const std::string& session_env = "");
    // A board whose `uname -m` prints `machine` (a `uname` first on the sessions' PATH, set by
    // its session_env PATH): what deploy asks to choose the agent.
    static std::unique_ptr<Sshd> start_as_machine(std::string* why, const std::string& machine);
    ~Sshd();

    int port = 0;
    std::filesystem::path dir;
    std::string user;
    std::string client_key;  // private key file authorized for `user`
    std::string host_pub;    // "ssh-ed25519 AAAA..." of the server
    std::string address = "127.0.0.1";
    std::string known_hosts_line() const;  // "[address]:port ssh-ed25519 AAAA..."
    // Writes dir/known_hosts trusting this server (the line above) and returns its path.
    std::string write_known_hosts() const;
    std::string log() const;
    // The board goes away: the listener and every session it forked are killed, so connections
    // in use drop mid-transfer (the destructor stops only the listener).
    void kill_with_sessions();

private:
    pid_t pid_ = -1;
};

// Runs a shell command line; stdout and stderr captured apart (stderr through a file in `tmp`).
struct Shell {
    int rc = -1;
    std::string out, err;
};
Shell run_shell(const std::string& command, const std::filesystem::path& tmp);
// A shell command line running `exe` with `args`, each quoted.
std::string command_line(const std::string& exe, const std::vector<std::string>& args);
std::string read_file(const std::filesystem::path& p);

// Generates an ed25519 key pair (ssh-keygen) at path; returns the public key line.
std::string make_key(const std::filesystem::path& path);

}  // namespace edge::test
