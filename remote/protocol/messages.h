// The typed messages that travel in frames after the handshake, and their frame types. Type
// numbers are pinned (static_assert below); changing one, or any payload layout, bumps
// kProtocolVersion. Byte layouts: docs/protocol.md.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace edge::protocol {

enum class MsgType : uint16_t {
    Hello = 1,            // both ways, first frame after the handshake
    LoadEngine = 2,       // client -> agent
    RunWorkload = 3,      // client -> agent
    TelemetryBatch = 4,   // agent -> client
    LogLine = 5,          // agent -> client
    Error = 6,            // both ways
    Stop = 7,             // client -> agent
    Ack = 8,              // agent -> client: a request completed
    RunResult = 9,        // agent -> client: the text generated for one prompt
    MetricsRequest = 10,  // client -> agent (protocol 2): the agent's counters, please
    Metrics = 11,         // agent -> client (protocol 2): Prometheus text exposition format 0.0.4
    ServeWorkload = 12,   // client -> agent (protocol 3): replay a serving workload, batched
    ServeReport = 13,     // agent -> client (protocol 3): per-request and aggregate serving figures
};
inline constexpr uint16_t kFirstMsgType = 1;
inline constexpr uint16_t kLastMsgType = 13;
static_assert(static_cast<uint16_t>(MsgType::Ack) == 8 && static_cast<uint16_t>(MsgType::RunResult) == 9 &&
                  static_cast<uint16_t>(MsgType::Metrics) == 11 &&
                  static_cast<uint16_t>(MsgType::ServeReport) == kLastMsgType,
              "frame type numbers are part of the wire format");
const char* msg_type_name(MsgType t);

struct Hello {
    std::string role;              // "studio" or "agent"
    std::string software_version;  // e.g. "0.1.0"
    std::string hostname;          // agent: the board's host name
    std::string cpu_model;
    uint32_t cpu_threads = 0;
    uint64_t mem_total_bytes = 0;
    std::string backend;  // agent: "cpu (AVX2)" etc.
    bool operator==(const Hello&) const = default;
};

using Sha256 = std::array<uint8_t, 32>;

struct LoadEngine {
    uint32_t request_id = 0;
    std::string path;                       // on the board; relative paths resolve against the agent root
    std::optional<Sha256> expected_sha256;  // verified before loading when present
    std::string tokenizer_path;             // llama2.c checkpoints only
    std::string traceparent;                // W3C traceparent of the studio's request ("" = none)
    bool operator==(const LoadEngine&) const = default;
};

struct RunWorkload {
    uint32_t request_id = 0;
    std::vector<std::string> prompts;
    uint32_t max_tokens = 64;  // generated tokens per prompt
    float temperature = 0.0f;  // 0: greedy
    int32_t top_k = 0;
    float top_p = 1.0f;
    uint64_t seed = 42;
    uint32_t telemetry_hz = 20;  // batches per second, clamped to 1..20 by the agent
    std::string traceparent;
    // Each prompt as a user message rendered with the engine's chat template (an instruct model's
    // own prompt format; the rendered text written with its special tokens and no extra BOS).
    bool chat = false;
    bool operator==(const RunWorkload&) const = default;
};

// One telemetry sample, timestamped on the board. Optional fields travel with a presence bit:
// an absent source is absent, never zero.
struct TelemetrySample {
    uint64_t timestamp_ns = 0;  // board CLOCK_REALTIME, ns since the Unix epoch
    uint32_t request_id = 0;    // the RunWorkload it belongs to (0: idle sample)
    uint32_t prompt_index = 0;
    uint32_t tokens_generated = 0;           // in this prompt so far
    std::optional<double> token_latency_ms;  // the token this sample closes
    std::optional<double> ttft_ms;           // time to first token of this prompt
    std::optional<double> tpot_ms;           // mean time per output token after the first
    std::optional<double> tokens_per_s;      // generated tokens / generation time
    std::optional<uint64_t> rss_bytes;       // process resident set
    std::optional<uint64_t> device_mem_used_bytes;
    std::optional<uint64_t> device_mem_total_bytes;
    std::optional<uint64_t> mem_available_bytes;  // /proc/meminfo MemAvailable
    std::optional<uint32_t> kv_blocks_used;       // present together with kv_blocks_free
    std::optional<uint32_t> kv_blocks_free;
    std::optional<double> kv_hit_rate;  // 0..1
    std::optional<uint64_t> kv_evictions;
    std::optional<double> kv_compression_ratio;
    std::optional<double> power_w;
    std::optional<double> temperature_c;
    // Protocol 3, from the serving scheduler (serve-workload): the step this sample closes.
    std::optional<uint32_t> batch_size;    // sequences in the step; present together with queue_length
    std::optional<uint32_t> queue_length;  // requests waiting for admission after the step
    std::optional<uint64_t> preemptions;   // so far in this workload
    bool operator==(const TelemetrySample&) const = default;
};

struct TelemetryBatch {
    uint32_t dropped = 0;  // samples the agent dropped since the last batch (bounded buffer full)
    std::vector<TelemetrySample> samples;
    bool operator==(const TelemetryBatch&) const = default;
};

enum class LogLevel : uint8_t { Debug = 0, Info = 1, Warn = 2, Error = 3 };

