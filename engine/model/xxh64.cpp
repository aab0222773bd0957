#include "xxh64.h"

// Header-only use of the library: the implementation is inlined here, so neither the engine nor
// the fuzz build nor the aarch64 agent needs to link libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace edge::model {

uint64_t xxh64(const void* data, size_t len, uint64_t seed) { return XXH64(data, len, seed); }

Xxh64Stream::Xxh64Stream(uint64_t seed) : state_(XXH64_createState()) {
    XXH64_reset(static_cast<XXH64_state_t*>(state_), seed);
}
Xxh64Stream::~Xxh64Stream() { XXH64_freeState(static_cast<XXH64_state_t*>(state_)); }
void Xxh64Stream::update(const void* data, size_t len) { XXH64_update(static_cast<XXH64_state_t*>(state_), data, len); }
uint64_t Xxh64Stream::digest() const { return XXH64_digest(static_cast<const XXH64_state_t*>(state_)); }

}  // namespace edge::model
