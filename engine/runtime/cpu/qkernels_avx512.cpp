// AVX-512 (F/BW/VL/DQ) + VNNI kernels for row-mode QI4 / QI8 weights, compiled with target
// attributes and only called when the processor has the features (qkernels.cpp checks at run
// time). See qkernels_impl.h (VnniActs) for the activation layout they expect.
//
// One token (decode) against rows in memory order; the tile kernel for several tokens is
// qkernels_avx512_tile.cpp, and both follow the per-row arithmetic written out at rows_math below,
// so a row's result is the same bits whatever the batch.
//
// Instruction budget per 128 INT4 weights and pair of rows (4 blocks of 32, one 64-byte load of
// codes per row): and + GFNI affine (or shift + 2 ands) per row for the nibbles, 2 vpdpbusd per
// row, then for the pair: 2 unpacks, 2 adds and a shuffle that finish each block's integer sum
// (each int32 lane of a vpdpbusd accumulator belongs to one block: 4 lanes per block for INT4, 8
// for INT8), 1 convert, 1 two-source permute of the rows' scale products s_w·s_x, 1 FMA; the scale
// products themselves cost one load, convert and multiply per row and window of 16 blocks. Until
// 2026-12-06 the lanes were converted and scaled one by one (a convert, a permute and an FMA per
// row), 22 operations per pair instead of 15: decode of a 2048 × 8192 INT4 matrix on one thread of
// the AMD EPYC went from 41 to 58-63 G multiply-adds/s. Four rows (eight with RowsL2) are processed
// per pass so the activation vectors are loaded once for them.
// The codes' fixed offset (INT4 symmetric: 8; INT8: the +128 that makes them unsigned) is removed
// inside the integer sums by starting each lane's accumulator at −offset·(its activation sum,
// made once per matmul: VnniActs::lane_off), so
// symmetric weights need no correction at all; asymmetric zero points z_g are one float
// correction per row: Σ_g s_w[g]·z_g·Σ_{b∈g} s_x[b]·Σxq[b]. Each pass also prefetches a later
// pass's rows, in one of two ways (RowPrefetch, picked per processor in qkernels.cpp).
#include "qkernels_impl.h"

#if defined(__x86_64__)
// GFNI is enabled for the file so the INT4 kernels' Gfni instantiation can use it; that one only
// runs when the processor has GFNI (qkernels.cpp: KernelLevel::Avx512VnniGfni), and GCC emits GFNI instructions only for its
// intrinsics (checked: no gf2p8 instruction in the other instantiations' code).
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma,f16c,gfni")
// GCC 12's AVX-512 reduce/undefined intrinsics trip its own uninitialized-value warnings.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "half_lanes.h"

namespace edge::runtime::qkernels::detail {

namespace {

// Block-to-lane maps for one 64-byte chunk: INT4 chunks hold 4 blocks (4 lanes each), INT8 2
// (8 lanes each).
template <int Bits>
struct Chunk {
    static constexpr int kBlocks = Bits == 4 ? 4 : 2;
    static constexpr int kLanesPerBlock = 16 / kBlocks;
};

template <int Bits>
inline __m512i lane_block_index() {
    alignas(64) int32_t idx[16];
    for (int i = 0; i < 16; ++i) idx[i] = i / Chunk<Bits>::kLanesPerBlock;
    return _mm512_load_si512(idx);
}

inline __mmask16 first_n16(int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << unsigned(n)) - 1u);
}
inline __mmask64 first_n64(int64_t n) {
    return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : ((__mmask64(1) << unsigned(n)) - 1);
}

// The unsigned codes of one chunk of one row, as the 1 (INT8) or 2 (INT4: low nibbles = elements
// 0..15 of each block, high = 16..31) byte vectors that meet the activation chunk. With GFNI the
// high nibbles take one affine transform (bits 4..7 -> 0..3, the rest cleared) instead of a shift
// and a mask: one instruction less per 128 weights and row (in-L2 INT4 matvec +7%).
template <int Bits, bool Gfni>
struct Codes;

template <bool Gfni>
struct Codes<4, Gfni> {
    __m512i lo, hi;
    static inline Codes load(const uint8_t* p, __mmask64 m, __m512i low4) {
        const __m512i raw = _mm512_maskz_loadu_epi8(m, p);
        if constexpr (Gfni)
            return {_mm512_and_si512(raw, low4),
                    _mm512_gf2p8affine_epi64_epi8(raw, _mm512_set1_epi64(0x1020408000000000LL), 0)};
        else
            return {_mm512_and_si512(raw, low4), _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4)};
    }
    inline __m512i dot(__m512i init, __m512i xlo, __m512i xhi) const {
        return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(init, lo, xlo), hi, xhi);
    }
};

