// The AVX-512 VNNI tile kernel for several tokens at once (prefill, batched decode steps, every
// batched forward of the studio: perplexity, calibration, validation) on row-mode QI4 / QI8
// weights. It computes each row exactly as the one-token kernel does (qkernels_avx512.cpp,
// rows_math: whole-block integer sums, one FMA per block into P partial sums, the partials added
// in a fixed order), so a row's result does not depend on the batch or the tile; only the layout
// in the registers differs:
//
//   rows in lanes  A panel of 16 rows is repacked once per call into a small buffer, 8 vectors
//                  per block of 32 columns (vector v: elements 4v..4v+3 of each of the 16 rows,
//                  as unsigned bytes; INT4 nibbles split, INT8 codes +128), plus one vector of the
//                  16 rows' scales per block. Each token's activations then meet a block with 8
//                  vpdpbusd whose activation operand is 4 bytes broadcast from memory, and one
//                  convert, one multiply and one FMA make the block's contribution to 16 rows.
//
// Per 16 rows × 32 columns × token that is 8 vpdpbusd and 3 float operations (512 multiply-adds),
// where the row-major tile of before needed 8 vpdpbusd and 12 (its ceiling was the float work per
// block, docs/benchmarks.md). The repacking (a 16 × 16 transpose of 32-bit words per 64 bytes of
// codes) is paid once per panel for all the tokens.
#include "qkernels_impl.h"

#if defined(__x86_64__)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma,f16c")
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "half_lanes.h"

namespace edge::runtime::qkernels::detail {

namespace {

constexpr int kPanelRows = 16;
constexpr int kTokens = 4;  // tokens per pass: 4 × P partial-sum registers, 4 integer sums

inline __mmask16 first_n16(int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << unsigned(n)) - 1u);
}
inline __mmask64 first_n64(int64_t n) {
    return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : ((__mmask64(1) << unsigned(n)) - 1);
}

// r[j] (row j, 16 words) -> r[d] (word d of each of the 16 rows, row j in lane j).
inline void transpose16(__m512i r[16]) {
    __m512i t[16], u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // Per 128-bit lane L of u[4i + j]: rows 4i..4i+3 of word 4L + j.
    for (int i = 0; i < 4; ++i) {
        u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    // A 4 × 4 transpose of 128-bit lanes per j.
    for (int j = 0; j < 4; ++j) {
        const __m512i x0 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44), x1 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xEE);
        const __m512i y0 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44),
                      y1 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_i32x4(x0, y0, 0x88);
        r[4 + j] = _mm512_shuffle_i32x4(x0, y0, 0xDD);
        r[8 + j] = _mm512_shuffle_i32x4(x1, y1, 0x88);
        r[12 + j] = _mm512_shuffle_i32x4(x1, y1, 0xDD);
    }
}

inline __m512 load_scales(__mmask16 m, const float* s) { return _mm512_maskz_loadu_ps(m, s); }
inline __m512 load_scales(__mmask16 m, const uint16_t* s) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, s)); }

