// Round-to-nearest quantization into the QI8 / QI4 layouts of engine/core/quant_format.h.
//
//   INT8 symmetric   s = max|w| / 127,               c = rne(w / s)            in [-127, 127]
//   INT4 symmetric   s = Δ = 2·max|w| / 15,          u = clamp(rne(w / s), -8, 7) + 8
//   asymmetric       range [min(w,0), max(w,0)], s = (max - min) / (2^b - 1),
//                    z = clamp(rne(-min / s) + lo, lo, hi), c = clamp(rne(w / s) + z, lo, hi)
//                    (INT8: lo..hi = -128..127; INT4: 0..15)
// rne = round half to even; the divisions are done in float32 (w / s, not w · (1/s)), which is
// what reproduces llama2.c's q80 export bit for bit. A group of zeros gets s = 0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/core/tensor.h"

namespace edge::quant {

struct QuantSpec {
    int bits = 8;
    bool symmetric = true;
    QGrouping grouping = QGrouping::Group;
    int64_t group_size = 32;  // ignored for PerChannel
    QMethod method = QMethod::RTN;
    // Clip search: each group's scale (and zero) is the one of a grid of shrunken ranges that
    // minimises the group's squared rounding error (rtn.h group_params_clip); off = plain min/max.
    bool clip = false;
    // How the group scales are stored (quant_format.h QScale). Auto: IEEE half when every scale of
    // the tensor is a normal half (or zero), else float32 - for INT8 as for INT4 since 2026-12-06
    // (INT8 g32 with half scales is 8.5 bits per weight, llama.cpp Q8_0's size, and its decode reads
    // 6% fewer bytes than with float scales; llama2.c's q80 files keep float32 as they are read).
    // F16 asked for explicitly makes a scale outside half's normal range an error.
    enum class Scales : uint8_t { Auto, F32, F16 } scales = Scales::Auto;
    // llama.cpp's Q8_0 / Q4_0 rules instead of ours (engine/core/ggml_blocks.h): symmetric groups
    // of 32 over rows of whole blocks, half scales; the codes are ggml's, bit for bit.
    bool ggml_rounding = false;
};
std::string spec_name(const QuantSpec& s);  // "int4 sym g32", "int8 asym flat32", ...

struct GroupParams {
    float scale = 0.0f;
    int zero = 0;  // the code of 0.0 (8 for INT4 symmetric, 0 for INT8 symmetric)
};
// Scale and zero point of a group of n values.
// f16: the scale is rounded away from zero to a half (when it fits one, round_scale_to_f16) before
// the zero point is chosen, so the codes still cover the group's range.
GroupParams group_params(const float* w, int64_t n, int bits, bool symmetric, bool f16 = false);
// The clip-searched parameters: symmetric candidates s = f·2max|w|/15 and s = −f·m/8 (m the
// signed extreme, llama.cpp Q4_0's grid, which maps m to the code −8); asymmetric candidates
// shrink [min, max] by f; f in {1, 0.98, ..., 0.70}. Returns the candidate of least Σ(w − ŵ)².
GroupParams group_params_clip(const float* w, int64_t n, int bits, bool symmetric, bool f16 = false);
GroupParams group_params(const float* w, int64_t n, const QuantSpec& spec);
// Whether the spec stores its scales as half where it can (then group_params rounds each scale
// that fits to a half, so the codes are chosen against the scale that is stored).
inline bool wants_f16_scales(const QuantSpec& spec) { return spec.scales != QuantSpec::Scales::F32; }
// s rounded away from zero to the nearest half (so a group's extremes stay within the codes' reach)
// when that is zero or a normal half; false (s unchanged) if not.
bool round_scale_to_f16(float& s);
// The tensor as the spec stores it: a float32-scaled tensor from make_quant_tensor whose scales
// group_params already rounded is rewritten with half scales; Auto keeps float32 when a scale
// does not fit, F16 then fails naming the tensor, the group and the value.
Result<Tensor> store_scales(Tensor t, const QuantSpec& spec);
// Code of value w under p (INT8: -128..127, INT4: nibble 0..15) and its dequantized value.
int quantize_value(float w, const GroupParams& p, int bits, bool symmetric);
inline float dequantize_value(int code, const GroupParams& p) { return p.scale * float(code - p.zero); }

// A zero-filled quantized tensor with the layout of `spec` for `shape` (2-D, or 1-D as one row);
// the error names the tensor and what is impossible.
Result<Tensor> make_quant_tensor(const std::string& name, const std::vector<int64_t>& shape, const QuantSpec& spec);
// Writers used by the quantizers.
void set_code(Tensor& t, int64_t r, int64_t c, int code);
void set_group(Tensor& t, int64_t g, const GroupParams& p);
GroupParams get_group(const Tensor& t, int64_t g);

// RTN of an F32 tensor. NaN/Inf weights are an error naming the tensor and the element.
Result<Tensor> quantize_rtn(const Tensor& w, const QuantSpec& spec);
// RTN of raw values (rows x cols), for quantizers that prepare their own weights (AWQ).
Result<Tensor> quantize_rtn(const std::string& name, const float* w, const std::vector<int64_t>& shape,
                            const QuantSpec& spec);

// The ||W − Q(W)||_F ≤ (Δ/2)·√(mn) check. Δ is the largest quantization step the tensor uses
// (for symmetric RTN: 2·max|W|/15 at INT4, max|W|/127 at INT8 — the per-tensor maximum bounds every
// group's step).
struct ErrorReport {
    std::string name;
    double frobenius = 0.0;  // ||W − Q(W)||_F
    double bound = 0.0;      // (Δ/2)·√(mn)
    double delta = 0.0;
    double relative = 0.0;  // ||W − Q(W)||_F / ||W||_F
    double max_abs = 0.0;   // max |W − Q(W)|
    bool within_bound = true;
};
ErrorReport error_report(const Tensor& original, const Tensor& quantized);

}  // namespace edge::quant