template <bool Gfni>
struct Codes<8, Gfni> {
    __m512i u;
    static inline Codes load(const uint8_t* p, __mmask64 m, __m512i sign) {
        const __m512i raw = _mm512_maskz_loadu_epi8(m, p);
        // c + 128 as unsigned; a masked-off byte (0 -> 128) meets a zero activation.
        return {_mm512_xor_si512(raw, sign)};
    }
    inline __m512i dot(__m512i init, __m512i x, __m512i) const { return _mm512_dpbusd_epi32(init, u, x); }
};

// Up to 16 group scales as floats (S: float or IEEE half, qkernels_impl.h row_scales).
inline __m512 load_scales(__mmask16 m, const float* s) { return _mm512_maskz_loadu_ps(m, s); }
inline __m512 load_scales(__mmask16 m, const uint16_t* s) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, s)); }

// Σ_g s_w[g]·z_g·cg[g] over one row's groups (asymmetric weights).
template <class S>
float zero_correction(const QuantInfo& q, const S* sw, const int8_t* zw, const float* cg) {
    const int64_t G = q.groups_per_row;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t g = 0; g < G; g += 16) {
        const __mmask16 m = first_n16(G - g);
        const __m512 z = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, zw + g)));
        const __m512 s = load_scales(m, sw + g);
        acc = _mm512_fmadd_ps(_mm512_mul_ps(s, z), _mm512_maskz_loadu_ps(m, cg + g), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

// How the blocks of a window of 16 map to the row's groups (vnni512_layout_ok: the blocks per
// group, bpg, divide 16 or are a multiple of it; 0 per channel): in_group when the window lies
// inside one group, else block -> its group among the window's as a shift (bpg is a power of two;
// 16 integer divisions per pass cost ~10% in L2); all 0 when the window lies inside one group.
struct WindowGroups {
    int64_t bpg;
    bool in_group;
    __m512i grp_of_blk;
};
inline WindowGroups window_groups(const QuantInfo& q) {
    const int64_t bpg = q.grouping == QGrouping::PerChannel ? 0 : q.group_size / kQBlock;
    const bool in_group = bpg == 0 || bpg >= 16;
    return {bpg, in_group,
            in_group ? _mm512_setzero_si512()
                     : _mm512_srl_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                        _mm_cvtsi32_si128(__builtin_ctzll(uint64_t(bpg))))};
}

// One chunk (4 INT4 / 2 INT8 blocks) of R rows. Each block's integer sum is made whole before it
// is converted (rows_math below): the lanes of a block are added in the integer unit, two rows at
// a time (an unpack of the two rows' lanes, adds and one shuffle: the rows' block sums end up in
// alternate lanes), so one convert, one permute of the two rows' scale products and one FMA serve
// two rows. The codes load under a mask (all ones but in a partial last chunk).
// (The accumulators travel by value so they stay in registers once inlined.)
template <int R>
struct Acc {
    static constexpr int kVecs = (R + 1) / 2;  // a vector per pair of rows
    __m512 v[kVecs];
};

