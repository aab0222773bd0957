#include "engine/calib/weighting.h"

#include <algorithm>
#include <cmath>

namespace edge::calib {

namespace {

double aligned_share(int64_t len, int64_t multiple) {
    const int64_t padded = (len + multiple - 1) / multiple * multiple;
    return double(len) / double(padded);
}

}  // namespace

Result<SampleWeights> hardware_weights(const std::vector<SampleShape>& samples, const HardwareProfile& hw) {
    if (samples.empty()) return err("hardware weighting: the pool is empty");
    if (hw.token_multiple < 1 || hw.preferred_tokens < 1 || hw.spatial_multiple < 1)
        return err("hardware weighting: token_multiple (", hw.token_multiple, "), preferred_tokens (",
                   hw.preferred_tokens, ") and spatial_multiple (", hw.spatial_multiple, ") must be positive");
    if (hw.length_strength < 0 || hw.alignment_strength < 0 || hw.channel_strength < 0 ||
        !std::isfinite(hw.length_strength + hw.alignment_strength + hw.channel_strength))
        return err("hardware weighting: strengths must be finite and >= 0");
    const size_t n = samples.size();
    const size_t channels = samples[0].channel_mean.size();
    SampleWeights w;
    w.weight.resize(n);
    w.length.resize(n);
    w.alignment.resize(n);
    w.channel.assign(n, 1.0);
    for (size_t i = 0; i < n; ++i) {
        const SampleShape& s = samples[i];
        if (s.channel_mean.size() != channels)
            return err("hardware weighting: sample ", i, " has ", s.channel_mean.size(), " channels, sample 0 has ",
                       channels);
        if (s.tokens > 0) {
            const int64_t len = std::min<int64_t>(s.tokens, hw.preferred_tokens);
            w.length[i] = double(len) / double(hw.preferred_tokens);
            w.alignment[i] = aligned_share(len, hw.token_multiple);
        } else if (s.height > 0 && s.width > 0) {
            const double area = double(s.height * s.width);
            const double want = hw.input_h > 0 && hw.input_w > 0 ? double(hw.input_h * hw.input_w) : area;
            w.length[i] = std::min(area, want) / std::max(area, want);
            w.alignment[i] = aligned_share(s.height, hw.spatial_multiple) * aligned_share(s.width, hw.spatial_multiple);
        } else {
            return err("hardware weighting: sample ", i, " has neither tokens nor a height and width");
        }
    }
    if (channels > 0) {
        for (size_t c = 0; c < channels; ++c) {
            double mean = 0.0, var = 0.0;
            for (const auto& s : samples) mean += s.channel_mean[c];
            mean /= double(n);
            for (const auto& s : samples) var += (s.channel_mean[c] - mean) * (s.channel_mean[c] - mean);
            const double sd = std::sqrt(var / double(n));
            if (!(sd > 0.0)) continue;  // every sample alike in this channel
            for (size_t i = 0; i < n; ++i) {
                const double z = (samples[i].channel_mean[c] - mean) / sd;
                w.channel[i] *= std::exp(-0.5 * z * z / double(channels));
            }
        }
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
        w.weight[i] = std::pow(w.length[i], hw.length_strength) * std::pow(w.alignment[i], hw.alignment_strength) *
                      std::pow(w.channel[i], hw.channel_strength);
        sum += w.weight[i];
    }
    if (!(sum > 0.0)) return err("hardware weighting: every sample got weight 0");
    for (double& x : w.weight) x *= double(n) / sum;
    return w;
}

}  // namespace edge::calib
