// The CNN executor: runs a CNN graph of the one IR (engine/model/cnn_ir.h) in FP32 on the CPU,
// NCHW, any batch size, multi-threaded with edge::ThreadPool. Convolution is im2col per output
// row followed by the runtime's SIMD dot kernel (engine/runtime/kernels.h) per output channel.
// No Qt, no LibTorch: the board agent can link it.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge {

class ThreadPool;

// An activation: shape outermost first (NCHW for images, [N, K] after a flatten) and values.
struct Activation {
    std::vector<int64_t> shape;
    std::vector<float> data;
    int64_t numel() const;
};

class CnnExecutor {
public:
    // Checks the graph (every op's inputs are defined earlier, weights exist with the shapes
    // their ops need) and resolves weights. The model must outlive the executor.
    // threads <= 0: hardware concurrency.
    static Result<std::unique_ptr<CnnExecutor>> create(const Model& m, int threads = 0);
    ~CnnExecutor();

    // Runs the graph on `input` ([N, C, H, W]; C, H, W as declared, any N) and returns the
    // first graph output. Errors name the op and the shapes that disagree.
    Result<Activation> run(const Activation& input) const;

    const std::vector<int64_t>& input_shape() const { return input_shape_; }
    int threads() const;

private:
    CnnExecutor() = default;
    struct Step;
    Status step(const Step& s, std::map<std::string, Activation>& values) const;

    const Model* model_ = nullptr;
    std::vector<int64_t> input_shape_;
    std::vector<Step> steps_;
    std::unique_ptr<ThreadPool> pool_;
};

// ---- kernels (exposed for tests) -------------------------------------------------------------
struct Conv2dParams {
    int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
    int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
    int64_t group = 1;
};
// x [N, IC, H, W], w [OC, IC/group, KH, KW], bias [OC] or null -> y [N, OC, OH, OW].
void conv2d(const float* x, int64_t n, int64_t ic, int64_t h, int64_t w, const float* weight,
            const float* bias, int64_t oc, const Conv2dParams& p, float* y, int64_t oh, int64_t ow,
            ThreadPool* pool);
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
                                const std::vector<uint8_t>& labels, int64_t batch = 100,
                                Progress* progress = nullptr);

}  // namespace edge
