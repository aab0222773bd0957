// Pseudo-labels for unlabelled classifier data: run the FP32 classifier, take softmax, and keep a
// sample (label = argmax) only when its top probability reaches a confidence threshold.
//
// Depth: the weighted ops (Conv2d, Linear/MatMul) of the CNN graph in execution order are the
// model's layers, depth 0 the first, depth D-1 the classifier head (classifier_layers() lists
// them). The threshold used when calibrating the activations of the layer at depth d is
// per_depth[d] when set, else the default (0.92). Early layers' activation statistics barely
// depend on whether the label is right, so they can take a looser threshold (more samples); the
// layers near the head, whose activations are class-specific, want a stricter one. Thresholds
// are probabilities in [0, 1]: 0 keeps every sample, 1 only samples the model is certain of.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::calib {

struct PseudoLabelOptions {
    double threshold = 0.92;
    std::map<int, double> per_depth;  // depth -> threshold
};

struct PseudoLabels {
    int classes = 0;
    std::vector<int32_t> label;       // argmax per sample
    std::vector<double> confidence;   // top softmax probability per sample
    std::vector<std::string> layers;  // the classifier's weighted ops, by depth
};

// Weighted ops of a CNN graph in execution order (depth = index).
std::vector<std::string> classifier_layers(const model::Model& cnn);

// Runs the classifier on `count` images (pixels already scaled) in batches. A graph that ends in
// Softmax is taken as probabilities; otherwise softmax is applied to its output.
Result<PseudoLabels> pseudo_label(const model::Model& cnn, const std::vector<float>& pixels, int64_t count,
                                  int64_t batch = 100, int threads = 0, const Progress* progress = nullptr);

// The threshold for a depth; errors: a threshold outside [0, 1] (default or per depth, naming
// it), a depth outside [0, layers).
Result<double> threshold_for_depth(const PseudoLabelOptions& opts, int depth, int layers);

// Indices (ascending) of samples whose confidence reaches the threshold of `depth`.
Result<std::vector<int64_t>> accepted_samples(const PseudoLabels& pl, const PseudoLabelOptions& opts, int depth);

}  // namespace edge::calib