// Rows [r0, r0 + rows) repacked: codes[b·8 + v] and scales[b] for blocks b < padded (zero past
// the rows and past the row's blocks). groups: scratch of groups_per_row vectors.
template <int Bits, class S>
void pack_panel(const QuantInfo& q, const uint8_t* base, int64_t r0, int rows, int64_t padded, __m512i* codes,
                __m512* scales, __m512* groups) {
    constexpr int kBlocksPerLoad = Bits == 4 ? 4 : 2;  // 64 bytes of a row
    const __m512i low4 = _mm512_set1_epi8(0x0f), sign = _mm512_set1_epi8(char(0x80));
    for (int64_t c = 0; c * kBlocksPerLoad < padded; ++c) {
        const __mmask64 m = first_n64(q.row_bytes - c * 64);
        __m512i r[16];
        for (int j = 0; j < 16; ++j) {
            if (j >= rows) {
                r[j] = _mm512_setzero_si512();
                continue;
            }
            const uint8_t* line = base + (r0 + j) * q.row_bytes + c * 64;
            // (4 lines on into L1, as the AVX2 repacking does: qkernels_avx2_tile.cpp, kPackAhead.)
            _mm_prefetch(reinterpret_cast<const char*>(line + 256), _MM_HINT_T0);
            r[j] = _mm512_maskz_loadu_epi8(m, line);
        }
        transpose16(r);
        for (int d = 0; d < 16; ++d) {
            if constexpr (Bits == 4) {
                // Word d: bytes 4k..4k+3 (k = d % 4) of block d / 4: elements 4k.. in the low
                // nibbles (vector k), 16 + 4k.. in the high ones (vector 4 + k).
                __m512i* blk = codes + (c * 4 + d / 4) * 8;
                if (c * 4 + d / 4 >= padded) break;
                blk[d % 4] = _mm512_and_si512(r[d], low4);
                blk[4 + d % 4] = _mm512_and_si512(_mm512_srli_epi16(r[d], 4), low4);
            } else {
                if (c * 2 + d / 8 >= padded) break;
                codes[(c * 2 + d / 8) * 8 + d % 8] = _mm512_xor_si512(r[d], sign);
            }
        }
    }
    // The rows' scales, 16 groups at a time through the same transpose, then one vector per block.
    const int64_t G = q.groups_per_row;
    for (int64_t g0 = 0; g0 < G; g0 += 16) {
        const __mmask16 m = first_n16(G - g0);
        __m512i r[16];
        for (int j = 0; j < 16; ++j)
            r[j] = j < rows ? _mm512_castps_si512(load_scales(m, row_scales<S>(q, base, r0 + j) + g0))
                            : _mm512_setzero_si512();
        transpose16(r);
        for (int i = 0; i < 16 && g0 + i < G; ++i) groups[g0 + i] = _mm512_castsi512_ps(r[i]);
    }
    const int64_t blocks = (q.cols + kQBlock - 1) / kQBlock;
    for (int64_t b = 0; b < padded; ++b) scales[b] = b < blocks ? groups[block_group(q, b)] : _mm512_setzero_ps();
}

