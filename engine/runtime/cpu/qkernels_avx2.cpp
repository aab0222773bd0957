// AVX2/FMA/F16C row kernels, compiled with target attributes and only called when the processor
// has the features (qkernels.cpp checks at run time).
#include "qkernels_impl.h"

#if defined(__x86_64__)
// The whole file (lambdas included) is compiled for AVX2/FMA/F16C.
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "half_lanes.h"

namespace edge::runtime::qkernels::detail {

namespace {

inline float hsum(__m256 s) {
    __m128 lo = _mm256_castps256_ps128(s), hi = _mm256_extractf128_ps(s, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
    return _mm_cvtss_f32(lo);
}

}  // namespace

// Both row kernels walk a row group by group (blocks_per_group 32-blocks each), so no division
// runs per block, and apply the zero point as an exact integer correction inside the block's
// int32 sums (lane 0), so the only float work per block is one convert and one FMA.
namespace {

inline int64_t blocks_per_group(const QuantInfo& q, int64_t blocks) {
    return q.grouping == QGrouping::PerChannel ? blocks : q.group_size / kQBlock;
}
// The rows are walked one after another, each a short stream (1-3 KB of codes): prefetch the
// same offset kRowsAhead rows further on into L2 (`lines` cache lines from p), as the AVX-512
// kernels do for their next pass; the hardware prefetcher alone left a core at about half its
// read bandwidth.
constexpr int64_t kRowsAhead = 4;
template <class T>
inline void prefetch_ahead(const T* p, int64_t row_stride_bytes, int lines) {
    const char* a = reinterpret_cast<const char*>(p) + kRowsAhead * row_stride_bytes;
    for (int i = 0; i < lines; ++i) _mm_prefetch(a + 64 * i, _MM_HINT_T1);
}

// Scales as floats (S: float or IEEE half, qkernels_impl.h row_scales): one, or 8 consecutive.
inline float scale1(float s) { return s; }
inline float scale1(uint16_t h) { return _cvtsh_ss(h); }
inline __m256 scale8(const float* s) { return _mm256_loadu_ps(s); }
inline __m256 scale8(const uint16_t* s) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
}

// v with z·Σxq subtracted from lane 0.
inline __m256i minus_lane0(__m256i v, int32_t c) {
    return _mm256_sub_epi32(v, _mm256_set_m128i(_mm_setzero_si128(), _mm_cvtsi32_si128(c)));
}

// The int32 block sums of 8 blocks (each the 8 lanes of a madd) as one vector, block order.
inline __m256i reduce8(__m256i p0, __m256i p1, __m256i p2, __m256i p3, __m256i p4, __m256i p5, __m256i p6, __m256i p7) {
    const __m256i h0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(p0, p1), _mm256_hadd_epi32(p2, p3));
    const __m256i h4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(p4, p5), _mm256_hadd_epi32(p6, p7));
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20),
                            _mm256_permute2x128_si256(h0123, h4567, 0x31));
}

}  // namespace

