#include <algorithm>
#include <cmath>

#include "engine/runtime/cpu/llama_cpu.h"

namespace edge::runtime {

int32_t argmax(const float* v, int n) {
    int32_t best = 0;
    for (int i = 1; i < n; ++i)
        if (v[i] > v[best]) best = i;
    return best;
}

Sampler::Sampler(const SamplingParams& p) : p_(p), state_(p.seed ? p.seed : 0x9E3779B97F4A7C15ull) {}

// xorshift64* -> uniform in [0,1)
float Sampler::next_uniform() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return float((state_ * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f;
}

int32_t Sampler::sample(const float* logits, int n) {
    if (p_.temperature <= 0.0f) return argmax(logits, n);
    buf_.resize(size_t(n));
    float mx = logits[0];
    for (int i = 1; i < n; ++i) mx = std::max(mx, logits[i]);
    for (int i = 0; i < n; ++i) buf_[size_t(i)] = {(logits[i] - mx) / p_.temperature, i};
    auto by_prob = [](const auto& a, const auto& b) { return a.first > b.first; };
    size_t keep = size_t(n);
    if (p_.top_k > 0 && size_t(p_.top_k) < keep) {
        keep = size_t(p_.top_k);
        std::partial_sort(buf_.begin(), buf_.begin() + long(keep), buf_.end(), by_prob);
    } else if (p_.top_p < 1.0f) {
        std::sort(buf_.begin(), buf_.end(), by_prob);
    }
    double sum = 0.0;
    for (size_t i = 0; i < keep; ++i) {
        buf_[i].first = std::exp(buf_[i].first);
        sum += buf_[i].first;
    }
    if (p_.top_p > 0.0f && p_.top_p < 1.0f) {
        if (p_.top_k > 0) std::sort(buf_.begin(), buf_.begin() + long(keep), by_prob);
        double cum = 0.0;
        size_t cut = keep;
        for (size_t i = 0; i < keep; ++i) {
            cum += buf_[i].first / sum;
            if (cum >= p_.top_p) {
                cut = i + 1;
                break;
            }
        }
        keep = cut;
        sum = 0.0;
        for (size_t i = 0; i < keep; ++i) sum += buf_[i].first;
    }
    const double r = double(next_uniform()) * sum;
    double cum = 0.0;
    for (size_t i = 0; i < keep; ++i) {
        cum += buf_[i].first;
        if (r < cum) return buf_[i].second;
    }
    return buf_[keep - 1].second;
}

}  // namespace edge::runtime
