// Progress reporting and cooperative cancellation for long engine work (load, analysis,
// quantization, calibration, ...). The engine never blocks on the observer; the GUI and the CLI
// adapt it (progress bar, job mechanism).
#pragma once
#include <atomic>
#include <functional>
#include <string>

namespace edge {

class Progress {
public:
    using Callback = std::function<void(double fraction, const std::string& stage)>;

    Progress() = default;
    explicit Progress(Callback cb) : cb_(std::move(cb)) {}

    // fraction in [0,1]; stage names what is being done ("reading tensors").
    void report(double fraction, const std::string& stage = {}) const {
        if (cb_) cb_(fraction, stage);
    }
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

private:
    Callback cb_;
    std::atomic<bool> cancelled_{false};
};

// A null-safe helper for functions taking `Progress*`.
inline bool is_cancelled(const Progress* p) { return p && p->cancelled(); }
inline void report(const Progress* p, double f, const std::string& stage = {}) {
    if (p) p->report(f, stage);
}

}  // namespace edge