// Codes are int8: |w| (unsigned) times x carrying w's sign, so maddubs sees unsigned × signed.
template <class S>
static float row_dot_q8_avx2_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const int8_t* codes = reinterpret_cast<const int8_t*>(base + r * q.row_bytes);
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    const int64_t bpg = blocks_per_group(q, x.blocks);
    int64_t first = 0;  // groups of 32: 8 blocks at a time, as in row_dot_q4_avx2
    if (bpg == 1 && x.blocks >= 8) {
        auto dot = [&](int64_t bb) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + bb * kQBlock));
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + bb * kQBlock));
            return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(xv, w)), ones);
        };
        for (; first + 8 <= x.blocks; first += 8) {
            const int64_t b = first;
            prefetch_ahead(reinterpret_cast<const uint8_t*>(codes + b * kQBlock), q.row_bytes, 4);
            if ((b & 15) == 0) prefetch_ahead(sw + b, q.groups_per_row * int64_t(sizeof(S)), 1);
            __m256i sums =
                reduce8(dot(b), dot(b + 1), dot(b + 2), dot(b + 3), dot(b + 4), dot(b + 5), dot(b + 6), dot(b + 7));
            if (zw) {
                const __m256i z = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zw + b)));
                sums = _mm256_sub_epi32(
                    sums, _mm256_mullo_epi32(z, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.sum + b))));
            }
            const __m256 sc = _mm256_mul_ps(scale8(sw + b), _mm256_loadu_ps(x.scale + b));
            acc0 = _mm256_fmadd_ps(sc, _mm256_cvtepi32_ps(sums), acc0);
        }
    }
    auto block = [&](int64_t bb, float sg, int32_t z, __m256& acc) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + bb * kQBlock));
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + bb * kQBlock));
        const __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(xv, w));
        __m256i p32 = _mm256_madd_epi16(p16, ones);
        if (z) p32 = minus_lane0(p32, z * x.sum[bb]);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(sg * x.scale[bb]), _mm256_cvtepi32_ps(p32), acc);
    };
    for (int64_t g = first / bpg, b0 = first; b0 < x.blocks; ++g, b0 += bpg) {
        const float sg = scale1(sw[g]);
        const int32_t z = zw ? zw[g] : 0;
        const int64_t b1 = std::min(x.blocks, b0 + bpg);
        int64_t b = b0;
        for (; b + 2 <= b1; b += 2) {
            block(b, sg, z, acc0);
            block(b + 1, sg, z, acc1);
        }
        if (b < b1) block(b, sg, z, acc0);
    }
    return hsum(_mm256_add_ps(acc0, acc1));
}

// Nibbles 0..15 are already unsigned: maddubs(u, xq), minus z·Σxq per block (z = 8 symmetric).
// Groups of 32 take 8 blocks at a time: the 8 blocks' int32 sums are reduced into one vector
// (hadd tree), corrected by z·Σxq with one multiply, converted once and scaled by the 8 products
// s_w·s_x with one FMA.
template <class S>
static float row_dot_q4_avx2_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const uint8_t* codes = base + r * q.row_bytes;
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    const int64_t bpg = blocks_per_group(q, x.blocks);
    int64_t first = 0;  // first block left for the general loop
    if (bpg == 1 && x.blocks >= 8) {
        auto dot = [&](int64_t bb) {
            const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + bb * (kQBlock / 2)));
            const __m256i w = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), low4);
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + bb * kQBlock));
            return _mm256_madd_epi16(_mm256_maddubs_epi16(w, xv), ones);
        };
        const __m256i z8 = _mm256_set1_epi32(8);
        for (; first + 8 <= x.blocks; first += 8) {
            const int64_t b = first;
            prefetch_ahead(codes + b * (kQBlock / 2), q.row_bytes, 2);
            if ((b & 15) == 0) prefetch_ahead(sw + b, q.groups_per_row * int64_t(sizeof(S)), 1);
            __m256i sums =
                reduce8(dot(b), dot(b + 1), dot(b + 2), dot(b + 3), dot(b + 4), dot(b + 5), dot(b + 6), dot(b + 7));
            const __m256i z = zw ? _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zw + b))) : z8;
            sums = _mm256_sub_epi32(
                sums, _mm256_mullo_epi32(z, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.sum + b))));
            const __m256 sc = _mm256_mul_ps(scale8(sw + b), _mm256_loadu_ps(x.scale + b));
            acc0 = _mm256_fmadd_ps(sc, _mm256_cvtepi32_ps(sums), acc0);
        }
    }
    auto block = [&](int64_t bb, float sg, int32_t z, __m256& acc) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + bb * (kQBlock / 2)));
        const __m256i w = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), low4);
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + bb * kQBlock));
        const __m256i p32 = minus_lane0(_mm256_madd_epi16(_mm256_maddubs_epi16(w, xv), ones), z * x.sum[bb]);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(sg * x.scale[bb]), _mm256_cvtepi32_ps(p32), acc);
    };
    for (int64_t g = first / bpg, b0 = first; b0 < x.blocks; ++g, b0 += bpg) {
        const float sg = scale1(sw[g]);
        const int32_t z = zw ? zw[g] : 8;
        const int64_t b1 = std::min(x.blocks, b0 + bpg);
        int64_t b = b0;
        for (; b + 2 <= b1; b += 2) {
            block(b, sg, z, acc0);
            block(b + 1, sg, z, acc1);
        }
        if (b < b1) block(b, sg, z, acc0);
    }
    return hsum(_mm256_add_ps(acc0, acc1));
}

