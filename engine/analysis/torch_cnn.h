// The CNN IR (engine/model/cnn_ir.h) executed through LibTorch: a differentiable forward with the
// weights as tensors, an executor for cross-checking the runtime (engine/runtime/cnn/cnn.h), and a
// small trainer (SGD / Adam on softmax cross-entropy, mini-batches, BatchNorm in training mode,
// optional pruning masks and fake quantization) that pruning and QAT reuse. Plain C++
// interface: LibTorch stays inside torch_cnn.cpp (DESIGN.md: no torch header in any header).
//
// The forward follows the runtime executor op for op: the same padding rules (explicit pads,
// SAME_UPPER / SAME_LOWER / VALID, asymmetric pads), the same Reshape batch rule and the same
// numpy-style constant Add. Both executors must agree on FP32 outputs (tests/analysis).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/analysis/torch_llama.h"  // LayerCurvature
#include "engine/calib/image_sets.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/runtime/cnn/cnn.h"

namespace edge::analysis {

// FP32 outputs of the first graph output for `input` ([N, C, H, W]), through LibTorch.
Result<runtime::Activation> torch_cnn_forward(const model::Model& m, const runtime::Activation& input);

// Top-1 of the LibTorch forward on a labelled set, in batches (the same report as classify()).
Result<runtime::ClassifyResult> torch_cnn_classify(const model::Model& m, const calib::LabelledImages& data,
                                                   int64_t batch = 500, Progress* progress = nullptr);

// Fake quantization of one weight tensor during training (quantization-aware fine-tuning):
// the forward sees dequant(quant(W)); the backward passes the gradient straight through (STE)
// inside the clipping range. Scales (and zero points) follow the weights each step unless frozen.
struct FakeQuantSpec {
    int bits = 8;                    // 2..8
    bool per_channel = true;         // one scale per output channel (dim 0), else per tensor
    bool symmetric = true;           // symmetric: zero point 0, codes in [-(2^(b-1)-1), 2^(b-1)-1]
    bool freeze_zero_point = false;  // asymmetric only: keep the zero points of the first step
};

enum class CnnOptimizer { Sgd, Adam };

struct CnnTrainOptions {
    CnnOptimizer optimizer = CnnOptimizer::Adam;
    float lr = 1e-3f;
    float momentum = 0.9f;      // SGD only
    float weight_decay = 0.0f;  // L2 (SGD) / AdamW-style decoupled (Adam)
    int epochs = 1;             // passes over the data (shuffled each epoch with `seed`)
    int steps = 0;              // > 0: stop after this many optimizer steps (before epochs end)
    int batch = 32;
    uint64_t seed = 1;
    bool cosine_decay = true;       // lr decays to lr/10 over the run
    float bn_momentum = 0.1f;       // BatchNorm running statistics update (PyTorch convention)
    bool freeze_batchnorm = false;  // true: BatchNorm uses its running statistics (eval mode)
    int threads = 0;                // LibTorch intra-op threads; <= 0: leave LibTorch's default
    // Tensor names to train; empty: every F32 weight of Conv2d / Linear / BatchNorm scale & bias
    // and constant Add operands.
    std::vector<std::string> trainable;
    // Pruning: tensor -> 0/1 mask (same numel). Masked weights are zeroed before training and
    // kept at zero after every step.
    std::map<std::string, std::vector<uint8_t>> masks;
    // QAT: tensor -> fake-quantization spec.
    std::map<std::string, FakeQuantSpec> fake_quant;
};

struct CnnTrainReport {
    int steps = 0;
    int epochs = 0;  // complete passes
    double seconds = 0.0;
    double first_loss = 0.0;  // mean cross-entropy of the first step
    double last_loss = 0.0;   // mean over the last min(20, steps) steps
};

// Trains the model in place on `data` (labels are class indices of the logits). The updated
// tensors (and BatchNorm running statistics) get fresh owned buffers, so a mapped file or another
// Model sharing the buffers is never written. Deterministic for fixed options and threads.
// Cancellation via progress returns an error and leaves the model unchanged.
Status train_cnn(model::Model& m, const calib::LabelledImages& data, const CnnTrainOptions& opts,
                 Progress* progress = nullptr, CnnTrainReport* report = nullptr);

// Mean softmax cross-entropy of the model (eval mode) on `data`.
Result<double> torch_cnn_loss(const model::Model& m, const calib::LabelledImages& data, int64_t batch = 500);

// Gradient of the mean cross-entropy (eval mode) over `data` w.r.t. each named weight tensor
// (every Conv2d / Linear weight when `tensors` is empty), flattened like the tensor.
Result<std::map<std::string, std::vector<float>>> torch_cnn_gradients(const model::Model& m,
                                                                      const calib::LabelledImages& data,
                                                                      const std::vector<std::string>& tensors = {},
                                                                      int64_t batch = 500);

// --- Curvature and gradient statistics per layer (sensitivity, engine/analysis/sensitivity.h) ---
struct CnnCurvatureOptions {
    int topk = 5;                  // eigenvalues per layer (largest |lambda| first)
    int lanczos_steps = 30;        // Hessian-vector products per layer, >= topk
    int64_t hessian_images = 256;  // the Hessian batch: the first N images
    int batches = 8;               // T batches for the gradient-norm statistics
    int64_t batch_size = 64;       // images per gradient batch (sampled with `seed`)
    uint64_t seed = 1;
    int threads = 0;  // LibTorch intra-op threads; <= 0: leave LibTorch's default
};
// Per Conv2d / Linear layer (graph order): top eigenvalues of the Hessian of the mean
// cross-entropy (eval mode) on the Hessian batch w.r.t. that layer's weight (Lanczos with full
// reorthogonalisation on Hessian-vector products by double backward), and the gradient norm on
// each of the T batches. Deterministic for fixed options.
Result<std::vector<LayerCurvature>> torch_cnn_curvature(const model::Model& m, const calib::LabelledImages& data,
                                                        const CnnCurvatureOptions& opts, Progress* progress = nullptr);

// The weight tensors of a CNN's layers (Conv2d and Linear weights), in graph order.
std::vector<std::string> cnn_layer_weights(const model::Model& m);

}  // namespace edge::analysis
