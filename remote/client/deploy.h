// Verified deployment onto a board by SFTP:
//   <root>/versions/<version>/<files>   uploaded as <name>.part, SHA-256 checked on the board,
//                                       then renamed into place; plus a SHA256SUMS manifest
//   <root>/current  -> versions/<version>   switched by an atomic rename(2) of a new symlink
//   <root>/previous -> the version current pointed to before (kept for rollback)
// A failure at any step leaves `current` untouched. See docs/remote.md.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "remote/client/sha256_file.h"

namespace edge::remote {

class SshSession;

struct DeployFile {
    std::string local_path;
    std::string remote_name;  // file name inside the version folder ("" = the local file name)
    bool executable = false;
};

struct DeployOptions {
    std::string board_root;   // absolute folder on the board, e.g. /opt/edgestudio
    std::string version;      // "" = a UTC timestamp; must not be the live version
    std::vector<DeployFile> files;
    // Called as bytes go out (file, bytes done, bytes total for that file).
    std::function<void(const std::string&, uint64_t, uint64_t)> progress;
};

struct DeployedFile {
    std::string remote_path;  // final path inside the version folder
    Digest sha256{};
    uint64_t bytes = 0;
};

struct DeployReport {
    std::string version;
    std::string version_dir;
    std::string previous_version;  // "" when this is the first deployment
    std::vector<DeployedFile> files;
    double seconds = 0;
};

Result<DeployReport> deploy(SshSession& ssh, const DeployOptions& opts);

// Points `current` back at `previous` (atomic), swapping the two links.
Status rollback(SshSession& ssh, const std::string& board_root);

}  // namespace edge::remote