// rows_math: the per-row arithmetic every AVX-512 VNNI kernel shares (this one-token kernel and
// the tiles of qkernels_avx512_tile.cpp), so that a row's result does not depend on the batch:
//   isum_b = Σ code·xq − offset·Σxq over block b (exact, in int32)
//   acc_p  = fma(float(isum_b), s_w[g(b)]·s_x[b] (rounded once), acc_p), b = p, p + P, p + 2P, ...
//   row    = (acc_0 + acc_1) + (acc_2 + acc_3)  (INT4, P = 4)   or   acc_0 + acc_1  (INT8, P = 2)
//            − the float zero-point correction of asymmetric weights (zero_correction)
// Here the P partial sums sit in the lanes of the block they come from (INT4: the block of a chunk
// is its 128-bit lane, so lane 4p (row A) / 4p+1 (row B) holds acc_p; INT8: a block is two 128-bit
// lanes, acc_p in lane 8p / 8p+1).
template <int Bits>
inline __m512i block_sums_pair(__m512i a, __m512i b) {
    // Per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3], then + its halves swapped: A's sum in lanes
    // 0 and 2, B's in 1 and 3.
    const __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    const __m512i u = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, _MM_PERM_BADC));
    if constexpr (Bits == 4) return u;
    // INT8: a block is two 128-bit lanes; add each to its neighbour.
    return _mm512_add_epi32(u, _mm512_shuffle_i32x4(u, u, 0xB1));
}
template <int Bits>
inline __m512i block_sums_one(__m512i a) {
    const __m512i t = _mm512_add_epi32(a, _mm512_shuffle_epi32(a, _MM_PERM_BADC));
    const __m512i u = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, _MM_PERM_CDAB));
    if constexpr (Bits == 4) return u;
    return _mm512_add_epi32(u, _mm512_shuffle_i32x4(u, u, 0xB1));
}
// A row's result from its partial sums as rows_math orders them; lane: 0 (row A of a pair or a
// single row) or 1 (row B).
template <int Bits>
inline float row_total(const float* f, int lane) {
    if constexpr (Bits == 4) return (f[lane] + f[4 + lane]) + (f[8 + lane] + f[12 + lane]);
    return f[lane] + f[8 + lane];
}

// ws[k]: row k's s_w·s_x of the 16 blocks of the window; idx: lane -> the lane's block among them.
template <int Bits, int R, bool Gfni>
inline __attribute__((always_inline)) Acc<R> chunk_rows(const uint8_t* const* codes, const __m512* ws, int64_t code_off,
                                                        __m512i idx, __mmask64 m, __m512i init, __m512i x0, __m512i x1,
                                                        __m512i cmask, Acc<R> acc) {
    if constexpr (R == 1) {
        const auto c = Codes<Bits, Gfni>::load(codes[0] + code_off, m, cmask);
        acc.v[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(block_sums_one<Bits>(c.dot(init, x0, x1))),
                                   _mm512_permutexvar_ps(idx, ws[0]), acc.v[0]);
    } else {
        static_assert(R % 2 == 0, "rows come in pairs");
        // Odd lanes take the second row's scale product (permutex2var: index bit 4 = second source).
        const __m512i idx2 =
            _mm512_or_si512(idx, _mm512_set_epi32(16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0));
#pragma GCC unroll 8
        for (int k = 0; k < R; k += 2) {
            const auto ca = Codes<Bits, Gfni>::load(codes[k] + code_off, m, cmask);
            const auto cb = Codes<Bits, Gfni>::load(codes[k + 1] + code_off, m, cmask);
            const __m512i s = block_sums_pair<Bits>(ca.dot(init, x0, x1), cb.dot(init, x0, x1));
            acc.v[k / 2] =
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_permutex2var_ps(ws[k], idx2, ws[k + 1]), acc.v[k / 2]);
        }
    }
    return acc;
}

