#include "rtn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/ggml_blocks.h"
#include "engine/runtime/cpu/qkernels.h"

namespace edge::quant {

namespace {

int code_lo(int bits, bool symmetric) { return bits == 8 ? (symmetric ? -127 : -128) : 0; }
int code_hi(int bits) { return bits == 8 ? 127 : 15; }

}  // namespace

std::string spec_name(const QuantSpec& s) {
    std::string n = "int" + std::to_string(s.bits) + (s.symmetric ? " sym" : " asym") + (s.clip ? " clip" : "") +
                    (s.ggml_rounding ? " ggml" : "");
    switch (s.grouping) {
        case QGrouping::PerChannel: return n + " per-channel";
        case QGrouping::Group: return n + " g" + std::to_string(s.group_size);
        case QGrouping::Flat: return n + " flat" + std::to_string(s.group_size);
    }
    return n;
}

GroupParams group_params(const float* w, int64_t n, int bits, bool symmetric, bool f16) {
    GroupParams p;
    if (symmetric) {
        float amax = 0.0f;
        for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(w[i]));
        p.scale = bits == 8 ? amax / 127.0f : 2.0f * amax / 15.0f;
        if (f16) round_scale_to_f16(p.scale);
        p.zero = bits == 8 ? 0 : 8;
        return p;
    }
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        lo = std::min(lo, w[i]);
        hi = std::max(hi, w[i]);
    }
    const int levels = (1 << bits) - 1;
    p.scale = (hi - lo) / float(levels);
    if (f16) round_scale_to_f16(p.scale);  // before the zero point, which depends on it
    const int clo = code_lo(bits, false), chi = code_hi(bits);
    p.zero = p.scale > 0.0f ? std::clamp(int(std::nearbyint(-lo / p.scale)) + clo, clo, chi) : (bits == 8 ? 0 : 8);
    return p;
}

GroupParams group_params_clip(const float* w, int64_t n, int bits, bool symmetric, bool f16) {
    const GroupParams base = group_params(w, n, bits, symmetric, f16);
    if (!(base.scale > 0.0f)) return base;
    auto sse = [&](const GroupParams& p) {
        double e = 0;
        for (int64_t i = 0; i < n; ++i) {
            const double d = double(w[i]) - double(dequantize_value(quantize_value(w[i], p, bits, symmetric), p));
            e += d * d;
        }
        return e;
    };
    GroupParams best = base;
    double best_e = sse(base);
    auto consider = [&](const GroupParams& p) {
        const double e = sse(p);
        if (e < best_e) best_e = e, best = p;
    };
    float lo = 0.0f, hi = 0.0f, m = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        lo = std::min(lo, w[i]);
        hi = std::max(hi, w[i]);
        if (std::fabs(w[i]) > std::fabs(m)) m = w[i];
    }
    for (int k = 0; k <= 15; ++k) {
        const float f = 1.0f - 0.02f * float(k);
        if (symmetric) {
            GroupParams p = base;
            p.scale = base.scale * f;
            if (f16) round_scale_to_f16(p.scale);
            consider(p);
            if (bits == 4) {
                p.scale = -m / 8.0f * f;  // m lands on the code -8 (the scale may be negative)
                if (f16) round_scale_to_f16(p.scale);
                consider(p);
            }
        } else {
            std::vector<float> ends = {lo * f, hi * f};
            consider(group_params(ends.data(), 2, bits, false, f16));
        }
    }
    return best;
}

GroupParams group_params(const float* w, int64_t n, const QuantSpec& spec) {
    const bool f16 = wants_f16_scales(spec);
    return spec.clip ? group_params_clip(w, n, spec.bits, spec.symmetric, f16)
                     : group_params(w, n, spec.bits, spec.symmetric, f16);
}

