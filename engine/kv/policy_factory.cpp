#include "policy.h"

namespace edge::kv {

std::vector<std::string> policy_names() { return {"lru", "lru2", "arc", "locality"}; }

Result<std::unique_ptr<EvictionPolicy>> make_policy(const std::string& name, int64_t capacity_blocks) {
    if (capacity_blocks <= 0) return err("eviction policy '", name, "': capacity must be at least one block");
    if (name == "lru") return make_lru();
    if (name == "lru2" || name == "lru-k") return make_lru_k(2);
    if (name == "arc") return make_arc(capacity_blocks);
    if (name == "locality") return make_locality();
    return err("unknown eviction policy '", name, "' (known: lru, lru2, arc, locality)");
}

}  // namespace edge::kv
