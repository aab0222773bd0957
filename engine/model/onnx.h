// ONNX importer: an .onnx ModelProto (protobuf wire format, read by engine/model/onnx_pb.h, no
// libprotobuf) to the one IR as a CNN graph (engine/model/cnn_ir.h).
//
// Supported ops: Conv, BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool, Gemm,
// MatMul (constant right operand), Add, Reshape, Flatten, Pad (constant mode), Softmax, plus
// Identity/Dropout (removed) and Constant (folded). A Reshape of a constant is folded into the
// constant. Anything else is refused with one error listing every unsupported op type and the
// nodes that use it. Initializers become F32 weights named after the op that uses them.
// External data (data_location = EXTERNAL) and non-float weights are refused with the tensor's name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

Result<Model> load_onnx_model(const std::string& path, Progress* progress = nullptr);
// Parses an image in memory; `origin` names it in messages.
Result<Model> parse_onnx_model(const uint8_t* data, size_t size, const std::string& origin);

}  // namespace edge::model
