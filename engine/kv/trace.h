// KV access traces: what blocks each decode step reads. Text format (docs/kv.md):
//
//   edge-kv-trace 1
//   name multi_turn_chat
//   block_tokens 16
//   # comment
//   s <turn> <repeat> <range> [<range> ...]   repeat decode steps of one request turn, each
//                                             reading these blocks (range: "a" or "a-b", inclusive)
//   f <range> [<range> ...]                   the blocks are released (the sequence ended)
//
// Block ids are arbitrary 64-bit numbers; generators give consecutive ids to the consecutive
// blocks of one sequence, so "neighbour" means adjacent in the sequence.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"

namespace edge::kv {

struct TraceEvent {
    enum Kind : uint8_t { Step, Free } kind = Step;
    uint32_t turn = 0;
    uint32_t repeat = 1;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // inclusive
};

struct Trace {
    std::string name;
    int block_tokens = 16;
    std::vector<TraceEvent> events;
};

inline constexpr int kTraceVersion = 1;

Result<Trace> parse_trace(const std::string& text, const std::string& where = "trace");
Result<Trace> read_trace(const std::string& path);
std::string format_trace(const Trace& t);
Status write_trace(const Trace& t, const std::string& path);

}  // namespace edge::kv
