// libFuzzer target: ONNX bytes -> the protobuf reader and the graph builder (attributes, shapes,
// initializers, the window attributes' values).
#include <cstddef>
#include <cstdint>

#include "engine/model/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto m = edge::model::parse_onnx_model(data, size, "<fuzz>.onnx");
    (void)m;
    return 0;
}
