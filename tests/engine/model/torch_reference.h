// Logits of a model file through the one executor interface, and of its Hugging Face folder
// through tests/engine/model/reference/llama_forward.py (Debian's python3 with python3-torch,
// float64, the published formulas): the independent reference the importers are checked against.
#pragma once
#include <cmath>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace edge::test {

// Every position's logits ([tokens][vocab]) of `tokens` run as one batch step through
// runtime::open_executor(path) on an executor holding max_seq positions; empty after a failure
// (reported with ADD_FAILURE).
std::vector<float> executor_logits(const std::string& path, std::span<const int32_t> tokens, int max_seq = 128);

// The torch reference's logits of the HF folder `dir` ([tokens][vocab], float64).
std::vector<double> torch_reference_logits(const std::filesystem::path& dir, std::span<const int32_t> tokens,
                                           int vocab);

// The worst over positions from `from` of max|a - b| / max|b| within the position.
template <class A, class B>
double worst_relative(const std::vector<A>& a, const std::vector<B>& b, int vocab, int from = 0) {
    if (a.size() != b.size() || a.empty()) return INFINITY;
    const size_t V = size_t(vocab), positions = a.size() / V;
    double worst = 0;
    for (size_t p = size_t(from); p < positions; ++p) {
        double num = 0, den = 0;
        for (size_t i = 0; i < V; ++i) {
            num = std::max(num, std::fabs(double(a[p * V + i]) - double(b[p * V + i])));
            den = std::max(den, std::fabs(double(b[p * V + i])));
        }
        worst = std::max(worst, num / den);
    }
    return worst;
}

}  // namespace edge::test
