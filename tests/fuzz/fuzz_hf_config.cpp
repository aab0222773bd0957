// libFuzzer target: config.json text -> parse_hf_config (architectures, dimensions, rope scaling,
// every typed field and its error message).
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/model/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto c = edge::model::parse_hf_config(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>/config.json");
    (void)c;
    return 0;
}
