#include "remote/client/deploy.h"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <thread>

#include "remote/client/ssh_session.h"

namespace edge::client {
namespace {

struct Sftp {
    sftp_session s = nullptr;
    ~Sftp() {
        if (s) sftp_free(s);
    }
};

std::string sftp_err(SshSession& ssh, sftp_session s) {
    return std::string(ssh.last_error()) + " (sftp status " + std::to_string(sftp_get_error(s)) + ")";
}

std::string timestamp_version() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

bool valid_name(const std::string& n) {
    if (n.empty() || n == "." || n == ".." || n.size() > 200) return false;
    for (char c : n)
        if (c == '/' || c == '\0' || c == '\n') return false;
    return true;
}

Status mkdir_p(SshSession& ssh, sftp_session s, const std::string& dir) {
    std::string path;
    for (size_t i = 1; i <= dir.size(); ++i) {
        if (i < dir.size() && dir[i] != '/') continue;
        path = dir.substr(0, i);
        sftp_attributes a = sftp_stat(s, path.c_str());
        if (a) {
            bool is_dir = a->type == SSH_FILEXFER_TYPE_DIRECTORY;
            sftp_attributes_free(a);
            if (!is_dir) return err("ssh ", ssh.where(), ": deploy: ", path, " exists and is not a folder");
            continue;
        }
        if (sftp_mkdir(s, path.c_str(), 0755) != SSH_OK)
            return err("ssh ", ssh.where(), ": deploy: creating folder ", path, ": ", sftp_err(ssh, s));
    }
    return {};
}

// Target of a symlink relative to root ("versions/X"), or "" when absent.
std::string read_link(sftp_session s, const std::string& path) {
    char* t = sftp_readlink(s, path.c_str());
    if (!t) return {};
    std::string r = t;
    ssh_string_free_char(t);
    return r;
}

// SHA-256 of the first n bytes of a board file (coreutils head + sha256sum).
Result<Digest> remote_prefix_sha256(SshSession& ssh, const std::string& path, uint64_t n) {
    auto out =
        ssh.exec_checked("head -c " + std::to_string(n) + " -- " + shell_quote(path) + " | sha256sum -b",
                         "deploy: hashing the first " + std::to_string(n) + " bytes of " + path + " on the board");
    if (!out.ok()) return out.error();
    return digest_from_hex(out->substr(0, 64));
}

// Uploads local into remote (a .part file). With o.resume, an existing remote file whose prefix
// hashes like the local file's is continued from its end; anything else starts from byte 0.
Status upload(SshSession& ssh, sftp_session s, const DeployOptions& o, const std::string& local,
              const std::string& remote, DeployedFile& d) {
    std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(local.c_str(), "rb"), &std::fclose);
    if (!in) return err("deploy: cannot open ", local);
    std::error_code ec;
    uint64_t total = std::filesystem::file_size(local, ec);
    if (ec) return err("deploy: ", local, ": ", ec.message());
    uint64_t offset = 0;
    if (o.resume) {
        if (sftp_attributes a = sftp_stat(s, remote.c_str())) {
            uint64_t have = a->size;
            sftp_attributes_free(a);
            if (have > 0 && have <= total) {
                auto mine = sha256_of_file_prefix(local, have);
                auto theirs = remote_prefix_sha256(ssh, remote, have);
                if (!theirs.ok() && !ssh.alive()) return theirs.error();
                if (mine.ok() && theirs.ok() && mine.value() == theirs.value()) offset = have;
            }
        }
    }
    d.resumed_from = offset;
    d.sent = 0;
    sftp_file f = sftp_open(s, remote.c_str(), offset > 0 ? O_WRONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!f)
        return err("ssh ", ssh.where(), ": deploy: ", offset > 0 ? "reopening " : "creating ", remote, ": ",
                   sftp_err(ssh, s));
    if (offset > 0 && (sftp_seek64(f, offset) != 0 || ::fseeko(in.get(), static_cast<off_t>(offset), SEEK_SET) != 0)) {
        sftp_close(f);
        return err("ssh ", ssh.where(), ": deploy: seeking to byte ", offset, " of ", remote, " to resume");
    }
    std::vector<char> buf(64 << 10);
    d.bytes = offset;
    if (o.progress) o.progress(local, d.bytes, total);
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), in.get())) > 0) {
        ssize_t w = sftp_write(f, buf.data(), n);
        if (w != static_cast<ssize_t>(n)) {
            std::string e = sftp_err(ssh, s);
            sftp_close(f);
            return err("ssh ", ssh.where(), ": deploy: upload of ", local, " interrupted: writing ", remote,
                       " at byte ", d.bytes, " of ", total, ": ", e);
        }
        d.bytes += n;
        d.sent += n;
        if (o.progress) o.progress(local, d.bytes, total);
        if (o.cancelled && o.cancelled()) {
            sftp_close(f);
            return err("deploy cancelled at byte ", d.bytes, " of ", total, " of ", local, " (", ssh.where(),
                       ": current version unchanged)");
        }
    }
    if (std::ferror(in.get())) {
        sftp_close(f);
        return err("deploy: read error in ", local);
    }
    if (sftp_extension_supported(s, "fsync@openssh.com", "1") && sftp_fsync(f) != 0) {
        std::string e = sftp_err(ssh, s);
        sftp_close(f);
        return err("ssh ", ssh.where(), ": deploy: fsync of ", remote, ": ", e);
    }
    if (sftp_close(f) != SSH_NO_ERROR)
        return err("ssh ", ssh.where(), ": deploy: closing ", remote, ": ", sftp_err(ssh, s));
    return {};
}

