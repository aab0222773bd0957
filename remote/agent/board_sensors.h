// Board sensors read from sysfs/procfs on demand: temperature (thermal zones), power (hwmon
// power*_input, or the Jetson INA3221 VDD_IN rail), and MemAvailable. A missing source reads as
// absent (std::nullopt), never as zero. The roots are parameters so tests can fake a board.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace edge::agent {

struct BoardReading {
    std::optional<uint64_t> mem_available_bytes;
    std::optional<double> power_w;
    std::optional<double> temperature_c;  // hottest thermal zone
};

class BoardSensors {
public:
    explicit BoardSensors(std::string sys_root = "/sys", std::string proc_root = "/proc");
    BoardReading read() const;
    // "temperature: 2 thermal zones; power: hwmon0 power1_input" or "... absent", for the log.
    std::string describe() const;
    std::optional<uint64_t> mem_total_bytes() const;

private:
    std::string sys_, proc_;
};

}  // namespace edge::agent
