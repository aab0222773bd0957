// The CNN executor: runs a CNN graph of the one IR (engine/model/cnn_ir.h) in FP32 on the CPU,
// NCHW, any batch size, multi-threaded with edge::ThreadPool. Convolution is im2col per output
// row followed by the runtime's SIMD dot kernel (engine/runtime/cpu/kernels.h) per output channel.
// No Qt, no LibTorch: the board agent can link it.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge {
class ThreadPool;
}

namespace edge::runtime {

// An activation: shape outermost first (NCHW for images, [N, K] after a flatten) and values.
struct Activation {
    std::vector<int64_t> shape;
    std::vector<float> data;
    int64_t numel() const;
};

// Integer execution of a CNN's Conv2d / Linear layers (engine/quant/cnn_quant.h builds this).
// Weights: symmetric integer codes per output channel, w ~= scales[oc] * code, codes in
// [-(2^(bits-1)-1), 2^(bits-1)-1] held one per int8 (INT8 and INT4 alike), row-major [OC, K]
// with K = IC/group * KH * KW (conv) or in_features (linear); the bias stays float.
// Activations (int8_activations): the op's input is quantized per tensor with a static scale and
// zero point from calibration, q = clamp(round(x / act_scale) + act_zero, -128, 127); the kernel
// accumulates int8 x int8 products in int32 and writes
//   y = scales[oc] * act_scale * (acc - act_zero * sum_k code[oc][k]) + bias[oc]
// (padding taps hold act_zero, i.e. the value 0). Without int8_activations the input stays
// float and the weights are dequantized (weight-only quantization).
struct CnnQuantLayer {
    std::string op;  // the op (layer) name
    int bits = 8;    // weight bits, 2..8
    std::vector<int8_t> codes;
    std::vector<float> scales;
    bool int8_activations = true;
    float act_scale = 1.0f;
    int32_t act_zero = 0;
};
struct CnnQuantization {
    std::vector<CnnQuantLayer> layers;
    const CnnQuantLayer* find(const std::string& op) const;
};

class CnnExecutor {
public:
    // Checks the graph (every op's inputs are defined earlier, weights exist with the shapes
    // their ops need) and resolves weights. The model must outlive the executor.
    // threads <= 0: hardware concurrency.
    static Result<std::unique_ptr<CnnExecutor>> create(const model::Model& m, int threads = 0);
    // The same with integer Conv2d / Linear layers: every layer `q` names runs through the
    // integer kernels (the error names a layer whose codes do not fit its weight).
    static Result<std::unique_ptr<CnnExecutor>> create(const model::Model& m, const CnnQuantization& q,
                                                       int threads = 0);
    ~CnnExecutor();

    // Runs the graph on `input` ([N, C, H, W]; C, H, W as declared, any N) and returns the
    // first graph output. Errors name the op and the shapes that disagree.
    Result<Activation> run(const Activation& input) const;
    // The same, calling `before(op, input)` with the (first) input of every op before it runs
    // (calibration: activation ranges at the inputs of the weighted ops).
    using Observer = std::function<void(const model::Op&, const Activation&)>;
    Result<Activation> run(const Activation& input, const Observer& before) const;

    const std::vector<int64_t>& input_shape() const { return input_shape_; }
    int threads() const;

private:
    CnnExecutor() = default;
    struct Step;
    Status step(const Step& s, std::map<std::string, Activation>& values) const;

    const model::Model* model_ = nullptr;
    std::vector<int64_t> input_shape_;
    std::vector<Step> steps_;
    std::unique_ptr<ThreadPool> pool_;
    std::shared_ptr<const CnnQuantization> quant_;
};

// Output extent and begin/end padding of one spatial axis of a conv or pool window: `in` input
// extent, kernel `k`, `stride`, dilation `dil`, explicit pads `pb`/`pe`, auto_pad as in cnn_ir.h
// (0 explicit, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID), ceil_mode for pools (the last window must
// start inside the input or the begin padding). out = 0 when the window does not fit.
// The LibTorch forward (engine/analysis) uses the same rule.
struct CnnAxis {
    int64_t out = 0, pad_begin = 0, pad_end = 0;
};
CnnAxis cnn_spatial_axis(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pb, int64_t pe, int auto_pad,
                         bool ceil_mode);

// ---- kernels (exposed for tests) -------------------------------------------------------------
// Static per-tensor int8 quantization of activations.
int8_t quantize_act(float x, float scale, int32_t zero);
struct Conv2dParams {
    int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
    int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
    int64_t group = 1;
};
// x [N, IC, H, W], w [OC, IC/group, KH, KW], bias [OC] or null -> y [N, OC, OH, OW].
void conv2d(const float* x, int64_t n, int64_t ic, int64_t h, int64_t w, const float* weight, const float* bias,
            int64_t oc, const Conv2dParams& p, float* y, int64_t oh, int64_t ow, ThreadPool* pool);
// Integer conv: x holds int8 activation codes (zero point act_zero, the value of padding taps),
// codes [OC, K] int8 weights, rowsum[oc] = sum_k codes[oc][k]; y = out_scale[oc] * (acc -
// act_zero * rowsum[oc]) + bias[oc], acc accumulated exactly in int32.
void conv2d_int8(const int8_t* x, int64_t n, int64_t ic, int64_t h, int64_t w, int32_t act_zero, const int8_t* codes,
                 const int32_t* rowsum, const float* out_scale, const float* bias, int64_t oc, const Conv2dParams& p,
                 float* y, int64_t oh, int64_t ow, ThreadPool* pool);
// sum_k a[k] * b[k] in int32 (exact for k < 2^17).
int32_t dot_i8(const int8_t* a, const int8_t* b, int64_t k);
// The same, by the definition (six nested loops); the reference the tests compare against.
void conv2d_reference(const float* x, int64_t n, int64_t ic, int64_t h, int64_t w, const float* weight,
                      const float* bias, int64_t oc, const Conv2dParams& p, float* y, int64_t oh, int64_t ow);

// Evaluating a classifier on a labelled image set.
struct ClassifyResult {
    int64_t images = 0;
    int64_t correct = 0;
    double top1() const { return images ? double(correct) / double(images) : 0.0; }
    std::vector<int32_t> predictions;
};
// `pixels` holds `count` images of input_shape()[1..3] values each, already scaled; runs them in
// batches of `batch` and compares argmax with `labels`.
Result<ClassifyResult> classify(const CnnExecutor& exec, const std::vector<float>& pixels,
                                const std::vector<uint8_t>& labels, int64_t batch = 100, Progress* progress = nullptr);

}  // namespace edge::runtime
