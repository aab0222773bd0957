#include "remote/client/deploy.h"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "remote/client/ssh_session.h"

namespace edge::remote {
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

Status upload(SshSession& ssh, sftp_session s, const DeployOptions& o, const std::string& local,
              const std::string& remote, uint64_t& bytes) {
    std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(local.c_str(), "rb"), &std::fclose);
    if (!in) return err("deploy: cannot open ", local);
    sftp_file f = sftp_open(s, remote.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!f) return err("ssh ", ssh.where(), ": deploy: creating ", remote, ": ", sftp_err(ssh, s));
    uint64_t total = std::filesystem::file_size(local);
    std::vector<char> buf(64 << 10);
    bytes = 0;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), in.get())) > 0) {
        ssize_t w = sftp_write(f, buf.data(), n);
        if (w != static_cast<ssize_t>(n)) {
            std::string e = sftp_err(ssh, s);
            sftp_close(f);
            return err("ssh ", ssh.where(), ": deploy: writing ", remote, " at byte ", bytes, ": ", e);
        }
        bytes += n;
        if (o.progress) o.progress(local, bytes, total);
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
    if (sftp_close(f) != SSH_NO_ERROR) return err("ssh ", ssh.where(), ": deploy: closing ", remote, ": ", sftp_err(ssh, s));
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
                   digest_hex(want), " here: the upload was corrupted (nothing was switched)");
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

}  // namespace

Result<DeployReport> deploy(SshSession& ssh, const DeployOptions& o) {
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
    std::vector<std::pair<const DeployFile*, Digest>> hashed;
    for (const auto& f : o.files) {
        auto d = sha256_of_file(f.local_path);
        if (!d.ok()) return err("deploy: ", d.message());
        std::string name = f.remote_name.empty() ? std::filesystem::path(f.local_path).filename().string() : f.remote_name;
        if (!valid_name(name)) return err("deploy: bad remote file name '", name, "'");
        hashed.emplace_back(&f, d.value());
    }

    Sftp sftp;
    sftp.s = sftp_new(ssh.raw());
    if (!sftp.s) return err("ssh ", ssh.where(), ": deploy: starting SFTP: ", ssh.last_error());
    if (sftp_init(sftp.s) != SSH_OK) return err("ssh ", ssh.where(), ": deploy: SFTP handshake: ", sftp_err(ssh, sftp.s));

    std::string live = read_link(sftp.s, root + "/current");
    if (live == "versions/" + rep.version)
        return err("deploy: version '", rep.version, "' is live on ", ssh.where(), "; deploy under a new version name");
    rep.previous_version = live.rfind("versions/", 0) == 0 ? live.substr(9) : live;
    EDGE_TRY(mkdir_p(ssh, sftp.s, rep.version_dir));

    std::string manifest;
    for (auto& [f, digest] : hashed) {
        std::string name = f->remote_name.empty() ? std::filesystem::path(f->local_path).filename().string() : f->remote_name;
        DeployedFile d{rep.version_dir + "/" + name, digest, 0};
        std::string part = d.remote_path + ".part";
        EDGE_TRY(upload(ssh, sftp.s, o, f->local_path, part, d.bytes));
        EDGE_TRY(verify_remote(ssh, part, digest));
        if (f->executable && sftp_chmod(sftp.s, part.c_str(), 0755) != SSH_OK)
            return err("ssh ", ssh.where(), ": deploy: chmod ", part, ": ", sftp_err(ssh, sftp.s));
        sftp_unlink(sftp.s, d.remote_path.c_str());  // a leftover from an earlier, failed attempt
        if (sftp_rename(sftp.s, part.c_str(), d.remote_path.c_str()) != SSH_OK)
            return err("ssh ", ssh.where(), ": deploy: renaming ", part, ": ", sftp_err(ssh, sftp.s));
        manifest += digest_hex(digest) + " *" + name + "\n";
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
    return rep;
}

Status rollback(SshSession& ssh, const std::string& root) {
    Sftp sftp;
    sftp.s = sftp_new(ssh.raw());
    if (!sftp.s || sftp_init(sftp.s) != SSH_OK) return err("ssh ", ssh.where(), ": rollback: starting SFTP: ", ssh.last_error());
    std::string cur = read_link(sftp.s, root + "/current"), prev = read_link(sftp.s, root + "/previous");
    if (prev.empty()) return err("ssh ", ssh.where(), ": rollback: ", root, "/previous does not exist");
    EDGE_TRY(switch_link(ssh, root, "current", prev));
    if (!cur.empty()) EDGE_TRY(switch_link(ssh, root, "previous", cur));
    return {};
}

}  // namespace edge::remote
