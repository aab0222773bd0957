#include "remote/client/ssh_session.h"

#include "remote/client/known_hosts.h"

#include <libssh/libssh.h>

#include <chrono>
#include <cstdlib>

namespace edge::client {
namespace {

struct KeyGuard {
    ssh_key k = nullptr;
    ~KeyGuard() { ssh_key_free(k); }
};

}  // namespace

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

bool SshSession::alive() const {
    return s_ && ssh_is_connected(s_) && !(ssh_get_status(s_) & (SSH_CLOSED | SSH_CLOSED_ERROR));
}

std::string SshSession::last_error() const { return s_ ? ssh_get_error(s_) : "no session"; }

SshSession::~SshSession() {
    if (!s_) return;
    if (ssh_is_connected(s_)) ssh_disconnect(s_);
    ssh_free(s_);
}

Result<std::unique_ptr<SshSession>> SshSession::connect(const SshOptions& o) {
    std::unique_ptr<SshSession> me(new SshSession);
    me->s_ = ssh_new();
    if (!me->s_) return err("ssh ", o.host, ": cannot create a libssh session");
    ssh_session s = me->s_;
    auto opt_fail = [&](const char* what) { return err("ssh ", o.host, ": setting ", what, ": ", ssh_get_error(s)); };
    if (o.host.empty()) return err("ssh: no host given");
    if (ssh_options_set(s, SSH_OPTIONS_HOST, o.host.c_str()) != SSH_OK) return opt_fail("host");
    if (o.port > 0) {
        unsigned int port = static_cast<unsigned int>(o.port);
        if (ssh_options_set(s, SSH_OPTIONS_PORT, &port) != SSH_OK) return opt_fail("port");
    }
    if (!o.user.empty() && ssh_options_set(s, SSH_OPTIONS_USER, o.user.c_str()) != SSH_OK) return opt_fail("user");
    if (!o.known_hosts.empty() && ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, o.known_hosts.c_str()) != SSH_OK)
        return opt_fail("known_hosts file");
    long timeout = o.timeout_s;
    if (ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) != SSH_OK) return opt_fail("timeout");
    int nodelay = 1;  // small protocol frames must not wait for Nagle + delayed ACK (~40 ms)
    if (ssh_options_set(s, SSH_OPTIONS_NODELAY, &nodelay) != SSH_OK) return opt_fail("TCP_NODELAY");
    int process_config = o.read_ssh_config ? 1 : 0;
    if (ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &process_config) != SSH_OK) return opt_fail("config processing");
    if (o.read_ssh_config &&
        ssh_options_parse_config(s, o.ssh_config.empty() ? nullptr : o.ssh_config.c_str()) != SSH_OK)
        return err("ssh ", o.host, ": reading ssh config ", o.ssh_config.empty() ? "~/.ssh/config" : o.ssh_config, ": ",
                   ssh_get_error(s));

    char* user = nullptr;
    char* host = nullptr;
    unsigned int port = 22;
    ssh_options_get(s, SSH_OPTIONS_USER, &user);
    ssh_options_get(s, SSH_OPTIONS_HOST, &host);
    ssh_options_get_port(s, &port);
    me->where_ = std::string(user ? user : "?") + "@" + (host ? host : o.host) + ":" + std::to_string(port);
    me->host_ = host ? host : o.host;
    me->port_ = static_cast<int>(port);
    ssh_string_free_char(user);
    ssh_string_free_char(host);

    if (ssh_connect(s) != SSH_OK) return err("ssh ", me->where_, ": connect: ", ssh_get_error(s));
    EDGE_TRY(me->verify_host_key(o));
    EDGE_TRY(me->authenticate(o));
    return me;
}

Status SshSession::verify_host_key(const SshOptions& o) {
    KeyGuard server;
    if (ssh_get_server_publickey(s_, &server.k) != SSH_OK || !server.k)
        return err("ssh ", where_, ": host key: the server sent none: ", ssh_get_error(s_));
    fingerprint_ = key_fingerprint(server.k);
    std::string file = o.known_hosts;
    if (file.empty()) file = std::string(std::getenv("HOME") ? std::getenv("HOME") : "") + "/.ssh/known_hosts";
    switch (ssh_session_is_known_server(s_)) {
        case SSH_KNOWN_HOSTS_OK: return {};
        case SSH_KNOWN_HOSTS_CHANGED: {
            std::string known;
            for (const auto& fp : known_fingerprints(file, host_, port_)) known += (known.empty() ? "" : " / ") + fp;
            if (known.empty()) known = "another key";
            return err("ssh ", where_, ": WARNING: HOST KEY CHANGED. ", file, " holds ", known,
                       " but the host now presents ", fingerprint_,
                       ". Someone may be intercepting the connection (man in the middle), or the board was "
                       "re-installed. Connection refused. If the change is expected, remove the old entry "
                       "(ssh-keygen -R '",
                       port_ == 22 ? host_ : "[" + host_ + "]:" + std::to_string(port_), "' -f ", file,
                       ") and accept the new key explicitly.");
        }
        case SSH_KNOWN_HOSTS_OTHER:
            return err("ssh ", where_, ": WARNING: the host presents ", fingerprint_, " but ", file,
                       " holds a key of another type for it. Connection refused (possible man in the middle).");
        case SSH_KNOWN_HOSTS_UNKNOWN:
        case SSH_KNOWN_HOSTS_NOT_FOUND:
            if (!o.accept_unknown_host && !(o.confirm_unknown_host && o.confirm_unknown_host(fingerprint_, where_)))
                return err("ssh ", where_, ": unknown host key ", fingerprint_, " (not in ", file,
                           "). Check the fingerprint on the board (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub) and "
                           "accept it explicitly to continue.");
            if (ssh_session_update_known_hosts(s_) != SSH_OK)
                return err("ssh ", where_, ": host key accepted but ", file,
                           " could not be updated: ", ssh_get_error(s_));
            return {};
        case SSH_KNOWN_HOSTS_ERROR: break;
    }
    return err("ssh ", where_, ": checking the host key against ", file, ": ", ssh_get_error(s_));
}

