// k-means (Lloyd) with k-means++ seeding on row-major float points, optionally weighted.
// Deterministic for a given seed: the random stream is SplitMix64 and the uniform draws are built
// from its bits (no std:: distributions, whose output the standard leaves to each library); the
// assignment step runs on the runtime's thread pool but each point is decided on its own, so the
// thread count does not change the result. Distances use the runtime's dispatched dot kernel, so
// two processors with different SIMD kernels may break exact ties differently.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"

namespace edge::calib {

// SplitMix64: small, fast, and the same numbers everywhere.
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next();
    double uniform();            // [0, 1)
    uint64_t below(uint64_t n);  // [0, n), n > 0

private:
    uint64_t s_;
};

struct KMeansOptions {
    int k = 0;
    uint64_t seed = 1;
    int max_iter = 100;
    // Stop when no assignment changes, or when the inertia improves by less than this fraction.
    double tol = 1e-7;
    int threads = 0;  // assignment step; <= 0: hardware concurrency
};

struct KMeansResult {
    int k = 0, dim = 0;
    std::vector<float> centroids;     // k x dim
    std::vector<int32_t> assignment;  // n: cluster of each point
    std::vector<int64_t> sizes;       // k: points per cluster (every cluster non-empty)
    double inertia = 0.0;             // sum over points of weight * squared distance to its centroid
    int iterations = 0;
};

// points: n x dim. weights: empty (all 1) or n non-negative values with a positive sum; a weight
// scales a point's pull on its centroid and its chance to be drawn as a k-means++ seed. Errors:
// k < 1, k > n, dim < 1, non-finite values, bad weights.
Result<KMeansResult> kmeans(const std::vector<float>& points, int64_t n, int dim, const KMeansOptions& opts,
                            const std::vector<double>& weights = {}, const Progress* progress = nullptr);

// Squared Euclidean distance.
double squared_distance(const float* a, const float* b, int dim);

}  // namespace edge::calib