template <int Bits, int R, bool Gfni, RowPrefetch Pf, class S>
void rows_pass(const QuantInfo& q, const uint8_t* base, int64_t r, const VnniActs& x, float* out, int64_t lead) {
    constexpr int kK = Chunk<Bits>::kBlocks;
    constexpr int64_t kCodeBytes = 64;                   // codes per chunk and row
    constexpr int64_t kActBytes = Bits == 4 ? 128 : 64;  // activation bytes per chunk
    // Software prefetch of the pass `lead` passes on (lead·R rows further): the hardware
    // prefetcher alone left a single core at ~55% of its read bandwidth, as each row is a short
    // stream (1-3 KB) and a pass interleaves 2·R of them (codes and scales). The rows are
    // consecutive, so a pass's codes are R·row_bytes contiguous bytes and its scales
    // R·groups_per_row scales.
    const int64_t pf_codes = lead * R * q.row_bytes, pf_scales = lead * R * q.groups_per_row;
    // A 64-byte line holds one row's scales of 4 chunks of INT4 g32 as floats, of 8 as halves:
    // both plans prefetch scale lines every kScaleEvery chunks.
    constexpr int64_t kScaleEvery = 64 / (4 * int64_t(sizeof(S)));
    const int64_t gpr = q.groups_per_row;
    // The scale products s_w·s_x are made per window of 16 blocks (4 chunks of INT4, 8 of INT8)
    // and row: one load and conversion of the row's scales, one multiply by the 16 activation
    // scales; each chunk then permutes its lanes' out of them. Per chunk and row that leaves the
    // two vpdpbusd, the convert and the FMA on the multiply pipes, not a load, a conversion and a
    // multiply as well (one thread, INT4 g32 1024 x 2048 in L2, AMD EPYC: 76-82 -> 92-95 G
    // weights/s; ~100-105 with the group map below a shift). vnni512_layout_ok: the blocks per group (bpg) divide 16 (a window holds 16/bpg
    // whole groups) or are a multiple of 16 (a window inside one group).
    const WindowGroups wg = window_groups(q);
    const int64_t bpg = wg.bpg;
    const bool window_in_group = wg.in_group;
    const __m512i blk_idx = lane_block_index<Bits>();
    const __m512i grp_of_blk = wg.grp_of_blk;
    __m512 ws[R];
    const __m512i cmask = Bits == 4 ? _mm512_set1_epi8(0x0f) : _mm512_set1_epi8(char(0x80));
    const uint8_t* codes[R];
    const S* sw[R];
    Acc<R> acc;
    for (int k = 0; k < R; ++k) {
        codes[k] = base + (r + k) * q.row_bytes;
        sw[k] = row_scales<S>(q, base, r + k);
    }
    for (int k = 0; k < Acc<R>::kVecs; ++k) acc.v[k] = _mm512_setzero_ps();
    // The codes' fixed offset is removed inside the integer sums (VnniActs::lane_off): INT4
    // symmetric codes carry +8, INT8 codes +128 (the sign flip that makes them unsigned).
    // Asymmetric INT4 codes carry none; their zero points, and INT8's, are the float correction
    // below.
    const bool fold_offset = Bits == 8 || q.symmetric;
    const int64_t chunks = (x.blocks + kK - 1) / kK, full_chunks = x.blocks / kK;
    // Everything one chunk needs from the activations, the window's scale products when the chunk
    // starts one, and the prefetches of a later pass.
    // (Inlined by force: as a call, the accumulators are spilled around it each chunk.)
    auto setup = [&](int64_t c, __m512i & x0, __m512i & x1, __m512i & init, __m512i & idx)
        __attribute__((always_inline)) {
        const int8_t* xq = x.q + c * kActBytes;
        x0 = _mm512_loadu_si512(xq);
        x1 = Bits == 4 ? _mm512_loadu_si512(xq + 64) : x0;
        init = fold_offset ? _mm512_loadu_si512(x.lane_off + c * 16) : _mm512_setzero_si512();
        const int64_t b0 = c * kK, w0 = b0 & ~int64_t(15);  // the chunk's first block, its window's
        if (b0 == w0) {
            const int64_t g0 = bpg ? w0 / bpg : 0;  // the window's first group
            const __mmask16 gm = first_n16(window_in_group ? 1 : gpr - g0);
            const __m512 sx = _mm512_loadu_ps(x.scale + w0);  // zero padded past the last block
#pragma GCC unroll 8
            for (int k = 0; k < R; ++k)
                ws[k] = _mm512_mul_ps(_mm512_permutexvar_ps(grp_of_blk, load_scales(gm, sw[k] + g0)), sx);
        }
        idx = _mm512_add_epi32(blk_idx, _mm512_set1_epi32(int32_t(b0 - w0)));
        if constexpr (Pf == RowPrefetch::RowsL2) {
            // Each row's line at this chunk's offset, into L2.
#pragma GCC unroll 8
            for (int k = 0; k < R; ++k)
                _mm_prefetch(reinterpret_cast<const char*>(codes[k] + c * kCodeBytes + pf_codes), _MM_HINT_T1);
            if (c % kScaleEvery == 0) {
                const int64_t g = bpg ? b0 / bpg : 0;
#pragma GCC unroll 8
                for (int k = 0; k < R; ++k)
                    _mm_prefetch(reinterpret_cast<const char*>(sw[k] + g + pf_scales), _MM_HINT_T1);
            }
        } else {
            // The same number of lines, in address order through the next pass's block, into L1:
            // R code lines per chunk, and R scale lines every kScaleEvery chunks. The code lines
            // one lead further on are requested too, into L2: with two threads streaming, more
            // requests in flight (AMD EPYC, INT4 2 threads: 83-86% -> 88-90% of the read
            // bandwidth; with one thread, where the core is the limit, 95-97% -> 91%).
            const char* next_codes = reinterpret_cast<const char*>(codes[0] + pf_codes) + c * R * kCodeBytes;
#pragma GCC unroll 8
            for (int k = 0; k < R; ++k) {
                _mm_prefetch(next_codes + k * 64, _MM_HINT_T0);
                _mm_prefetch(next_codes + k * 64 + pf_codes, _MM_HINT_T2);
            }
            if (c % kScaleEvery == 0) {
                const char* next_scales = reinterpret_cast<const char*>(sw[0] + pf_scales) + (c / kScaleEvery) * R * 64;
#pragma GCC unroll 8
                for (int k = 0; k < R; ++k) _mm_prefetch(next_scales + k * 64, _MM_HINT_T0);
            }
        }
    };
    __m512i x0, x1, init, idx;
    // One loop for all chunks, the last one masked when partial.
    const __mmask64 tail = first_n64((x.blocks - full_chunks * kK) * kQBlock * Bits / 8);
    for (int64_t c = 0; c < chunks; ++c) {
        setup(c, x0, x1, init, idx);
        acc = chunk_rows<Bits, R, Gfni>(codes, ws, c * kCodeBytes, idx, c < full_chunks ? ~__mmask64(0) : tail, init,
                                        x0, x1, cmask, acc);
    }
    // All accumulators are reduced before any call of zero_correction: live across a call, they
    // were kept in memory and stored every chunk.
    float sums[R];
#pragma GCC unroll 8
    for (int k = 0; k < R; k += 2) {
        alignas(64) float f[16];
        _mm512_store_ps(f, acc.v[k / 2]);
        sums[k] = row_total<Bits>(f, 0);
        if (k + 1 < R) sums[k + 1] = row_total<Bits>(f, 1);
    }
    const int8_t* zbase = q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset);
    for (int k = 0; k < R; ++k)
        out[k] = sums[k] - (zbase ? zero_correction(q, sw[k], zbase + (r + k) * gpr, x.cg) : 0.0f);
}

}  // namespace

