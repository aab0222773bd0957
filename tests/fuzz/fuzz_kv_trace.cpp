// libFuzzer target: edge-kv-trace text -> parse_trace (header, name, block_tokens, step and free
// records, block ranges) and, for a trace that parses, format_trace: what it writes must parse
// again and format to the same text (the written form is a fixed point).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/kv/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 16)) return 0;  // longer traces repeat the same lines
    auto t = edge::kv::parse_trace(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>.trace");
    if (!t.ok()) return 0;
    const std::string once = edge::kv::format_trace(*t);
    auto back = edge::kv::parse_trace(once, "<fuzz>.trace (formatted)");
    if (!back.ok() || edge::kv::format_trace(*back) != once) std::abort();
    return 0;
}
