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
// CNN training: train_cnn of torch_cnn.h (the LibTorch executor over the CNN IR) with masks, AdamW on
// cross-entropy. LLM training: train_llama (torch_llama.h) with masks.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/torch_cnn.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/prune/structured.h"

namespace edge::analysis {

// CNN training, gradients and accuracy come from torch_cnn.h (train_cnn with masks,
// torch_cnn_gradients, torch_cnn_classify); the digits fixture from cnn_digits.h
// (build_digits_cnn) on engine/calib/image_sets.h (calib::read_digits_csv, calib::split_every_fifth).

// 0/1 masks by tensor name (element count of the tensor): the consumer columns of removed units.
// CNN training takes them as CnnTrainOptions::masks, LLM training as TrainOptions::masks.
using WeightMasks = std::map<std::string, std::vector<float>>;

// The CNN training options of the pruning modes (steps are set per phase): AdamW lr 3e-3 with
// cosine decay, batch 64, weight decay 1e-4.
CnnTrainOptions prune_cnn_train_defaults();

// ---- pruning modes -----------------------------------------------------------------------------

enum class PruneMode { OneShot, Iterative, Dst };
Result<PruneMode> parse_prune_mode(std::string_view name);  // oneshot|iterative|dst
const char* prune_mode_name(PruneMode m);

struct PruneRunOptions {
    PruneMode mode = PruneMode::OneShot;
    prune::PruneSpec spec;                             // target ratios, importance, kinds (gradients are computed here)
    double step = 0.01;                                // iterative: fraction of each group's original units per round
    int round_steps = 20;                              // iterative: fine-tuning steps after each round
    int final_steps = 200;                             // fine-tuning at the end (0: none)
    int dst_steps = 400;                               // dst: training steps with mask updates
    int dst_every = 50;                                // dst: steps between mask updates
    double dst_fraction = 0.3;                         // dst: share of the removed units swapped at the first update
    int grad_batches = 4;                              // batches for Taylor gradients and DST regrowth
    CnnTrainOptions cnn = prune_cnn_train_defaults();  // batch, lr, threads for CNN training (steps and
                                                       // seed are set per phase)
    // LLM training (train_llama): batch, seq_len, lr, threads.
    int llm_batch = 16, llm_seq_len = 128, threads = 0;
    float llm_lr = 1e-3f;
    uint64_t seed = 1;
};

struct PruneRun {
    model::Model model;         // physically pruned and fine-tuned
    prune::PruneReport report;  // final masks against the original model's units
    int rounds = 0;             // pruning rounds (iterative) or mask updates (dst)
    int train_steps = 0;        // optimizer steps in total
    int64_t units_swapped = 0;  // dst: units removed and regrown by the updates
    double seconds = 0.0;
};

// CNN: `data` trains (and gives Taylor gradients and DST regrowth gradients on its first
// grad_batches * cnn.batch images).
Result<PruneRun> prune_cnn(const model::Model& m, const calib::LabelledImages& data, const PruneRunOptions& opts,
                           Progress* progress = nullptr);
// LLM: `sequences` (token ids, each starting with BOS) train and give gradients.
Result<PruneRun> prune_llama(const model::Model& m, const std::vector<std::vector<int32_t>>& sequences,
                             const PruneRunOptions& opts, Progress* progress = nullptr);

// The training masks of a set of layer masks: the consumer columns of every removed unit are 0.
Result<WeightMasks> consumer_masks(const model::Model& m, const std::vector<prune::LayerMask>& masks);

}  // namespace edge::analysis