// Hashes a file on the board with sha256sum (coreutils) and compares.
Status verify_remote(SshSession& ssh, const std::string& path, const Digest& want) {
    auto out = ssh.exec_checked("sha256sum -b -- " + shell_quote(path), "deploy: hashing " + path + " on the board");
    if (!out.ok()) return out.error();
    auto got = digest_from_hex(out->substr(0, 64));
    if (!got.ok()) return err("ssh ", ssh.where(), ": deploy: sha256sum printed '", out.value(), "'");
    if (got.value() != want)
        return err("ssh ", ssh.where(), ": deploy: ", path, " has SHA-256 ", digest_hex(got.value()), " on the board, ",
                   digest_hex(want), " here: the upload was corrupted or truncated (nothing was switched)");
    return {};
}

// Atomically points root/<link> at target: a new symlink renamed over the old one (rename(2)).
Status switch_link(SshSession& ssh, const std::string& root, const std::string& link, const std::string& target) {
    std::string tmp = "." + link + ".new";
    std::string cmd = "cd " + shell_quote(root) + " && ln -sfn " + shell_quote(target) + " " + shell_quote(tmp) +
                      " && mv -Tf " + shell_quote(tmp) + " " + shell_quote(link);
    auto r = ssh.exec_checked(cmd, "deploy: switching " + root + "/" + link + " to " + target);
    if (!r.ok()) return r.error();
    return {};
}

