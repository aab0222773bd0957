// SHA-256 (FIPS 180-4), std only, so the board agent needs no crypto library. The client uses
// OpenSSL; the tests cross-check the two.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/result.h"

namespace edge::agent {

class Sha256 {
public:
    Sha256();
    void update(const uint8_t* data, size_t n);
    std::array<uint8_t, 32> finish();

private:
    void block(const uint8_t* p);
    std::array<uint32_t, 8> h_;
    std::array<uint8_t, 64> buf_{};
    size_t buf_len_ = 0;
    uint64_t total_ = 0;
};

// Hash of a whole file, read in chunks.
Result<std::array<uint8_t, 32>> sha256_file(const std::string& path);

}  // namespace edge::agent
