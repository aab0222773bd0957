// Serving workloads for the scheduler and `edgestudio-cli serve-bench`. Text format
// (docs/kv.md, examples in tests/data/workloads/):
//
//   edge-workload 1
//   # comment
//   prefix <name> <tokens>                          a shared prefix (e.g. a system prompt)
//   req <arrival_ms> <prefix|-> <prompt_tokens> <output_tokens>
//
// A request's prompt is the named prefix (if any) followed by prompt_tokens tokens of its own;
// it generates exactly output_tokens tokens (greedy). Token ids are synthetic and deterministic:
// a prefix's tokens depend on its name, a request's own tokens on its index, so the same file
// replays the same token streams on any model (ids are drawn in [1, vocab)).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace edge::sched {

struct WorkloadPrefix {
    std::string name;
    int tokens = 0;
};

struct WorkloadRequest {
    double arrival_ms = 0;
    int prefix = -1;  // index into Workload::prefixes, -1: none
    int prompt_tokens = 0;
    int output_tokens = 0;
    int line = 0;  // where it was defined (messages)
};

struct Workload {
    std::string source;
    std::vector<WorkloadPrefix> prefixes;
    std::vector<WorkloadRequest> requests;
};

inline constexpr int kWorkloadVersion = 1;
inline constexpr int kMaxWorkloadTokens = 1 << 20;

// Errors name "<where>:<line>" and the problem.
Result<Workload> parse_workload(const std::string& text, const std::string& where = "workload");
Result<Workload> read_workload(const std::string& path);

// The token ids of request i's prompt (prefix + own tokens) for a vocabulary of vocab ids.
std::vector<int32_t> prompt_tokens(const Workload& w, size_t i, int vocab);

}  // namespace edge::sched
