#include "engine/telemetry/memory.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace edge::telemetry {

namespace {
// "VmRSS:\t   1234 kB" -> 1234*1024
bool field_kb(std::string_view line, std::string_view key, int64_t& out) {
    if (line.substr(0, key.size()) != key || line.size() <= key.size() || line[key.size()] != ':') return false;
    std::string_view rest = line.substr(key.size() + 1);
    int64_t v = 0;
    bool any = false;
    size_t i = 0;
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
    for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i) {
        v = v * 10 + (rest[i] - '0');
        any = true;
    }
    if (!any) return false;
    out = v * 1024;  // the kernel reports kB (KiB)
    return true;
}
}  // namespace

MemoryUsage parse_proc_status(std::string_view text) {
    MemoryUsage m;
    bool have_rss = false;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        if (field_kb(line, "VmRSS", m.rss_bytes)) have_rss = true;
        field_kb(line, "VmHWM", m.peak_rss_bytes);
        field_kb(line, "RssAnon", m.rss_anon_bytes);
        field_kb(line, "RssFile", m.rss_file_bytes);
        pos = end + 1;
    }
    m.ok = have_rss;
    return m;
}

MemoryUsage process_memory() {
    std::ifstream f("/proc/self/status");
    if (!f) return {};
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse_proc_status(ss.str());
}

bool reset_peak_rss() {
    FILE* f = std::fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    const bool ok = std::fputs("5", f) >= 0;
    return std::fclose(f) == 0 && ok;
}

}  // namespace edge::telemetry
