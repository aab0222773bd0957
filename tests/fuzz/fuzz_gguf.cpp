// libFuzzer target: GGUF bytes -> parser -> every metadata value printed, every tensor
// dequantized, the llama importer run, and the lazily imported model read as stored (the runtime's
// load: F16/BF16 kept, Q8_0/Q4_0 repacked into QI8/QI4, Q/K rows permuted, ggml blocks kept). Any crash, sanitizer report, leak or huge allocation
// (libFuzzer's -rss_limit_mb / -malloc_limit_mb) is a bug in the reader.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/model/ggml_dequant.h"
#include "engine/model/gguf.h"
#include "engine/model/weights.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto f = edge::model::gguf::parse(data, size, "<fuzz>");
    if (!f.ok()) return 0;
    size_t chars = 0;
    for (const auto& [key, value] : f->kv) chars += key.size() + value.to_string().size();
    std::vector<float> out;
    for (const auto& t : f->tensors) {
        // The parser guarantees t.nbytes bytes at t.data; dequantize exactly that.
        if (!edge::model::can_dequantize(t.type) || t.n_elements > (uint64_t(1) << 24)) continue;
        out.resize(t.n_elements);
        (void)edge::model::dequantize(t.type, t.data, out.data(), int64_t(t.n_elements));
    }
    auto m = edge::model::import_gguf(*f, nullptr);
    (void)m;
    auto lazy = edge::model::import_gguf(*f, nullptr, /*lazy_weights=*/true);
    if (lazy.ok() && edge::model::stored_weight_bytes(*lazy) < (size_t(1) << 26))
        (void)edge::model::load_weights_as_stored(*lazy);
    (void)chars;
    return 0;
}
