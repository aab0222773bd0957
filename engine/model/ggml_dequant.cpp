// ggml block dequantizers, written from the format description. Each block is copied into a
// local struct first (memcpy), so unaligned source pointers are fine.
#include "ggml_dequant.h"

#include <cstring>

#include "engine/core/half.h"

namespace edge::model {
namespace {

constexpr int kBlock = 32;        // elements per block of the legacy types
constexpr int kSuperBlock = 256;  // elements per K-type super-block

// Q8_0: scale d, then 32 signed bytes; x = q * d.
struct BlockQ80 {
    uint16_t d;
    int8_t qs[kBlock];
};
static_assert(sizeof(BlockQ80) == 34);

// Q4_0: scale d, 16 bytes of nibbles. Element j (j < 16) is the low nibble of byte j, element
// j + 16 the high nibble; x = (q - 8) * d.
struct BlockQ40 {
    uint16_t d;
    uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ40) == 18);

// Q4_1: like Q4_0 with a minimum m and unsigned nibbles: x = q * d + m.
struct BlockQ41 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ41) == 20);

// Q5_0: Q4_0's nibbles plus a fifth bit per element in the 32-bit qh (bit j for element j);
// x = (q - 16) * d.
struct BlockQ50 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ50) == 22);

// Q5_1: Q5_0 with a minimum: x = q * d + m.
struct BlockQ51 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[kBlock / 2];
};
static_assert(sizeof(BlockQ51) == 24);

// Q2_K: 16 sub-blocks of 16. scales[i] holds the sub-block scale (low nibble, times d) and min
// (high nibble, times dmin). qs packs 2-bit values: byte l of each 32-byte group carries four
// values at bit shifts 0, 2, 4, 6 for four consecutive 32-element runs. x = d*sc*q - dmin*m.
struct BlockQ2K {
    uint8_t scales[kSuperBlock / 16];
    uint8_t qs[kSuperBlock / 4];
    uint16_t d;
    uint16_t dmin;
};
static_assert(sizeof(BlockQ2K) == 84);

// Q3_K: 2 low bits in qs (packed like Q2_K), the third bit in hmask (bit k of byte l for run k),
// 16 six-bit signed scales (offset 32) packed into 12 bytes: the low 4 bits of scale j are the
// low (j < 8) or high (j >= 8) nibble of byte j % 8, its top 2 bits are bits 2*(j/4) of byte
// 8 + j % 4. x = d * (scale - 32) * (q - (hbit ? 0 : 4)).
struct BlockQ3K {
    uint8_t hmask[kSuperBlock / 8];
    uint8_t qs[kSuperBlock / 4];
    uint8_t scales[12];
    uint16_t d;
};
static_assert(sizeof(BlockQ3K) == 110);

// Q4_K: 8 sub-blocks of 32 with six-bit scales and mins packed into 12 bytes (see scale_min_k4);
// qs: per 64 elements, 32 bytes whose low nibbles are the first 32 and high nibbles the next 32.
// x = d*sc*q - dmin*m.
struct BlockQ4K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ4K) == 144);

// Q5_K: Q4_K plus a fifth bit per element: bit 2k (low-nibble run) / 2k+1 (high-nibble run) of
// qh[l] for element l of the k-th 64-element group.
struct BlockQ5K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[kSuperBlock / 8];
    uint8_t qs[kSuperBlock / 2];
};
static_assert(sizeof(BlockQ5K) == 176);

// Q6_K: 16 sub-blocks of 16 with signed 8-bit scales. Per 128 elements: 64 bytes of ql (low
// nibbles for elements 0..31 / 32..63 in the low nibbles of bytes 0..31 / 32..63, elements
// 64..95 / 96..127 in their high nibbles) and 32 bytes of qh (2 bits each, shifts 0/2/4/6 for the
// same four runs). x = d * scale * (q - 32).
struct BlockQ6K {
    uint8_t ql[kSuperBlock / 2];
    uint8_t qh[kSuperBlock / 4];
    int8_t scales[kSuperBlock / 16];
    uint16_t d;
};
static_assert(sizeof(BlockQ6K) == 210);

template <class B>
B block_at(const uint8_t* src, int64_t b) {
    B blk;
    std::memcpy(&blk, src + b * int64_t(sizeof(B)), sizeof(B));
    return blk;
}

float h(uint16_t x) { return f16_to_f32(x); }

void deq_q8_0(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b, y += kBlock) {
        const auto x = block_at<BlockQ80>(src, b);
        const float d = h(x.d);
        for (int j = 0; j < kBlock; ++j) y[j] = float(x.qs[j]) * d;
    }
}