// rows_math (qkernels_avx512.cpp) on AVX2, for row_layout_ok layouts: each block's integer sum
// made whole (isum_b = Σ code·xq − offset·Σxq, offset 8 for symmetric INT4, none for INT8's signed
// codes: the integer rows_math's +128 offset gives), then acc_p = fma(float(isum_b), s_w·s_x,
// acc_p) for b ≡ p (mod P), P = 4 (INT4) or 2 (INT8), row = (acc_0 + acc_1) + (acc_2 + acc_3) or
// acc_0 + acc_1, minus zero_correction_avx2 for asymmetric weights. Eight blocks at a time: their
// sums as one vector (reduce8), one convert and one multiply of the scale products, then 128-bit
// FMAs into the P partial sums in block order. tile_avx2 (qkernels_avx2_tile.cpp) computes the
// same, so a row's result does not depend on the batch; the AVX-512 kernels too, so symmetric
// weights give the same bits on both families.
namespace {

// The scale products' s_w of blocks b..b+7 (b a multiple of 8): bpg blocks per group (0: per
// channel, one scale). bpg is 1, 2, 4 or a multiple of 8 (row_layout_ok).
template <class S>
inline __m256 scales_of8(const S* sw, int64_t b, int64_t bpg) {
    if (bpg == 1) return scale8(sw + b);
    if (bpg == 0) return _mm256_set1_ps(scale1(sw[0]));
    if (bpg >= 8) return _mm256_set1_ps(scale1(sw[b / bpg]));
    const int64_t g = b / bpg;
    alignas(32) float s[4];
    for (int k = 0; k < 8 / int(bpg); ++k) s[k] = scale1(sw[g + k]);
    const __m256 v = _mm256_castps128_ps256(_mm_load_ps(s));
    return bpg == 2 ? _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3))
                    : _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}
template <class S>
inline float scale_of(const S* sw, int64_t b, int64_t bpg) {
    return scale1(sw[bpg == 0 ? 0 : b / bpg]);
}

// Block b's int32 lanes (summing to its Σ code·xq).
inline __m256i block_lanes4(const uint8_t* codes, const int8_t* xq, int64_t b) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + b * (kQBlock / 2)));
    const __m256i w = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0f));
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * kQBlock));
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, xv), _mm256_set1_epi16(1));
}
inline __m256i block_lanes8(const uint8_t* codes, const int8_t* xq, int64_t b) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + b * kQBlock));
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * kQBlock));
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(xv, w)), _mm256_set1_epi16(1));
}
inline int32_t hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

template <class S>
float zero_correction_t(const QuantInfo& q, const S* sw, const int8_t* zw, const float* cg) {
    const int64_t G = q.groups_per_row;
    __m256 acc = _mm256_setzero_ps();
    int64_t g = 0;
    for (; g + 8 <= G; g += 8) {
        const __m256 z =
            _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zw + g))));
        acc = _mm256_fmadd_ps(_mm256_mul_ps(scale8(sw + g), z), _mm256_loadu_ps(cg + g), acc);
    }
    float s = hsum(acc);
    for (; g < G; ++g) s = std::fma(scale1(sw[g]) * float(zw[g]), cg[g], s);
    return s;
}

// Blocks b..b+7's whole integer sums (made exact: minus offset·Σxq) folded into the P partial
// sums in block order: one convert, one multiply of the scale products, P/4 FMAs per 4 blocks.
template <int Bits, class S>
inline __m128 fold8(__m256i s, const S* sw, int64_t b, int64_t bpg, const ActsView& x, int32_t offset, __m128 acc) {
    if (offset)
        s = _mm256_sub_epi32(s, _mm256_slli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.sum + b)), 3));
    const __m256 f = _mm256_cvtepi32_ps(s);
    const __m256 pr = _mm256_mul_ps(scales_of8(sw, b, bpg), _mm256_loadu_ps(x.scale + b));
    const __m128 flo = _mm256_castps256_ps128(f), fhi = _mm256_extractf128_ps(f, 1);
    const __m128 plo = _mm256_castps256_ps128(pr), phi = _mm256_extractf128_ps(pr, 1);
    if constexpr (Bits == 4) {
        acc = _mm_fmadd_ps(flo, plo, acc);
        return _mm_fmadd_ps(fhi, phi, acc);
    } else {  // lanes 0 and 1 carry acc_0 and acc_1; blocks b..b+7 two at a time
        acc = _mm_fmadd_ps(flo, plo, acc);
        acc = _mm_fmadd_ps(_mm_movehl_ps(flo, flo), _mm_movehl_ps(plo, plo), acc);
        acc = _mm_fmadd_ps(fhi, phi, acc);
        return _mm_fmadd_ps(_mm_movehl_ps(fhi, fhi), _mm_movehl_ps(phi, phi), acc);
    }
}

