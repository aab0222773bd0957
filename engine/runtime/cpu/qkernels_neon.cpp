// NEON row kernels for the board's aarch64 CPU (Jetson Orin: Cortex-A78AE, which has the
// dot-product extension). qkernels.cpp picks them at run time:
//   neon-dotprod  SDOT (vdotq_s32) when the kernel reports HWCAP_ASIMDDP: 2 instructions per
//                 32-element block of INT8 (4 lanes x 4 products each, twice), plus 2 masks/shifts
//                 per block of INT4 to split the nibbles;
//   neon          plain Advanced SIMD otherwise (every aarch64 CPU): widening multiplies
//                 (vmull_s8 / vmlal_s8, two int8 products summed per int16 lane, which cannot
//                 overflow: |code| <= 128, |xq| <= 127) and a pairwise widening add into int32.
// Both compute exactly the integer block sums of the portable kernels (qkernels.cpp,
// detail::row_dot_*_portable): Σ code·xq per 32-block, the zero point subtracted as z·Σxq. Four
// blocks are handled per step: their int32 sums are gathered into one vector by pairwise adds,
// converted once and scaled by (weight scale x activation scale) per lane, so there is no
// horizontal reduction per block. Only the float order of the final scaling differs from the
// portable path (tests/cross and tests/engine/quant compare by normalised error).
#include "qkernels_impl.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>

namespace edge::runtime::qkernels::detail {

bool cpu_has_neon_dotprod() {
    static const bool has = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
    return has;
}

namespace {

// Per-block weight scale x activation scale, and the zero point of each block's group, for
// blocks b..b+3 of row r.
struct BlockScales {
    float32x4_t scale;
    int32x4_t zero;
};

inline float scale1(float s) { return s; }
inline float scale1(uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }

template <class S>
inline BlockScales block_scales(const QuantInfo& q, const S* sw, const int8_t* zw, int default_zero, int64_t b,
                                const ActsView& x) {
    float s[4];
    int32_t z[4];
    for (int j = 0; j < 4; ++j) {
        const int64_t g = block_group(q, b + j);
        s[j] = scale1(sw[g]);
        z[j] = zw ? int32_t(zw[g]) : default_zero;
    }
    return {vmulq_f32(vld1q_f32(s), vld1q_f32(x.scale + b)), vld1q_s32(z)};
}

// The int32 sums of four blocks (one per lane) minus z·Σxq, scaled and accumulated.
inline float32x4_t accumulate4(float32x4_t acc, int32x4_t sums, const BlockScales& bs, const ActsView& x, int64_t b) {
    sums = vmlsq_s32(sums, bs.zero, vld1q_s32(x.sum + b));
    return vfmaq_f32(acc, vcvtq_f32_s32(sums), bs.scale);
}

// One leftover block (fewer than four remain).
template <class S>
inline float scale_one(const QuantInfo& q, const S* sw, const int8_t* zw, int default_zero, int64_t b,
                       const ActsView& x, int32_t s) {
    const int64_t g = block_group(q, b);
    s -= (zw ? int32_t(zw[g]) : default_zero) * x.sum[b];
    return scale1(sw[g]) * x.scale[b] * float(s);
}

// ---- plain NEON -----------------------------------------------------------------------------

inline int32x4_t block_q8_neon(const int8_t* c, const int8_t* xq) {
    const int8x16_t c0 = vld1q_s8(c), c1 = vld1q_s8(c + 16);
    const int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
    int16x8_t p0 = vmull_s8(vget_low_s8(c0), vget_low_s8(x0));
    p0 = vmlal_s8(p0, vget_high_s8(c0), vget_high_s8(x0));
    int16x8_t p1 = vmull_s8(vget_low_s8(c1), vget_low_s8(x1));
    p1 = vmlal_s8(p1, vget_high_s8(c1), vget_high_s8(x1));
    return vpadalq_s16(vpaddlq_s16(p0), p1);
}

inline int32x4_t block_q4_neon(const uint8_t* c, const int8_t* xq) {
    const uint8x16_t packed = vld1q_u8(c);
    const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(packed, vdupq_n_u8(0x0f)));
    const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(packed, 4));
    const int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
    // Nibbles are 0..15: two products per int16 lane stay far below the limit.
    int16x8_t p0 = vmull_s8(vget_low_s8(lo), vget_low_s8(x0));
    p0 = vmlal_s8(p0, vget_high_s8(lo), vget_high_s8(x0));
    int16x8_t p1 = vmull_s8(vget_low_s8(hi), vget_low_s8(x1));
    p1 = vmlal_s8(p1, vget_high_s8(hi), vget_high_s8(x1));
    return vpadalq_s16(vpaddlq_s16(p0), p1);
}