float zero_correction_vnni512(const QuantInfo& q, const uint8_t* base, int64_t r, const float* cg) {
    const int8_t* zw = reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    return with_scale_type(q, [&](auto s) { return zero_correction(q, row_scales<decltype(s)>(q, base, r), zw, cg); });
}

bool vnni512_layout_ok(const QuantInfo& q) {
    // rows_pass makes the scale products per window of 16 blocks: whole groups in a window, or a
    // window inside one group.
    return row_layout_ok(q);
}

// Rows per pass: 8 for INT4 with RowsL2 (Intel: the activations are loaded once for more rows,
// in-L2 INT4 matvec 45 -> 53 G weights/s), 4 with SequentialL1 (AMD: fewer concurrent streams
// measured better from DRAM) and for INT8.
template <bool Gfni, RowPrefetch Pf, class S>
void rows_vnni512_impl(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const VnniActs& x, float* out,
                       int64_t lead) {
    int64_t r = r0;
    if (q.bits == 4) {
        if constexpr (Pf == RowPrefetch::RowsL2)
            for (; r + 8 <= r1; r += 8) rows_pass<4, 8, Gfni, Pf, S>(q, base, r, x, out + r, lead);
        for (; r + 4 <= r1; r += 4) rows_pass<4, 4, Gfni, Pf, S>(q, base, r, x, out + r, lead);
        for (; r < r1; ++r) rows_pass<4, 1, Gfni, Pf, S>(q, base, r, x, out + r, lead);
    } else {  // INT8 has no nibbles: one instantiation
        for (; r + 4 <= r1; r += 4) rows_pass<8, 4, false, Pf, S>(q, base, r, x, out + r, lead);
        for (; r < r1; ++r) rows_pass<8, 1, false, Pf, S>(q, base, r, x, out + r, lead);
    }
}

void rows_vnni512(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const VnniActs& x, float* out,
                  bool gfni, RowPrefetch pf, int lead) {
    with_scale_type(q, [&](auto s) {
        using S = decltype(s);
        if (pf == RowPrefetch::SequentialL1)
            gfni ? rows_vnni512_impl<true, RowPrefetch::SequentialL1, S>(q, base, r0, r1, x, out, lead)
                 : rows_vnni512_impl<false, RowPrefetch::SequentialL1, S>(q, base, r0, r1, x, out, lead);
        else
            gfni ? rows_vnni512_impl<true, RowPrefetch::RowsL2, S>(q, base, r0, r1, x, out, lead)
                 : rows_vnni512_impl<false, RowPrefetch::RowsL2, S>(q, base, r0, r1, x, out, lead);
    });
}

