// Facts about the machine, for benchmark reports: CPU model, core count.
#pragma once
#include <string>
#include <string_view>

namespace edge::telemetry {

// "AMD EPYC 7B13" etc. from /proc/cpuinfo ("model name", or "Hardware"/"Model"/"CPU part" on
// ARM boards); "unknown CPU" when nothing is found.
std::string cpu_model();
// Parses the text of /proc/cpuinfo (exposed for tests); "" when no model line is found.
std::string parse_cpu_model(std::string_view cpuinfo);
// Logical CPUs available to this process (sched affinity), at least 1.
int cpu_count();

}  // namespace edge::telemetry