// Four blocks' lane vectors -> one vector of their four totals.
inline int32x4_t gather4(int32x4_t a0, int32x4_t a1, int32x4_t a2, int32x4_t a3) {
    return vpaddq_s32(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3));
}

}  // namespace

template <class S>
static float row_dot_q8_neon_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const int8_t* codes = reinterpret_cast<const int8_t*>(base + r * q.row_bytes);
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    float32x4_t acc = vdupq_n_f32(0.0f);
    int64_t b = 0;
    for (; b + 4 <= x.blocks; b += 4) {
        const int8_t* c = codes + b * kQBlock;
        const int8_t* xq = x.q + b * kQBlock;
        const int32x4_t sums = gather4(block_q8_neon(c, xq), block_q8_neon(c + 32, xq + 32),
                                       block_q8_neon(c + 64, xq + 64), block_q8_neon(c + 96, xq + 96));
        acc = accumulate4(acc, sums, block_scales(q, sw, zw, 0, b, x), x, b);
    }
    float tail = 0.0f;
    for (; b < x.blocks; ++b)
        tail += scale_one(q, sw, zw, 0, b, x, vaddvq_s32(block_q8_neon(codes + b * kQBlock, x.q + b * kQBlock)));
    return vaddvq_f32(acc) + tail;
}

template <class S>
static float row_dot_q4_neon_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const uint8_t* codes = base + r * q.row_bytes;
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    constexpr int64_t H = kQBlock / 2;
    float32x4_t acc = vdupq_n_f32(0.0f);
    int64_t b = 0;
    for (; b + 4 <= x.blocks; b += 4) {
        const uint8_t* c = codes + b * H;
        const int8_t* xq = x.q + b * kQBlock;
        const int32x4_t sums = gather4(block_q4_neon(c, xq), block_q4_neon(c + H, xq + 32),
                                       block_q4_neon(c + 2 * H, xq + 64), block_q4_neon(c + 3 * H, xq + 96));
        acc = accumulate4(acc, sums, block_scales(q, sw, zw, 8, b, x), x, b);
    }
    float tail = 0.0f;
    for (; b < x.blocks; ++b)
        tail += scale_one(q, sw, zw, 8, b, x, vaddvq_s32(block_q4_neon(codes + b * H, x.q + b * kQBlock)));
    return vaddvq_f32(acc) + tail;
}

float row_dot_q8_neon(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) { return row_dot_q8_neon_t<decltype(s)>(q, base, r, x); });
}
float row_dot_q4_neon(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) { return row_dot_q4_neon_t<decltype(s)>(q, base, r, x); });
}

float dot_f16_neon(const uint16_t* w, const float* x, int64_t n) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = vdupq_n_f32(0.0f), s2 = vdupq_n_f32(0.0f), s3 = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const float16x8_t h0 = vreinterpretq_f16_u16(vld1q_u16(w + i));
        const float16x8_t h1 = vreinterpretq_f16_u16(vld1q_u16(w + i + 8));
        s0 = vfmaq_f32(s0, vcvt_f32_f16(vget_low_f16(h0)), vld1q_f32(x + i));
        s1 = vfmaq_f32(s1, vcvt_high_f32_f16(h0), vld1q_f32(x + i + 4));
        s2 = vfmaq_f32(s2, vcvt_f32_f16(vget_low_f16(h1)), vld1q_f32(x + i + 8));
        s3 = vfmaq_f32(s3, vcvt_high_f32_f16(h1), vld1q_f32(x + i + 12));
    }
    for (; i + 4 <= n; i += 4)
        s0 = vfmaq_f32(s0, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(w + i))), vld1q_f32(x + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; i < n; ++i) s += vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(w[i]))), 0) * x[i];
    return s;
}