Status SshSession::authenticate(const SshOptions& o) {
    std::string tried;
    if (!o.identity_file.empty()) {
        KeyGuard key;
        if (ssh_pki_import_privkey_file(o.identity_file.c_str(), nullptr, nullptr, nullptr, &key.k) != SSH_OK)
            return err("ssh ", where_, ": authentication: cannot read the private key ", o.identity_file,
                       " (missing, unreadable or passphrase-protected: load it into ssh-agent instead)");
        int rc = ssh_userauth_publickey(s_, nullptr, key.k);
        if (rc == SSH_AUTH_SUCCESS) return {};
        if (rc == SSH_AUTH_ERROR)
            return err("ssh ", where_, ": authentication with ", o.identity_file, ": ", ssh_get_error(s_));
        tried = "key " + o.identity_file;
    } else {
        if (o.use_agent && std::getenv("SSH_AUTH_SOCK")) {
            int rc = ssh_userauth_agent(s_, nullptr);
            if (rc == SSH_AUTH_SUCCESS) return {};
            tried = "ssh-agent, ";
        }
        int rc = ssh_userauth_publickey_auto(s_, nullptr, nullptr);
        if (rc == SSH_AUTH_SUCCESS) return {};
        if (rc == SSH_AUTH_ERROR) return err("ssh ", where_, ": authentication: ", ssh_get_error(s_));
        tried += "default keys in ~/.ssh";
    }
    return err("ssh ", where_, ": authentication refused (tried ", tried,
               "). EdgeStudio uses public keys only and never passwords: add the key to the board's "
               "authorized_keys.");
}

Result<ssh_channel_struct*> SshSession::open_exec(const std::string& command) {
    ssh_channel ch = ssh_channel_new(s_);
    if (!ch) return err("ssh ", where_, ": opening a channel: ", ssh_get_error(s_));
    if (ssh_channel_open_session(ch) != SSH_OK) {
        std::string e = ssh_get_error(s_);
        ssh_channel_free(ch);
        return err("ssh ", where_, ": opening a session channel: ", e);
    }
    if (ssh_channel_request_exec(ch, command.c_str()) != SSH_OK) {
        std::string e = ssh_get_error(s_);
        ssh_channel_close(ch);
        ssh_channel_free(ch);
        return err("ssh ", where_, ": starting '", command, "': ", e);
    }
    return ch;
}

Result<ExecResult> SshSession::exec(const std::string& command, int timeout_ms) {
    auto ch = open_exec(command);
    if (!ch.ok()) return ch.error();
    ssh_channel c = ch.value();
    struct Free {
        ssh_channel c;
        ~Free() {
            ssh_channel_close(c);
            ssh_channel_free(c);
        }
    } guard{c};
    ExecResult r;
    char buf[16384];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        int n = ssh_channel_read_timeout(c, buf, sizeof buf, 0, 100);
        if (n == SSH_ERROR) return err("ssh ", where_, ": reading the output of '", command, "': ", ssh_get_error(s_));
        if (n > 0) r.out.append(buf, static_cast<size_t>(n));
        int e;
        while ((e = ssh_channel_read_nonblocking(c, buf, sizeof buf, 1)) > 0) r.err.append(buf, static_cast<size_t>(e));
        if (e == SSH_ERROR) return err("ssh ", where_, ": reading the errors of '", command, "': ", ssh_get_error(s_));
        if (ssh_channel_is_eof(c)) break;
        if (std::chrono::steady_clock::now() > deadline)
            return err("ssh ", where_, ": '", command, "' did not finish within ", timeout_ms, " ms");
    }
    ssh_channel_send_eof(c);
    r.exit_status = ssh_channel_get_exit_status(c);
    return r;
}

Result<std::string> SshSession::exec_checked(const std::string& command, const std::string& step, int timeout_ms) {
    auto r = exec(command, timeout_ms);
    if (!r.ok()) return err(step, ": ", r.message());
    if (r->exit_status != 0)
        return err("ssh ", where_, ": ", step, ": '", command, "' exited with status ", r->exit_status,
                   r->err.empty() ? std::string() : ": " + r->err);
    return std::move(r->out);
}

}  // namespace edge::client
