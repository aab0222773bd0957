#include "remote/client/telemetry_export.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "remote/protocol/trace.h"

namespace edge::client {
namespace {

using nlohmann::json;
using protocol::TelemetrySample;

constexpr const char* kScope = "edgestudio.remote";
constexpr const char* kScopeVersion = "0.1.0";
constexpr int kTemporalityCumulative = 2;  // AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
constexpr int kSpanKindServer = 2, kSpanKindClient = 3, kSpanKindInternal = 1;
constexpr int kStatusOk = 1;

// OTLP/JSON writes 64-bit integers as decimal strings.
std::string u64s(uint64_t v) { return std::to_string(v); }

json kv(const std::string& key, const std::string& v) { return {{"key", key}, {"value", {{"stringValue", v}}}}; }
json kv_int(const std::string& key, int64_t v) { return {{"key", key}, {"value", {{"intValue", std::to_string(v)}}}}; }

std::string fmt_double(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// A sampled quantity: metric name, unit, description, how to read it, integer or double.
struct Quantity {
    const char* name;
    const char* unit;
    const char* description;
    std::function<std::optional<double>(const TelemetrySample&)> get;
    bool integer;
};

template <class T>
std::optional<double> d(const std::optional<T>& v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

const std::vector<Quantity>& quantities() {
    static const std::vector<Quantity> q = {
        {"edge.token.latency", "ms", "time to produce this token (the first one's is the TTFT)",
         [](const TelemetrySample& s) { return s.token_latency_ms; }, false},
        {"edge.ttft", "ms", "prompt start to first token, prefill included",
         [](const TelemetrySample& s) { return s.ttft_ms; }, false},
        {"edge.tpot", "ms", "mean time per output token after the first",
         [](const TelemetrySample& s) { return s.tpot_ms; }, false},
        {"edge.tokens_per_second", "{token}/s", "generated tokens / time since prompt start",
         [](const TelemetrySample& s) { return s.tokens_per_s; }, false},
        {"process.memory.rss", "By", "agent process resident set",
         [](const TelemetrySample& s) { return d(s.rss_bytes); }, true},
        {"edge.device.memory.used", "By", "device memory in use",
         [](const TelemetrySample& s) { return d(s.device_mem_used_bytes); }, true},
        {"edge.device.memory.total", "By", "device memory",
         [](const TelemetrySample& s) { return d(s.device_mem_total_bytes); }, true},
        {"system.memory.available", "By", "/proc/meminfo MemAvailable on the board",
         [](const TelemetrySample& s) { return d(s.mem_available_bytes); }, true},
        {"edge.kv.blocks.used", "{block}", "KV cache blocks in use",
         [](const TelemetrySample& s) { return d(s.kv_blocks_used); }, true},
        {"edge.kv.blocks.free", "{block}", "KV cache blocks free",
         [](const TelemetrySample& s) { return d(s.kv_blocks_free); }, true},
        {"edge.kv.hit_rate", "1", "KV cache hit rate", [](const TelemetrySample& s) { return s.kv_hit_rate; }, false},
        {"edge.kv.evictions", "{eviction}", "KV cache evictions so far",
         [](const TelemetrySample& s) { return d(s.kv_evictions); }, true},
        {"edge.kv.compression_ratio", "1", "KV cache compression ratio",
         [](const TelemetrySample& s) { return s.kv_compression_ratio; }, false},
        {"edge.batch.size", "{sequence}", "sequences in the scheduler's step",
         [](const TelemetrySample& s) { return d(s.batch_size); }, true},
        {"edge.queue.length", "{request}", "requests waiting for admission after the step",
         [](const TelemetrySample& s) { return d(s.queue_length); }, true},
        {"edge.kv.preemptions", "{preemption}", "requests preempted so far in the workload",
         [](const TelemetrySample& s) { return d(s.preemptions); }, true},
        {"edge.board.power", "W", "board power draw", [](const TelemetrySample& s) { return s.power_w; }, false},
        {"edge.board.temperature", "Cel", "hottest thermal zone",
         [](const TelemetrySample& s) { return s.temperature_c; }, false},
    };
    return q;
}

constexpr double kLatencyBounds[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};

json resource_of(const BoardRun& r) {
    json attrs = json::array({kv("service.name", "edgestudio-cli"), kv("edge.board", r.board)});
    if (!r.report->agent.hostname.empty()) attrs.push_back(kv("host.name", r.report->agent.hostname));
    if (!r.report->agent.software_version.empty())
        attrs.push_back(kv("edge.agent.version", r.report->agent.software_version));
    if (!r.report->agent.backend.empty()) attrs.push_back(kv("edge.agent.backend", r.report->agent.backend));
    return {{"attributes", attrs}};
}

json scope() { return {{"name", kScope}, {"version", kScopeVersion}}; }

json sample_attrs(const TelemetrySample& s) {
    return json::array({kv_int("edge.request_id", s.request_id), kv_int("edge.prompt_index", s.prompt_index)});
}

std::string hex(const uint8_t* p, size_t n) { return protocol::to_hex(p, n); }

bool all_zero(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (p[i]) return false;
    return true;
}

const char* level_name(protocol::LogLevel l) {
    switch (l) {
        case protocol::LogLevel::Debug: return "debug";
        case protocol::LogLevel::Info: return "info";
        case protocol::LogLevel::Warn: return "warn";
        case protocol::LogLevel::Error: return "error";
    }
    return "info";
}

}  // namespace

std::string telemetry_csv(const std::vector<BoardRun>& runs) {
    std::string out = "board,timestamp_ns,request_id,prompt_index,tokens_generated";
    for (const auto& q : quantities())
        out += std::string(",") + q.name + (q.unit[0] == '{' || q.unit[0] == '1' ? "" : std::string("_") + q.unit);
    out += "\n";
    for (const auto& r : runs) {
        // RFC 4180: a board name with a comma or quote is quoted, quotes doubled.
        std::string name = r.board;
        if (name.find_first_of(",\"\n") != std::string::npos) {
            std::string q = "\"";
            for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
            name = q + "\"";
        }
        for (const auto& s : r.report->samples) {
            out += name + "," + u64s(s.timestamp_ns) + "," + std::to_string(s.request_id) + "," +
                   std::to_string(s.prompt_index) + "," + std::to_string(s.tokens_generated);
            for (const auto& q : quantities()) {
                out += ",";
                if (auto v = q.get(s)) out += q.integer ? u64s(static_cast<uint64_t>(*v)) : fmt_double(*v);
            }
            out += "\n";
        }
    }
    return out;
}

json otlp_metrics(const std::vector<BoardRun>& runs) {
    json resource_metrics = json::array();
    for (const auto& r : runs) {
        const ProfileReport& rep = *r.report;
        json metrics = json::array();
        for (const auto& q : quantities()) {
            json points = json::array();
            for (const auto& s : rep.samples) {
                auto v = q.get(s);
                if (!v) continue;  // absent stays absent
                json p = {{"timeUnixNano", u64s(s.timestamp_ns)}, {"attributes", sample_attrs(s)}};
                if (q.integer)
                    p["asInt"] = u64s(static_cast<uint64_t>(*v));
                else
                    p["asDouble"] = *v;
                points.push_back(std::move(p));
            }
            if (points.empty()) continue;
            metrics.push_back({{"name", q.name},
                               {"unit", q.unit},
                               {"description", q.description},
                               {"gauge", {{"dataPoints", points}}}});
        }
        uint64_t tokens = 0;
        for (const auto& x : rep.results) tokens += x.generated_tokens;
        metrics.push_back({{"name", "edge.tokens.generated"},
                           {"unit", "{token}"},
                           {"description", "tokens generated over the run"},
                           {"sum",
                            {{"aggregationTemporality", kTemporalityCumulative},
                             {"isMonotonic", true},
                             {"dataPoints", json::array({{{"startTimeUnixNano", u64s(rep.start_unix_ns)},
                                                          {"timeUnixNano", u64s(rep.end_unix_ns)},
                                                          {"asInt", u64s(tokens)}}})}}}});
        // The token latency distribution over the whole run.
        constexpr size_t kBuckets = std::size(kLatencyBounds);
        std::vector<uint64_t> buckets(kBuckets + 1, 0);
        uint64_t count = 0;
        double sum = 0, mn = 0, mx = 0;
        for (const auto& s : rep.samples) {
            if (!s.token_latency_ms) continue;
            double v = *s.token_latency_ms;
            size_t b = static_cast<size_t>(std::lower_bound(std::begin(kLatencyBounds), std::end(kLatencyBounds), v) -
                                           std::begin(kLatencyBounds));
            ++buckets[b];
            mn = count ? std::min(mn, v) : v;
            mx = count ? std::max(mx, v) : v;
            ++count;
            sum += v;
        }
        if (count) {
            json bc = json::array(), bounds = json::array();
            for (uint64_t c : buckets) bc.push_back(u64s(c));
            for (double b : kLatencyBounds) bounds.push_back(b);
            metrics.push_back({{"name", "edge.token.latency.distribution"},
                               {"unit", "ms"},
                               {"description", "token latency over the run (bucket upper bounds inclusive)"},
                               {"histogram",
                                {{"aggregationTemporality", kTemporalityCumulative},
                                 {"dataPoints", json::array({{{"startTimeUnixNano", u64s(rep.start_unix_ns)},
                                                              {"timeUnixNano", u64s(rep.end_unix_ns)},
                                                              {"count", u64s(count)},
                                                              {"sum", sum},
                                                              {"min", mn},
                                                              {"max", mx},
                                                              {"bucketCounts", bc},
                                                              {"explicitBounds", bounds}}})}}}});
        }
        resource_metrics.push_back({{"resource", resource_of(r)},
                                    {"scopeMetrics", json::array({{{"scope", scope()}, {"metrics", metrics}}})}});
    }
    return {{"resourceMetrics", resource_metrics}};
}

json otlp_traces(const std::vector<BoardRun>& runs) {
    json resource_spans = json::array();
    for (const auto& r : runs) {
        const ProfileReport& rep = *r.report;
        auto tc = protocol::parse_traceparent(rep.traceparent);
        if (!tc.ok()) continue;  // run_profile always sets a valid one
        const std::string trace_id = hex(tc->trace_id.data(), 16), client_span = hex(tc->span_id.data(), 8);
        json spans = json::array();
        json root = {{"traceId", trace_id},
                     {"spanId", client_span},
                     {"name", "profile"},
                     {"kind", kSpanKindClient},
                     {"startTimeUnixNano", u64s(rep.start_unix_ns)},
                     {"endTimeUnixNano", u64s(rep.end_unix_ns)},
                     {"attributes", json::array({kv("edge.board", r.board), kv("edge.agent", rep.board),
                                                 kv_int("edge.restarts", rep.restarts)})},
                     {"status", {{"code", kStatusOk}}}};
        if (!rep.caller_span_id.empty()) root["parentSpanId"] = rep.caller_span_id;
        spans.push_back(root);

        // The agent's operations: the span ids its log lines carry; the log lines are the events.
        std::map<std::string, std::vector<const protocol::LogLine*>> by_span;
        std::vector<std::string> order;
        for (const auto& l : rep.logs) {
            if (all_zero(l.span_id.data(), 8) || hex(l.trace_id.data(), 16) != trace_id) continue;
            std::string id = hex(l.span_id.data(), 8);
            if (!by_span.count(id)) order.push_back(id);
            by_span[id].push_back(&l);
        }
        for (const auto& id : order) {
            const auto& lines = by_span[id];
            json events = json::array();
            uint64_t t0 = lines.front()->timestamp_ns, t1 = t0;
            bool error = false;
            for (const auto* l : lines) {
                t0 = std::min(t0, l->timestamp_ns), t1 = std::max(t1, l->timestamp_ns);
                error |= l->level == protocol::LogLevel::Error;
                events.push_back({{"timeUnixNano", u64s(l->timestamp_ns)},
                                  {"name", l->text},
                                  {"attributes", json::array({kv("log.severity", level_name(l->level))})}});
            }
            // The agent names its run in its log lines ("run <id>: ..."); everything else it
            // serves under a span is loading an engine.
            bool run = lines.front()->text.rfind("run ", 0) == 0;
            json s = {{"traceId", trace_id},
                      {"spanId", id},
                      {"parentSpanId", client_span},
                      {"name", run ? "edge-agent run-workload" : "edge-agent load-engine"},
                      {"kind", kSpanKindServer},
                      {"startTimeUnixNano", u64s(t0)},
                      {"endTimeUnixNano", u64s(t1)},
                      {"events", events},
                      {"status", {{"code", error ? 2 : kStatusOk}}}};
            spans.push_back(s);
        }

        // One span per prompt, from the board's timestamps: first token time - TTFT .. last token.
        std::map<uint32_t, std::pair<uint64_t, uint64_t>> prompt_time;
        for (const auto& s : rep.samples) {
            uint64_t start = s.timestamp_ns;
            if (s.tokens_generated == 1 && s.ttft_ms) start -= static_cast<uint64_t>(*s.ttft_ms * 1e6);
            auto [it, fresh] = prompt_time.try_emplace(s.prompt_index, start, s.timestamp_ns);
            if (!fresh)
                it->second.first = std::min(it->second.first, start),
                it->second.second = std::max(it->second.second, s.timestamp_ns);
        }
        for (const auto& x : rep.results) {
            auto it = prompt_time.find(x.prompt_index);
            if (it == prompt_time.end()) continue;
            auto id = protocol::new_span_id();
            spans.push_back({{"traceId", trace_id},
                             {"spanId", hex(id.data(), 8)},
                             {"parentSpanId", client_span},
                             {"name", "prompt " + std::to_string(x.prompt_index)},
                             {"kind", kSpanKindInternal},
                             {"startTimeUnixNano", u64s(it->second.first)},
                             {"endTimeUnixNano", u64s(it->second.second)},
                             {"attributes", json::array({kv_int("edge.prompt_index", x.prompt_index),
                                                         kv_int("edge.prompt_tokens", x.prompt_tokens),
                                                         kv_int("edge.generated_tokens", x.generated_tokens)})},
                             {"status", {{"code", kStatusOk}}}});
        }
        resource_spans.push_back(
            {{"resource", resource_of(r)}, {"scopeSpans", json::array({{{"scope", scope()}, {"spans", spans}}})}});
    }
    return {{"resourceSpans", resource_spans}};
}

std::string otlp_json_lines(const std::vector<BoardRun>& runs) {
    return otlp_metrics(runs).dump() + "\n" + otlp_traces(runs).dump() + "\n";
}

}  // namespace edge::client