// The blocks from b on one at a time, the partial sums added in rows_math's order, and the zero
// points of asymmetric weights.
template <int Bits, class S>
float finish_row(const QuantInfo& q, const uint8_t* base, int64_t r, const S* sw, int64_t bpg, const ActsView& x,
                 int64_t b, int32_t offset, __m128 acc) {
    constexpr int kP = Bits == 4 ? 4 : 2;
    const uint8_t* codes = base + r * q.row_bytes;
    alignas(16) float a[4];
    _mm_store_ps(a, acc);
    for (; b < x.blocks; ++b) {
        const int32_t isum =
            hsum_epi32(Bits == 4 ? block_lanes4(codes, x.q, b) : block_lanes8(codes, x.q, b)) - offset * x.sum[b];
        a[b % kP] = std::fma(float(isum), scale_of(sw, b, bpg) * x.scale[b], a[b % kP]);
    }
    const float row = kP == 4 ? (a[0] + a[1]) + (a[2] + a[3]) : a[0] + a[1];
    if (q.symmetric) return row;
    return row - zero_correction_t(q, sw, reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row,
                                   x.cg);
}

inline int64_t bpg_of(const QuantInfo& q) { return q.grouping == QGrouping::PerChannel ? 0 : q.group_size / kQBlock; }

template <int Bits, class S>
float row_math_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const uint8_t* codes = base + r * q.row_bytes;
    const S* sw = row_scales<S>(q, base, r);
    const int64_t bpg = bpg_of(q);
    const int32_t offset = Bits == 4 && q.symmetric ? 8 : 0;
    const int8_t* xq = x.q;
    __m128 acc = _mm_setzero_ps();  // lane p: acc_p
    int64_t b = 0;
    for (; b + 8 <= x.blocks; b += 8) {
        prefetch_ahead(codes + b * (kQBlock * Bits / 8), q.row_bytes, Bits / 2);
        if (bpg == 1 && (b & 15) == 0) prefetch_ahead(sw + b, q.groups_per_row * int64_t(sizeof(S)), 1);
        __m256i s;
        if constexpr (Bits == 4)
            s = reduce8(block_lanes4(codes, xq, b), block_lanes4(codes, xq, b + 1), block_lanes4(codes, xq, b + 2),
                        block_lanes4(codes, xq, b + 3), block_lanes4(codes, xq, b + 4), block_lanes4(codes, xq, b + 5),
                        block_lanes4(codes, xq, b + 6), block_lanes4(codes, xq, b + 7));
        else
            s = reduce8(block_lanes8(codes, xq, b), block_lanes8(codes, xq, b + 1), block_lanes8(codes, xq, b + 2),
                        block_lanes8(codes, xq, b + 3), block_lanes8(codes, xq, b + 4), block_lanes8(codes, xq, b + 5),
                        block_lanes8(codes, xq, b + 6), block_lanes8(codes, xq, b + 7));
        acc = fold8<Bits>(s, sw, b, bpg, x, offset, acc);
    }
    return finish_row<Bits>(q, base, r, sw, bpg, x, b, offset, acc);
}

