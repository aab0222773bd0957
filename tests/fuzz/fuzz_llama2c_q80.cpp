// libFuzzer target: llama2.c "version 2" (Q8_0) export bytes -> read_llama2c_q80 (the 256-byte
// header, norms, every matrix's int8 codes and float32 group scales) and, for one that reads, the
// last code and scale of every matrix through the QI8 layout (engine/core/quant_format.h).
#include <cstddef>
#include <cstdint>

#include "engine/core/quant_format.h"
#include "engine/quant/llama2c_q80.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto q = edge::quant::read_llama2c_q80(edge::fuzz::write_input(data, size, ".q80.bin"));
    if (!q.ok()) return 0;
    float sum = 0;
    for (const auto& t : q->weights) {
        const edge::QuantInfo& qi = *t.quant;
        sum += edge::quant_scale(qi, t.data.get(), qi.n_groups - 1) *
               float(edge::quant_code(qi, t.data.get(), qi.rows - 1, qi.cols - 1));
    }
    for (const auto& t : q->norms) sum += t.f32()[t.numel() - 1];
    (void)sum;
    return 0;
}
