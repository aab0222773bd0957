#include "remote/agent/board_sensors.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace edge::agent {
namespace fs = std::filesystem;
namespace {

std::optional<double> read_number(const fs::path& p) {
    std::ifstream f(p);
    double v;
    if (f && (f >> v)) return v;
    return std::nullopt;
}

std::string read_line(const fs::path& p) {
    std::ifstream f(p);
    std::string s;
    std::getline(f, s);
    return s;
}

std::vector<fs::path> children(const fs::path& dir, const std::string& prefix) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().filename().string().rfind(prefix, 0) == 0) out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<uint64_t> meminfo_field(const std::string& proc, const std::string& key) {
    std::ifstream f(proc + "/meminfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind(key + ":", 0) != 0) continue;
        std::istringstream is(line.substr(key.size() + 1));
        uint64_t kb;
        if (is >> kb) return kb * 1024;
    }
    return std::nullopt;
}

// Power in watts of one hwmon device, or nothing.
std::optional<double> hwmon_power(const fs::path& dev) {
    double uw = 0;
    bool any = false;
    for (const auto& p : children(dev, "power")) {
        auto name = p.filename().string();
        if (name.size() < 7 || name.substr(name.size() - 6) != "_input") continue;
        if (auto v = read_number(p)) uw += *v, any = true;
    }
    if (any) return uw / 1e6;
    // Jetson INA3221: in<i>_label names the rail, in<i>_input mV, curr<i>_input mA.
    for (int i = 1; i <= 4; ++i) {
        if (read_line(dev / ("in" + std::to_string(i) + "_label")) != "VDD_IN") continue;
        auto mv = read_number(dev / ("in" + std::to_string(i) + "_input"));
        auto ma = read_number(dev / ("curr" + std::to_string(i) + "_input"));
        if (mv && ma) return *mv * *ma / 1e6;
    }
    return std::nullopt;
}

std::vector<fs::path> hwmon_devices(const std::string& sys) {
    std::vector<fs::path> out = children(fs::path(sys) / "class/hwmon", "hwmon");
    // INA3221 on Jetson also shows under the i2c driver (older kernels expose it only there).
    for (const auto& dev : children(fs::path(sys) / "bus/i2c/drivers/ina3221", ""))
        for (const auto& h : children(dev / "hwmon", "hwmon")) out.push_back(h);
    return out;
}

}  // namespace

BoardSensors::BoardSensors(std::string sys_root, std::string proc_root)
    : sys_(std::move(sys_root)), proc_(std::move(proc_root)) {}

BoardReading BoardSensors::read() const {
    BoardReading r;
    r.mem_available_bytes = meminfo_field(proc_, "MemAvailable");
    for (const auto& zone : children(fs::path(sys_) / "class/thermal", "thermal_zone")) {
        auto mc = read_number(zone / "temp");
        if (!mc) continue;
        double c = *mc / 1000.0;
        if (!r.temperature_c || c > *r.temperature_c) r.temperature_c = c;
    }
    for (const auto& dev : hwmon_devices(sys_)) {
        if (auto w = hwmon_power(dev)) {
            r.power_w = r.power_w.value_or(0.0) + *w;
            break;  // one power source: summing several monitors would double count rails
        }
    }
    return r;
}

std::optional<uint64_t> BoardSensors::mem_total_bytes() const { return meminfo_field(proc_, "MemTotal"); }

std::string BoardSensors::describe() const {
    int zones = 0;
    for (const auto& zone : children(fs::path(sys_) / "class/thermal", "thermal_zone"))
        if (read_number(zone / "temp")) ++zones;
    std::string power = "absent";
    for (const auto& dev : hwmon_devices(sys_))
        if (hwmon_power(dev)) {
            power = dev.string();
            break;
        }
    return "temperature: " + (zones ? std::to_string(zones) + " thermal zone(s)" : std::string("absent")) +
           "; power: " + power;
}

}  // namespace edge::agent