// INT4 against paired activations (ActsView::qp): the integer sums of 8 blocks from 4 loads of
// codes (two blocks each: their low nibbles, elements 0..15, are one vector, the high nibbles
// the other, each meeting 32 paired activation bytes), the two vpmaddubsw of a pair added in
// int16 (|each| <= 2·15·128, four products <= 7680), a vphaddw of two pairs (<= 15360), one
// vpmaddwd, a vphaddd and one permute into block order: 30 vector operations besides the loads
// where the one-block form takes 49 (it splits each block's codes and inserts the halves). The
// sums are exact, so the result is row_math_avx2's bits.
inline __m256i sums8_q4_paired(const uint8_t* codes, const int8_t* qp, int64_t b) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    auto pair = [&](int64_t bb) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + bb * (kQBlock / 2)));
        const int8_t* xp = qp + bb * kQBlock;
        const __m256i lo =
            _mm256_maddubs_epi16(_mm256_and_si256(raw, low4), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp)));
        const __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(raw, 4), low4),
                                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + 32)));
        return _mm256_add_epi16(lo, hi);  // [block bb: 8 int16 | block bb+1: 8 int16]
    };
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i m01 = _mm256_madd_epi16(_mm256_hadd_epi16(pair(b), pair(b + 2)), ones);      // [0 0 2 2 | 1 1 3 3]
    const __m256i m23 = _mm256_madd_epi16(_mm256_hadd_epi16(pair(b + 4), pair(b + 6)), ones);  // [4 4 6 6 | 5 5 7 7]
    return _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(m01, m23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// R consecutive rows against one token with paired activations: the rows' streams interleaved,
// the activations' loads shared while in L1. Prefetch as the AVX-512 one-token kernel does
// (qkernels.h, RowPrefetch): RowsL2, each row's lines kRowsAhead rows on into L2; SequentialL1,
// the pass `lead` passes on in address order into L1 (its R rows are contiguous: 2R lines per 8
// blocks) and one lead further into L2, the rows' scale lines with them.
template <int R, RowPrefetch Pf, class S>
void rows_pass_q4_paired(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x, float* out,
                         int64_t lead) {
    const int64_t bpg = bpg_of(q);
    const int32_t offset = q.symmetric ? 8 : 0;
    const uint8_t* codes[R];
    const S* sw[R];
    __m128 acc[R];
    for (int k = 0; k < R; ++k) {
        codes[k] = base + (r + k) * q.row_bytes;
        sw[k] = row_scales<S>(q, base, r + k);
        acc[k] = _mm_setzero_ps();
    }
    const int64_t pf_codes = lead * R * q.row_bytes, pf_scales = lead * R * q.groups_per_row;
    constexpr int64_t kScaleEvery = 64 / int64_t(sizeof(S));  // blocks per scale line (groups of 32)
    int64_t b = 0;
    for (; b + 8 <= x.blocks; b += 8) {
        if constexpr (Pf == RowPrefetch::SequentialL1) {
            const char* next = reinterpret_cast<const char*>(codes[0] + pf_codes) + b * R * (kQBlock / 2);
            for (int j = 0; j < 2 * R; ++j) {
                _mm_prefetch(next + 64 * j, _MM_HINT_T0);
                _mm_prefetch(next + 64 * j + pf_codes, _MM_HINT_T2);
            }
            if (bpg == 1 && b % kScaleEvery == 0)
                for (int k = 0; k < R; ++k)
                    _mm_prefetch(reinterpret_cast<const char*>(sw[k] + b + pf_scales), _MM_HINT_T0);
        }
        for (int k = 0; k < R; ++k) {
            if constexpr (Pf != RowPrefetch::SequentialL1) {
                prefetch_ahead(codes[k] + b * (kQBlock / 2), q.row_bytes, 2);
                if (bpg == 1 && (b & 15) == 0) prefetch_ahead(sw[k] + b, q.groups_per_row * int64_t(sizeof(S)), 1);
            }
            acc[k] = fold8<4>(sums8_q4_paired(codes[k], x.qp, b), sw[k], b, bpg, x, offset, acc[k]);
        }
    }
    for (int k = 0; k < R; ++k) out[k] = finish_row<4>(q, base, r + k, sw[k], bpg, x, b, offset, acc[k]);
}

}  // namespace

float zero_correction_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const float* cg) {
    const int8_t* zw = reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    return with_scale_type(q,
                           [&](auto s) { return zero_correction_t(q, row_scales<decltype(s)>(q, base, r), zw, cg); });
}

float row_dot_q8_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) {
        using S = decltype(s);
        return row_layout_ok(q) && (q.symmetric || x.cg) ? row_math_avx2<8, S>(q, base, r, x)
                                                         : row_dot_q8_avx2_t<S>(q, base, r, x);
    });
}
float row_dot_q4_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) {
        using S = decltype(s);
        return row_layout_ok(q) && (q.symmetric || x.cg) ? row_math_avx2<4, S>(q, base, r, x)
                                                         : row_dot_q4_avx2_t<S>(q, base, r, x);
    });
}

