// The portable K-quant row dots (qkernels_impl.h): ggml's Q4_K/Q5_K/Q6_K super-blocks multiplied
// in place against the 32-blocks of quantized activations. The reference the SIMD kernels are
// checked against, and the path of processors without AVX2 (and of aarch64 for now). Split from
// qkernels.cpp, which keeps the dispatch.
#include <cstdint>
#include <cstring>

#include "engine/core/half.h"
#include "qkernels_impl.h"

namespace edge::runtime::qkernels::detail {

// The portable K-quant row dots (qkernels_impl.h): the reference the SIMD kernels are checked
// against, and the path of processors without AVX2 (and of aarch64 for now).
bool kquant_integer(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

namespace {

inline float half_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_f32(h);
}

// Q4_K (144 bytes: d, dmin, scales[12], qs[128]) and Q5_K (176: d, dmin, scales[12], qh[32],
// qs[128]); five_bit: Q5_K.
float row_q45_k(const uint8_t* row, const ActsView& x, bool five_bit) {
    const int64_t bytes = five_bit ? 176 : 144;
    float acc = 0.0f;
    for (int64_t sb = 0; sb < x.blocks / 8; ++sb) {
        const uint8_t* blk = row + sb * bytes;
        const float d = half_at(blk), dmin = half_at(blk + 2);
        uint64_t sc, m;
        kquant_scales_mins(blk + 4, sc, m);
        const uint8_t* qh = blk + 16;
        const uint8_t* qs = blk + (five_bit ? 48 : 16);
        float main = 0.0f, mins = 0.0f;
        for (int j = 0; j < 8; ++j) {
            const int64_t b = sb * 8 + j;
            const int8_t* xq = x.q + b * kQBlock;
            const uint8_t* q = qs + 32 * (j / 2);
            const int shift = (j & 1) * 4;
            int32_t s = 0;
            for (int l = 0; l < 32; ++l) {
                int v = (q[l] >> shift) & 0x0f;
                if (five_bit) v += ((qh[l] >> j) & 1) << 4;
                s += v * int32_t(xq[l]);
            }
            main += x.scale[b] * float(int32_t((sc >> (8 * j)) & 0xff) * s);
            mins += x.scale[b] * float(int32_t((m >> (8 * j)) & 0xff) * x.sum[b]);
        }
        acc += d * main - dmin * mins;
    }
    return acc;
}

// Q6_K (210 bytes: ql[128], qh[64], scales[16], d).
float row_q6_k(const uint8_t* row, const ActsView& x) {
    float acc = 0.0f;
    for (int64_t sb = 0; sb < x.blocks / 8; ++sb) {
        const uint8_t* blk = row + sb * 210;
        const int8_t* scales = reinterpret_cast<const int8_t*>(blk + 192);
        float main = 0.0f;
        for (int j = 0; j < 8; ++j) {  // 32-block j: half j / 4, run j % 4
            const int64_t b = sb * 8 + j;
            const int half = j / 4, run = j % 4;
            const uint8_t* ql = blk + 64 * half + 32 * (run & 1);
            const uint8_t* qh = blk + 128 + 32 * half;
            const int8_t* xq = x.q + b * kQBlock;
            int32_t s = 0;
            for (int part = 0; part < 2; ++part) {
                int32_t p = 0;
                for (int l = 16 * part; l < 16 * part + 16; ++l) {
                    const int v = ((ql[l] >> (4 * (run >> 1))) & 0x0f) | (((qh[l] >> (2 * run)) & 3) << 4);
                    p += (v - 32) * int32_t(xq[l]);
                }
                s += int32_t(scales[8 * half + 2 * run + part]) * p;
            }
            main += x.scale[b] * float(s);
        }
        acc += half_at(blk + 208) * main;
    }
    return acc;
}

}  // namespace

float row_dot_kquant_portable(DType t, const uint8_t* row, const ActsView& x) {
    return t == DType::Q6_K ? row_q6_k(row, x) : row_q45_k(row, x, t == DType::Q5_K);
}

}  // namespace edge::runtime::qkernels::detail
