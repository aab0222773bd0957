// Process memory as the kernel reports it (/proc/self/status): resident set now and peak, and its
// anonymous / file-backed split. Linux only; elsewhere every figure reads 0 and ok is false.
#pragma once
#include <cstdint>
#include <string_view>

namespace edge::telemetry {

struct MemoryUsage {
    bool ok = false;
    int64_t rss_bytes = 0;       // VmRSS
    int64_t peak_rss_bytes = 0;  // VmHWM (high-water mark)
    int64_t rss_anon_bytes = 0;  // RssAnon
    int64_t rss_file_bytes = 0;  // RssFile (mapped files, e.g. mmapped weights)
};

MemoryUsage process_memory();
// Parses the text of a /proc/<pid>/status file (exposed for tests).
MemoryUsage parse_proc_status(std::string_view text);

// Resets the kernel's peak-RSS counter (VmHWM) to the current RSS, when allowed
// (writes "5" to /proc/self/clear_refs). Returns false when not supported.
bool reset_peak_rss();

}  // namespace edge::telemetry
