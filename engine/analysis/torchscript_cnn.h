// TorchScript CNNs (LibTorch, behind a plain-C++ interface):
//   - load_torchscript_cnn: loads a TorchScript .pt module, inlines its forward and converts the
//     graph into the CNN IR (engine/model/cnn_ir.h). Parameters are read through the module's
//     attribute paths; a weighted op is named after the module that holds its weight
//     (`layer1.0.conv1.weight` -> layer `layer1.0.conv1`), BatchNorm tensors map weight/bias/
//     running_mean/running_var -> scale/bias/mean/var. Supported ops: aten::conv2d,
//     aten::_convolution (not transposed), aten::batch_norm, aten::relu, aten::max_pool2d,
//     aten::avg_pool2d, aten::adaptive_avg_pool2d (to 1x1), aten::mean over H, W,
//     aten::flatten, aten::reshape / view, aten::linear, aten::add (alpha 1), aten::constant_pad_nd,
//     aten::softmax (last axis), aten::dropout and aten::contiguous (identities). Any other op
//     is an error that lists every unsupported op by name.
//   - save_torchscript_cnn: the opposite direction, a CNN IR model as a TorchScript module
//     (nested submodules named after the layers, forward defined in TorchScript source).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::analysis {

// `input_shape` (NCHW, batch included): when empty, the module's `input_shape` attribute
// (List[int]) is used, and its absence is an error (a TorchScript graph does not declare it).
Result<model::Model> load_torchscript_cnn(const std::string& path, const std::vector<int64_t>& input_shape = {});

// Writes `m` (a CNN) as a TorchScript module; the input shape is stored as `input_shape`.
Status save_torchscript_cnn(const model::Model& m, const std::string& path);

}  // namespace edge::analysis
