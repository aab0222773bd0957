// libFuzzer target: llama2.c checkpoint bytes (v0 legacy fp32, v1 fp32, v2 int8 groups) ->
// sniff_llama2c, then load_llama2c_model: header and its plausibility checks, the exact size the
// header implies, the tensor layout, v2 dequantization, the llama shape validation. The input sits
// alone in a folder so that no tokenizer.bin / tok<N>.bin is found beside it (fuzz_llama2c_tokenizer
// reads tokenizers).
#include <cstddef>
#include <cstdint>

#include "engine/model/llama2c.h"
#include "engine/model/loader.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)edge::model::sniff_llama2c(data, size, size);
    auto m = edge::model::load_llama2c_model(edge::fuzz::write_input_alone(data, size, "checkpoint.bin"), "", nullptr);
    if (!m.ok()) return 0;
    // Touch the last float of every tensor: the loader promised nbytes at data.
    float sum = 0;
    for (const auto& t : m->tensors)
        if (t.numel() > 0) sum += t.f32()[t.numel() - 1];
    (void)sum;
    return 0;
}