inline __m512i bcast4(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// T tokens (x's tokens t0..t0+T) against NP packed panels (np: codes[np], scales[np], rows[np]
// lanes): out[t·out_stride + np·16 + j] for panel np's rows j. With two panels each broadcast
// activation feeds two vpdpbusd (on Zen 5, with two vpdpbusd a cycle, one load per vpdpbusd had
// been the limit).
//
// Partial sum p holds blocks p, p + P, p + 2P, ... (P = 4 for INT4, 2 for INT8), each added by one
// FMA in block order, as in the one-token kernel. Two partials are live at a time: INT8 in one
// sweep over the blocks, INT4 in two (blocks 0, 1, 4, 5, ... into partials 0 and 1, then 2, 3, 6,
// 7, ... into 2 and 3; each sweep reads whole 64-byte lines of the activations). With all four of
// INT4's partials live, two panels needed 32 partial registers beside the 8 integer sums and the
// compiler spilled inside the block loop. The order of the additions into each partial is
// unchanged, so no row's arithmetic changes.
template <int Bits, int NP, int T>
void panel_tokens(const __m512i* const* codes, const __m512* const* scales, const TileActs& x, int t0,
                  const __mmask16* rows, float* out, int64_t out_stride) {
    constexpr int kP = Bits == 4 ? 4 : 2;
    const int64_t padded = x.padded;
    const int8_t* xq[T];
    const float* sx[T];
    const int32_t* off[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
        xq[t] = x.q + (t0 + t) * padded * kQBlock;
        sx[t] = x.scale + (t0 + t) * padded;
        off[t] = x.off + (t0 + t) * padded;
    }
    constexpr int kLive = 2;  // partials live in the registers during a sweep
    __m512 part[kP][NP][T];
#pragma GCC unroll 1
    for (int sweep = 0; sweep < kP / kLive; ++sweep) {
        __m512 acc[kLive][NP][T];
#pragma GCC unroll 2
        for (int l = 0; l < kLive; ++l)
#pragma GCC unroll 2
            for (int np = 0; np < NP; ++np)
#pragma GCC unroll 8
                for (int t = 0; t < T; ++t) acc[l][np][t] = _mm512_setzero_ps();
        for (int64_t b0 = sweep * kLive; b0 < padded; b0 += kP)
#pragma GCC unroll 2
            for (int l = 0; l < kLive; ++l) {
                const int64_t b = b0 + l;
                __m512i s[NP][T];
#pragma GCC unroll 8
                for (int t = 0; t < T; ++t) {
                    const __m512i o = _mm512_set1_epi32(off[t][b]);
#pragma GCC unroll 2
                    for (int np = 0; np < NP; ++np) s[np][t] = o;
                }
                if constexpr (NP == 1) {
                    const __m512i* w = codes[0] + b * 8;
                    // Half the block's vectors at a time: 4 code registers, not 8.
#pragma GCC unroll 2
                    for (int h = 0; h < 2; ++h) {
                        const __m512i w0 = _mm512_load_si512(w + 4 * h), w1 = _mm512_load_si512(w + 4 * h + 1),
                                      w2 = _mm512_load_si512(w + 4 * h + 2), w3 = _mm512_load_si512(w + 4 * h + 3);
#pragma GCC unroll 8
                        for (int t = 0; t < T; ++t) {
                            const int8_t* a = xq[t] + b * kQBlock + 16 * h;
                            s[0][t] = _mm512_dpbusd_epi32(s[0][t], w0, bcast4(a));
                            s[0][t] = _mm512_dpbusd_epi32(s[0][t], w1, bcast4(a + 4));
                            s[0][t] = _mm512_dpbusd_epi32(s[0][t], w2, bcast4(a + 8));
                            s[0][t] = _mm512_dpbusd_epi32(s[0][t], w3, bcast4(a + 12));
                        }
                    }
                } else {
#pragma GCC unroll 8
                    for (int v = 0; v < 8; ++v) {
                        __m512i w[NP];
#pragma GCC unroll 2
                        for (int np = 0; np < NP; ++np) w[np] = _mm512_load_si512(codes[np] + b * 8 + v);
#pragma GCC unroll 8
                        for (int t = 0; t < T; ++t) {
                            const __m512i a = bcast4(xq[t] + b * kQBlock + 4 * v);
#pragma GCC unroll 2
                            for (int np = 0; np < NP; ++np) s[np][t] = _mm512_dpbusd_epi32(s[np][t], w[np], a);
                        }
                    }
                }
#pragma GCC unroll 2
                for (int np = 0; np < NP; ++np) {
                    const __m512 sw = scales[np][b];
#pragma GCC unroll 8
                    for (int t = 0; t < T; ++t)
                        acc[l][np][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[np][t]),
                                                        _mm512_mul_ps(sw, _mm512_set1_ps(sx[t][b])), acc[l][np][t]);
                }
            }
#pragma GCC unroll 2
        for (int l = 0; l < kLive; ++l)
#pragma GCC unroll 2
            for (int np = 0; np < NP; ++np)
#pragma GCC unroll 8
                for (int t = 0; t < T; ++t) part[sweep * kLive + l][np][t] = acc[l][np][t];
    }
#pragma GCC unroll 2
    for (int np = 0; np < NP; ++np)
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
            const __m512 total = kP == 4 ? _mm512_add_ps(_mm512_add_ps(part[0][np][t], part[1][np][t]),
                                                         _mm512_add_ps(part[2 % kP][np][t], part[3 % kP][np][t]))
                                         : _mm512_add_ps(part[0][np][t], part[1][np][t]);
            _mm512_mask_storeu_ps(out + int64_t(t0 + t) * out_stride + np * kPanelRows, rows[np], total);
        }
}

