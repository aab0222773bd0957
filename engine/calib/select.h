// Calibration-set selection: N samples out of a pool, either the representatives of a k-means
// clustering of the samples' model embeddings (one per cluster: the member nearest the centroid)
// or uniformly at random. Both are seeded and deterministic.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"

namespace edge::calib {

// One embedding per pool sample (row-major n x dim).
struct Embeddings {
    int64_t n = 0;
    int dim = 0;
    std::vector<float> data;
    const float* row(int64_t i) const { return data.data() + i * dim; }
};

enum class SelectMethod { KMeans, Random };
Result<SelectMethod> parse_select_method(std::string_view name);  // "kmeans" | "random"
const char* select_method_name(SelectMethod m);

struct SelectOptions {
    int n = 128;
    SelectMethod method = SelectMethod::KMeans;
    uint64_t seed = 1;
    int max_iter = 100;
    int threads = 0;
    // Hardware-aware weights (weighting.h), one per pool sample, or empty. k-means: a weight
    // scales the sample's pull on its centroid and its chance as a k-means++ seed, and the
    // representative of a cluster is the member minimising squared distance / weight (so a
    // well-aligned sample wins over an equally near badly-aligned one; weight 0 is never picked
    // while the cluster has another member). random: ignored (the baseline stays uniform).
    std::vector<double> weights;
};

struct Selection {
    SelectMethod method = SelectMethod::KMeans;
    uint64_t seed = 0;
    std::vector<int64_t> indices;        // chosen pool samples, ascending
    std::vector<int64_t> cluster_sizes;  // k-means: pool samples in the cluster of indices[i]
    std::vector<double> distances;       // k-means: squared distance of indices[i] to its centroid
    std::vector<double> weights;         // weight of indices[i] (1 without weights)
    double inertia = 0.0;                // k-means objective at the end
    int iterations = 0;
};

// Errors: an empty pool, n < 1, n larger than the pool (naming both), weights of the wrong count.
Result<Selection> select_samples(const Embeddings& pool, const SelectOptions& opts, const Progress* progress = nullptr);

}  // namespace edge::calib
