// Memory preflight: before a command allocates, it estimates what it will hold and compares it
// with what the machine can give - MemAvailable from /proc/meminfo, the cgroup's memory.max when
// one is set, or an explicit limit (`edgestudio-cli --memory-limit 6G ...`) - so a job that would
// not fit says so with the figures and what to do, instead of meeting the OOM killer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"

namespace edge {

struct MemoryBudget {
    uint64_t bytes = 0;  // 0: unknown (no check)
    std::string source;  // "--memory-limit 2.0 GiB", "MemAvailable", "cgroup memory.max"
};

// "6G", "6GiB", "512M", "512MiB", "1.5g", "123456" (bytes); K/M/G/T are powers of 1024.
Result<uint64_t> parse_memory_size(std::string_view text);
// "1.5 GiB", "300.0 MiB", "12 KiB", "100 B".
std::string format_memory_size(uint64_t bytes);

// The explicit limit when given, else the smaller of MemAvailable and the cgroup limit.
MemoryBudget memory_budget(std::optional<uint64_t> limit = std::nullopt);

// One line of an estimate: "weights as F32 6.0 GiB".
struct MemoryItem {
    std::string what;
    uint64_t bytes = 0;
};

// An error when the items add up to more than the budget: it names `subject` (the model and
// the command), every item, the total, the budget and its source, and `advice` (what to do).
Status check_memory(const std::string& subject, const std::vector<MemoryItem>& items, const MemoryBudget& budget,
                    const std::string& advice);

// Process-wide limit the CLI's --memory-limit sets (nullopt: the machine's own figures).
void set_memory_limit(std::optional<uint64_t> limit);
std::optional<uint64_t> memory_limit();

}  // namespace edge
