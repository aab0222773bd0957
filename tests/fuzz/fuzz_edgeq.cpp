// libFuzzer target: .edgeq bytes -> load_edgeq_model (header, checksums, metadata JSON, tokenizer
// strings, tensor table and quantization parameters).
#include <cstddef>
#include <cstdint>

#include "engine/model/edgeq.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto m = edge::model::load_edgeq_model(edge::fuzz::write_input(data, size, ".edgeq"));
    (void)m;
    return 0;
}
