// Reading known_hosts for messages: the fingerprints it holds for a host, so that a changed-key
// refusal can name both the remembered and the presented key. (Verification itself is libssh's
// ssh_session_is_known_server.)
#pragma once
#include <string>
#include <string_view>
#include <vector>

struct ssh_key_struct;

namespace edge::client {

// One key line of a known_hosts file.
struct KnownHostKey {
    std::string type;    // as written, e.g. "ssh-ed25519"
    std::string base64;  // the key blob as written
    int line = 0;        // 1-based line in the text
};

// The keys a known_hosts text lists for host (port 22 or <= 0: "host", else "[host]:port"),
// matching plain and hashed (|1|salt|hmac) host fields. Comments, @cert-authority / @revoked
// lines and lines without a type and key are skipped. Pure text work (no libssh).
std::vector<KnownHostKey> known_host_keys(std::string_view text, const std::string& host, int port);

// "ssh-ed25519 SHA256:..." of a key.
std::string key_fingerprint(ssh_key_struct* key);
// Fingerprints of the keys `file` lists for host (port 22: "host", else "[host]:port"), matching
// plain and hashed (|1|salt|hmac) host fields (known_host_keys). Unreadable lines and keys that
// libssh cannot import are skipped.
std::vector<std::string> known_fingerprints(const std::string& file, const std::string& host, int port);

}  // namespace edge::client