// Same arithmetic as quantize_block_portable (IEEE max, divide, reciprocal, multiply, round half
// to even by the default rounding mode), so both give identical codes, scales and sums; a last
// partial block goes to the portable one.
void quantize_acts_avx2(const float* x, int64_t n, int8_t* q, float* scale, int32_t* sum) {
    const __m256 signbit = _mm256_set1_ps(-0.0f);
    const __m256i lim = _mm256_set1_epi32(127), nlim = _mm256_set1_epi32(-127);
    int64_t b = 0;
    for (; (b + 1) * kQBlock <= n; ++b) {
        const float* xb = x + b * kQBlock;
        __m256 v[4];
        for (int k = 0; k < 4; ++k) v[k] = _mm256_loadu_ps(xb + 8 * k);
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(signbit, v[0]), _mm256_andnot_ps(signbit, v[1])),
                                 _mm256_max_ps(_mm256_andnot_ps(signbit, v[2]), _mm256_andnot_ps(signbit, v[3])));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        const float d = _mm_cvtss_f32(h) / 127.0f;
        const float inv = d > 0.0f ? 1.0f / d : 0.0f;
        const __m256 iv = _mm256_set1_ps(inv);
        __m256i c[4];
        for (int k = 0; k < 4; ++k)
            c[k] = _mm256_max_epi32(nlim, _mm256_min_epi32(lim, _mm256_cvtps_epi32(_mm256_mul_ps(v[k], iv))));
        // int32 -> int8 (no saturation: the codes are within ±127), the packs' lane order undone.
        const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(c[0], c[1]), _mm256_packs_epi32(c[2], c[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * kQBlock),
                            _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
        scale[b] = d;
        sum[b] = hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(c[0], c[1]), _mm256_add_epi32(c[2], c[3])));
    }
    if (b * kQBlock < n) quantize_block_portable(x + b * kQBlock, n - b * kQBlock, q + b * kQBlock, scale + b, sum + b);
}

void pair_acts_avx2(const int8_t* q, int64_t blocks, int8_t* qp) {
    for (int64_t b = 0; b < blocks / 8 * 8; b += 2) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + b * kQBlock));
        const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + (b + 1) * kQBlock));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(qp + b * kQBlock), _mm256_permute2x128_si256(a, c, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(qp + b * kQBlock + 32), _mm256_permute2x128_si256(a, c, 0x31));
    }
}

void rows_q4_avx2(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const ActsView& x, float* out,
                  RowPrefetch pf, int lead) {
    with_scale_type(q, [&](auto s) {
        using S = decltype(s);
        int64_t r = r0;
        if (pf == RowPrefetch::SequentialL1) {
            for (; r + 2 <= r1; r += 2)
                rows_pass_q4_paired<2, RowPrefetch::SequentialL1, S>(q, base, r, x, out + r, lead);
        } else {
            for (; r + 2 <= r1; r += 2) rows_pass_q4_paired<2, RowPrefetch::RowsL2, S>(q, base, r, x, out + r, lead);
        }
        if (r < r1) rows_pass_q4_paired<1, RowPrefetch::RowsL2, S>(q, base, r, x, out + r, lead);
    });
}

// K-quant super-blocks (qkernels_impl.h): eight 32-blocks per super-block, each an integer dot
// (maddubs, then madd against the sub-block's scale as int16, so the sum arrives scaled), the
// eight int32 sums reduced into one vector, converted once and scaled by d·s_x with one FMA. The
// Q4_K/Q5_K mins are one more FMA per super-block: dmin · m_j · s_x[b] · Σxq[b] over its 8 blocks.
namespace {

inline float half_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

inline __m256i xq_block(const ActsView& x, int64_t b) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + b * kQBlock));
}