// retryable: set once the failure is the board's or the link's (not a local problem).
// finished_ok: accept a live `version` whose SHA256SUMS equals ours (an earlier attempt switched).
Result<DeployReport> deploy_impl(SshSession& ssh, const DeployOptions& o, bool& retryable, bool finished_ok) {
    retryable = false;
    auto t0 = std::chrono::steady_clock::now();
    if (o.board_root.empty() || o.board_root[0] != '/')
        return err("deploy: the board folder must be an absolute path (got '", o.board_root, "')");
    if (o.files.empty()) return err("deploy: nothing to upload");
    DeployReport rep;
    rep.version = o.version.empty() ? timestamp_version() : o.version;
    if (!valid_name(rep.version)) return err("deploy: bad version name '", rep.version, "'");
    std::string root = o.board_root;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    rep.version_dir = root + "/versions/" + rep.version;

    // Hash locally first: a missing file fails before anything on the board changes.
    struct Item {
        const DeployFile* f;
        std::string name;
        Digest digest;
        uint64_t size;
    };
    std::vector<Item> items;
    std::string manifest;
    for (const auto& f : o.files) {
        auto d = sha256_of_file(f.local_path);
        if (!d.ok()) return err("deploy: ", d.message());
        std::string name =
            f.remote_name.empty() ? std::filesystem::path(f.local_path).filename().string() : f.remote_name;
        if (!valid_name(name)) return err("deploy: bad remote file name '", name, "'");
        std::error_code ec;
        uint64_t size = std::filesystem::file_size(f.local_path, ec);
        items.push_back({&f, name, d.value(), size});
        manifest += digest_hex(d.value()) + " *" + name + "\n";
    }

    retryable = true;
    Sftp sftp;
    sftp.s = sftp_new(ssh.raw());
    if (!sftp.s) return err("ssh ", ssh.where(), ": deploy: starting SFTP: ", ssh.last_error());
    if (sftp_init(sftp.s) != SSH_OK)
        return err("ssh ", ssh.where(), ": deploy: SFTP handshake: ", sftp_err(ssh, sftp.s));

    std::string live = read_link(sftp.s, root + "/current");
    if (live == "versions/" + rep.version) {
        if (finished_ok) {
            auto sums = ssh.exec("cat -- " + shell_quote(rep.version_dir + "/SHA256SUMS"));
            if (sums.ok() && sums->exit_status == 0 && sums->out == manifest) {
                rep.previous_version = read_link(sftp.s, root + "/previous");
                if (rep.previous_version.rfind("versions/", 0) == 0) rep.previous_version.erase(0, 9);
                for (const auto& it : items)
                    rep.files.push_back({rep.version_dir + "/" + it.name, it.digest, it.size, it.size, 0});
                rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                return rep;
            }
        }
        retryable = false;
        return err("deploy: version '", rep.version, "' is live on ", ssh.where(), "; deploy under a new version name");
    }
    rep.previous_version = live.rfind("versions/", 0) == 0 ? live.substr(9) : live;
    EDGE_TRY(mkdir_p(ssh, sftp.s, rep.version_dir));

    for (const auto& it : items) {
        DeployedFile d{rep.version_dir + "/" + it.name, it.digest, 0};
        std::string part = d.remote_path + ".part";
        bool in_place = false;
        if (o.resume) {
            // A file an earlier attempt already verified and renamed: check it again, keep it.
            if (sftp_attributes a = sftp_stat(sftp.s, d.remote_path.c_str())) {
                bool same_size = a->size == it.size;
                sftp_attributes_free(a);
                in_place = same_size && verify_remote(ssh, d.remote_path, it.digest).ok();
                if (in_place) d.bytes = d.resumed_from = it.size;
            }
        }
        if (!in_place) {
            EDGE_TRY(upload(ssh, sftp.s, o, it.f->local_path, part, d));
            EDGE_TRY(verify_remote(ssh, part, it.digest));
        }
        const std::string& placed = in_place ? d.remote_path : part;
        if (it.f->executable && sftp_chmod(sftp.s, placed.c_str(), 0755) != SSH_OK)
            return err("ssh ", ssh.where(), ": deploy: chmod ", placed, ": ", sftp_err(ssh, sftp.s));
        if (!in_place) {
            sftp_unlink(sftp.s, d.remote_path.c_str());  // a stale file of another content
            if (sftp_rename(sftp.s, part.c_str(), d.remote_path.c_str()) != SSH_OK)
                return err("ssh ", ssh.where(), ": deploy: renaming ", part, ": ", sftp_err(ssh, sftp.s));
        }
        rep.files.push_back(std::move(d));
    }
    std::string mpath = rep.version_dir + "/SHA256SUMS";
    sftp_file mf = sftp_open(sftp.s, mpath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!mf) return err("ssh ", ssh.where(), ": deploy: creating ", mpath, ": ", sftp_err(ssh, sftp.s));
    bool wrote = sftp_write(mf, manifest.data(), manifest.size()) == static_cast<ssize_t>(manifest.size());
    sftp_close(mf);
    if (!wrote) return err("ssh ", ssh.where(), ": deploy: writing ", mpath, ": ", sftp_err(ssh, sftp.s));

    // Everything is in place and verified: switch. previous first, so a crash between the two
    // renames leaves current on the old, complete version.
    if (!live.empty()) EDGE_TRY(switch_link(ssh, root, "previous", live));
    EDGE_TRY(switch_link(ssh, root, "current", "versions/" + rep.version));
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& f : rep.files) rep.bytes_sent += f.sent;
    return rep;
}

}  // namespace

