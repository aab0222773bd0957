// CNNs in the one IR (engine/model/ir.h): a Model with architecture "cnn" whose Graph holds the
// ops below, in execution order (every op's inputs are produced by an earlier op or are the
// graph input). Weights are named tensors of Model::tensors; activations are NCHW float32.
//
// Op conventions (attrs are Op::attrs, vectors of doubles):
//   Conv2d        inputs {x}; weights {W [OC, IC/group, KH, KW], optional B [OC]};
//                 attrs strides[2], pads[4] (top, left, bottom, right), dilations[2], group[1],
//                 auto_pad[1] (0 explicit pads, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID).
//   BatchNorm     inputs {x}; weights {scale, bias, mean, var} each [C]; attrs epsilon[1].
//   Relu          inputs {x}.
//   MaxPool       inputs {x}; attrs kernel[2], strides[2], pads[4], auto_pad[1], ceil_mode[1].
//   AvgPool       as MaxPool plus count_include_pad[1].
//   GlobalAvgPool inputs {x} -> [N, C, 1, 1].
//   Linear        inputs {x} flattened to [N, K]; weights {W [out, K], optional B [out]}.
//   Add           inputs {a, b} (same shape), or inputs {a} + weights {c} where c broadcasts
//                 against a numpy-style (right-aligned).
//   Reshape       inputs {x}; attrs shape[] (0 copies the input dim, -1 is inferred), or
//                 flatten_axis[1] (ONNX Flatten: [prod(d<axis), prod(d>=axis)]).
//   Pad           inputs {x}; attrs pads[2*rank] (ONNX order: all begins, then all ends),
//                 value[1]; constant mode only.
//   Softmax       inputs {x}; over the last axis.
// A weighted op's name is its layer name (DESIGN.md); its tensors are "<op>.weight",
// "<op>.bias" (BatchNorm: "<op>.scale", "<op>.bias", "<op>.mean", "<op>.var"; a constant Add
// operand: "<op>.const").
//
// The graph input's shape (batch dimension included, as the source declared it) is kept in
// Model::metadata under "cnn.input_shape" as "1x1x28x28"; use cnn_input_shape().
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

inline constexpr const char* kCnnArchitecture = "cnn";
inline constexpr const char* kCnnInputShapeKey = "cnn.input_shape";

bool is_cnn(const Model& m);
// The declared input shape (outermost first); an error names the model when it is missing.
Result<std::vector<int64_t>> cnn_input_shape(const Model& m);
void set_cnn_input_shape(Model& m, const std::vector<int64_t>& shape);
std::string shape_text(const std::vector<int64_t>& shape);  // "1x1x28x28"

// An attribute of an op, or `fallback` when it is absent.
std::vector<double> op_attr(const Op& op, const std::string& key, const std::vector<double>& fallback = {});
double op_attr1(const Op& op, const std::string& key, double fallback);

// Node counts by op type ("Conv2d": 20, ...) and in total, for reports.
struct NodeCounts {
    int total = 0;
    std::vector<std::pair<std::string, int>> by_type;  // in first-seen order
    std::string text() const;                          // "24 nodes: Conv2d 2, Add 3, ..."
};
NodeCounts count_nodes(const Graph& g);

// ResNet-20 for CIFAR-10 (He et al. option-A shortcuts) from the akamaster-style safetensors
// (conv1/bn1, layer{1,2,3}.{0,1,2}.{conv1,bn1,conv2,bn2}, linear): input [1, 3, 32, 32].
// The option-A shortcut is MaxPool(kernel 1, stride 2) (a spatial subsample) then Pad of the
// channel axis with C/2 zeros split evenly. BatchNorm is kept as its own op (fold it with
// engine/prune).
Result<Model> build_resnet20_cifar(const std::string& safetensors_path);

// One window attribute of a Conv or pool op checked before any arithmetic uses it: `count`
// values, each an integer in [lo, 2^20] (strides, dilations, kernel sizes: lo 1, since a 0 would
// divide by zero; pads: lo 0). Errors start with `where` and name the attribute and the value.
Status check_window_attr(const std::string& where, const char* attr, const std::vector<double>& v, size_t count,
                         double lo);

}  // namespace edge::model
