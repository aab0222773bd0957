// Structured pruning with fine-tuning (docs/pruning.md): one-shot, iterative and dynamic sparse
// training over engine/prune/structured.h, with LibTorch training behind this plain-C++ header.
//
//   one-shot   score once, remove the target ratio, fine-tune `final_steps`.
//   iterative  rounds: remove `step` of each group's original units (default 1%), fine-tune
//              `round_steps`, rescore, ... until the target ratio; then fine-tune `final_steps`.
//   dst        dynamic sparse training: start from the one-shot mask and train `dst_steps`; every
//              `dst_every` steps swap k units per group: the k kept units of lowest magnitude are
//              removed and the k removed units with the largest gradient on their (masked)
//              consumer weights regrow (k = dst_fraction of the removed count, cosine-decayed to 0);
//              then fine-tune `final_steps`.
// During training a removed unit's consumer weights (the columns reading it) are held at zero: that
// is exactly the unit's removal (structured.h: pruned == masked), and gradients on those columns
// measure what regrowing it would gain. The result is physically pruned (apply_masks).
//
// CNN training: a small LibTorch executor over the CNN IR (Conv2d, BatchNorm in training mode with
// running statistics, Relu, pools, Linear, Add, Reshape, Pad), AdamW on cross-entropy. LLM training:
// train_llama (torch_llama.h) with masks.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/prune/structured.h"

namespace edge::analysis {

// ---- labelled images and the digits CNN fixture ----------------------------------------------

struct ImageSet {
    std::vector<int64_t> shape;   // per image: C, H, W
    std::vector<float> pixels;    // count * C*H*W
    std::vector<uint8_t> labels;
    int64_t count() const { return int64_t(labels.size()); }
};

struct DigitsSplit {
    ImageSet train, test;
};

// UCI optical digits (../shared/data/digits.csv.gz: rows of 64 pixels 0..16 then the label, no
// header): images [1, 8, 8] scaled by 1/16. A fixed split: row i goes to test when i % 4 == 3
// (449 test, 1,348 train). Errors name the file and the line.
Result<DigitsSplit> load_digits(const std::string& csv_gz_path);

// The digits CNN (input [1, 1, 8, 8]): conv1 3x3 1->16 + bn1 + ReLU, conv2 3x3 16->32 + bn2 +
// ReLU, MaxPool 2, conv3 3x3 32->32 + bn3 + ReLU, GlobalAvgPool, fc 32->10. He-initialised from
// `seed`; train it with train_cnn.
Model digits_cnn(uint64_t seed = 1);

// ---- CNN training through LibTorch -------------------------------------------------------------

// 0/1 masks by tensor name (element count of the tensor), multiplied into the weights before the
// first and after every optimizer step.
using WeightMasks = std::map<std::string, std::vector<float>>;

struct CnnTrainOptions {
    int steps = 400;          // optimizer steps
    int batch = 64;
    float lr = 3e-3f;         // AdamW, cosine decay to lr/10
    float weight_decay = 1e-4f;
    uint64_t seed = 1;        // batch order
    int threads = 0;          // LibTorch intra-op threads; <= 0: LibTorch's default
};

struct CnnTrainReport {
    int steps = 0;
    double seconds = 0.0;
    double first_loss = 0.0, last_loss = 0.0;  // last: mean of the last min(10, steps) steps
};

// Trains every F32 tensor of a CNN Model in place (BatchNorm scale/bias trained, running mean and
// variance updated as in training mode) on cross-entropy. Errors name an op LibTorch cannot run.
Status train_cnn(Model& m, const ImageSet& data, const CnnTrainOptions& opts, const WeightMasks* masks = nullptr,
                 Progress* progress = nullptr, CnnTrainReport* report = nullptr);

// Logits [count][classes] through the LibTorch forward (BatchNorm in inference mode): for
// cross-checking against the runtime's CnnExecutor.
Result<std::vector<float>> torch_cnn_logits(const Model& m, const ImageSet& data);

// Mean gradient of the cross-entropy w.r.t. every F32 tensor (BatchNorm in inference mode), over
// the first min(count, batches * batch) images.
Result<prune::Gradients> cnn_gradients(const Model& m, const ImageSet& data, int batches = 8, int batch = 64);

// Top-1 accuracy through the runtime's CnnExecutor (the deployed path).
Result<double> cnn_accuracy(const Model& m, const ImageSet& data);

// ---- pruning modes -----------------------------------------------------------------------------

enum class PruneMode { OneShot, Iterative, Dst };
Result<PruneMode> parse_prune_mode(std::string_view name);  // oneshot|iterative|dst
const char* prune_mode_name(PruneMode m);

struct PruneRunOptions {
    PruneMode mode = PruneMode::OneShot;
    prune::PruneSpec spec;        // target ratios, importance, kinds (gradients are computed here)
    double step = 0.01;           // iterative: fraction of each group's original units per round
    int round_steps = 20;         // iterative: fine-tuning steps after each round
    int final_steps = 200;        // fine-tuning at the end (0: none)
    int dst_steps = 400;          // dst: training steps with mask updates
    int dst_every = 50;           // dst: steps between mask updates
    double dst_fraction = 0.3;    // dst: share of the removed units swapped at the first update
    int grad_batches = 4;         // batches for Taylor gradients and DST regrowth
    CnnTrainOptions cnn;          // batch, lr, seed, threads for CNN training (steps are set per phase)
    // LLM training (train_llama): batch, seq_len, lr, threads.
    int llm_batch = 16, llm_seq_len = 128, threads = 0;
    float llm_lr = 1e-3f;
    uint64_t seed = 1;
};

struct PruneRun {
    Model model;                  // physically pruned and fine-tuned
    prune::PruneReport report;    // final masks against the original model's units
    int rounds = 0;               // pruning rounds (iterative) or mask updates (dst)
    int train_steps = 0;          // optimizer steps in total
    int64_t units_swapped = 0;    // dst: units removed and regrown by the updates
    double seconds = 0.0;
};

// CNN: `data` trains (and gives Taylor gradients).
Result<PruneRun> prune_cnn(const Model& m, const ImageSet& data, const PruneRunOptions& opts,
                           Progress* progress = nullptr);
// LLM: `sequences` (token ids, each starting with BOS) train and give gradients.
Result<PruneRun> prune_llama(const Model& m, const std::vector<std::vector<int32_t>>& sequences,
                             const PruneRunOptions& opts, Progress* progress = nullptr);

// The training masks of a set of layer masks: the consumer columns of every removed unit are 0.
Result<WeightMasks> consumer_masks(const Model& m, const std::vector<prune::LayerMask>& masks);

}  // namespace edge::analysis
