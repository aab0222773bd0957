// Small statistics helpers for timings: median, percentile (linear interpolation between order
// statistics, like NumPy's default), mean, standard deviation, min/max. An empty input gives 0.
#pragma once
#include <vector>

namespace edge::telemetry {

double stat_mean(const std::vector<double>& v);
double stat_stddev(const std::vector<double>& v);  // sample standard deviation (n-1)
double stat_min(const std::vector<double>& v);
double stat_max(const std::vector<double>& v);
// p in [0, 100].
double stat_percentile(std::vector<double> v, double p);
inline double stat_median(const std::vector<double>& v) { return stat_percentile(v, 50.0); }

struct Summary {
    int n = 0;
    double mean = 0, stddev = 0, min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Summary summarize(const std::vector<double>& v);

}  // namespace edge::telemetry