bool round_scale_to_f16(float& s) {
    if (s == 0.0f) return true;
    uint16_t h = f32_to_f16(s);
    if (std::fabs(f16_to_f32(h)) < std::fabs(s)) ++h;  // the next half away from zero (sign-magnitude)
    const float r = f16_to_f32(h);
    constexpr float kMinNormal = 6.103515625e-05f;  // 2^-14
    if (!std::isfinite(r) || std::fabs(r) < kMinNormal) return false;
    s = r;
    return true;
}

Result<Tensor> store_scales(Tensor t, const QuantSpec& spec) {
    if (!t.quant || t.quant->scale_type == QScale::F16 || !wants_f16_scales(spec)) return t;
    const QuantInfo& q = *t.quant;
    for (int64_t g = 0; g < q.n_groups; ++g) {
        const float s = quant_scale(q, t.data.get(), g);
        float r = s;
        if (round_scale_to_f16(r) && r == s) continue;         // group_params chose a half already
        if (spec.scales == QuantSpec::Scales::Auto) return t;  // float32 scales for this tensor
        return err(t.name, ": group ", g, " has scale ", s,
                   ", which half-precision scales cannot hold (normal range 6.1e-05 to 65504); store this layer's "
                   "scales as fp32");
    }
    auto info = std::make_shared<QuantInfo>(q);
    info->scale_type = QScale::F16;
    quant_layout(*info, q.rows, q.cols);
    Tensor out = t;
    out.nbytes = info->total_bytes;
    out.data = alloc_aligned(out.nbytes);
    std::memset(out.data.get(), 0, out.nbytes);
    std::memcpy(out.data.get(), t.data.get(), q.codes_bytes);
    for (int64_t g = 0; g < q.n_groups; ++g) {
        const uint16_t h = f32_to_f16(quant_scale(q, t.data.get(), g));
        std::memcpy(out.data.get() + info->scales_offset + size_t(g) * 2, &h, 2);
    }
    if (!q.symmetric)
        std::memcpy(out.data.get() + info->zeros_offset, t.data.get() + q.zeros_offset, size_t(q.n_groups));
    out.quant = std::move(info);
    return out;
}

int quantize_value(float w, const GroupParams& p, int bits, bool symmetric) {
    if (p.scale == 0.0f || !std::isfinite(p.scale)) return p.zero;  // a clip-searched scale may be negative
    const int clo = bits == 4 && symmetric ? 0 : code_lo(bits, symmetric), chi = code_hi(bits);
    const int v = int(std::nearbyint(w / p.scale)) + p.zero;
    return std::clamp(v, clo, chi);
}

Result<Tensor> make_quant_tensor(const std::string& name, const std::vector<int64_t>& shape, const QuantSpec& spec) {
    if (shape.empty() || shape.size() > 2) return err(name, ": only 1-D and 2-D tensors can be quantized");
    for (int64_t d : shape)
        if (d <= 0) return err(name, ": empty dimension");
    const int64_t rows = shape.size() == 2 ? shape[0] : 1, cols = shape.back();
    auto info = std::make_shared<QuantInfo>();
    info->bits = spec.bits;
    info->symmetric = spec.symmetric;
    info->grouping = spec.grouping;
    info->group_size = spec.group_size;
    info->method = spec.method;
    if (const char* why = quant_layout(*info, rows, cols))
        return err(name, ": cannot quantize a ", rows, "x", cols, " tensor as ", spec_name(spec), ": ", why, " (", cols,
                   " elements per row)");
    Tensor t;
    t.name = name;
    t.type = spec.bits == 8 ? DType::QI8 : DType::QI4;
    t.source_type = DType::F32;
    t.shape = shape;
    t.nbytes = info->total_bytes;
    t.data = alloc_aligned(t.nbytes);
    std::memset(t.data.get(), 0, t.nbytes);
    if (spec.bits == 4) {
        // Padding and untouched codes hold the symmetric zero (8) so the padded tail dequantizes to 0.
        std::memset(t.data.get(), spec.symmetric ? 0x88 : 0x00, info->codes_bytes);
    }
    t.quant = std::move(info);
    return t;
}

