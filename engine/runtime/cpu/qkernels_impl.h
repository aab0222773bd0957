// Internal to engine/runtime/qkernels*.cpp: the per-row dot products of each kernel family.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "engine/core/quant_format.h"
#include "engine/runtime/cpu/qkernels.h"

namespace edge::runtime::qkernels::detail {

// One token's quantized activations (blocks of 32).
struct ActsView {
    const int8_t* q;
    const float* scale;
    const int32_t* sum;
    int64_t blocks;
    // Asymmetric weights under rows_math (row_layout_ok, AVX2 family): per weight group
    // Σ_{b in g} scale[b]·sum[b] (group_act_sums), else null.
    const float* cg = nullptr;
    // The AVX2 one-token INT4 kernel's copy of q (pair_acts_avx2), or null: blocks b, b+1 (b even,
    // below the last whole 8) as [b: 0..15, b+1: 0..15, b: 16..31, b+1: 16..31], the order of the
    // two blocks' nibbles in one 32-byte load of their codes.
    const int8_t* qp = nullptr;
};

// The row layouts the x86 kernels multiply with the per-row arithmetic rows_math
// (qkernels_avx512.cpp; the AVX2 kernels follow it too, qkernels_avx2.cpp): row mode, per
// channel or groups of 32·k with k dividing 16 or a multiple of 16.
inline bool row_layout_ok(const QuantInfo& q) {
    if (!q.row_mode()) return false;
    if (q.grouping == QGrouping::PerChannel) return true;
    if (q.group_size % kQBlock != 0) return false;
    const int64_t bpg = q.group_size / kQBlock;
    return 16 % bpg == 0 || bpg % 16 == 0;
}

// Σ_i W[r][i]·x[i] for a row-mode QI8/QI4 tensor whose groups are whole 32-blocks.
float row_dot_q8_portable(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float row_dot_q4_portable(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
// 16-bit float weights as stored: IEEE half (F16) or bfloat16 (BF16: the top 16 bits of a float,
// so widening it is exact). Both take the same kernels; only the widening differs.
enum class Half { F16, BF16 };
// Σ w[i]·x[i] in order, each weight widened to a float.
float dot_half_portable(Half h, const uint16_t* w, const float* x, int64_t n);
void quantize_block_portable(const float* x, int64_t n, int8_t* q, float* scale, int32_t* sum);

// One token's activations as the AVX-512 VNNI kernels read them (qkernels_avx512.cpp):
//   q      INT8 weights: the int8 codes in natural order; INT4 weights: per chunk of 4 blocks,
//          elements 0..15 of each of the 4 blocks (64 bytes) then elements 16..31 (64 bytes).
//          Zero padded to whole chunks of 4 blocks.
//   scale  per block, zero padded by at least 16 entries past `blocks`.
//   cg     per weight group of the tensor: Σ_{b in g} scale[b]·Σxq[b] (the zero-point term of
//          asymmetric weights).
//   lane_off  per chunk, the 16 int32 lanes of a vpdpbusd accumulator (4 bytes of codes each:
//          INT4 4 lanes per block, INT8 8): −offset·(the lane's activation sum) with the codes'
//          fixed offset (8 for INT4, 128 for INT8). It depends on the activations only, so it is
//          made once per matmul, not once per pass of rows.
struct VnniActs {
    const int8_t* q;
    const float* scale;
    const float* cg;
    const int32_t* lane_off;
    int64_t blocks;
};

// ggml's K-quant super-blocks as a GGUF stores them (Q4_K, Q5_K, Q6_K; byte layouts beside their
// structs in engine/model/ggml_dequant.cpp), multiplied in place by integer dot products against
// the 32-blocks of ActsView, as llama.cpp multiplies them against its Q8_K activations:
//   Q4_K/Q5_K  Σ_b s_x[b]·(d·sc_j·Σ q·xq − dmin·m_j·Σ xq)         (sub-block j = 32-block b)
//   Q6_K       Σ_b s_x[b]·d·(sc_lo·Σ_lo (q−32)·xq + sc_hi·Σ_hi (q−32)·xq)  (two 16-sub-blocks)
// `row` points at the row's first block; x.blocks = cols / 32.
bool kquant_integer(DType t);  // Q4_K, Q5_K or Q6_K
inline constexpr int kKQuantBlock = 256;
// How far ahead of the super-block being read the K-quant row kernels prefetch into L1. The rows
// are read in address order, one after another; 576 bytes (4 Q4_K blocks) left one core at 15-20
// GB/s, 4.5-9 KiB ahead streamed at 23-25 (Q4_K and Q6_K alike, AMD EPYC Zen 4; edge-quant-bench
// --mode stream --only q4_k|q6_k, alternating builds, docs/benchmarks.md), 16 KiB no better.
inline constexpr int64_t kKQuantPrefetchLead = 4608;
float row_dot_kquant_portable(DType t, const uint8_t* row, const ActsView& x);
// The six-bit scales and mins of a Q4_K/Q5_K block's 12 packed bytes as 8 bytes each (byte j:
// sub-block j). The bytes read as three words: the scales and mins of sub-blocks 0..3 are the low
// six bits of words 0 and 1; those of 4..7 are word 2's nibbles plus the top two bits of words 0/1.
inline void kquant_scales_mins(const uint8_t packed[12], uint64_t& sc, uint64_t& mn) {
    uint32_t u0, u1, u2;
    std::memcpy(&u0, packed, 4);
    std::memcpy(&u1, packed + 4, 4);
    std::memcpy(&u2, packed + 8, 4);
    sc = uint64_t(u0 & 0x3f3f3f3fu) | uint64_t((u2 & 0x0f0f0f0fu) | (((u0 >> 6) & 0x03030303u) << 4)) << 32;
    mn = uint64_t(u1 & 0x3f3f3f3fu) | uint64_t(((u2 >> 4) & 0x0f0f0f0fu) | (((u1 >> 6) & 0x03030303u) << 4)) << 32;
}

#if defined(__x86_64__)
float row_dot_kquant_avx2(DType t, const uint8_t* row, const ActsView& x);
// The same row against n tokens (out[i·out_stride]), kKQuantTileTokens at a time sharing the
// unpacking of the codes; each value bit-identical to row_dot_kquant_avx2's.
void tokens_kquant_avx2(DType t, const uint8_t* row, const ActsView* x, int n, float* out, int64_t out_stride);
// Row `row` against n tokens (x[0..n)): out[i·out_stride] for token i, tiles of kKQuantTileTokens
// sharing one unpacking of the codes and scales; each value bit-identical to what n = 1 gives.
constexpr int kKQuantTileTokens = 4;
void tokens_kquant_vnni512(DType t, const uint8_t* row, const ActsView* x, int n, float* out, int64_t out_stride);

// True when the AVX-512 VNNI row kernels take this layout (row mode, groups of 32·k with k
// dividing 16 or a multiple of 16, or per channel).
bool vnni512_layout_ok(const QuantInfo& q);
// out[r] = Σ_i W[r][i]·x[i] for r in [r0, r1); gfni: the processor has GFNI (INT4 nibbles); pf:
// RowsL2 or SequentialL1, lead: passes ahead (qkernels.h).
void rows_vnni512(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const VnniActs& x, float* out,
                  bool gfni, RowPrefetch pf, int lead);
// The activations of n tokens as the tile kernel reads them (qkernels_avx512_tile.cpp): token t's
// codes in natural order at q + t·padded·32, its block scales at scale + t·padded, off + t·padded
// the integer start of each block's sum (−offset·Σxq: offset 8 for symmetric INT4, 128 for INT8,
// 0 for asymmetric INT4), and for asymmetric weights its VnniActs::cg at cg + t·cg_stride. The
// blocks are zero padded to `padded`, a whole number of the weights' chunks (4 INT4 blocks, 2
// INT8), so the tile sums exactly the blocks the one-token kernel sums.
struct TileActs {
    const int8_t* q;
    const float* scale;
    const int32_t* off;
    const float* cg;
    int64_t padded;
    int64_t cg_stride;
};
// Rows [r0, r1) × n tokens: out[t·out_stride + r]. Each value is bit-identical to rows_vnni512's
// for that token (both follow the per-row arithmetic in qkernels_avx512.cpp's rows_math).
void tile_vnni512(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const TileActs& x, int n, float* out,
                  int64_t out_stride);
// The float zero-point term of an asymmetric row, Σ_g s_w[g]·z_g·cg[g] (both kernels subtract it).
float zero_correction_vnni512(const QuantInfo& q, const uint8_t* base, int64_t r, const float* cg);
// cg[g] = Σ_{b in g} scale[b]·sum[b] for the groups of q's rows, in block order (VnniActs::cg).
void group_act_sums(const QuantInfo& q, const float* scale, const int32_t* sum, int64_t blocks, float* cg);
// Activations quantized in blocks of 32 (quantize_block_portable's arithmetic); int4_layout: the
// codes in VnniActs' INT4 order instead of the natural one.
void quantize_acts_avx512(const float* x, int64_t n, int8_t* q, float* scale, int32_t* sum, bool int4_layout = false);
// VnniActs::lane_off of `chunks` chunks from the activations q (as VnniActs lays them out) for
// weights of `bits` bits.
void vnni_lanes_avx512(int bits, const int8_t* q, int64_t chunks, int32_t* lane_off);
float dot_half_avx512(Half h, const uint16_t* w, const float* x, int64_t n);
// FP16 / BF16 rows [r0, r1) × n tokens (out[t·out_dim + r]), 16 rows in the lanes, each value the
// bits dot_half_avx512 gives (qkernels_avx512_tile.cpp).
void half_tokens_avx512(Half h, const uint16_t* w, int64_t in_dim, int64_t r0, int64_t r1, const float* in, int n,
                        float* out, int64_t out_dim);

// Row r of a row-mode QI8/QI4 tensor against one token. For row_layout_ok layouts the result is
// rows_math's (qkernels_avx512.cpp; x.cg set for asymmetric weights), the bits tile_avx2 gives;
// other group sizes (a multiple of 32 that rows_math does not take) sum in their own order.
float row_dot_q8_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float row_dot_q4_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
// Rows [r0, r1) of a row_layout_ok QI8/QI4 tensor × n tokens (x[0..n), x[t].cg set for
// asymmetric weights): out[t·out_stride + r], 8 rows in the lanes of a vector, panels repacked
// once per call (qkernels_avx2_tile.cpp). Each value is the bits row_dot_q*_avx2 gives.
void tile_avx2(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const ActsView* x, int n, float* out,
               int64_t out_stride);
// FP32 weights against several tokens (qkernels_float.cpp): out[t·out_dim + o] for rows o in
// [b, e), each the bits kernels::dot gives for that row. Only where f32_lanes_apply(in_dim):
// kernels::dot is the AVX2+FMA kernel and in_dim a multiple of 8.
bool f32_lanes_apply(int64_t in_dim);
void f32_rows_lanes(const float* w, const float* in, int n, float* out, int64_t out_dim, int64_t in_dim, int64_t b,
                    int64_t e);
// quantize_block_portable's codes, scales and sums for the ceil(n/32) blocks of x.
void quantize_acts_avx2(const float* x, int64_t n, int8_t* q, float* scale, int32_t* sum);
// ActsView::qp from q: the pairs of blocks below the last whole 8 of `blocks` (qp: that many
// blocks' bytes).
void pair_acts_avx2(const int8_t* q, int64_t blocks, int8_t* qp);
// Rows [r0, r1) of a row_layout_ok QI4 tensor against one token whose x.qp is set (x.cg for
// asymmetric weights): out[r], two rows per pass, the bits row_dot_q4_avx2 gives; pf and lead as
// for the AVX-512 one-token kernel (qkernels.h).
void rows_q4_avx2(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const ActsView& x, float* out,
                  RowPrefetch pf, int lead);
// Σ_g s_w[g]·z_g·cg[g] over row r's groups in one fixed order (both AVX2 kernels subtract it).
float zero_correction_avx2(const QuantInfo& q, const uint8_t* base, int64_t r, const float* cg);
float dot_half_avx2(Half h, const uint16_t* w, const float* x, int64_t n);
// FP16 / BF16 rows [r0, r1) × n tokens (out[t·out_dim + r]), 8 rows in the lanes, each value the
// bits dot_half_avx2 gives (qkernels_avx2_tile.cpp).
void half_tokens_avx2(Half h, const uint16_t* w, int64_t in_dim, int64_t r0, int64_t r1, const float* in, int n,
                      float* out, int64_t out_dim);
#endif

#if defined(__aarch64__)
// qkernels_neon.cpp: plain NEON (every aarch64 CPU) and the dot-product extension (SDOT), which
// is only called when cpu_has_neon_dotprod() (HWCAP_ASIMDDP).
bool cpu_has_neon_dotprod();
float row_dot_q8_neon(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float row_dot_q4_neon(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float row_dot_q8_dotprod(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float row_dot_q4_dotprod(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x);
float dot_f16_neon(const uint16_t* w, const float* x, int64_t n);
#endif

// Row r's group scales as stored: S = float or uint16_t (IEEE half), QuantInfo::scale_type. The
// row kernels are written once over S (each family converts a half with its own instructions)
// and picked per call by with_scale_type.
template <class S>
inline const S* row_scales(const QuantInfo& q, const uint8_t* base, int64_t r) {
    return reinterpret_cast<const S*>(base + q.scales_offset) + r * q.groups_per_row;
}
// f(S{}) with S = uint16_t for half scales, float otherwise.
template <class F>
inline decltype(auto) with_scale_type(const QuantInfo& q, F&& f) {
    return q.scale_type == QScale::F16 ? f(uint16_t{}) : f(float{});
}

// f(Bits, S{}) with Bits = std::integral_constant<int, 4 or 8> (q.bits) and S as with_scale_type
// picks it: how the tile kernels instantiate per layout.
template <class F>
inline void with_bits_and_scale_type(const QuantInfo& q, F&& f) {
    with_scale_type(q, [&](auto s) {
        if (q.bits == 4)
            f(std::integral_constant<int, 4>{}, s);
        else
            f(std::integral_constant<int, 8>{}, s);
    });
}

// f(T, t) over n tokens: tiles of T = std::integral_constant<int, 4> at t = 0, 4, 8, ..., then
// one tile of the 1-3 left (the token loop of every tile kernel).
template <class F>
inline void for_token_tiles(int n, F&& f) {
    int t = 0;
    for (; t + 4 <= n; t += 4) f(std::integral_constant<int, 4>{}, t);
    switch (n - t) {
        case 3: f(std::integral_constant<int, 3>{}, t); break;
        case 2: f(std::integral_constant<int, 2>{}, t); break;
        case 1: f(std::integral_constant<int, 1>{}, t); break;
        default: break;
    }
}

// The next panel of a tile kernel, brought into L2 while the current one is multiplied: `lines`
// cache lines from `at`, a slice per pass of tokens (part of parts), so that packing the next
// panel does not wait on memory (both x86 tiles).
struct AheadLines {
    const char* at = nullptr;
    int64_t lines = 0;
    void prefetch_part(int part, int parts) const {
        const int64_t per = (lines + parts - 1) / parts, l0 = int64_t(part) * per;
        for (int64_t l = l0; l < std::min(lines, l0 + per); ++l) __builtin_prefetch(at + l * 64, 0, 2);
    }
};

// Blocks of 32 that make up group g's share of a row: the group of block b.
inline int64_t block_group(const QuantInfo& q, int64_t b) {
    return q.grouping == QGrouping::PerChannel ? 0 : (b * kQBlock) / q.group_size;
}

}  // namespace edge::runtime::qkernels::detail