// T tokens against one row: the codes (and Q5_K's high bits) of a super-block are unpacked once
// for all of them; each token's integer sums are exact whatever the reduction's order, and its
// float work is the one-token kernel's, so each result is the bits T = 1 gives.
template <bool Five, int T>
void row_q45_k_avx2(const uint8_t* row, const ActsView* x, float* out, int64_t out_stride) {
    constexpr int64_t kBytes = Five ? 176 : 144;
    const __m256i low4 = _mm256_set1_epi8(0x0f), one8 = _mm256_set1_epi8(1), ones = _mm256_set1_epi16(1);
    __m256 acc[T], accm[T];
    for (int t = 0; t < T; ++t) acc[t] = accm[t] = _mm256_setzero_ps();
    const int64_t blocks = x[0].blocks;
    for (int64_t sb = 0; sb < blocks / 8; ++sb) {
        const uint8_t* blk = row + sb * kBytes;
        for (int l = 0; l < int(kBytes + 63) / 64; ++l)
            _mm_prefetch(reinterpret_cast<const char*>(blk + kKQuantPrefetchLead + 64 * l), _MM_HINT_T0);
        const uint8_t* qs = blk + (Five ? 48 : 16);
        const __m256i hb =
            Five ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16)) : _mm256_setzero_si256();
        __m256i h[T][2];  // per token: hadd pairs of the 8 blocks' lanes, blocks 0-3 and 4-7
        for (int g = 0; g < 4; ++g) {
            const __m256i qb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * g));
            __m256i lo = _mm256_and_si256(qb, low4), hi = _mm256_and_si256(_mm256_srli_epi16(qb, 4), low4);
            if constexpr (Five) {
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * g), one8), 4));
                hi =
                    _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * g + 1), one8), 4));
            }
            const int64_t b = sb * 8 + 2 * g;
            for (int t = 0; t < T; ++t) {
                const __m256i pair =
                    _mm256_hadd_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, xq_block(x[t], b)), ones),
                                      _mm256_madd_epi16(_mm256_maddubs_epi16(hi, xq_block(x[t], b + 1)), ones));
                h[t][g / 2] = g % 2 == 0 ? pair : _mm256_hadd_epi32(h[t][g / 2], pair);
            }
        }
        uint64_t sc, mn;
        kquant_scales_mins(blk + 4, sc, mn);
        const __m256 sc8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(int64_t(sc))));
        const __m256 m8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(int64_t(mn))));
        const __m256 d = _mm256_set1_ps(half_at(blk)), dmin = _mm256_set1_ps(half_at(blk + 2));
        for (int t = 0; t < T; ++t) {
            const __m256 xs = _mm256_loadu_ps(x[t].scale + sb * 8);
            const __m256 xsum =
                _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t].sum + sb * 8)));
            const __m256 sums = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_permute2x128_si256(h[t][0], h[t][1], 0x20),
                                                                    _mm256_permute2x128_si256(h[t][0], h[t][1], 0x31)));
            acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_mul_ps(sc8, xs)), sums, acc[t]);
            accm[t] = _mm256_fmadd_ps(dmin, _mm256_mul_ps(m8, _mm256_mul_ps(xs, xsum)), accm[t]);
        }
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = hsum(_mm256_sub_ps(acc[t], accm[t]));
}

// A byte shuffle taking int16 scale 2r into the low lane's eight words and 2r+1 into the high's.
inline __m256i scale_pair(int r) {
    const char a = char(4 * r), b = char(4 * r + 2);
    return _mm256_setr_epi8(a, char(a + 1), a, char(a + 1), a, char(a + 1), a, char(a + 1), a, char(a + 1), a,
                            char(a + 1), a, char(a + 1), a, char(a + 1), b, char(b + 1), b, char(b + 1), b, char(b + 1),
                            b, char(b + 1), b, char(b + 1), b, char(b + 1), b, char(b + 1), b, char(b + 1));
}