// ---- dot-product extension (ARMv8.2 SDOT) ---------------------------------------------------
// Compiled for armv8.2-a+dotprod and only called when HWCAP_ASIMDDP says the CPU has it.
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod")

namespace {

inline int32x4_t block_q8_dot(const int8_t* c, const int8_t* xq) {
    const int32x4_t a = vdotq_s32(vdupq_n_s32(0), vld1q_s8(c), vld1q_s8(xq));
    return vdotq_s32(a, vld1q_s8(c + 16), vld1q_s8(xq + 16));
}

inline int32x4_t block_q4_dot(const uint8_t* c, const int8_t* xq) {
    const uint8x16_t packed = vld1q_u8(c);
    const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(packed, vdupq_n_u8(0x0f)));
    const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(packed, 4));
    const int32x4_t a = vdotq_s32(vdupq_n_s32(0), lo, vld1q_s8(xq));
    return vdotq_s32(a, hi, vld1q_s8(xq + 16));
}

}  // namespace

template <class S>
static float row_dot_q8_dotprod_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const int8_t* codes = reinterpret_cast<const int8_t*>(base + r * q.row_bytes);
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    float32x4_t acc = vdupq_n_f32(0.0f);
    int64_t b = 0;
    for (; b + 4 <= x.blocks; b += 4) {
        const int8_t* c = codes + b * kQBlock;
        const int8_t* xq = x.q + b * kQBlock;
        const int32x4_t sums = gather4(block_q8_dot(c, xq), block_q8_dot(c + 32, xq + 32),
                                       block_q8_dot(c + 64, xq + 64), block_q8_dot(c + 96, xq + 96));
        acc = accumulate4(acc, sums, block_scales(q, sw, zw, 0, b, x), x, b);
    }
    float tail = 0.0f;
    for (; b < x.blocks; ++b)
        tail += scale_one(q, sw, zw, 0, b, x, vaddvq_s32(block_q8_dot(codes + b * kQBlock, x.q + b * kQBlock)));
    return vaddvq_f32(acc) + tail;
}

template <class S>
static float row_dot_q4_dotprod_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const uint8_t* codes = base + r * q.row_bytes;
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    constexpr int64_t H = kQBlock / 2;
    float32x4_t acc = vdupq_n_f32(0.0f);
    int64_t b = 0;
    for (; b + 4 <= x.blocks; b += 4) {
        const uint8_t* c = codes + b * H;
        const int8_t* xq = x.q + b * kQBlock;
        const int32x4_t sums = gather4(block_q4_dot(c, xq), block_q4_dot(c + H, xq + 32),
                                       block_q4_dot(c + 2 * H, xq + 64), block_q4_dot(c + 3 * H, xq + 96));
        acc = accumulate4(acc, sums, block_scales(q, sw, zw, 8, b, x), x, b);
    }
    float tail = 0.0f;
    for (; b < x.blocks; ++b)
        tail += scale_one(q, sw, zw, 8, b, x, vaddvq_s32(block_q4_dot(codes + b * H, x.q + b * kQBlock)));
    return vaddvq_f32(acc) + tail;
}

float row_dot_q8_dotprod(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) { return row_dot_q8_dotprod_t<decltype(s)>(q, base, r, x); });
}
float row_dot_q4_dotprod(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) { return row_dot_q4_dotprod_t<decltype(s)>(q, base, r, x); });
}

#pragma GCC pop_options

}  // namespace edge::runtime::qkernels::detail

#endif
