#include "engine/calib/select.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "engine/calib/kmeans.h"

namespace edge::calib {

Result<SelectMethod> parse_select_method(std::string_view name) {
    if (name == "kmeans" || name == "k-means") return SelectMethod::KMeans;
    if (name == "random") return SelectMethod::Random;
    return err("unknown selection method '", name, "' (expected kmeans or random)");
}

const char* select_method_name(SelectMethod m) { return m == SelectMethod::KMeans ? "kmeans" : "random"; }

Result<Selection> select_samples(const Embeddings& pool, const SelectOptions& opts, const Progress* progress) {
    if (pool.n < 1) return err("the calibration pool is empty: nothing to select from");
    if (opts.n < 1) return err("the number of samples to select must be at least 1 (got ", opts.n, ")");
    if (opts.n > pool.n)
        return err(opts.n, " samples asked for, but the pool holds only ", pool.n, " (ask for at most ", pool.n,
                   " or give a larger pool)");
    if (!opts.weights.empty() && int64_t(opts.weights.size()) != pool.n)
        return err(opts.weights.size(), " sample weights for a pool of ", pool.n);
    Selection s;
    s.method = opts.method;
    s.seed = opts.seed;
    const auto weight = [&](int64_t i) { return opts.weights.empty() ? 1.0 : opts.weights[size_t(i)]; };

    if (opts.method == SelectMethod::Random) {
        // Partial Fisher-Yates: the first n of a seeded shuffle.
        std::vector<int64_t> order(static_cast<size_t>(pool.n));
        std::iota(order.begin(), order.end(), int64_t(0));
        Rng rng(opts.seed);
        for (int i = 0; i < opts.n; ++i) {
            const auto j = int64_t(i) + int64_t(rng.below(uint64_t(pool.n - i)));
            std::swap(order[size_t(i)], order[size_t(j)]);
        }
        s.indices.assign(order.begin(), order.begin() + opts.n);
        std::sort(s.indices.begin(), s.indices.end());
        for (int64_t i : s.indices) s.weights.push_back(weight(i));
        return s;
    }

    if (pool.dim < 1 || int64_t(pool.data.size()) != pool.n * pool.dim)
        return err("calibration pool embeddings: ", pool.data.size(), " values for ", pool.n, " samples of dimension ",
                   pool.dim);
    KMeansOptions ko;
    ko.k = opts.n;
    ko.seed = opts.seed;
    ko.max_iter = opts.max_iter;
    ko.threads = opts.threads;
    auto km = kmeans(pool.data, pool.n, pool.dim, ko, opts.weights, progress);
    if (!km) return km.error();
    const KMeansResult& r = km.value();
    // The representative of each cluster: the member with the smallest squared distance / weight
    // (ties: the lower index). A zero weight counts as infinitely far unless the whole cluster
    // has zero weight, when plain distance decides.
    struct Best {
        int64_t index = -1;
        double score = std::numeric_limits<double>::infinity(), d2 = 0.0;
        bool weighted = false;
    };
    std::vector<Best> best(static_cast<size_t>(r.k));
    for (int64_t i = 0; i < pool.n; ++i) {
        const int c = r.assignment[size_t(i)];
        const double d2 = squared_distance(pool.row(i), r.centroids.data() + int64_t(c) * pool.dim, pool.dim);
        const double w = weight(i);
        const bool weighted = w > 0.0;
        const double score = weighted ? d2 / w : d2;
        Best& b = best[size_t(c)];
        // A weighted member always beats an unweighted one.
        if (b.index < 0 || (weighted && !b.weighted) || (weighted == b.weighted && score < b.score)) {
            b.index = i;
            b.score = score;
            b.d2 = d2;
            b.weighted = weighted;
        }
    }
    std::vector<int> order(static_cast<size_t>(r.k));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return best[size_t(a)].index < best[size_t(b)].index; });
    for (int c : order) {
        s.indices.push_back(best[size_t(c)].index);
        s.cluster_sizes.push_back(r.sizes[size_t(c)]);
        s.distances.push_back(best[size_t(c)].d2);
        s.weights.push_back(weight(best[size_t(c)].index));
    }
    s.inertia = r.inertia;
    s.iterations = r.iterations;
    return s;
}

}  // namespace edge::calib
