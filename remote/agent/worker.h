// The agent's worker thread: it owns the model and its runtime::Executor (engine/runtime/
// open_executor.h: a .edge engine on its backend, other formats on the CPU executor) with the
// PagedKv its prompts run in, and serves LoadEngine, RunWorkload and
// ServeWorkload requests one at a time from a queue. ServeWorkload runs a whole serving workload
// concurrently through engine/sched (continuous batching over the executor's batch step, a paged
// KV pool with prefix caching and preemption); its telemetry is what the scheduler counts. Results, log lines and errors go out through
// the FrameWriter; per-token telemetry goes to the TelemetryPump.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include "engine/runtime/open_executor.h"
#include "remote/agent/board_sensors.h"
#include "remote/agent/frame_writer.h"
#include "remote/agent/prometheus.h"
#include "remote/agent/telemetry_pump.h"
#include "remote/protocol/trace.h"

namespace edge::agent {

struct WorkerOptions {
    std::string root = ".";  // relative engine paths resolve against it
    int threads = 0;         // executor threads (<= 0: all)
    int max_seq = 0;         // KV length (<= 0: the model's context, capped by the runtime)
    runtime::BackendChoice backend = runtime::BackendChoice::Auto;  // what runs compiled engines (.edge)
    // --kv-budget: the KV pool serve-workload runs in, in blocks, or in MiB when kv_budget_mib > 0;
    // both 0: a quarter of the board's available memory (capped at 1 GiB).
    int64_t kv_budget_blocks = 0;
    double kv_budget_mib = 0;
};

// "--kv-budget" values: "N" (blocks) or "N MiB" / "NMiB" / "NM". Errors say what is accepted.
Result<std::pair<int64_t, double>> parse_kv_budget(const std::string& s);

inline constexpr int kKvBlockTokens = 16;  // KV positions reported as blocks of this many

class Worker {
public:
    Worker(FrameWriter& out, TelemetryPump& pump, const BoardSensors& sensors, WorkerOptions opts);
    ~Worker();  // cancels and joins
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    using Request = std::variant<protocol::LoadEngine, protocol::RunWorkload, protocol::ServeWorkload>;
    void submit(Request r);
    // Cancels the running request (between tokens) and drops queued ones; returns how many.
    size_t cancel();
    // Cancels request `id` alone: a queued one is dropped (Queued, with its type), the running one
    // stops between tokens (Running); NotFound when it is neither (finished, cancelled, never sent).
    enum class Cancelled { Queued, Running, NotFound };
    std::pair<Cancelled, protocol::MsgType> cancel_request(uint32_t id);
    // Waits until the queue is empty and nothing runs.
    void wait_idle();
    // Counters since the session started (any thread; a consistent copy).
    WorkerStats stats() const;

private:
    struct Loaded;
    void loop();
    void load(const protocol::LoadEngine& r);
    void run(const protocol::RunWorkload& r);
    void serve(const protocol::ServeWorkload& r);
    void log(protocol::LogLevel level, const std::string& text);
    void fail(uint32_t request_id, protocol::ErrorCode code, const std::string& message);

    FrameWriter& out_;
    TelemetryPump& pump_;
    const BoardSensors& sensors_;
    WorkerOptions opts_;
    std::unique_ptr<Loaded> loaded_;
    protocol::TraceContext trace_{};  // of the request being served (span_id: the agent's span)

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Request> queue_;
    bool busy_ = false, stop_ = false;
    uint32_t running_id_ = 0;  // the request being served while busy_
    std::atomic<bool> cancel_{false};
    mutable std::mutex stats_mu_;
    WorkerStats stats_;
    std::thread thread_;
};

}  // namespace edge::agent