void set_code(Tensor& t, int64_t r, int64_t c, int code) {
    const QuantInfo& q = *t.quant;
    uint8_t* base = t.data.get();
    if (q.bits == 8) {
        const int64_t off = q.row_mode() ? r * q.row_bytes + c : r * q.cols + c;
        base[off] = uint8_t(int8_t(code));
        return;
    }
    int64_t blk, j;
    if (q.row_mode()) {
        blk = r * q.row_bytes + (c / kQBlock) * (kQBlock / 2);
        j = c % kQBlock;
    } else {
        const int64_t k = r * q.cols + c;
        blk = (k / kQBlock) * (kQBlock / 2);
        j = k % kQBlock;
    }
    uint8_t& b = base[blk + j % (kQBlock / 2)];
    if (j < kQBlock / 2)
        b = uint8_t((b & 0xf0) | (code & 0x0f));
    else
        b = uint8_t((b & 0x0f) | ((code & 0x0f) << 4));
}

void set_group(Tensor& t, int64_t g, const GroupParams& p) {
    const QuantInfo& q = *t.quant;
    if (q.scale_type == QScale::F16) {
        const uint16_t h = f32_to_f16(p.scale);
        std::memcpy(t.data.get() + q.scales_offset + size_t(g) * 2, &h, 2);
    } else {
        std::memcpy(t.data.get() + q.scales_offset + size_t(g) * 4, &p.scale, 4);
    }
    if (!q.symmetric) t.data.get()[q.zeros_offset + size_t(g)] = uint8_t(int8_t(p.zero));
}

GroupParams get_group(const Tensor& t, int64_t g) {
    const QuantInfo& q = *t.quant;
    GroupParams p;
    p.scale = quant_scale(q, t.data.get(), g);
    p.zero = quant_zero(q, t.data.get(), g);
    return p;
}

namespace {

// llama.cpp's Q8_0 / Q4_0 rules, block by block along each row (ggml_blocks.h): the codes ggml
// would write and its scale as the half it stores.
Result<Tensor> quantize_ggml(Tensor t, const float* w, const QuantSpec& spec) {
    const QuantInfo& q = *t.quant;
    if ((q.bits != 8 && q.bits != 4) || !q.symmetric || q.grouping != QGrouping::Group || q.group_size != kGgmlBlock)
        return err(t.name, ": ggml rounding makes symmetric INT8/INT4 groups of 32, not ", spec_name(spec));
    if (q.cols % kGgmlBlock != 0)
        return err(t.name, ": ggml rounding needs rows of whole 32-element blocks; rows hold ", q.cols, " elements");
    for (int64_t r = 0; r < q.rows; ++r)
        for (int64_t b = 0; b < q.cols / kGgmlBlock; ++b) {
            const float* x = w + r * q.cols + b * kGgmlBlock;
            GroupParams p;
            int codes[kGgmlBlock];
            if (q.bits == 8) {
                int8_t c[kGgmlBlock];
                p.scale = ggml_q8_0_codes(x, c);
                // NOLINTNEXTLINE(bugprone-signed-char-misuse): Q8_0 codes are signed, sign extension intended
                for (int j = 0; j < kGgmlBlock; ++j) codes[j] = c[j];
            } else {
                uint8_t c[kGgmlBlock];
                p.scale = ggml_q4_0_codes(x, c);
                p.zero = 8;
                for (int j = 0; j < kGgmlBlock; ++j) codes[j] = c[j];
            }
            p.scale = f16_to_f32(f32_to_f16(p.scale));  // the half ggml stores
            set_group(t, r * q.groups_per_row + b, p);
            for (int j = 0; j < kGgmlBlock; ++j) set_code(t, r, b * kGgmlBlock + j, codes[j]);
        }
    QuantSpec stored = spec;
    stored.scales = QuantSpec::Scales::F16;
    return store_scales(std::move(t), stored);
}

}  // namespace