void vnni_lanes_avx512(int bits, const int8_t* q, int64_t chunks, int32_t* lane_off) {
    const int act_bytes = bits == 4 ? 128 : 64;
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t c = 0; c < chunks; ++c) {
        // Each lane's activation sum: vpdpbusd of all-one bytes with the chunk's activations.
        const int8_t* xq = q + c * act_bytes;
        __m512i lane = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_loadu_si512(xq));
        if (bits == 4) lane = _mm512_dpbusd_epi32(lane, ones, _mm512_loadu_si512(xq + 64));
        // −offset·sum: offset 8 (INT4) or 128 (INT8).
        _mm512_storeu_si512(lane_off + c * 16,
                            _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(lane, bits == 4 ? 3 : 7)));
    }
}

// FP16 / BF16 rows (weights as stored): 64 weights per iteration in four independent FMA chains
// (one chain was latency-bound), widened by half_lanes.h's widen16; the weights 4 KiB ahead are
// prefetched (rows are consecutive, so this runs into the next rows); a masked tail, no scalar
// loop.
template <Half H>
float dot_half16(const uint16_t* w, const float* x, int64_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(w + i + 2048), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(w + i + 2048 + 32), _MM_HINT_T0);
        a0 = _mm512_fmadd_ps(widen16<H>(w + i), _mm512_loadu_ps(x + i), a0);
        a1 = _mm512_fmadd_ps(widen16<H>(w + i + 16), _mm512_loadu_ps(x + i + 16), a1);
        a2 = _mm512_fmadd_ps(widen16<H>(w + i + 32), _mm512_loadu_ps(x + i + 32), a2);
        a3 = _mm512_fmadd_ps(widen16<H>(w + i + 48), _mm512_loadu_ps(x + i + 48), a3);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = first_n16(n - i);
        a0 = _mm512_fmadd_ps(widen16<H>(w + i, m), _mm512_maskz_loadu_ps(m, x + i), a0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

float dot_half_avx512(Half h, const uint16_t* w, const float* x, int64_t n) {
    return h == Half::F16 ? dot_half16<Half::F16>(w, x, n) : dot_half16<Half::BF16>(w, x, n);
}

// Same arithmetic as quantize_block_portable (IEEE max, divide, reciprocal, multiply, round half
// to even), so both give identical codes and scales. Block b's two halves of 16 codes go to
// q + b·32 and q + b·32 + 16, or with int4_layout to where VnniActs puts them for INT4 weights:
// chunk b/4 (128 bytes), slot b%4 of its first 64 bytes and of its second.
void quantize_acts_avx512(const float* x, int64_t n, int8_t* q, float* scale, int32_t* sum, bool int4_layout) {
    const __m512 signbit = _mm512_set1_ps(-0.0f);
    for (int64_t b = 0, i = 0; i < n; ++b, i += kQBlock) {
        const int64_t left = n - i;
        const __m512 v0 = _mm512_maskz_loadu_ps(first_n16(left), x + i);
        const __m512 v1 = _mm512_maskz_loadu_ps(first_n16(left - 16), x + i + 16);
        const float amax =
            _mm512_reduce_max_ps(_mm512_max_ps(_mm512_andnot_ps(signbit, v0), _mm512_andnot_ps(signbit, v1)));
        const float d = amax / 127.0f;
        const float inv = d > 0.0f ? 1.0f / d : 0.0f;
        const __m512 iv = _mm512_set1_ps(inv);
        const __m512i lim = _mm512_set1_epi32(127), nlim = _mm512_set1_epi32(-127);
        const __m512i i0 = _mm512_max_epi32(nlim, _mm512_min_epi32(lim, _mm512_cvtps_epi32(_mm512_mul_ps(v0, iv))));
        const __m512i i1 = _mm512_max_epi32(nlim, _mm512_min_epi32(lim, _mm512_cvtps_epi32(_mm512_mul_ps(v1, iv))));
        const int64_t lo = int4_layout ? (b / 4) * 128 + (b % 4) * 16 : b * kQBlock, hi = lo + (int4_layout ? 64 : 16);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + lo), _mm512_cvtsepi32_epi8(i0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + hi), _mm512_cvtsepi32_epi8(i1));
        scale[b] = d;
        sum[b] = _mm512_reduce_add_epi32(_mm512_add_epi32(i0, i1));
    }
}

