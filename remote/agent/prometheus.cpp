#include "remote/agent/prometheus.h"

#include <cstdio>

namespace edge::agent {
namespace {

std::string num(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

class Writer {
public:
    void family(const char* name, const char* type, const char* help) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    void sample(const std::string& name, const std::string& labels, const std::string& value) {
        out += name + (labels.empty() ? "" : "{" + labels + "}") + " " + value + "\n";
    }
    std::string out;
};

}  // namespace

std::string prometheus_label(const std::string& v) {
    std::string o;
    for (char c : v) {
        if (c == '\\')
            o += "\\\\";
        else if (c == '"')
            o += "\\\"";
        else if (c == '\n')
            o += "\\n";
        else
            o += c;
    }
    return o;
}

std::string prometheus_text(const AgentMetrics& m) {
    Writer w;
    w.family("edge_agent_info", "gauge", "Facts about this edge-agent (value always 1).");
    w.sample("edge_agent_info",
             "version=\"" + prometheus_label(m.version) + "\",protocol=\"" + std::to_string(m.protocol) + "\",host=\"" +
                 prometheus_label(m.host) + "\",backend=\"" + prometheus_label(m.backend) + "\"",
             "1");
    w.family("edge_agent_uptime_seconds", "gauge", "Seconds since this agent session started.");
    w.sample("edge_agent_uptime_seconds", "", num(m.uptime_s));

    const WorkerStats& s = m.worker;
    w.family("edge_agent_engine_loaded", "gauge",
             "1 while an engine is loaded (label: its path on the board), else 0.");
    if (s.engine.empty())
        w.sample("edge_agent_engine_loaded", "", "0");
    else
        w.sample("edge_agent_engine_loaded", "engine=\"" + prometheus_label(s.engine) + "\"", "1");
    w.family("edge_agent_engine_loads_total", "counter", "load-engine requests served, by result.");
    w.sample("edge_agent_engine_loads_total", "result=\"ok\"", std::to_string(s.loads_ok));
    w.sample("edge_agent_engine_loads_total", "result=\"failed\"", std::to_string(s.loads_failed));
    w.family("edge_agent_workloads_total", "counter", "run-workload requests served, by result.");
    w.sample("edge_agent_workloads_total", "result=\"ok\"", std::to_string(s.runs));
    w.sample("edge_agent_workloads_total", "result=\"failed\"", std::to_string(s.runs_failed));
    w.family("edge_agent_prompts_total", "counter",
             "Prompts run to completion (or cancelled) by run-workload requests.");
    w.sample("edge_agent_prompts_total", "", std::to_string(s.prompts));
    w.family("edge_agent_tokens_generated_total", "counter", "Tokens generated.");
    w.sample("edge_agent_tokens_generated_total", "", std::to_string(s.tokens));

    w.family("edge_agent_token_latency_seconds", "histogram",
             "Time to produce each generated token (the first one's is the TTFT).");
    uint64_t cum = 0;
    for (size_t i = 0; i < kLatencyBucketsS.size(); ++i) {
        cum += s.latency_buckets[i];
        w.sample("edge_agent_token_latency_seconds_bucket", "le=\"" + num(kLatencyBucketsS[i]) + "\"",
                 std::to_string(cum));
    }
    cum += s.latency_buckets.back();
    w.sample("edge_agent_token_latency_seconds_bucket", "le=\"+Inf\"", std::to_string(cum));
    w.sample("edge_agent_token_latency_seconds_sum", "", num(s.latency_sum_s));
    w.sample("edge_agent_token_latency_seconds_count", "", std::to_string(cum));

    w.family("edge_agent_telemetry_batches_total", "counter", "Telemetry batches sent to the client.");
    w.sample("edge_agent_telemetry_batches_total", "", std::to_string(m.telemetry_batches));
    w.family("edge_agent_telemetry_samples_dropped_total", "counter",
             "Telemetry samples dropped because the client read too slowly (bounded buffer).");
    w.sample("edge_agent_telemetry_samples_dropped_total", "", std::to_string(m.telemetry_dropped));

    if (s.kv_blocks_used && s.kv_blocks_free) {
        w.family("edge_agent_kv_blocks", "gauge", "KV cache blocks of the last generated token, by state.");
        w.sample("edge_agent_kv_blocks", "state=\"used\"", std::to_string(*s.kv_blocks_used));
        w.sample("edge_agent_kv_blocks", "state=\"free\"", std::to_string(*s.kv_blocks_free));
    }
    if (s.batch_size && s.queue_length) {
        w.family("edge_agent_batch_size", "gauge", "Sequences in the scheduler's last step.");
        w.sample("edge_agent_batch_size", "", std::to_string(*s.batch_size));
        w.family("edge_agent_queue_length", "gauge", "Requests waiting for admission after the last step.");
        w.sample("edge_agent_queue_length", "", std::to_string(*s.queue_length));
    }
    w.family("edge_agent_preemptions_total", "counter", "Requests preempted by the scheduler (KV pool full).");
    w.sample("edge_agent_preemptions_total", "", std::to_string(s.preemptions));
    w.family("edge_agent_prefix_context_tokens_total", "counter",
             "Context tokens requests needed at admission (the prefix-cache hit rate's denominator).");
    w.sample("edge_agent_prefix_context_tokens_total", "", std::to_string(s.context_tokens));
    w.family("edge_agent_prefix_hit_tokens_total", "counter",
             "Of those, tokens found resident in the KV pool (prefix-cache hits).");
    w.sample("edge_agent_prefix_hit_tokens_total", "", std::to_string(s.shared_tokens));
    if (m.rss_bytes) {
        w.family("process_resident_memory_bytes", "gauge", "Resident memory of the agent process.");
        w.sample("process_resident_memory_bytes", "", std::to_string(*m.rss_bytes));
    }
    if (m.mem_available_bytes) {
        w.family("edge_board_memory_available_bytes", "gauge",
                 "MemAvailable of the board (/proc/meminfo; Jetson GPUs share it).");
        w.sample("edge_board_memory_available_bytes", "", std::to_string(*m.mem_available_bytes));
    }
    if (m.mem_total_bytes) {
        w.family("edge_board_memory_total_bytes", "gauge", "MemTotal of the board.");
        w.sample("edge_board_memory_total_bytes", "", std::to_string(*m.mem_total_bytes));
    }
    if (m.power_w) {
        w.family("edge_board_power_watts", "gauge", "Board power draw (hwmon or the INA3221 VDD_IN rail).");
        w.sample("edge_board_power_watts", "", num(*m.power_w));
    }
    if (m.temperature_c) {
        w.family("edge_board_temperature_celsius", "gauge", "Hottest thermal zone of the board.");
        w.sample("edge_board_temperature_celsius", "", num(*m.temperature_c));
    }
    return w.out;
}

}  // namespace edge::agent