struct LogLine {
    uint64_t timestamp_ns = 0;  // board CLOCK_REALTIME
    LogLevel level = LogLevel::Info;
    std::array<uint8_t, 16> trace_id{};  // all zero: no trace
    std::array<uint8_t, 8> span_id{};
    std::string text;
    bool operator==(const LogLine&) const = default;
};

enum class ErrorCode : uint16_t {
    Protocol = 1,  // malformed frame: the sender closes the stream after this
    BadRequest = 2,
    LoadFailed = 3,
    RunFailed = 4,
    NotLoaded = 5,
    Internal = 6,
};
inline constexpr uint16_t kLastErrorCode = 6;

struct ErrorMsg {
    uint32_t request_id = 0;  // 0: not tied to a request
    ErrorCode code = ErrorCode::Internal;
    std::string message;
    bool operator==(const ErrorMsg&) const = default;
};

enum class StopScope : uint8_t {
    Cancel = 0,    // cancel the running and queued workloads, keep the session
    Shutdown = 1,  // cancel, flush, acknowledge and exit
    Request = 2,   // cancel one request (`target`) and nothing else: dropped when queued (it is
                   // acknowledged "cancelled before it started"), stopped between tokens when running
};

struct Stop {
    uint32_t request_id = 0;
    StopScope scope = StopScope::Shutdown;
    uint32_t target = 0;  // StopScope::Request: the request to cancel (on the wire only then)
    bool operator==(const Stop&) const = default;
};

struct Ack {
    uint32_t request_id = 0;
    MsgType of = MsgType::Hello;  // the request type acknowledged
    std::string detail;
    bool operator==(const Ack&) const = default;
};

struct RunResult {
    uint32_t request_id = 0;
    uint32_t prompt_index = 0;
    uint32_t prompt_tokens = 0;
    uint32_t generated_tokens = 0;
    double ttft_ms = 0;
    double tokens_per_s = 0;
    std::string text;
    bool operator==(const RunResult&) const = default;
};

// Answered at once, also while a workload runs (it does not queue behind requests).
struct MetricsRequest {
    uint32_t request_id = 0;
    bool operator==(const MetricsRequest&) const = default;
};

struct Metrics {
    uint32_t request_id = 0;
    std::string text;  // Prometheus text format 0.0.4 (what `promtool check metrics` reads)
    bool operator==(const Metrics&) const = default;
};

// Replays a serving workload (engine/sched/workload.h text: prefixes and requests with arrival
// times, prompt and output lengths; synthetic token ids) through the agent's scheduler: continuous
// batching over the loaded engine's batch step, the paged KV pool with prefix caching, chunked
// prefill and preemption. Telemetry streams per step; a ServeReport ends it (then an Ack).
enum class PreemptMode : uint8_t { Recompute = 0, Swap = 1, SwapInt8 = 2 };
struct ServeWorkload {
    uint32_t request_id = 0;
    std::string workload;        // the workload file's text
    uint32_t concurrency = 8;    // most requests running at once
    uint64_t budget_blocks = 0;  // KV pool in blocks; 0: the agent's --kv-budget
    uint32_t block_tokens = 16;
    uint32_t max_batch_tokens = 64;  // new tokens per step: decode first, then prefill chunks
    uint32_t prefill_chunk = 32;
    PreemptMode preempt = PreemptMode::Recompute;
    double step_ms = 0;  // > 0: a virtual clock of this many ms per step (reproducible figures)
    uint32_t telemetry_hz = 20;
    std::string traceparent;
    bool digest_logits = false;  // report an XXH64 of each request's logits (bit-identity checks)
    bool operator==(const ServeWorkload&) const = default;
};

// One request of a served workload, as the agent's scheduler measured it (times on its clock).
struct ServedRequest {
    uint32_t prompt_tokens = 0, output_tokens = 0, preemptions = 0;
    double arrival_ms = 0, ttft_ms = 0, tpot_ms = 0, finish_ms = 0;
    uint64_t context_tokens = 0;  // context needed at its admissions
    uint64_t shared_tokens = 0;   // of which found resident in the KV pool (prefix-cache hits)
    // digest_logits: XXH64 (seed 0) of the float32 logits of every output token in order; 0 otherwise.
    uint64_t logits_digest = 0;
    bool operator==(const ServedRequest&) const = default;
};

struct ServeReport {
    uint32_t request_id = 0;
    std::string backend;  // what ran the steps (the executor's capabilities name)
    std::vector<ServedRequest> requests;
    uint32_t steps = 0, preemptions = 0, queue_max = 0;
    uint64_t output_tokens = 0, prompt_tokens = 0, recomputed_tokens = 0;
    uint64_t swap_out_bytes = 0, swap_in_bytes = 0, peak_blocks = 0, budget_blocks = 0;
    double makespan_ms = 0, tokens_per_s = 0, ttft_mean_ms = 0, ttft_p95_ms = 0, tpot_mean_ms = 0;
    double kv_hit_rate = 0;  // shared / context tokens over all admissions
    double queue_mean = 0;
    bool operator==(const ServeReport&) const = default;
};

// The alternatives are in frame-type order: type = index + 1.
using Message = std::variant<Hello, LoadEngine, RunWorkload, TelemetryBatch, LogLine, ErrorMsg, Stop, Ack, RunResult,
                             MetricsRequest, Metrics, ServeWorkload, ServeReport>;
static_assert(std::variant_size_v<Message> == kLastMsgType, "one alternative per frame type");
MsgType type_of(const Message& m);

}  // namespace edge::protocol
