// libFuzzer target: edge-workload text (what serve-bench, profile --workload and the agent's
// serve-workload read) -> parse_workload -> the prompt tokens of every request of one that parses.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/sched/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto w = edge::sched::parse_workload(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>");
    if (!w.ok()) return 0;
    int64_t tokens = 0;
    for (size_t i = 0; i < w->requests.size() && tokens < (int64_t(1) << 20); ++i)
        tokens += int64_t(edge::sched::prompt_tokens(*w, i, 512).size());
    return 0;
}
