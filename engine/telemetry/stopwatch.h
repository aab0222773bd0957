// A monotonic stopwatch (std::chrono::steady_clock).
#pragma once
#include <chrono>
#include <cstdint>

namespace edge::telemetry {

class Stopwatch {
public:
    Stopwatch() : start_(clock::now()) {}
    void restart() { start_ = clock::now(); }
    double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
    double millis() const { return seconds() * 1e3; }
    int64_t nanos() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start_).count();
    }

private:
    using clock = std::chrono::steady_clock;
    clock::time_point start_;
};

}  // namespace edge::telemetry
