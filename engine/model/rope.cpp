#include "engine/model/rope.h"

#include <cmath>
#include <sstream>

namespace edge::model {

std::vector<double> rope_frequencies(const LlamaConfig& c) {
    const int half = c.rope_dim / 2;
    std::vector<double> f(size_t(std::max(half, 0)));
    for (int i = 0; i < half; ++i) {
        double v = std::pow(double(c.rope_theta), -2.0 * i / double(c.rope_dim));
        if (size_t(i) < c.rope_freq_factors.size()) v /= double(c.rope_freq_factors[size_t(i)]);
        f[size_t(i)] = v;
    }
    return f;
}

RopeTables rope_tables(const LlamaConfig& c, int positions) {
    RopeTables t;
    const std::vector<double> freq = rope_frequencies(c);
    t.half = int(freq.size());
    const size_t n = size_t(std::max(positions, 0)) * freq.size();
    t.cos.resize(n);
    t.sin.resize(n);
    for (int p = 0; p < positions; ++p)
        for (size_t i = 0; i < freq.size(); ++i) {
            const float a = float(double(p) * freq[i]);
            t.cos[size_t(p) * freq.size() + i] = std::cos(a);
            t.sin[size_t(p) * freq.size() + i] = std::sin(a);
        }
    return t;
}

std::vector<float> llama3_rope_factors(int rope_dim, float theta, const Llama3RopeScaling& s) {
    const double pi = std::acos(-1.0);
    const double low_wavelength = double(s.original_context) / s.low_freq_factor;
    const double high_wavelength = double(s.original_context) / s.high_freq_factor;
    std::vector<float> out(size_t(std::max(rope_dim / 2, 0)));
    for (size_t i = 0; i < out.size(); ++i) {
        const double freq = std::pow(double(theta), -2.0 * double(i) / double(rope_dim));
        const double wavelength = 2.0 * pi / freq;
        double factor = 1.0;
        if (wavelength > low_wavelength) {
            factor = s.factor;
        } else if (wavelength >= high_wavelength) {
            const double smooth = (double(s.original_context) / wavelength - s.low_freq_factor) /
                                  (s.high_freq_factor - s.low_freq_factor);
            factor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
        }
        out[i] = float(factor);
    }
    return out;
}

std::string rope_factors_problem(const LlamaConfig& c) {
    if (c.rope_freq_factors.empty()) return {};
    std::ostringstream os;
    if (c.rope_freq_factors.size() != size_t(c.rope_dim / 2)) {
        os << "rope frequency factors hold " << c.rope_freq_factors.size() << " values but the rotary dimension "
           << c.rope_dim << " has " << c.rope_dim / 2 << " pairs";
        return os.str();
    }
    for (size_t i = 0; i < c.rope_freq_factors.size(); ++i) {
        const float f = c.rope_freq_factors[i];
        if (!std::isfinite(f) || f <= 0.0f) {
            os << "rope frequency factor " << i << " is " << f << " (must be finite and positive)";
            return os.str();
        }
    }
    return {};
}

}  // namespace edge::model