template <int Bits, class S>
void tile_impl(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const TileActs& x, int n, float* out,
               int64_t out_stride) {
    const int64_t padded = x.padded, G = q.groups_per_row;
    struct alignas(64) Line {
        uint8_t bytes[64];
    };
    // Two panels' buffers (codes, scales), then the groups' scratch.
    const int64_t per_panel = padded * 8 + padded;
    thread_local std::vector<Line> buf;
    buf.resize(size_t(2 * per_panel + G));
    __m512i* codes_of[2];
    __m512* scales_of[2];
    for (int k = 0; k < 2; ++k) {
        codes_of[k] = reinterpret_cast<__m512i*>(buf.data() + k * per_panel);
        scales_of[k] = reinterpret_cast<__m512*>(buf.data() + k * per_panel + padded * 8);
    }
    __m512* groups = reinterpret_cast<__m512*>(buf.data() + 2 * per_panel);
    for (int64_t r = r0; r < r1;) {
        // Two panels (32 rows) a pass where there are more than 16 rows left, else one.
        const int np = r1 - r > kPanelRows ? 2 : 1;
        int rows_of[2] = {0, 0};
        __mmask16 m[2] = {0, 0};
        for (int k = 0; k < np; ++k) {
            rows_of[k] = int(std::min<int64_t>(kPanelRows, r1 - r - k * kPanelRows));
            pack_panel<Bits, S>(q, base, r + k * kPanelRows, rows_of[k], padded, codes_of[k], scales_of[k], groups);
            m[k] = first_n16(rows_of[k]);
        }
        const int rows = rows_of[0] + rows_of[1];
        float* o = out + r;
        // The next rows' codes (the next pass's 32 consecutive rows) are prefetched into L2 a
        // slice per pass of tokens, so that their repacking does not wait on memory: in a 1B
        // prefill the weights come from DRAM once per chunk of tokens, and the repacking's loads
        // of 16 rows had stalled.
        const int64_t next_r = r + rows;
        const AheadLines next{
            reinterpret_cast<const char*>(base + next_r * q.row_bytes),
            next_r < r1 ? (std::min<int64_t>(2 * kPanelRows, r1 - next_r) * q.row_bytes + 63) / 64 : 0};
        const int passes = std::max(1, n / kTokens);
        const auto run = [&](auto panels) {
            constexpr int kNP = decltype(panels)::value;
            int t = 0;
            for (int pass = 0; t + kTokens <= n; t += kTokens, ++pass) {
                next.prefetch_part(pass, passes);
                panel_tokens<Bits, kNP, kTokens>(codes_of, scales_of, x, t, m, o, out_stride);
            }
            switch (n - t) {
                case 3: panel_tokens<Bits, kNP, 3>(codes_of, scales_of, x, t, m, o, out_stride); break;
                case 2: panel_tokens<Bits, kNP, 2>(codes_of, scales_of, x, t, m, o, out_stride); break;
                case 1: panel_tokens<Bits, kNP, 1>(codes_of, scales_of, x, t, m, o, out_stride); break;
                default: break;
            }
        };
        if (np == 2)
            run(std::integral_constant<int, 2>{});
        else
            run(std::integral_constant<int, 1>{});
        if (!q.symmetric)
            for (int j = 0; j < rows; ++j)
                for (int tt = 0; tt < n; ++tt)
                    o[int64_t(tt) * out_stride + j] -= zero_correction_vnni512(q, base, r + j, x.cg + tt * x.cg_stride);
        r += rows;
    }
}

