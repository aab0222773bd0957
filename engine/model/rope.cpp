#include "engine/model/rope.h"

#include <cmath>
#include <sstream>

namespace edge::model {

const std::vector<float>& rope_factors_for(const LlamaConfig& c, int positions) {
    if (!c.rope_long_freq_factors.empty() && positions > c.rope_original_context) return c.rope_long_freq_factors;
    return c.rope_freq_factors;
}

std::vector<double> rope_frequencies(const LlamaConfig& c, int positions) {
    const int half = c.rope_dim / 2;
    const std::vector<float>& factors = rope_factors_for(c, positions);
    std::vector<double> f(size_t(std::max(half, 0)));
    for (int i = 0; i < half; ++i) {
        double v = std::pow(double(c.rope_theta), -2.0 * i / double(c.rope_dim));
        if (size_t(i) < factors.size()) v /= double(factors[size_t(i)]);
        f[size_t(i)] = v;
    }
    return f;
}

int64_t rotate_half_source_row(int64_t r, int heads, int head_dim, int rope_dim) {
    if (heads <= 0) return r;
    const int64_t h = r / head_dim, in_head = r % head_dim;
    const int half = rope_dim / 2;
    const int64_t from = in_head < rope_dim ? (in_head % 2) * half + in_head / 2 : in_head;
    return h * head_dim + from;
}

float longrope_attention_factor(int context, int original_context) {
    if (original_context <= 1 || context <= original_context) return 1.0f;
    const double scale = double(context) / double(original_context);
    return float(std::sqrt(1.0 + std::log(scale) / std::log(double(original_context))));
}

std::string longrope_description(const LlamaConfig& c) {
    std::ostringstream os;
    os << "longrope: original context " << c.rope_original_context << ", attention factor " << c.rope_attn_factor
       << " (long factors beyond the original context)";
    return os.str();
}

RopeTables rope_tables(const LlamaConfig& c, int positions) {
    RopeTables t;
    const std::vector<double> freq = rope_frequencies(c, positions);
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
    if (c.rope_attn_factor != 1.0f) {
        for (float& v : t.cos) v *= c.rope_attn_factor;
        for (float& v : t.sin) v *= c.rope_attn_factor;
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

namespace {

// what: "rope frequency factor" (its values are "<what>s").
std::string factors_problem(const std::vector<float>& factors, const char* what, int rope_dim) {
    if (factors.empty()) return {};
    std::ostringstream os;
    if (factors.size() != size_t(rope_dim / 2)) {
        os << what << "s hold " << factors.size() << " values but the rotary dimension " << rope_dim << " has "
           << rope_dim / 2 << " pairs";
        return os.str();
    }
    for (size_t i = 0; i < factors.size(); ++i) {
        const float f = factors[i];
        if (!std::isfinite(f) || f <= 0.0f) {
            os << what << " " << i << " is " << f << " (must be finite and positive)";
            return os.str();
        }
    }
    return {};
}

}  // namespace

std::string rope_factors_problem(const LlamaConfig& c) {
    if (std::string p = factors_problem(c.rope_freq_factors, "rope frequency factor", c.rope_dim); !p.empty()) return p;
    if (std::string p = factors_problem(c.rope_long_freq_factors, "rope long frequency factor", c.rope_dim); !p.empty())
        return p;
    std::ostringstream os;
    if (!c.rope_long_freq_factors.empty() && c.rope_original_context <= 0) {
        os << "rope long frequency factors need the original context length (found " << c.rope_original_context << ")";
        return os.str();
    }
    if (!std::isfinite(c.rope_attn_factor) || c.rope_attn_factor <= 0.0f) {
        os << "rope attention factor is " << c.rope_attn_factor << " (must be finite and positive)";
        return os.str();
    }
    return {};
}

}  // namespace edge::model
