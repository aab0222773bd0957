// A monotonic stopwatch (std::chrono::steady_clock).
#pragma once
#include <chrono>
#include <cstdint>

namespace edge::telemetry {

class Stopwatch {
public:
    Stopwatch() : start_(Clock::now()) {}
    void restart() { start_ = Clock::now(); }
    double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
    double millis() const { return seconds() * 1e3; }
    int64_t nanos() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
    }

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point start_;
};

}  // namespace edge::telemetry
