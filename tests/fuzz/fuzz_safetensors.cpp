// libFuzzer target: safetensors bytes -> parse_safetensors -> every convertible tensor to F32.
#include <cstddef>
#include <cstdint>

#include "engine/model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto f = edge::model::parse_safetensors(data, size, "<fuzz>");
    if (!f.ok()) return 0;
    for (const auto& e : f->entries) {
        if (!e.dtype || e.numel() > (int64_t(1) << 24)) continue;
        auto t = f->to_f32(e, e.name);
        (void)t;
    }
    return 0;
}