Result<DeployReport> deploy(SshSession& ssh, const DeployOptions& o) {
    bool retryable = false;
    return deploy_impl(ssh, o, retryable, false);
}

Result<DeployReport> deploy_with_retry(const Connector& connect, const DeployOptions& o, const RetryPolicy& p) {
    auto t0 = std::chrono::steady_clock::now();
    DeployOptions opts = o;
    if (opts.version.empty()) opts.version = timestamp_version();  // one name for every attempt
    // Local problems are reported before any connection (they would fail every attempt).
    for (const auto& f : opts.files) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(f.local_path, ec) || ::access(f.local_path.c_str(), R_OK) != 0)
            return err("deploy: ", f.local_path, ": not a readable file (nothing was sent)");
    }
    uint64_t sent = 0;
    int delay = p.first_delay_ms;
    std::string last;
    int attempts = std::max(1, p.attempts);
    for (int attempt = 1; attempt <= attempts; ++attempt) {
        bool retryable = true;
        Result<DeployReport> r = err("deploy: not attempted");
        auto ssh = connect();
        if (!ssh.ok()) {
            r = ssh.error();
        } else {
            // Count what this attempt sends even when it fails midway.
            DeployOptions counted = opts;
            if (o.board_files) {
                auto extra = o.board_files(*ssh.value());
                if (!extra.ok()) return extra.error();  // e.g. no agent for the board's architecture
                counted.files.insert(counted.files.begin(), extra->begin(), extra->end());
            }
            uint64_t attempt_sent = 0, last_done = 0;
            std::string last_file;
            counted.progress = [&](const std::string& f, uint64_t done, uint64_t total) {
                if (f != last_file || done < last_done) last_file = f, last_done = done;
                attempt_sent += done - last_done;
                last_done = done;
                if (o.progress) o.progress(f, done, total);
            };
            r = deploy_impl(*ssh.value(), counted, retryable, attempt > 1);
            sent += attempt_sent;
        }
        if (r.ok()) {
            r->attempts = attempt;
            r->bytes_sent = sent;
            r->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            return r;
        }
        last = r.message();
        if (!retryable || attempt == attempts || (o.cancelled && o.cancelled())) break;
        if (p.on_retry) p.on_retry(attempt, last, delay);
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        delay = std::min(p.max_delay_ms, static_cast<int>(delay * p.factor));
    }
    return err(last,
               attempts > 1 ? " (deploy gave up after " + std::to_string(attempts) + " attempts)" : std::string());
}

Status rollback(SshSession& ssh, const std::string& root) {
    Sftp sftp;
    sftp.s = sftp_new(ssh.raw());
    if (!sftp.s || sftp_init(sftp.s) != SSH_OK)
        return err("ssh ", ssh.where(), ": rollback: starting SFTP: ", ssh.last_error());
    std::string cur = read_link(sftp.s, root + "/current"), prev = read_link(sftp.s, root + "/previous");
    if (prev.empty()) return err("ssh ", ssh.where(), ": rollback: ", root, "/previous does not exist");
    EDGE_TRY(switch_link(ssh, root, "current", prev));
    if (!cur.empty()) EDGE_TRY(switch_link(ssh, root, "previous", cur));
    return {};
}

}  // namespace edge::client
