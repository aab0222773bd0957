#include "remote/protocol/trace.h"

#include <random>

namespace edge::protocol {
namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;  // upper case is not allowed by the spec
}

template <size_t N>
bool parse_hex(std::string_view s, std::array<uint8_t, N>& out) {
    if (s.size() != 2 * N) return false;
    for (size_t i = 0; i < N; ++i) {
        int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    return true;
}

template <size_t N>
bool all_zero(const std::array<uint8_t, N>& a) {
    for (uint8_t b : a)
        if (b) return false;
    return true;
}

}  // namespace

bool TraceContext::valid() const { return !all_zero(trace_id) && !all_zero(span_id); }

std::string to_hex(const uint8_t* p, size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    s.reserve(2 * n);
    for (size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

Result<TraceContext> parse_traceparent(std::string_view h) {
    // 2 + 1 + 32 + 1 + 16 + 1 + 2
    if (h.size() != 55 || h[2] != '-' || h[35] != '-' || h[52] != '-')
        return err("traceparent '", h, "' is not version-00 shaped (00-<32 hex>-<16 hex>-<2 hex>)");
    if (h.substr(0, 2) != "00") return err("traceparent '", h, "': unsupported version ", h.substr(0, 2));
    TraceContext t;
    std::array<uint8_t, 1> flags{};
    if (!parse_hex(h.substr(3, 32), t.trace_id) || !parse_hex(h.substr(36, 16), t.span_id) ||
        !parse_hex(h.substr(53, 2), flags))
        return err("traceparent '", h, "': ids must be lower-case hex");
    if (!t.valid()) return err("traceparent '", h, "': all-zero trace or span id");
    t.flags = flags[0];
    return t;
}

std::string format_traceparent(const TraceContext& t) {
    return "00-" + to_hex(t.trace_id.data(), 16) + "-" + to_hex(t.span_id.data(), 8) + "-" + to_hex(&t.flags, 1);
}

std::array<uint8_t, 8> new_span_id() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    std::array<uint8_t, 8> id{};
    while (all_zero(id)) {
        uint64_t v = rng();
        for (int i = 0; i < 8; ++i) id[i] = static_cast<uint8_t>(v >> (8 * i));
    }
    return id;
}

TraceContext new_trace() {
    TraceContext t;
    auto a = new_span_id(), b = new_span_id();
    for (int i = 0; i < 8; ++i) t.trace_id[i] = a[i], t.trace_id[8 + i] = b[i];
    t.span_id = new_span_id();
    return t;
}

}  // namespace edge::protocol
