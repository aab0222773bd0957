// The agent's counters and readings in the Prometheus text exposition format (version 0.0.4), the
// answer to a metrics-request frame. Names follow Prometheus conventions (base units, _total for
// counters); a reading the board does not have is left out, never written as zero.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace edge::agent {

// Upper bounds (seconds) of the token latency histogram buckets; +Inf follows.
inline constexpr std::array<double, 10> kLatencyBucketsS = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0};

struct WorkerStats {
    uint64_t loads_ok = 0, loads_failed = 0;
    uint64_t runs = 0, runs_failed = 0, prompts = 0, tokens = 0;
    std::array<uint64_t, kLatencyBucketsS.size() + 1> latency_buckets{};  // per bucket (not cumulative); last: +Inf
    double latency_sum_s = 0;
    std::string engine;                                      // path of the loaded engine ("" = none)
    std::string backend;                                     // what runs it (Executor::backend(); "" = none loaded)
    std::optional<uint32_t> kv_blocks_used, kv_blocks_free;  // of the last token
    // serve-workload: the scheduler's last step and its running counts
    std::optional<uint32_t> batch_size, queue_length;
    uint64_t preemptions = 0;
    uint64_t context_tokens = 0, shared_tokens = 0;  // prefix cache: needed at admission / found resident
};

struct AgentMetrics {
    std::string version, host, backend;
    unsigned protocol = 0;
    double uptime_s = 0;
    WorkerStats worker;
    uint64_t telemetry_batches = 0, telemetry_dropped = 0;
    std::optional<uint64_t> rss_bytes, mem_available_bytes, mem_total_bytes;
    std::optional<double> power_w, temperature_c;
};

std::string prometheus_text(const AgentMetrics& m);
// A label value with \, " and newline escaped as the format requires.
std::string prometheus_label(const std::string& v);

}  // namespace edge::agent