// K-quant super-blocks (qkernels_impl.h) with vpdpbusd: each 32 bytes of Q4_K/Q5_K codes are
// loaded into both halves of a register and shifted per half (low nibbles: sub-block 2g, high:
// 2g+1), so one vpdpbusd against 64 activation bytes in natural order makes the int32 lanes of two
// sub-blocks (8 each); the lanes are converted and scaled by their sub-block's d·sc·s_x (one
// permute of the super-block's eight products) and summed once per row. The mins are
// dmin·Σ m_j·s_x[b]·Σxq[b], 8 lanes per super-block.
namespace {

inline float half_bits(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

inline __m512i halves_epi32(int lo, int hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32(lo)), _mm256_set1_epi32(hi), 1);
}
inline __m512i halves_epi16(int16_t lo, int16_t hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(lo)), _mm256_set1_epi16(hi), 1);
}

// T tokens at once (prefill, batched steps): the codes and scales of a super-block are unpacked
// once for all T; each token's arithmetic is the one-token kernel's, in the same order, so its
// outputs are the same bits whatever the batch (QuantKernels.KQuantBlocksMultiplyInPlace...).
template <bool Five, int T>
void q45_k_vnni_tokens(const uint8_t* row, const ActsView* x, float* out, int64_t out_stride) {
    constexpr int64_t kBytes = Five ? 176 : 144;
    const __m512i low4 = _mm512_set1_epi8(0x0f), one8 = _mm512_set1_epi8(1), nibble = halves_epi16(0, 4);
    const __m512i pick[4] = {halves_epi32(0, 1), halves_epi32(2, 3), halves_epi32(4, 5), halves_epi32(6, 7)};
    // Per token one accumulator per pair of sub-blocks: four independent FMA chains (one chain
    // waited on the FMA latency four times per super-block).
    __m512 acc[T][4];
    __m256 accm[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) acc[t][g] = _mm512_setzero_ps();
        accm[t] = _mm256_setzero_ps();
    }
    for (int64_t sb = 0; sb < x[0].blocks / 8; ++sb) {
        const uint8_t* blk = row + sb * kBytes;
        for (int l = 0; l < int(kBytes + 63) / 64; ++l)
            _mm_prefetch(reinterpret_cast<const char*>(blk + kKQuantPrefetchLead + 64 * l), _MM_HINT_T0);
        uint64_t sc, mn;
        kquant_scales_mins(blk + 4, sc, mn);
        const __m256 sc8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(int64_t(sc))));
        const __m256 m8 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(int64_t(mn))));
        const __m256 d = _mm256_set1_ps(half_bits(blk)), dmin = _mm256_set1_ps(half_bits(blk + 2));
        __m512 f[T];
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
            const __m256 xs = _mm256_loadu_ps(x[t].scale + sb * 8);
            f[t] = _mm512_castps256_ps512(_mm256_mul_ps(d, _mm256_mul_ps(sc8, xs)));
            const __m256 xsum =
                _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t].sum + sb * 8)));
            accm[t] = _mm256_fmadd_ps(dmin, _mm256_mul_ps(m8, _mm256_mul_ps(xs, xsum)), accm[t]);
        }
        const uint8_t* qs = blk + (Five ? 48 : 16);
        __m512i hb = _mm512_setzero_si512();
        if constexpr (Five) hb = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16)));
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
            const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * g)));
            __m512i n = _mm512_and_si512(_mm512_srlv_epi16(v, nibble), low4);
            if constexpr (Five)
                n = _mm512_or_si512(
                    n,
                    _mm512_slli_epi16(
                        _mm512_and_si512(_mm512_srlv_epi16(hb, halves_epi16(int16_t(2 * g), int16_t(2 * g + 1))), one8),
                        4));
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), n,
                                                      _mm512_loadu_si512(x[t].q + sb * 8 * kQBlock + 64 * g));
                acc[t][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(pick[g], f[t]), acc[t][g]);
            }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
        const __m128 m4 = _mm_add_ps(_mm256_castps256_ps128(accm[t]), _mm256_extractf128_ps(accm[t], 1));
        const __m128 m2 = _mm_add_ps(m4, _mm_movehl_ps(m4, m4));
        out[t * out_stride] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[t][0], acc[t][1]),
                                                                 _mm512_add_ps(acc[t][2], acc[t][3]))) -
                              _mm_cvtss_f32(_mm_add_ss(m2, _mm_shuffle_ps(m2, m2, 1)));
    }
}

