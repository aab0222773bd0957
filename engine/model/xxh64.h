// XXH64 (xxHash, 64-bit variant, seed 0 by default), written from the public algorithm
// description. Used for the per-section checksums of the .edge engine file (docs/edge-format.md):
// a fast non-cryptographic hash that catches corruption, not tampering.
#pragma once
#include <cstddef>
#include <cstdint>

namespace edge {

uint64_t xxh64(const void* data, size_t len, uint64_t seed = 0);

}  // namespace edge
