// XXH64 (xxHash, 64-bit, seed 0 by default) from Debian's libxxhash-dev. Used for the
// per-section checksums of the .edge engine file (docs/edge-format.md): a fast non-cryptographic
// hash that catches corruption, not tampering (deploy checks SHA-256 end to end).
#pragma once
#include <cstddef>
#include <cstdint>

namespace edge::model {

uint64_t xxh64(const void* data, size_t len, uint64_t seed = 0);

// The same hash over data given in pieces (a file written tensor by tensor): digest() equals
// xxh64() of the concatenation.
class Xxh64Stream {
public:
    explicit Xxh64Stream(uint64_t seed = 0);
    ~Xxh64Stream();
    Xxh64Stream(const Xxh64Stream&) = delete;
    Xxh64Stream& operator=(const Xxh64Stream&) = delete;
    void update(const void* data, size_t len);
    uint64_t digest() const;

private:
    void* state_;
};

}  // namespace edge::model
