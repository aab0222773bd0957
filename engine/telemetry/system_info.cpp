#include "engine/telemetry/system_info.h"

#include <sched.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace edge::telemetry {

namespace {
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}
}  // namespace

std::string parse_cpu_model(std::string_view text) {
    // In order of preference: x86 "model name", ARM "Model" / "Hardware", then "cpu model".
    const std::string_view keys[] = {"model name", "Model", "Hardware", "cpu model"};
    for (std::string_view want : keys) {
        size_t pos = 0;
        while (pos < text.size()) {
            size_t end = text.find('\n', pos);
            if (end == std::string_view::npos) end = text.size();
            std::string_view line = text.substr(pos, end - pos);
            pos = end + 1;
            const size_t colon = line.find(':');
            if (colon == std::string_view::npos) continue;
            if (trim(line.substr(0, colon)) != want) continue;
            std::string_view v = trim(line.substr(colon + 1));
            if (!v.empty()) return std::string(v);
        }
    }
    return {};
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    if (!f) return "unknown CPU";
    std::ostringstream ss;
    ss << f.rdbuf();
    std::string m = parse_cpu_model(ss.str());
    return m.empty() ? "unknown CPU" : m;
}

int cpu_count() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    const unsigned h = std::thread::hardware_concurrency();
    return h ? int(h) : 1;
}

}  // namespace edge::telemetry