void deq_q4_0(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b, y += kBlock) {
        const auto x = block_at<BlockQ40>(src, b);
        const float d = h(x.d);
        for (int j = 0; j < kBlock / 2; ++j) {
            y[j] = float(int(x.qs[j] & 0x0f) - 8) * d;
            y[j + kBlock / 2] = float(int(x.qs[j] >> 4) - 8) * d;
        }
    }
}

void deq_q4_1(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b, y += kBlock) {
        const auto x = block_at<BlockQ41>(src, b);
        const float d = h(x.d), m = h(x.m);
        for (int j = 0; j < kBlock / 2; ++j) {
            y[j] = float(x.qs[j] & 0x0f) * d + m;
            y[j + kBlock / 2] = float(x.qs[j] >> 4) * d + m;
        }
    }
}

// The fifth bits of Q5_0/Q5_1: bit j of qh belongs to element j (0..31).
uint32_t high_bits(const uint8_t qh[4]) {
    return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}

void deq_q5_0(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b, y += kBlock) {
        const auto x = block_at<BlockQ50>(src, b);
        const float d = h(x.d);
        const uint32_t qh = high_bits(x.qh);
        for (int j = 0; j < kBlock / 2; ++j) {
            const int lo = int(x.qs[j] & 0x0f) | int((qh >> j) & 1u) << 4;
            const int hi = int(x.qs[j] >> 4) | int((qh >> (j + 16)) & 1u) << 4;
            y[j] = float(lo - 16) * d;
            y[j + kBlock / 2] = float(hi - 16) * d;
        }
    }
}

void deq_q5_1(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b, y += kBlock) {
        const auto x = block_at<BlockQ51>(src, b);
        const float d = h(x.d), m = h(x.m);
        const uint32_t qh = high_bits(x.qh);
        for (int j = 0; j < kBlock / 2; ++j) {
            const int lo = int(x.qs[j] & 0x0f) | int((qh >> j) & 1u) << 4;
            const int hi = int(x.qs[j] >> 4) | int((qh >> (j + 16)) & 1u) << 4;
            y[j] = float(lo) * d + m;
            y[j + kBlock / 2] = float(hi) * d + m;
        }
    }
}

void deq_q2_k(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b) {
        const auto x = block_at<BlockQ2K>(src, b);
        const float d = h(x.d), dmin = h(x.dmin);
        int s = 0;
        // Two halves of 128 elements, each using 32 bytes of qs.
        for (int half = 0; half < 2; ++half) {
            const uint8_t* q = x.qs + 32 * half;
            for (int shift = 0; shift < 8; shift += 2) {
                // Two sub-blocks of 16: bytes 0..15 and 16..31 of the group.
                for (int part = 0; part < 2; ++part, ++s) {
                    const float dl = d * float(x.scales[s] & 0x0f);
                    const float ml = dmin * float(x.scales[s] >> 4);
                    for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * part] >> shift) & 3) - ml;
                }
            }
        }
    }
}

// Unpacks Q3_K's 16 six-bit scales (see BlockQ3K).
void q3_scales(const uint8_t in[12], int out[16]) {
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? (in[j] & 0x0f) : (in[j - 8] >> 4);
        const int high = (in[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = (low | high << 4) - 32;
    }
}

void deq_q3_k(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b) {
        const auto x = block_at<BlockQ3K>(src, b);
        const float d = h(x.d);
        int sc[16];
        q3_scales(x.scales, sc);
        int s = 0;
        uint8_t mask = 1;  // hmask bit for the current 32-element run
        for (int half = 0; half < 2; ++half) {
            const uint8_t* q = x.qs + 32 * half;
            for (int shift = 0; shift < 8; shift += 2, mask = uint8_t(mask << 1)) {
                for (int part = 0; part < 2; ++part, ++s) {
                    const float dl = d * float(sc[s]);
                    for (int l = 0; l < 16; ++l) {
                        const int i = l + 16 * part;
                        const int v = ((q[i] >> shift) & 3) - ((x.hmask[i] & mask) ? 0 : 4);
                        *y++ = dl * float(v);
                    }
                }
            }
        }
    }
}

// Q4_K/Q5_K scale and min of sub-block j (0..7) from the 12 packed bytes: for j < 4 the low six
// bits of bytes j and j+4; for j >= 4 a nibble of byte j+4 plus the top two bits of bytes j-4
// (scale) and j (min).
void scale_min_k4(int j, const uint8_t q[12], int& sc, int& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

void deq_q4_k(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b) {
        const auto x = block_at<BlockQ4K>(src, b);
        const float d = h(x.d), dmin = h(x.dmin);
        for (int g = 0; g < 4; ++g) {  // 64 elements per group: two sub-blocks
            int sc0, m0, sc1, m1;
            scale_min_k4(2 * g, x.scales, sc0, m0);
            scale_min_k4(2 * g + 1, x.scales, sc1, m1);
            const float d0 = d * float(sc0), mm0 = dmin * float(m0);
            const float d1 = d * float(sc1), mm1 = dmin * float(m1);
            const uint8_t* q = x.qs + 32 * g;
            for (int l = 0; l < 32; ++l) *y++ = d0 * float(q[l] & 0x0f) - mm0;
            for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] >> 4) - mm1;
        }
    }
}

