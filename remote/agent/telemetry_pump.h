// Batches telemetry samples and sends them at most `rate` times a second (20 Hz cap). The buffer
// is bounded: when it is full the oldest samples are dropped and the next batch says how many.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "remote/agent/frame_writer.h"

namespace edge::agent {

inline constexpr unsigned kMaxTelemetryHz = 20;

class TelemetryPump {
public:
    explicit TelemetryPump(FrameWriter& out, size_t capacity = 2048);
    ~TelemetryPump();
    TelemetryPump(const TelemetryPump&) = delete;
    TelemetryPump& operator=(const TelemetryPump&) = delete;

    void set_rate_hz(unsigned hz);  // clamped to 1..20
    void push(protocol::TelemetrySample s);
    // Sends what is pending, waiting first if a batch went out less than one period ago; returns
    // once everything pushed before the call has been written (a batch already being written
    // included).
    void flush();
    uint64_t batches_sent() const;
    uint64_t samples_dropped() const;  // since the pump started

private:
    void loop();
    void send_locked(std::unique_lock<std::mutex>& lk);
    FrameWriter& out_;
    size_t capacity_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<protocol::TelemetrySample> pending_;
    uint32_t dropped_ = 0;
    std::chrono::steady_clock::duration period_;
    std::chrono::steady_clock::time_point last_send_{};
    uint64_t batches_ = 0;
    uint64_t dropped_total_ = 0;
    bool stop_ = false;
    bool flush_requested_ = false;
    bool sending_ = false;  // the pump thread is writing a batch (the lock released)
    std::condition_variable done_;
    std::thread thread_;
};

}  // namespace edge::agent
