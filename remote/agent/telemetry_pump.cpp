#include "remote/agent/telemetry_pump.h"

#include <algorithm>

namespace edge::agent {

TelemetryPump::TelemetryPump(FrameWriter& out, size_t capacity)
    : out_(out),
      capacity_(std::max<size_t>(1, std::min(capacity, protocol::kMaxSamplesPerBatch))),
      period_(std::chrono::milliseconds(1000 / kMaxTelemetryHz)) {
    thread_ = std::thread([this] { loop(); });
}

TelemetryPump::~TelemetryPump() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void TelemetryPump::set_rate_hz(unsigned hz) {
    hz = std::clamp(hz, 1u, kMaxTelemetryHz);
    std::lock_guard lk(mu_);
    period_ = std::chrono::microseconds(1000000 / hz);
}

void TelemetryPump::push(protocol::TelemetrySample s) {
    std::lock_guard lk(mu_);
    if (pending_.size() >= capacity_) {
        pending_.pop_front();
        ++dropped_;
        ++dropped_total_;
    }
    pending_.push_back(s);  // trivially copyable
}

uint64_t TelemetryPump::batches_sent() const {
    std::lock_guard lk(mu_);
    return batches_;
}

uint64_t TelemetryPump::samples_dropped() const {
    std::lock_guard lk(mu_);
    return dropped_total_;
}

void TelemetryPump::send_locked(std::unique_lock<std::mutex>& lk) {
    protocol::TelemetryBatch b;
    b.dropped = dropped_;
    b.samples.assign(std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
    pending_.clear();
    dropped_ = 0;
    last_send_ = std::chrono::steady_clock::now();
    ++batches_;
    sending_ = true;
    lk.unlock();  // never hold the buffer while writing to a slow peer
    (void)out_.send(b);
    lk.lock();
    sending_ = false;
}

void TelemetryPump::flush() {
    std::unique_lock lk(mu_);
    // A batch being written counts as pending: the caller's next frame (a run's acknowledgement)
    // must not overtake it, or a short run's samples arrive after the client stopped listening.
    if (pending_.empty() && dropped_ == 0 && !sending_) return;
    flush_requested_ = true;
    cv_.notify_all();
    done_.wait(lk, [&] { return !flush_requested_ || stop_; });
}

// Only this thread sends, so batches leave in order.
void TelemetryPump::loop() {
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait_for(lk, period_, [&] { return stop_ || flush_requested_; });
        if (stop_) break;
        bool have = !pending_.empty() || dropped_ != 0;
        auto due = last_send_ + period_;
        if (have && flush_requested_ && std::chrono::steady_clock::now() < due)
            cv_.wait_until(lk, due, [&] { return stop_; });
        if (stop_) break;
        if (have && std::chrono::steady_clock::now() >= last_send_ + period_) send_locked(lk);
        if (flush_requested_ && pending_.empty() && dropped_ == 0) {
            flush_requested_ = false;
            done_.notify_all();
        }
    }
    flush_requested_ = false;
    done_.notify_all();
}

}  // namespace edge::agent