void deq_q5_k(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b) {
        const auto x = block_at<BlockQ5K>(src, b);
        const float d = h(x.d), dmin = h(x.dmin);
        for (int g = 0; g < 4; ++g) {
            int sc0, m0, sc1, m1;
            scale_min_k4(2 * g, x.scales, sc0, m0);
            scale_min_k4(2 * g + 1, x.scales, sc1, m1);
            const float d0 = d * float(sc0), mm0 = dmin * float(m0);
            const float d1 = d * float(sc1), mm1 = dmin * float(m1);
            const uint8_t* q = x.qs + 32 * g;
            const uint8_t lo_bit = uint8_t(1u << (2 * g)), hi_bit = uint8_t(1u << (2 * g + 1));
            for (int l = 0; l < 32; ++l) *y++ = d0 * float((q[l] & 0x0f) + ((x.qh[l] & lo_bit) ? 16 : 0)) - mm0;
            for (int l = 0; l < 32; ++l) *y++ = d1 * float((q[l] >> 4) + ((x.qh[l] & hi_bit) ? 16 : 0)) - mm1;
        }
    }
}

void deq_q6_k(const uint8_t* src, float* y, int64_t nb) {
    for (int64_t b = 0; b < nb; ++b) {
        const auto x = block_at<BlockQ6K>(src, b);
        const float d = h(x.d);
        for (int half = 0; half < 2; ++half, y += 128) {
            const uint8_t* ql = x.ql + 64 * half;
            const uint8_t* qh = x.qh + 32 * half;
            const int8_t* sc = x.scales + 8 * half;
            for (int l = 0; l < 32; ++l) {
                const int s = l / 16;
                const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * float(sc[s]) * float(q1);
                y[l + 32] = d * float(sc[s + 2]) * float(q2);
                y[l + 64] = d * float(sc[s + 4]) * float(q3);
                y[l + 96] = d * float(sc[s + 6]) * float(q4);
            }
        }
    }
}

}  // namespace

bool can_dequantize(DType t) {
    switch (t) {
        case DType::F32:
        case DType::F16:
        case DType::BF16:
        case DType::Q8_0:
        case DType::Q4_0:
        case DType::Q4_1:
        case DType::Q5_0:
        case DType::Q5_1:
        case DType::Q2_K:
        case DType::Q3_K:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K: return true;
        default: return false;
    }
}

Status dequantize(DType t, const void* src_v, float* dst, int64_t n) {
    if (!can_dequantize(t)) return err("tensor type ", dtype_name(t), " cannot be dequantized");
    const int64_t be = dtype_block_elems(t);
    if (n < 0 || n % be != 0)
        return err(n, " elements of ", dtype_name(t), " are not a whole number of ", be, "-element blocks");
    if (n == 0) return {};  // an empty tensor: nothing to read (its data pointer may be null)
    const auto* src = static_cast<const uint8_t*>(src_v);
    const int64_t nb = n / be;
    switch (t) {
        case DType::F32: std::memcpy(dst, src, size_t(n) * 4); break;
        case DType::F16:
            for (int64_t i = 0; i < n; ++i) {
                uint16_t v;
                std::memcpy(&v, src + 2 * i, 2);
                dst[i] = f16_to_f32(v);
            }
            break;
        case DType::BF16:
            for (int64_t i = 0; i < n; ++i) {
                uint16_t v;
                std::memcpy(&v, src + 2 * i, 2);
                dst[i] = bf16_to_f32(v);
            }
            break;
        case DType::Q8_0: deq_q8_0(src, dst, nb); break;
        case DType::Q4_0: deq_q4_0(src, dst, nb); break;
        case DType::Q4_1: deq_q4_1(src, dst, nb); break;
        case DType::Q5_0: deq_q5_0(src, dst, nb); break;
        case DType::Q5_1: deq_q5_1(src, dst, nb); break;
        case DType::Q2_K: deq_q2_k(src, dst, nb); break;
        case DType::Q3_K: deq_q3_k(src, dst, nb); break;
        case DType::Q4_K: deq_q4_k(src, dst, nb); break;
        case DType::Q5_K: deq_q5_k(src, dst, nb); break;
        case DType::Q6_K: deq_q6_k(src, dst, nb); break;
        default: break;
    }
    return {};
}

}  // namespace edge::model
