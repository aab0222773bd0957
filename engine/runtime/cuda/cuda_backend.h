// The CUDA backend (plain C++ face; no CUDA header here). Implements Backend (backend.h) with the
// kernels of cuda_kernels.cu: weights uploaded once to device memory (F32, F16, row-mode QI8/QI4
// as stored; other layouts dequantized to F32 on the way), the plan's one arena and the KV block
// pools in device memory, one stream, every CUDA call checked (cuda_check.h). Decode (one token)
// uses the fused dequantize-GEMV, prefill the tiled GEMM.
#pragma once
#include <memory>

#include "engine/runtime/backend.h"

namespace edge::runtime::cuda {

std::unique_ptr<Backend> make_cuda_backend();

// Samples from the last logits of a CUDA backend on the device (temperature <= 0: argmax; top_k
// <= 0: 256), u in [0, 1) the uniform draw. An error when `be` is not a CUDA backend.
Result<int32_t> sample_on_device(Backend& be, float temperature, int top_k, float u);

}  // namespace edge::runtime::cuda
