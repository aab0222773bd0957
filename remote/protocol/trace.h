// W3C Trace Context (traceparent header, version 00): "00-<32 hex trace-id>-<16 hex parent-id>-<2
// hex flags>". The studio sends one with each request; the agent's log lines carry its trace id
// and the span id of the agent's own operation.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/result.h"

namespace edge::protocol {

struct TraceContext {
    std::array<uint8_t, 16> trace_id{};
    std::array<uint8_t, 8> span_id{};  // the parent span (the caller's)
    uint8_t flags = 1;                 // 01: sampled
    bool valid() const;                // nonzero trace and span ids
};

// All-zero ids and malformed text are errors (the spec says such a header is ignored).
Result<TraceContext> parse_traceparent(std::string_view header);
std::string format_traceparent(const TraceContext& t);
// A fresh random context / span id (std::random_device).
TraceContext new_trace();
std::array<uint8_t, 8> new_span_id();
std::string to_hex(const uint8_t* p, size_t n);

}  // namespace edge::protocol
