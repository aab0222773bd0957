// SHA-256 of local files and buffers with OpenSSL's EVP interface (libcrypto).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "engine/core/result.h"

namespace edge::client {

using Digest = std::array<uint8_t, 32>;

Result<Digest> sha256_of_file(const std::string& path);
// SHA-256 of the first n bytes of a file (an error when it is shorter).
Result<Digest> sha256_of_file_prefix(const std::string& path, uint64_t n);
Digest sha256_of(const void* data, size_t n);
std::string digest_hex(const Digest& d);
Result<Digest> digest_from_hex(const std::string& hex);

}  // namespace edge::client
