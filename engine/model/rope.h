// Rotary position embedding: the frequency of each rotary pair and the cos/sin tables every
// executor (CPU, CUDA, the LibTorch analysis model, the layer-wise quantizer) rotates with.
//
// Pair i of a head (dimensions 2i, 2i+1 in the IR's interleaved layout) turns by
//     pos * theta^(-2i / rope_dim) / factor_i
// where factor_i is LlamaConfig::rope_freq_factors[i], or 1 when the model does not scale its RoPE.
// The factors come from GGUF's rope_freqs.weight (llama.cpp stores them so), or are computed here
// from a config.json rope_scaling of type "llama3" (Llama 3.1-3.3) or "linear".
#pragma once
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

// theta^(-2i/rope_dim) / factor_i for i in [0, rope_dim/2), in double.
std::vector<double> rope_frequencies(const LlamaConfig& c);

// cos and sin of pos * frequency_i for pos in [0, positions): [positions][half], the angle taken
// in double and rounded to float before cos/sin (so every executor's table is bit-identical).
struct RopeTables {
    int half = 0;
    std::vector<float> cos, sin;
};
RopeTables rope_tables(const LlamaConfig& c, int positions);

// Llama 3.x "llama3" scaling (rope_scaling in config.json): pairs whose wavelength 2*pi/freq is
// shorter than original_context/high_freq_factor keep their frequency, those longer than
// original_context/low_freq_factor are divided by `factor`, and those in between are blended:
//     s = (original_context / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
//     new_freq = (1 - s) * freq / factor + s * freq        (factor_i = freq / new_freq)
struct Llama3RopeScaling {
    double factor = 8.0;
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    int original_context = 8192;
};
std::vector<float> llama3_rope_factors(int rope_dim, float theta, const Llama3RopeScaling& s);

// "" when c.rope_freq_factors is empty or holds rope_dim/2 finite positive values, else what is
// wrong with them.
std::string rope_factors_problem(const LlamaConfig& c);

}  // namespace edge::model
