// Verified deployment onto a board by SFTP:
//   <root>/versions/<version>/<files>   uploaded as <name>.part, SHA-256 checked on the board,
//                                       then renamed into place; plus a SHA256SUMS manifest
//   <root>/current  -> versions/<version>   switched by an atomic rename(2) of a new symlink
//   <root>/previous -> the version current pointed to before (kept for rollback)
// A failure at any step leaves `current` untouched. An interrupted upload (link dropped, client
// killed) resumes on the next attempt from the longest prefix of the .part file whose SHA-256 on
// the board matches the local file; deploy_with_retry reconnects with backoff. See docs/remote.md.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "remote/client/sha256_file.h"

namespace edge::client {
class SshSession;
}

namespace edge::client {

struct DeployFile {
    std::string local_path;
    std::string remote_name;  // file name inside the version folder ("" = the local file name)
    bool executable = false;
};

struct DeployOptions {
    std::string board_root;  // absolute folder on the board, e.g. /opt/edgestudio
    std::string version;     // "" = a UTC timestamp; must not be the live version
    std::vector<DeployFile> files;
    // Called as bytes go out (file, bytes done, bytes total for that file).
    std::function<void(const std::string&, uint64_t, uint64_t)> progress;
    // Continue a .part file left by an interrupted attempt (after checking its prefix on the
    // board) and skip files already verified in place; false: always upload from byte 0.
    bool resume = true;
    // Polled between chunks; true stops the upload with a "deploy cancelled" error (`current`
    // untouched; the .part file stays for a later resume) and deploy_with_retry does not retry.
    std::function<bool()> cancelled;
    // Files that depend on the board, chosen on each attempt's session before anything is sent
    // and added to `files` (the edge-agent built for the board's architecture: client::agent_file,
    // board_agent.h). An error ends the deployment without a retry.
    std::function<Result<std::vector<DeployFile>>(SshSession&)> board_files;
};

struct DeployedFile {
    std::string remote_path;  // final path inside the version folder
    Digest sha256{};
    uint64_t bytes = 0;
    uint64_t resumed_from = 0;  // verified bytes already on the board when this attempt began
    uint64_t sent = 0;          // bytes this attempt sent (bytes - resumed_from when it completed)
};

struct DeployReport {
    std::string version;
    std::string version_dir;
    std::string previous_version;  // "" when this is the first deployment
    std::vector<DeployedFile> files;
    double seconds = 0;
    int attempts = 1;         // deploy_with_retry: attempts made (1 = no retry)
    uint64_t bytes_sent = 0;  // deploy_with_retry: bytes sent over all attempts
};

Result<DeployReport> deploy(SshSession& ssh, const DeployOptions& opts);

// Opens a fresh authenticated session to the board (a retry needs a new connection).
using Connector = std::function<Result<std::unique_ptr<SshSession>>()>;

struct RetryPolicy {
    int attempts = 4;          // in all, the first included
    int first_delay_ms = 500;  // before the second attempt; then multiplied by `factor`
    double factor = 2.0;
    int max_delay_ms = 8000;
    // Told about each failed attempt that will be retried (attempt number, error, delay).
    std::function<void(int, const std::string&, int)> on_retry;
};

// deploy() with reconnection: a failure on the link or the board (connect refused, connection
// dropped, a corrupted upload) is retried with exponential backoff, resuming the interrupted
// file; a local problem (missing file, bad name, live version) is reported at once. When an
// earlier attempt had already switched `current` before its link died, the retry recognises the
// finished deployment by its SHA256SUMS and reports success.
Result<DeployReport> deploy_with_retry(const Connector& connect, const DeployOptions& opts,
                                       const RetryPolicy& policy = {});

// Points `current` back at `previous` (atomic), swapping the two links.
Status rollback(SshSession& ssh, const std::string& board_root);

}  // namespace edge::client
