// Reading known_hosts for messages: the fingerprints it holds for a host, so that a changed-key
// refusal can name both the remembered and the presented key. (Verification itself is libssh's
// ssh_session_is_known_server.)
#pragma once
#include <string>
#include <vector>

struct ssh_key_struct;

namespace edge::remote {

// "ssh-ed25519 SHA256:..." of a key.
std::string key_fingerprint(ssh_key_struct* key);
// Fingerprints of the keys `file` lists for host (port 22: "host", else "[host]:port"), matching
// plain and hashed (|1|salt|hmac) host fields. Unreadable lines are skipped.
std::vector<std::string> known_fingerprints(const std::string& file, const std::string& host, int port);

}  // namespace edge::remote
