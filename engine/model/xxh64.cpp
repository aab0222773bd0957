#include "xxh64.h"

// Header-only use of the library: the implementation is inlined here, so neither the engine nor
// the fuzz build nor the aarch64 agent needs to link libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace edge {

uint64_t xxh64(const void* data, size_t len, uint64_t seed) { return XXH64(data, len, seed); }

}  // namespace edge
