#include "engine/core/memory_budget.h"

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace edge {

namespace {

std::atomic<uint64_t> g_limit{0};  // 0: none

uint64_t meminfo_available() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kb = 0;
    std::string unit;
    while (in >> key >> kb) {
        std::getline(in, unit);
        if (key == "MemAvailable:") return kb * 1024;
    }
    return 0;
}

uint64_t cgroup_limit() {
    std::ifstream in("/sys/fs/cgroup/memory.max");  // cgroup v2; "max" when unlimited
    std::string s;
    if (!(in >> s) || s == "max") return 0;
    try {
        return std::stoull(s);
    } catch (...) {
        return 0;
    }
}

}  // namespace

Result<uint64_t> parse_memory_size(std::string_view text) {
    std::string s(text);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return err("memory size '", text, "' is not a number with an optional unit (e.g. 6G, 512M)");
    double v = 0;
    try {
        v = std::stod(s.substr(0, i));
    } catch (...) {
        return err("memory size '", text, "' is not a number with an optional unit (e.g. 6G, 512M)");
    }
    std::string unit = s.substr(i);
    while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
    for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
    double mul = 1;
    if (unit.empty() || unit == "B")
        mul = 1;
    else if (unit == "K" || unit == "KB" || unit == "KIB")
        mul = 1024.0;
    else if (unit == "M" || unit == "MB" || unit == "MIB")
        mul = 1024.0 * 1024;
    else if (unit == "G" || unit == "GB" || unit == "GIB")
        mul = 1024.0 * 1024 * 1024;
    else if (unit == "T" || unit == "TB" || unit == "TIB")
        mul = 1024.0 * 1024 * 1024 * 1024;
    else
        return err("memory size '", text, "': unknown unit '", s.substr(i), "' (use B, K, M, G or T)");
    const double bytes = v * mul;
    if (!std::isfinite(bytes) || bytes < 1 || bytes > 1.8e19) return err("memory size '", text, "' is out of range");
    return uint64_t(bytes);
}

std::string format_memory_size(uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

void set_memory_limit(std::optional<uint64_t> limit) { g_limit.store(limit.value_or(0)); }

std::optional<uint64_t> memory_limit() {
    const uint64_t v = g_limit.load();
    return v ? std::optional<uint64_t>(v) : std::nullopt;
}

MemoryBudget memory_budget(std::optional<uint64_t> limit) {
    if (!limit) limit = memory_limit();
    if (limit) return {*limit, "--memory-limit " + format_memory_size(*limit)};
    const uint64_t avail = meminfo_available(), cg = cgroup_limit();
    if (cg && (!avail || cg < avail)) return {cg, "the cgroup's memory.max"};
    return {avail, "MemAvailable in /proc/meminfo"};
}

Status check_memory(const std::string& subject, const std::vector<MemoryItem>& items, const MemoryBudget& budget,
                    const std::string& advice) {
    uint64_t total = 0;
    for (const MemoryItem& i : items) total += i.bytes;
    if (budget.bytes == 0 || total <= budget.bytes) return {};
    std::ostringstream os;
    os << subject << ": needs about " << format_memory_size(total) << " (";
    bool first = true;
    for (const MemoryItem& i : items) {
        if (!i.bytes) continue;
        os << (first ? "" : " + ") << i.what << " " << format_memory_size(i.bytes);
        first = false;
    }
    os << ") but " << format_memory_size(budget.bytes) << " is available (" << budget.source << ")";
    if (!advice.empty()) os << "; " << advice;
    return Error{os.str()};
}

}  // namespace edge
