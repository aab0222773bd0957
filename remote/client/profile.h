// Profiling an engine on a board through its agent, supervised: the agent is started, loads the
// engine, runs the prompts and streams telemetry. When the agent dies (killed, crashed, out of
// memory) or the link drops mid-run, the supervisor reports it, starts a fresh agent (reconnecting
// when the link is gone), reloads the engine and re-runs the prompts that had not finished, so
// the telemetry stream resumes. After max_restarts it gives up with an error naming the board and
// every death it saw.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "remote/client/deploy.h"
#include "remote/client/transport.h"
#include "remote/protocol/messages.h"

namespace edge::client {

// Starts a fresh agent and returns its transport (called again after each death).
using AgentStarter = std::function<Result<std::unique_ptr<Transport>>()>;

// An agent started by `command` over SSH; the session is kept between starts and re-opened
// through `connect` when the link is gone.
AgentStarter ssh_agent_starter(Connector connect, std::string command);
// The agent as a local child process.
AgentStarter local_agent_starter(std::vector<std::string> argv);

struct ProfileRequest {
    std::string engine_path;  // on the board (relative: against the agent's --root)
    std::optional<protocol::Sha256> engine_sha256;
    std::string tokenizer_path;
    std::vector<std::string> prompts;
    bool chat = false;  // each prompt a user message in the engine's chat template (protocol 5)
    uint32_t max_tokens = 64;
    float temperature = 0.0f;
    int32_t top_k = 0;
    float top_p = 1.0f;
    uint64_t seed = 42;
    uint32_t telemetry_hz = 20;
    std::string traceparent;     // "" = a fresh trace
    bool fetch_metrics = false;  // ask the agent for its Prometheus text after the run
    // Set: replay this serving workload through the agent's scheduler (protocol 3) instead of
    // running `prompts` one at a time; request_id and traceparent are filled in. A restart
    // replays the whole workload.
    std::optional<protocol::ServeWorkload> serve;
};

struct SupervisorOptions {
    int max_restarts = 3;
    int restart_delay_ms = 200;      // doubled after each restart
    int silence_timeout_ms = 30000;  // no frame for this long mid-run: the agent is hung, restart it
    int load_timeout_ms = 60000;
    std::function<void(const protocol::TelemetryBatch&)> on_telemetry;
    std::function<void(const protocol::RunResult&)> on_result;  // prompt_index: into request.prompts
    std::function<void(const std::string&)> on_event;           // "agent died ...; restarting"
    std::function<void(const protocol::LogLine&)> on_log;
    // Polled at least every 250 ms while waiting on the agent; true stops the agent and ends
    // run_profile with a "profile cancelled" error (no restart).
    std::function<bool()> cancelled;
};

struct ProfileReport {
    std::string board;                         // the agent's describe() ("agent on user@host:22")
    protocol::Hello agent;                     // hello of the last agent
    std::string load_detail;                   // the load ack's detail
    std::vector<protocol::RunResult> results;  // one per prompt, prompt_index into request.prompts
    std::vector<protocol::TelemetrySample> samples;
    uint64_t dropped_samples = 0;
    int restarts = 0;
    std::vector<std::string> incidents;  // each agent death / link drop, as detected
    double seconds = 0;
    std::string traceparent;                      // sent with the requests: trace id, the client span's id
    std::string caller_span_id;                   // hex parent id of a traceparent the caller gave ("": fresh trace)
    uint64_t start_unix_ns = 0, end_unix_ns = 0;  // wall clock of the client around the run
    std::vector<protocol::LogLine> logs;          // the agents' log lines (trace and span ids)
    std::string prometheus_text;                  // fetch_metrics: the agent's answer after the run
    std::optional<protocol::ServeReport> serve_report;  // request.serve: what the agent's scheduler measured
};

Result<ProfileReport> run_profile(const AgentStarter& start, const ProfileRequest& req,
                                  const SupervisorOptions& opts = {});

// Figures of a profile run (absent when no sample carried the source).
struct ProfileSummary {
    size_t prompts = 0, tokens = 0, samples = 0;
    std::optional<double> latency_p50_ms, latency_p99_ms, ttft_p50_ms, tpot_mean_ms;
    std::optional<double> tokens_per_s;  // generated tokens / generation time over all prompts
    std::optional<uint64_t> rss_max_bytes, mem_available_min_bytes, device_mem_used_max_bytes;
    std::optional<double> kv_hit_rate, power_mean_w, temperature_max_c;
    std::optional<uint32_t> kv_blocks_used_max;
    std::optional<uint64_t> kv_evictions;
};
ProfileSummary summarize(const ProfileReport& r);

// The p-quantile (0..1) of v by the nearest rank (index round(p * (n - 1)) of v sorted); 0 when empty.
double percentile(std::vector<double> v, double p);

}  // namespace edge::client
