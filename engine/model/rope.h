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

// The divisors in force for an executor holding `positions` positions: Phi-3 longrope's long
// factors when positions exceed the original context (llama.cpp's rule: chosen once for the
// context, not per sequence), else rope_freq_factors (empty: none).
const std::vector<float>& rope_factors_for(const LlamaConfig& c, int positions);

// theta^(-2i/rope_dim) / factor_i for i in [0, rope_dim/2), in double, with the factors
// rope_factors_for(c, positions) gives.
std::vector<double> rope_frequencies(const LlamaConfig& c, int positions);

// cos and sin of pos * frequency_i for pos in [0, positions): [positions][half], the angle taken
// in double and rounded to float before cos/sin (so every executor's table is bit-identical),
// each then multiplied by c.rope_attn_factor when it is not 1.
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

// Checkpoints in the rotate-half RoPE layout (Hugging Face; GGUF architectures llama.cpp runs
// as NEOX, e.g. phi3) keep rotary pair i of a head in dims (i, i + rope_dim/2); the IR keeps
// pairs interleaved (2i, 2i+1). The stored row that IR row r of a Q or K projection comes from:
// IR row (head h, pair i, component c) = stored row h*head_dim + c*rope_dim/2 + i; rows past
// rope_dim (partial rotary) stay in place. heads <= 0: r itself (no permutation).
int64_t rotate_half_source_row(int64_t r, int heads, int head_dim, int rope_dim);

// Phi-3 "longrope" / "su" (config.json rope_scaling with short_factor and long_factor, one per
// rotary pair): the short factors while the context is within original_context, the long ones
// beyond it, and every cos/sin multiplied by attention_factor, which defaults to
//     sqrt(1 + ln(context / original_context) / ln(original_context))   (1 when context <= original)
// where context is max_position_embeddings.
float longrope_attention_factor(int context, int original_context);
// What LlamaConfig::rope_scaling says of a longrope configuration, for people (info, the studio).
std::string longrope_description(const LlamaConfig& c);

// "" when c.rope_freq_factors and c.rope_long_freq_factors are each empty or hold rope_dim/2
// finite positive values, the long ones come with an original context, and rope_attn_factor is
// finite and positive; else what is wrong with them.
std::string rope_factors_problem(const LlamaConfig& c);

}  // namespace edge::model