// Q6_K: per half super-block, the 64 bytes of ql and the 32 of qh (in both register halves,
// shifted per half) make the codes of elements 0..63 and 64..127 in natural order; vpdpbusd of
// the codes minus vpdpbusd of 32 gives Σ(q−32)·xq per lane (4 elements: lane / 4 is the 16-element
// sub-block, lane / 8 the activation block), scaled lane-wise by d·sc·s_x (two permutes). T tokens
// as q45_k_vnni_tokens.
template <int T>
void q6_k_vnni_tokens(const uint8_t* row, const ActsView* x, float* out, int64_t out_stride) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), three8 = _mm512_set1_epi8(3), k32 = _mm512_set1_epi8(32);
    const __m512i shift_lo = halves_epi16(0, 2), shift_hi = halves_epi16(4, 6);
    // Lane l of the product of elements 64k..64k+63 of half h: scale 8h + 4k + l/4, block 4h + 2k + l/8.
    __m512i scale_of[4], block_of[4];
    for (int hk = 0; hk < 4; ++hk) {
        alignas(64) int32_t si[16], bi[16];
        for (int l = 0; l < 16; ++l) {
            si[l] = 4 * hk + l / 4;
            bi[l] = 2 * hk + l / 8;
        }
        scale_of[hk] = _mm512_load_si512(si);
        block_of[hk] = _mm512_load_si512(bi);
    }
    __m512 acc[T][4];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) acc[t][k] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < x[0].blocks / 8; ++sb) {
        const uint8_t* blk = row + sb * 210;
        for (int l = 0; l < 4; ++l)
            _mm_prefetch(reinterpret_cast<const char*>(blk + kKQuantPrefetchLead + 64 * l), _MM_HINT_T0);
        const __m512 ds = _mm512_mul_ps(
            _mm512_set1_ps(half_bits(blk + 208)),
            _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 192)))));
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(blk + 64 * h);
            const __m512i qh =
                _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 128 + 32 * h)));
            const __m512i q[2] = {
                _mm512_or_si512(_mm512_and_si512(ql, low4),
                                _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_lo), three8), 4)),
                _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                                _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_hi), three8), 4))};
#pragma GCC unroll 2
            for (int k = 0; k < 2; ++k) {
                const __m512 dsk = _mm512_permutexvar_ps(scale_of[2 * h + k], ds);
#pragma GCC unroll 8
                for (int t = 0; t < T; ++t) {
                    const __m512i xv = _mm512_loadu_si512(x[t].q + sb * 8 * kQBlock + 128 * h + 64 * k);
                    const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q[k], xv),
                                                       _mm512_dpbusd_epi32(_mm512_setzero_si512(), k32, xv));
                    const __m512 xs = _mm512_castps256_ps512(_mm256_loadu_ps(x[t].scale + sb * 8));
                    const __m512 f = _mm512_mul_ps(dsk, _mm512_permutexvar_ps(block_of[2 * h + k], xs));
                    acc[t][2 * h + k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), f, acc[t][2 * h + k]);
                }
            }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
        out[t * out_stride] = _mm512_reduce_add_ps(
            _mm512_add_ps(_mm512_add_ps(acc[t][0], acc[t][1]), _mm512_add_ps(acc[t][2], acc[t][3])));
}

template <int T>
void kquant_vnni_tokens(DType type, const uint8_t* row, const ActsView* x, float* out, int64_t out_stride) {
    if (type == DType::Q6_K) return q6_k_vnni_tokens<T>(row, x, out, out_stride);
    if (type == DType::Q5_K) return q45_k_vnni_tokens<true, T>(row, x, out, out_stride);
    q45_k_vnni_tokens<false, T>(row, x, out, out_stride);
}

}  // namespace

void tokens_kquant_vnni512(DType t, const uint8_t* row, const ActsView* x, int n, float* out, int64_t out_stride) {
    int i = 0;
    for (; i + kKQuantTileTokens <= n; i += kKQuantTileTokens)
        kquant_vnni_tokens<kKQuantTileTokens>(t, row, x + i, out + i * out_stride, out_stride);
    for (; i < n; ++i) kquant_vnni_tokens<1>(t, row, x + i, out + i * out_stride, out_stride);
}

}  // namespace edge::runtime::qkernels::detail

#endif