Result<Tensor> quantize_rtn(const std::string& name, const float* w, const std::vector<int64_t>& shape,
                            const QuantSpec& spec) {
    auto made = make_quant_tensor(name, shape, spec);
    if (!made.ok()) return made.error();
    Tensor t = std::move(made).value();
    const QuantInfo& q = *t.quant;
    const int64_t numel = q.rows * q.cols;
    for (int64_t i = 0; i < numel; ++i)
        if (!std::isfinite(w[i]))
            return err(name, ": weight ", i, " (row ", i / q.cols, ", column ", i % q.cols, ") is ", w[i],
                       "; cannot quantize non-finite weights");
    if (spec.ggml_rounding) return quantize_ggml(std::move(t), w, spec);
    // Group g covers a contiguous run of the flattened tensor in every mode: [start, start+len).
    for (int64_t g = 0; g < q.n_groups; ++g) {
        int64_t r0, c0, len;
        if (q.row_mode()) {
            r0 = g / q.groups_per_row;
            c0 = (g % q.groups_per_row) * q.group_size;
            len = std::min(q.group_size, q.cols - c0);
        } else {
            const int64_t start = g * q.group_size;
            r0 = start / q.cols;
            c0 = start % q.cols;
            len = std::min(q.group_size, numel - start);
        }
        const float* gw = w + r0 * q.cols + c0;
        const GroupParams p = group_params(gw, len, spec);
        set_group(t, g, p);
        for (int64_t k = 0; k < len; ++k) {
            const int64_t flat = r0 * q.cols + c0 + k;
            set_code(t, flat / q.cols, flat % q.cols, quantize_value(gw[k], p, q.bits, q.symmetric));
        }
    }
    return store_scales(std::move(t), spec);
}

Result<Tensor> quantize_rtn(const Tensor& w, const QuantSpec& spec) {
    if (w.type != DType::F32 || !w.data) return err(w.name, ": RTN needs F32 weights, found ", dtype_name(w.type));
    return quantize_rtn(w.name, w.f32(), w.shape, spec);
}

ErrorReport error_report(const Tensor& original, const Tensor& quantized) {
    ErrorReport r;
    r.name = original.name;
    // Row by row: two rows of scratch, not two dequantized copies of the matrix (an 8B model's
    // output head is 2 GB as F32).
    const int64_t rows = original.rows(), cols = original.cols();
    std::vector<float> deq(static_cast<size_t>(cols)), ref(static_cast<size_t>(cols));
    double e2 = 0.0, w2 = 0.0, amax = 0.0;
    for (int64_t row = 0; row < rows; ++row) {
        runtime::qkernels::dequantize_row(quantized, row, deq.data());
        runtime::qkernels::dequantize_row(original, row, ref.data());
        for (int64_t i = 0; i < cols; ++i) {
            const double d = double(ref[size_t(i)]) - double(deq[size_t(i)]);
            e2 += d * d;
            w2 += double(ref[size_t(i)]) * double(ref[size_t(i)]);
            amax = std::max(amax, std::fabs(double(ref[size_t(i)])));
            r.max_abs = std::max(r.max_abs, std::fabs(d));
        }
    }
    r.frobenius = std::sqrt(e2);
    r.relative = w2 > 0 ? r.frobenius / std::sqrt(w2) : 0.0;
    if (quantized.quant) {
        const QuantInfo& q = *quantized.quant;
        // Symmetric: the formula's step, or a stored one a hair above it (a scale rounded to half).
        if (q.symmetric) r.delta = q.bits == 8 ? amax / 127.0 : 2.0 * amax / 15.0;
        for (int64_t g = 0; g < q.n_groups; ++g)
            r.delta = std::max(r.delta, std::fabs(double(get_group(quantized, g).scale)));
    }
    r.bound = r.delta / 2.0 * std::sqrt(double(rows * cols));
    // float32 rounding of the scale and of w/s may exceed the exact bound by a hair.
    r.within_bound = r.frobenius <= r.bound * (1.0 + 1e-5) + 1e-12;
    return r;
}

}  // namespace edge::quant
