#include "remote/client/known_hosts.h"

#include <libssh/libssh.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fstream>
#include <sstream>

namespace edge::client {
namespace {

std::string base64(const unsigned char* p, size_t n) {
    std::string out(4 * ((n + 2) / 3) + 1, '\0');
    int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), p, static_cast<int>(n));
    out.resize(static_cast<size_t>(len));
    return out;
}

bool unbase64(const std::string& s, std::string& out) {
    std::string buf(s.size(), '\0');
    int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(buf.data()),
                              reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
    if (len < 0) return false;
    size_t pad = 0;
    while (pad < s.size() && s[s.size() - 1 - pad] == '=') ++pad;
    buf.resize(static_cast<size_t>(len) - std::min<size_t>(pad, static_cast<size_t>(len)));
    out = buf;
    return true;
}

// One host field entry: "name", "[name]:port", or "|1|base64 salt|base64 hmac-sha1(salt, name)".
bool host_matches(const std::string& pattern, const std::string& name) {
    if (pattern.rfind("|1|", 0) != 0) return pattern == name;
    size_t bar = pattern.find('|', 3);
    if (bar == std::string::npos) return false;
    std::string salt;
    if (!unbase64(pattern.substr(3, bar - 3), salt)) return false;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (!HMAC(EVP_sha1(), salt.data(), static_cast<int>(salt.size()),
              reinterpret_cast<const unsigned char*>(name.data()), name.size(), mac, &mac_len))
        return false;
    return base64(mac, mac_len) == pattern.substr(bar + 1);
}

}  // namespace

std::string key_fingerprint(ssh_key_struct* key) {
    unsigned char* hash = nullptr;
    size_t len = 0;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) != SSH_OK) return "(no fingerprint)";
    char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
    ssh_clean_pubkey_hash(&hash);
    std::string s = fp ? fp : "(no fingerprint)";
    ssh_string_free_char(fp);
    return std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + s;
}

std::vector<KnownHostKey> known_host_keys(std::string_view text, const std::string& host, int port) {
    const std::string name = port == 22 || port <= 0 ? host : "[" + host + "]:" + std::to_string(port);
    std::vector<KnownHostKey> out;
    std::istringstream f{std::string(text)};
    std::string line;
    for (int no = 1; std::getline(f, line); ++no) {
        std::istringstream is(line);
        std::string hosts, type, b64;
        if (!(is >> hosts) || hosts.empty() || hosts[0] == '#') continue;
        if (hosts[0] == '@') {  // @cert-authority / @revoked markers: not plain host keys
            continue;
        }
        if (!(is >> type >> b64)) continue;
        bool match = false;
        std::istringstream hs(hosts);
        for (std::string h; std::getline(hs, h, ',');) match = match || host_matches(h, name);
        if (match) out.push_back({type, b64, no});
    }
    return out;
}

std::vector<std::string> known_fingerprints(const std::string& file, const std::string& host, int port) {
    std::ifstream f(file, std::ios::binary);
    std::ostringstream text;
    text << f.rdbuf();
    std::vector<std::string> out;
    for (const KnownHostKey& k : known_host_keys(text.str(), host, port)) {
        ssh_key key = nullptr;
        if (ssh_pki_import_pubkey_base64(k.base64.c_str(), ssh_key_type_from_name(k.type.c_str()), &key) == SSH_OK) {
            out.push_back(key_fingerprint(key));
            ssh_key_free(key);
        }
    }
    return out;
}

}  // namespace edge::client
