// libFuzzer target: *.plan.json text -> parse_plan (defaults, ordered layer rules, keep lists,
// GPTQ/AWQ options, every value's domain check) and, for a plan that parses, plan_to_json again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/quant/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto p = edge::quant::parse_plan(std::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>.plan.json");
    if (p.ok()) (void)edge::quant::plan_to_json(*p);
    return 0;
}
