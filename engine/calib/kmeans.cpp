#include "engine/calib/kmeans.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/thread_pool.h"
#include "engine/runtime/cpu/kernels.h"

namespace edge::calib {

uint64_t Rng::next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

uint64_t Rng::below(uint64_t n) {
    // Rejection keeps the draw unbiased.
    const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
    for (;;) {
        const uint64_t r = next();
        if (r < limit) return r % n;
    }
}

double squared_distance(const float* a, const float* b, int dim) {
    double s = 0.0;
    for (int i = 0; i < dim; ++i) {
        const double d = double(a[i]) - double(b[i]);
        s += d * d;
    }
    return s;
}

namespace {

// Draws an index with probability proportional to p (sum > 0).
int64_t draw(Rng& rng, const std::vector<double>& p, double sum) {
    const double target = rng.uniform() * sum;
    double acc = 0.0;
    int64_t last_positive = -1;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] <= 0.0) continue;
        acc += p[i];
        last_positive = int64_t(i);
        if (acc > target) return int64_t(i);
    }
    return last_positive;  // rounding at the top end
}

}  // namespace

Result<KMeansResult> kmeans(const std::vector<float>& points, int64_t n, int dim, const KMeansOptions& opts,
                            const std::vector<double>& weights, const Progress* progress) {
    if (n < 1) return err("k-means: the pool is empty");
    if (dim < 1) return err("k-means: points have dimension ", dim);
    if (int64_t(points.size()) != n * dim)
        return err("k-means: ", points.size(), " values for ", n, " points of dimension ", dim);
    if (opts.k < 1) return err("k-means: k must be at least 1 (got ", opts.k, ")");
    if (opts.k > n) return err("k-means: k = ", opts.k, " clusters asked for, but the pool holds only ", n, " points");
    for (int64_t i = 0; i < n * dim; ++i)
        if (!std::isfinite(points[size_t(i)]))
            return err("k-means: point ", i / dim, " has a non-finite value at dimension ", i % dim);
    std::vector<double> w(static_cast<size_t>(n), 1.0);
    if (!weights.empty()) {
        if (int64_t(weights.size()) != n) return err("k-means: ", weights.size(), " weights for ", n, " points");
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            if (!std::isfinite(weights[size_t(i)]) || weights[size_t(i)] < 0.0)
                return err("k-means: weight of point ", i, " is ", weights[size_t(i)], " (must be finite and >= 0)");
            sum += weights[size_t(i)];
        }
        if (!(sum > 0.0)) return err("k-means: every weight is zero");
        w = weights;
    }
    const int k = opts.k;
    const auto row = [&](int64_t i) { return points.data() + i * dim; };

    KMeansResult r;
    r.k = k;
    r.dim = dim;
    r.centroids.resize(size_t(k) * size_t(dim));
    Rng rng(opts.seed);

    // ---- k-means++ seeding: the first seed by weight, then by weight x squared distance to the
    // nearest seed so far. Points already drawn have distance 0 and are never drawn again; when
    // every remaining candidate has distance 0 (duplicates), an unchosen point is drawn uniformly.
    std::vector<double> d2(static_cast<size_t>(n), std::numeric_limits<double>::infinity());
    std::vector<char> chosen(static_cast<size_t>(n), 0);
    std::vector<double> p(static_cast<size_t>(n));
    for (int c = 0; c < k; ++c) {
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            p[size_t(i)] = chosen[size_t(i)] ? 0.0 : (c == 0 ? w[size_t(i)] : w[size_t(i)] * d2[size_t(i)]);
            sum += p[size_t(i)];
        }
        int64_t pick = -1;
        if (sum > 0.0 && std::isfinite(sum)) {
            pick = draw(rng, p, sum);
        } else {
            std::vector<int64_t> free;
            for (int64_t i = 0; i < n; ++i)
                if (!chosen[size_t(i)]) free.push_back(i);
            pick = free[size_t(rng.below(free.size()))];
        }
        chosen[size_t(pick)] = 1;
        std::copy(row(pick), row(pick) + dim, r.centroids.begin() + int64_t(c) * dim);
        for (int64_t i = 0; i < n; ++i)
            d2[size_t(i)] = std::min(d2[size_t(i)], squared_distance(row(i), row(pick), dim));
    }

    // ---- Lloyd iterations.
    ThreadPool pool(opts.threads);
    std::vector<float> pnorm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) pnorm[size_t(i)] = runtime::kernels::dot(row(i), row(i), dim);
    r.assignment.assign(size_t(n), -1);
    std::vector<double> dist(static_cast<size_t>(n), 0.0);
    std::vector<float> cnorm(static_cast<size_t>(k));
    double prev_inertia = std::numeric_limits<double>::infinity();
    for (int it = 0; it < std::max(1, opts.max_iter); ++it) {
        if (is_cancelled(progress)) return err("k-means cancelled");
        for (int c = 0; c < k; ++c) {
            const float* cc = r.centroids.data() + int64_t(c) * dim;
            cnorm[size_t(c)] = runtime::kernels::dot(cc, cc, dim);
        }
        std::vector<char> changed_flag(static_cast<size_t>(n), 0);
        pool.parallel_for(
            n,
            [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) {
                    int best = 0;
                    double best_d = std::numeric_limits<double>::infinity();
                    for (int c = 0; c < k; ++c) {
                        const double d =
                            double(pnorm[size_t(i)]) + double(cnorm[size_t(c)]) -
                            2.0 * double(runtime::kernels::dot(row(i), r.centroids.data() + int64_t(c) * dim, dim));
                        if (d < best_d) {
                            best_d = d;
                            best = c;
                        }
                    }
                    changed_flag[size_t(i)] = r.assignment[size_t(i)] != best;
                    r.assignment[size_t(i)] = best;
                    dist[size_t(i)] = std::max(0.0, best_d);
                }
            },
            64);
        bool changed = std::any_of(changed_flag.begin(), changed_flag.end(), [](char f) { return f != 0; });

        // Empty clusters take the point farthest (by weighted distance) from its centroid among
        // clusters that can spare one.
        r.sizes.assign(size_t(k), 0);
        for (int64_t i = 0; i < n; ++i) ++r.sizes[size_t(r.assignment[size_t(i)])];
        for (int c = 0; c < k; ++c) {
            if (r.sizes[size_t(c)] > 0) continue;
            int64_t far = -1;
            double far_d = -1.0;
            for (int64_t i = 0; i < n; ++i) {
                if (r.sizes[size_t(r.assignment[size_t(i)])] < 2) continue;
                const double d = w[size_t(i)] * dist[size_t(i)];
                if (d > far_d) {
                    far_d = d;
                    far = i;
                }
            }
            --r.sizes[size_t(r.assignment[size_t(far)])];
            r.assignment[size_t(far)] = c;
            dist[size_t(far)] = 0.0;
            r.sizes[size_t(c)] = 1;
            changed = true;
        }

        // Centroids: weighted means (plain means for a cluster whose weights are all zero).
        std::vector<double> acc(static_cast<size_t>(k) * size_t(dim), 0.0), accw(size_t(k), 0.0),
            plain(size_t(k) * size_t(dim), 0.0);
        for (int64_t i = 0; i < n; ++i) {
            const int c = r.assignment[size_t(i)];
            accw[size_t(c)] += w[size_t(i)];
            for (int j = 0; j < dim; ++j) {
                acc[size_t(c) * size_t(dim) + size_t(j)] += w[size_t(i)] * double(row(i)[j]);
                plain[size_t(c) * size_t(dim) + size_t(j)] += double(row(i)[j]);
            }
        }
        for (int c = 0; c < k; ++c)
            for (int j = 0; j < dim; ++j) {
                const size_t at = size_t(c) * size_t(dim) + size_t(j);
                r.centroids[at] = accw[size_t(c)] > 0.0 ? float(acc[at] / accw[size_t(c)])
                                                        : float(plain[at] / double(r.sizes[size_t(c)]));
            }
        r.inertia = 0.0;
        for (int64_t i = 0; i < n; ++i)
            r.inertia += w[size_t(i)] *
                         squared_distance(row(i), r.centroids.data() + int64_t(r.assignment[size_t(i)]) * dim, dim);
        r.iterations = it + 1;
        report(progress, double(it + 1) / double(std::max(1, opts.max_iter)), "k-means");
        if (!changed) break;
        if (std::isfinite(prev_inertia) && prev_inertia - r.inertia <= opts.tol * prev_inertia) break;
        prev_inertia = r.inertia;
    }
    return r;
}

}  // namespace edge::calib