// FP16 / BF16 weights × T tokens (x[t], out[t]), 16 rows in the lanes: wt[d] holds column d of the
// panel widened to floats. dot_half_avx512 keeps four 16-lane FMA chains a0..a3 (column d in a_{(d%64)/16}, lane
// d%16, in steps of 64; the columns past the last 64 into a0, 16 at a time), adds them as
// (a0 + a1) + (a2 + a3) and reduces the 16 lanes as _mm512_reduce_add_ps does: ((l_j + l_{8+j})
// pairwise down to 4, then (t0 + t2) + (t1 + t3)). Here lane e of every row is one vector, so the
// same operations in the same order give each row's dot product. (Masked-off lanes of the last
// chunk add fma(0, 0, a) = a: a sum that starts at +0 never becomes −0, so skipping them is exact.)
//
// The columns are taken 1,024 at a time (the chains' 16 × T × 4 vectors kept in L1 between the
// chunks): each lane e's chains read every 16th activation, so a pass over all the columns for
// one e touched every line of the T tokens' activations, which at 8,192 columns (128 KiB for 4
// tokens) do not fit L1 and came from L2 sixteen times. Each chain's FMAs keep their order.
template <int T>
void half_panel_tokens(const __m512* wt, int64_t n, const float* const* x, float* const* out, __mmask16 rows) {
    constexpr int64_t kChunk = 1024;  // columns per pass (a multiple of 64)
    const int64_t n64 = n / 64 * 64;
    __m512 A[T][16];
    alignas(64) __m512 chains[16][T][4];
    for (int64_t c0 = 0; c0 < n64; c0 += kChunk) {
        const int64_t c1 = std::min(n64, c0 + kChunk);
        for (int e = 0; e < 16; ++e) {
            __m512 s[T][4];
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t)
#pragma GCC unroll 4
                for (int k = 0; k < 4; ++k) s[t][k] = c0 == 0 ? _mm512_setzero_ps() : chains[e][t][k];
            for (int64_t i = c0; i < c1; i += 64)
#pragma GCC unroll 4
                for (int k = 0; k < 4; ++k) {
                    const __m512 w = wt[i + 16 * k + e];
#pragma GCC unroll 4
                    for (int t = 0; t < T; ++t)
                        s[t][k] = _mm512_fmadd_ps(_mm512_set1_ps(x[t][i + 16 * k + e]), w, s[t][k]);
                }
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t)
#pragma GCC unroll 4
                for (int k = 0; k < 4; ++k) chains[e][t][k] = s[t][k];
        }
    }
    for (int e = 0; e < 16; ++e) {
        __m512 s[T][4];
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) s[t][k] = n64 == 0 ? _mm512_setzero_ps() : chains[e][t][k];
        for (int64_t i = n64; i + e < n; i += 16)
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) s[t][0] = _mm512_fmadd_ps(_mm512_set1_ps(x[t][i + e]), wt[i + e], s[t][0]);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
            A[t][e] = _mm512_add_ps(_mm512_add_ps(s[t][0], s[t][1]), _mm512_add_ps(s[t][2], s[t][3]));
    }
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
        __m512 t3[8], t6[4];
        for (int j = 0; j < 8; ++j) t3[j] = _mm512_add_ps(A[t][8 + j], A[t][j]);
        for (int j = 0; j < 4; ++j) t6[j] = _mm512_add_ps(t3[4 + j], t3[j]);
        const __m512 r = _mm512_add_ps(_mm512_add_ps(t6[0], t6[2]), _mm512_add_ps(t6[1], t6[3]));
        _mm512_mask_storeu_ps(out[t], rows, r);
    }
}

}  // namespace

void tile_vnni512(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const TileActs& x, int n, float* out,
                  int64_t out_stride) {
    with_bits_and_scale_type(q, [&](auto bits, auto s) {
        tile_impl<decltype(bits)::value, decltype(s)>(q, base, r0, r1, x, n, out, out_stride);
    });
}

void half_tokens_avx512(Half h, const uint16_t* w, int64_t in_dim, int64_t r0, int64_t r1, const float* in, int n,
                        float* out, int64_t out_dim) {
    struct alignas(64) Line {
        float v[16];
    };
    thread_local std::vector<Line> buf;
    const int64_t cols = (in_dim + 15) / 16 * 16;
    buf.resize(size_t(cols));
    __m512* wt = reinterpret_cast<__m512*>(buf.data());
    for (int64_t r = r0; r < r1; r += kPanelRows) {
        const int rows = int(std::min<int64_t>(kPanelRows, r1 - r));
        for (int64_t c0 = 0; c0 < in_dim; c0 += 16) {
            const __mmask16 m = first_n16(in_dim - c0);
            __m512i v[16];
            for (int j = 0; j < 16; ++j) {
                const uint16_t* p = w + (r + j) * in_dim + c0;
                v[j] = j >= rows        ? _mm512_setzero_si512()
                       : h == Half::F16 ? _mm512_castps_si512(widen16<Half::F16>(p, m))
                                        : _mm512_castps_si512(widen16<Half::BF16>(p, m));
            }
            transpose16(v);
            for (int i = 0; i < 16; ++i) wt[c0 + i] = _mm512_castsi512_ps(v[i]);
        }
        const __mmask16 m = first_n16(rows);
        for_token_tiles(n, [&](auto count, int t) {
            constexpr int kT = decltype(count)::value;
            const float* x[kT];
            float* o[kT];
            for (int k = 0; k < kT; ++k) {
                x[k] = in + int64_t(t + k) * in_dim;
                o[k] = out + int64_t(t + k) * out_dim + r;
            }
            half_panel_tokens<kT>(wt, in_dim, x, o, m);
        });
    }
}

}  // namespace edge::runtime::qkernels::detail

#endif
