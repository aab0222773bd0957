#include "engine/telemetry/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace edge::telemetry {

double stat_mean(const std::vector<double>& v) {
    if (v.empty()) return 0.0;
    return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

double stat_stddev(const std::vector<double>& v) {
    if (v.size() < 2) return 0.0;
    const double m = stat_mean(v);
    double s = 0.0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / double(v.size() - 1));
}

double stat_min(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }
double stat_max(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

double stat_percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    p = std::clamp(p, 0.0, 100.0);
    const double rank = p / 100.0 * double(v.size() - 1);
    const size_t lo = size_t(std::floor(rank));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    const double frac = rank - double(lo);
    return v[lo] + (v[hi] - v[lo]) * frac;
}

Summary summarize(const std::vector<double>& v) {
    Summary s;
    s.n = int(v.size());
    if (v.empty()) return s;
    s.mean = stat_mean(v);
    s.stddev = stat_stddev(v);
    s.min = stat_min(v);
    s.max = stat_max(v);
    s.p50 = stat_percentile(v, 50);
    s.p90 = stat_percentile(v, 90);
    s.p99 = stat_percentile(v, 99);
    return s;
}

}  // namespace edge::telemetry
