// The digits CNN fixture: a small CNN with BatchNorm for the UCI optical digits (8x8 images,
// /work/shared/data/digits.csv.gz), built in the one IR and trained through LibTorch
// (engine/analysis/torch_cnn.h) on a fixed split (calib::split_every_fifth: 1,437 train / 360 test).
// Deterministic for fixed options and thread count; trains in seconds on one core.
//
// Graph (input [1, 1, 8, 8], output logits [N, 10]):
//   conv1 3x3 1->8 pad 1 + bias, bn1, relu1, conv2 3x3 8->16 pad 1 + bias, bn2, relu2,
//   pool 2x2 stride 2 (-> 16x4x4), flatten, fc 256->10 + bias.
#pragma once
#include <cstdint>
#include <string>

#include "engine/analysis/torch_cnn.h"
#include "engine/calib/image_sets.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::analysis {

// The untrained network with seeded He-uniform weights (BatchNorm: scale 1, bias 0, mean 0,
// var 1).
model::Model build_digits_cnn(uint64_t seed = 1);

struct DigitsCnnOptions {
    int epochs = 12;
    int batch = 32;
    float lr = 5e-3f;
    uint64_t seed = 1;  // weight initialisation and batch order
    int threads = 1;    // LibTorch intra-op threads (1: bit-reproducible)
};

struct DigitsCnn {
    model::Model model;      // trained, BatchNorm kept as its own op (fold it with engine/prune)
    calib::ImageSplit data;  // the fixed split it was trained and evaluated on
    CnnTrainReport train;
    double test_top1 = 0.0;  // through the runtime executor (engine/runtime/cnn/cnn.h)
};

// Reads the CSV, splits it, builds and trains the CNN and measures test top-1.
Result<DigitsCnn> train_digits_cnn(const std::string& csv_path, const DigitsCnnOptions& opts = {},
                                   Progress* progress = nullptr);

}  // namespace edge::analysis