// Q6_K: codes 0..63 (q + 32): maddubs(q, xq) − maddubs(32, xq) is Σ (q−32)·xq per pair of
// elements, exact in int16; the madd against a vector holding the two 16-sub-blocks' scales
// (lanes 0..7 / 8..15, picked by one in-lane byte shuffle from a half's eight scales) gives the
// block's scaled int32 sums.
template <int T>
void row_q6_k_avx2(const uint8_t* row, const ActsView* x, float* out, int64_t out_stride) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), three8 = _mm256_set1_epi8(3), k32 = _mm256_set1_epi8(32);
    const __m256i picks[4] = {scale_pair(0), scale_pair(1), scale_pair(2), scale_pair(3)};
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    const int64_t blocks = x[0].blocks;
    for (int64_t sb = 0; sb < blocks / 8; ++sb) {
        const uint8_t* blk = row + sb * 210;
        for (int l = 0; l < 4; ++l) {
            _mm_prefetch(reinterpret_cast<const char*>(blk + kKQuantPrefetchLead + 64 * l), _MM_HINT_T0);
        }
        __m256i h[T][2];  // per token: hadd pairs of the 8 blocks' lanes, blocks 0-3 and 4-7
        for (int half = 0; half < 2; ++half) {
            const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * half));
            const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * half + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 128 + 32 * half));
            const __m256i s16 = _mm256_broadcastsi128_si256(
                _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 192 + 8 * half))));
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, three8), 4)),
                _mm256_or_si256(_mm256_and_si256(ql1, low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), three8), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), three8), 4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), three8), 4))};
            const __m256i sp[4] = {_mm256_shuffle_epi8(s16, picks[0]), _mm256_shuffle_epi8(s16, picks[1]),
                                   _mm256_shuffle_epi8(s16, picks[2]), _mm256_shuffle_epi8(s16, picks[3])};
            for (int t = 0; t < T; ++t) {
                __m256i p[4];
                for (int run = 0; run < 4; ++run) {
                    const __m256i xv = xq_block(x[t], sb * 8 + 4 * half + run);
                    const __m256i p16 =
                        _mm256_sub_epi16(_mm256_maddubs_epi16(q[run], xv), _mm256_maddubs_epi16(k32, xv));
                    p[run] = _mm256_madd_epi16(p16, sp[run]);
                }
                h[t][half] = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
            }
        }
        const __m256 d = _mm256_set1_ps(half_at(blk + 208));
        for (int t = 0; t < T; ++t) {
            const __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(h[t][0], h[t][1], 0x20),
                                                  _mm256_permute2x128_si256(h[t][0], h[t][1], 0x31));
            const __m256 xs = _mm256_loadu_ps(x[t].scale + sb * 8);
            acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, xs), _mm256_cvtepi32_ps(sums), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) out[t * out_stride] = hsum(acc[t]);
}

template <int T>
void kquant_avx2_tokens(DType t, const uint8_t* row, const ActsView* x, float* out, int64_t out_stride) {
    if (t == DType::Q6_K) return row_q6_k_avx2<T>(row, x, out, out_stride);
    if (t == DType::Q5_K) return row_q45_k_avx2<true, T>(row, x, out, out_stride);
    row_q45_k_avx2<false, T>(row, x, out, out_stride);
}

}  // namespace

float row_dot_kquant_avx2(DType t, const uint8_t* row, const ActsView& x) {
    float out;
    kquant_avx2_tokens<1>(t, row, &x, &out, 1);
    return out;
}

void tokens_kquant_avx2(DType t, const uint8_t* row, const ActsView* x, int n, float* out, int64_t out_stride) {
    int i = 0;
    for (; i + kKQuantTileTokens <= n; i += kKQuantTileTokens)
        kquant_avx2_tokens<kKQuantTileTokens>(t, row, x + i, out + i * out_stride, out_stride);
    for (; i < n; ++i) kquant_avx2_tokens<1>(t, row, x + i, out + i * out_stride, out_stride);
}

// FP16 / BF16 rows: two 8-lane FMA chains over 16 weights per step (half_lanes.h's widen8), the
// lanes reduced by hsum, the last n % 8 weights by the portable dot.
template <Half H>
float dot_half8(const uint16_t* w, const float* x, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(widen8<H>(w + i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(widen8<H>(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    }
    for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(widen8<H>(w + i), _mm256_loadu_ps(x + i), a0);
    float s = hsum(_mm256_add_ps(a0, a1));
    if (i < n) s += dot_half_portable(H, w + i, x + i, n - i);
    return s;
}

float dot_half_avx2(Half h, const uint16_t* w, const float* x, int64_t n) {
    return h == Half::F16 ? dot_half8<Half::F16>(w, x, n) : dot_half8<Half::BF16>(w, x, n);
}

}  // namespace edge::runtime::qkernels::detail

#endif
