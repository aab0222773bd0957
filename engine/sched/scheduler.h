// The request scheduler: continuous batching at token granularity over the paged CPU executor.
//
// Every step: requests that have arrived are admitted (FIFO, preempted ones first) while the KV
// budget allows; the running batch is built from one decode token per running request plus
// chunks of prompts still being prefilled (chunked prefill, "prefill streaming", so a long
// prompt never stalls the running requests for more than a chunk); when the step's blocks do not
// fit, the most recently admitted request is preempted, either by recompute (its KV is dropped
// and rebuilt from its tokens when it is readmitted) or by swap (its blocks are compressed to the
// host tier: LZ4 lossless, or INT8 + delta + LZ4 lossy, and restored on readmission). Requests
// leave the batch the step they finish. Greedy decoding; no request is lost.
//
// Time is a virtual clock advanced by each step's measured duration (or a fixed step_ms, for
// reproducible schedules); idle gaps jump to the next arrival.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/executor.h"

namespace edge::sched {

enum class Preempt { Recompute, Swap, SwapInt8 };
std::string preempt_name(Preempt p);
Result<Preempt> parse_preempt(const std::string& s);

struct SchedConfig {
    int64_t budget_blocks = 0;  // device-tier KV budget, in blocks
    int block_tokens = 16;
    Preempt preempt = Preempt::Recompute;
    int max_batch_tokens = 64;  // tokens per step: decode tokens first, then prefill chunks
    int prefill_chunk = 32;     // at most this many prompt tokens of one request per step
    int max_running = 32;
    double step_ms = 0;          // > 0: each step costs this on the virtual clock; 0: measured time
    bool record_logits = false;  // keep the logits of every generated token (comparisons)
};

struct ServeRequest {
    double arrival_ms = 0;
    std::vector<int32_t> prompt;
    int output_tokens = 1;
};

struct RequestMetrics {
    double arrival_ms = 0, first_token_ms = 0, finish_ms = 0;
    double ttft_ms = 0;  // first token - arrival
    double tpot_ms = 0;  // (finish - first token) / (output tokens - 1)
    int prompt_tokens = 0, output_tokens = 0;
    int preemptions = 0;
    int64_t context_tokens = 0;  // context needed at its admissions (prompt; on resume: what it held)
    int64_t shared_tokens = 0;   // of which found resident (shared blocks)
};

struct Aggregate {
    int requests = 0;
    int64_t output_tokens = 0, prompt_tokens = 0;
    double makespan_ms = 0;
    double tokens_per_s = 0;  // output tokens / makespan
    double ttft_mean_ms = 0, ttft_p95_ms = 0, tpot_mean_ms = 0;
    double kv_hit_rate = 0;  // shared / context tokens over all admissions
    double queue_mean = 0;
    int queue_max = 0;
    int steps = 0;
    int preemptions = 0;
    int64_t recomputed_tokens = 0;                   // tokens prefilled again after a recompute preemption
    uint64_t swap_out_bytes = 0, swap_in_bytes = 0;  // compressed bytes to / from the host tier
    double swap_ms = 0;                              // time spent compressing / restoring
    int64_t peak_blocks = 0, budget_blocks = 0;
    int64_t demand_blocks = 0;  // sum over requests of blocks for prompt + output
};

struct ServeResult {
    std::vector<std::vector<int32_t>> outputs;  // per request, output_tokens ids
    std::vector<std::vector<float>> logits;     // per request [output][vocab] when recorded
    std::vector<RequestMetrics> requests;
    Aggregate total;
};

// What serve() reports after every step, for live telemetry (the board agent streams these).
struct StepReport {
    int step = 0;             // 1-based
    double now_ms = 0;        // virtual clock after the step
    double step_ms = 0;       // what the step cost on it
    int batch_sequences = 0;  // sequences in the step
    int batch_tokens = 0;     // new tokens in the step (decode + prefill chunks)
    int running = 0, queued = 0;
    int64_t blocks_used = 0, blocks_free = 0;
    int preemptions = 0;         // so far
    int64_t context_tokens = 0;  // so far, over all admissions
    int64_t shared_tokens = 0;   // of which found resident (prefix-cache hits)
    int64_t output_tokens = 0;   // generated so far
    int finished = 0;            // requests done so far
    uint64_t swap_out_bytes = 0, swap_in_bytes = 0;
    // Requests that produced a token in this step: (request, tokens generated so far).
    std::vector<std::pair<int, int>> emitted;
};

struct ServeHooks {
    std::function<void(const StepReport&)> on_step;
    // Polled before every step: true ends serve() with a "cancelled" error.
    std::function<bool()> cancelled;
};

// Replays the requests on rt through its batch step (any runtime::Executor; its capabilities'
// max_seq bounds a request's length). Errors: a bad budget or block size, a request that could not
// fit the budget even alone, or a request longer than the executor allows.
Result<ServeResult> serve(runtime::Executor& rt, const std::vector<ServeRequest>& requests, const SchedConfig& cfg,
                          const ServeHooks& hooks = {});

// Each request alone on the executor, one sequence at a time (the reference "running it alone"):
// greedy outputs, and the logits of every generated token when `logits` is set.
Result<ServeResult> run_alone(runtime::Executor& rt, const std::vector<ServeRequest>& requests, bool logits);

// A run against the reference: token agreement = share of output positions whose token equals
// the reference's; KL(reference || run) of the next-token distributions, over the steps where
// both had the same context (every step up to and including the first divergence); needs the
// logits of both.
struct Agreement {
    double token_agreement = 0;
    double mean_kl = 0, max_kl = 0;
    int64_t kl_steps = 0;
    int identical_requests = 0;
};
Agreement compare(const ServeResult& reference, const ServeResult& run);

// Markdown tables (per request, then aggregate).
std::string format_requests(const ServeResult& r);
std::string format_aggregate(const ServeResult& r, const std::string& label);

}  // namespace edge::sched
