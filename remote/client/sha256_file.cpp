#include "remote/client/sha256_file.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace edge::client {
namespace {

struct MdCtx {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~MdCtx() { EVP_MD_CTX_free(ctx); }
};

}  // namespace

Result<Digest> sha256_of_file_prefix(const std::string& path, uint64_t limit) {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) return err(path, ": cannot open for hashing: ", std::strerror(errno));
    MdCtx md;
    if (!md.ctx || EVP_DigestInit_ex(md.ctx, EVP_sha256(), nullptr) != 1) return err("OpenSSL: SHA-256 init failed");
    std::vector<unsigned char> buf(1 << 20);
    uint64_t left = limit;
    size_t n;
    while (left > 0 &&
           (n = std::fread(buf.data(), 1, static_cast<size_t>(std::min<uint64_t>(buf.size(), left)), f.get())) > 0) {
        if (EVP_DigestUpdate(md.ctx, buf.data(), n) != 1) return err("OpenSSL: SHA-256 update failed");
        left -= n;
    }
    if (std::ferror(f.get())) return err(path, ": read error while hashing");
    if (left > 0 && limit != UINT64_MAX) return err(path, ": shorter than ", limit, " bytes");
    Digest d{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(md.ctx, d.data(), &len) != 1 || len != d.size()) return err("OpenSSL: SHA-256 final failed");
    return d;
}

Result<Digest> sha256_of_file(const std::string& path) { return sha256_of_file_prefix(path, UINT64_MAX); }

Digest sha256_of(const void* data, size_t n) {
    Digest d{};
    unsigned int len = 0;
    EVP_Digest(data, n, d.data(), &len, EVP_sha256(), nullptr);
    return d;
}

std::string digest_hex(const Digest& d) {
    static const char* x = "0123456789abcdef";
    std::string s;
    for (uint8_t b : d) s += x[b >> 4], s += x[b & 15];
    return s;
}

Result<Digest> digest_from_hex(const std::string& hex) {
    if (hex.size() != 64) return err("SHA-256 '", hex, "': expected 64 hex digits");
    Digest d{};
    for (size_t i = 0; i < 32; ++i) {
        auto v = [&](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        int hi = v(hex[2 * i]), lo = v(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return err("SHA-256 '", hex, "': not hex");
        d[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    return d;
}

}  // namespace edge::client
