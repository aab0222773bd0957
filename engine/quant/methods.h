// AWQ scale search and GPTQ, one layer (or one group of layers sharing an input) at a time.
#pragma once
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/core/tensor.h"
#include "engine/core/thread_pool.h"
#include "engine/quant/plan.h"
#include "engine/quant/rtn.h"

namespace edge::quant {

// A layer in an AWQ group: its FP32 weight [out, in] and how it will be quantized.
struct AwqMember {
    const float* w = nullptr;
    int64_t rows = 0;
    QuantSpec spec;
    bool searched = true;  // false: scaled with the group but not part of the objective
};
struct AwqResult {
    std::vector<float> scales;  // per input channel; the layer computes (W·diag(s)) (x / s)
    double alpha = 0.0;
    double error_before = 0.0;  // output error of plain RTN (α = 0)
    double error_after = 0.0;
};
// Grid search of s = mean|x|^α (α = k/grid, normalised so √(max·min) = 1) minimising
// Σ_members ||X·Q(W·diag s)ᵀ/s − X·Wᵀ||² over (up to 512 of) the captured rows of X [rows, in].
Result<AwqResult> awq_search(const std::vector<AwqMember>& members, int64_t in, const float* x, int64_t x_rows,
                             const AwqOptions& opts);

// GPTQ of W [rows, cols] given H = 2·XᵀX/N (cols x cols, row-major): dampening, Cholesky
// inverse, column-by-column quantization with error feedback in lazy blocks, optional
// activation order (groups then keep static scales computed from the original weights).
Result<Tensor> quantize_gptq(const std::string& name, const float* w, int64_t rows, int64_t cols,
                             const std::vector<double>& h, const QuantSpec& spec, const GptqOptions& opts,
                             ThreadPool* pool = nullptr);
// The same, taking H by value so that it is freed as soon as it is permuted (large layers).
Result<Tensor> quantize_gptq(const std::string& name, const float* w, int64_t rows, int64_t cols,
                             std::vector<double>&& h, const QuantSpec& spec, const GptqOptions& opts,
                             ThreadPool* pool = nullptr);
// H = 2·XᵀX / N from captured rows.
std::vector<double> hessian_from_inputs(const float* x, int64_t rows, int64_t cols);

}  // namespace edge::quant
