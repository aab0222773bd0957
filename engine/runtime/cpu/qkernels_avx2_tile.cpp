// The AVX2 tile kernel for several tokens at once (prefill and every batched forward pass on a
// processor without AVX-512 VNNI, such as AMD Zen 3) on row-mode QI4 / QI8 weights whose layout
// rows_math takes (row_layout_ok). Each row is computed exactly as the one-token kernel computes it
// (qkernels_avx2.cpp, row_math_avx2: whole-block integer sums, one FMA per block into P partial
// sums in block order, the partials added in a fixed order), so a row's result does not depend on
// the batch or the tile; only the layout in the registers differs:
//
//   rows in lanes  A panel of 8 rows is repacked once per call, 8 vectors per block of 32 columns
//                  (vector k: elements 4k..4k+3 of each of the 8 rows in its 32-bit lane; INT4
//                  nibbles split, INT8 codes as |code| with the signed codes beside them), plus
//                  one vector of the 8 rows' scales per block. A token's activations meet a block
//                  through 8 vpmaddubsw whose activation operand is 4 bytes broadcast to every
//                  lane. INT4: the 8 products are added as int16 (each is at most 2·15·127, so 8
//                  of them stay below 2^15) and widened once per block by one vpmaddwd; INT8
//                  (products up to 2·128·127) is widened at every step, after the activations
//                  take the codes' signs (vpsignb).
//
// Per 8 rows × 32 columns × token (256 multiply-adds): INT4 8 vpmaddubsw, 7 int16 adds, then one
// vpmaddwd, an add of −8·Σxq, a convert, a multiply of the scale products and an FMA; the
// one-token kernel needs ~30 operations for the same work (a nibble split per row and block, a
// vpmaddwd per block, the reduction of each block's lanes). Two panels (16 rows) and 4 tokens
// share each step: 2 code loads and 4 broadcasts per 8 vpmaddubsw.
#include "qkernels_impl.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c")
#if defined(__clang__)  // (clang-tidy parses this file: the same target for its functions)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "half_lanes.h"

namespace edge::runtime::qkernels::detail {

namespace {

constexpr int kPanel = 8;   // rows per panel: one per 32-bit lane
constexpr int kPanels = 2;  // panels per pass

// r[j] (row j, 8 words) -> r[k] (word k of each of the 8 rows, row j in lane j).
inline void transpose8(__m256i r[8]) {
    __m256i t[8], u[8];
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // Per 128-bit lane L of u[4i + j]: rows 4i..4i+3 of word 4L + j.
    for (int i = 0; i < 2; ++i) {
        u[4 * i + 0] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int j = 0; j < 4; ++j) {
        r[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
        r[4 + j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
    }
}

inline float scale1(float s) { return s; }
inline float scale1(uint16_t h) { return _cvtsh_ss(h); }

// How far ahead of its loads the repacking prefetches each row into L1. The next pass's rows are
// also asked into L2 during this pass (AheadLines below), yet `perf` put 55% of the repacking's
// time (18% of an AVX2 INT8 128-token prefill of the 1B shape) on the row loads: the 8 rows' lines
// still came from memory. 256 bytes (4 lines a row) ahead: INT8 128-token prefill 124 -> 134
// tokens/s (medians of 6 alternating runs, Zen 5 with EDGE_KERNELS=avx2).
constexpr int64_t kPackAhead = 256;

// One panel repacked: codes[b·8 + k] (INT8: |codes|, signs[b·8 + k] the signed codes) and
// scales[b] for the B blocks of the row; rows past `rows` are zero.
struct Panel {
    __m256i* codes;
    __m256i* signs;
    __m256* scales;
};

template <int Bits, class S>
void pack_panel(const QuantInfo& q, const uint8_t* base, int64_t r0, int rows, int64_t B, const Panel& p,
                std::vector<float>& group_scales) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    constexpr int64_t kBlockBytes = Bits == 4 ? kQBlock / 2 : kQBlock;
    for (int64_t b = 0; b < B; ++b) {
        __m256i r[8];
        // Once per 64-byte line of each row, the line kPackAhead bytes on into L1 (see kPackAhead).
        const bool new_line = (b * kBlockBytes) % 64 == 0;
        for (int j = 0; j < kPanel; ++j) {
            if (j >= rows) {
                r[j] = _mm256_setzero_si256();
                continue;
            }
            const uint8_t* row = base + (r0 + j) * q.row_bytes;
            if (new_line) _mm_prefetch(reinterpret_cast<const char*>(row + b * kBlockBytes + kPackAhead), _MM_HINT_T0);
            if constexpr (Bits == 4) {
                const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + b * (kQBlock / 2)));
                r[j] = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), low4);
            } else {
                r[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + b * kQBlock));
            }
        }
        transpose8(r);
        for (int k = 0; k < 8; ++k) {
            if constexpr (Bits == 4) {
                _mm256_store_si256(p.codes + b * 8 + k, r[k]);
            } else {
                _mm256_store_si256(p.codes + b * 8 + k, _mm256_abs_epi8(r[k]));
                _mm256_store_si256(p.signs + b * 8 + k, r[k]);
            }
        }
    }
    // The rows' scales per group (rows by 8), then one vector per block.
    const int64_t G = q.groups_per_row;
    group_scales.assign(size_t(G * kPanel), 0.0f);
    for (int j = 0; j < rows; ++j) {
        const S* s = row_scales<S>(q, base, r0 + j);
        for (int64_t g = 0; g < G; ++g) group_scales[size_t(g * kPanel + j)] = scale1(s[g]);
    }
    for (int64_t b = 0; b < B; ++b) p.scales[b] = _mm256_loadu_ps(group_scales.data() + block_group(q, b) * kPanel);
}

inline __m256i bcast4(const int8_t* a) {
    int32_t v;
    std::memcpy(&v, a, 4);
    return _mm256_set1_epi32(v);
}

// NP panels × T tokens (x[0..T), off[t]: −offset·Σxq per block): out[t·out_stride + np·8 + j]
// for lanes j < rows[np].
template <int Bits, int NP, int T>
void panels_tokens(const Panel* panels, const ActsView* x, const int32_t* const* off, int64_t B, const int* rows,
                   float* out, int64_t out_stride) {
    constexpr int kP = Bits == 4 ? 4 : 2;
    const __m256i ones = _mm256_set1_epi16(1);
    // The P partial sums of each panel and token live in L1, indexed by the block (b mod P): in
    // registers beside the NP·T integer sums, the codes and the broadcast they did not fit, and
    // the compiler's spills cost more than one load and store per block.
    alignas(32) float acc[NP][T][kP][8] = {};
    const int8_t* xq[T];
    const float* sx[T];
    for (int t = 0; t < T; ++t) {
        xq[t] = x[t].q;
        sx[t] = x[t].scale;
    }
    const __m256i* codes[NP];
    const __m256i* signs[NP];
    const __m256* scales[NP];
    for (int np = 0; np < NP; ++np) {
        codes[np] = panels[np].codes;
        signs[np] = panels[np].signs;
        scales[np] = panels[np].scales;
    }
    for (int64_t b = 0; b < B; ++b) {
        const int p = int(b % kP);
        __m256i s[NP][T];
        if constexpr (Bits == 4) {
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) {
                __m256i w[NP];
#pragma GCC unroll 2
                for (int np = 0; np < NP; ++np) w[np] = _mm256_load_si256(codes[np] + b * 8 + k);
#pragma GCC unroll 4
                for (int t = 0; t < T; ++t) {
                    const __m256i xv = bcast4(xq[t] + b * kQBlock + 4 * k);
#pragma GCC unroll 2
                    for (int np = 0; np < NP; ++np) {
                        const __m256i m = _mm256_maddubs_epi16(w[np], xv);
                        s[np][t] = k == 0 ? m : _mm256_add_epi16(s[np][t], m);
                        // (Keeps the sums a chain in a register: GCC otherwise reassociates the
                        // adds into a tree over all 64 products and spills most of them.)
                        asm("" : "+x"(s[np][t]));
                    }
                }
            }
#pragma GCC unroll 2
            for (int np = 0; np < NP; ++np)
#pragma GCC unroll 4
                for (int t = 0; t < T; ++t)
                    s[np][t] = _mm256_add_epi32(_mm256_madd_epi16(s[np][t], ones), _mm256_set1_epi32(off[t][b]));
        } else {
#pragma GCC unroll 2
            for (int np = 0; np < NP; ++np)
#pragma GCC unroll 4
                for (int t = 0; t < T; ++t) s[np][t] = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) {
                __m256i w[NP], sg[NP];
#pragma GCC unroll 2
                for (int np = 0; np < NP; ++np) {
                    w[np] = _mm256_load_si256(codes[np] + b * 8 + k);
                    sg[np] = _mm256_load_si256(signs[np] + b * 8 + k);
                }
#pragma GCC unroll 4
                for (int t = 0; t < T; ++t) {
                    const __m256i xv = bcast4(xq[t] + b * kQBlock + 4 * k);
#pragma GCC unroll 2
                    for (int np = 0; np < NP; ++np) {
                        s[np][t] = _mm256_add_epi32(
                            s[np][t],
                            _mm256_madd_epi16(_mm256_maddubs_epi16(w[np], _mm256_sign_epi8(xv, sg[np])), ones));
                        asm(""
                            : "+x"(s[np][t]));  // (a chain in a register, as for INT4: without it
                                                // GCC kept all 8 steps' products on the stack)
                    }
                }
            }
        }
#pragma GCC unroll 2
        for (int np = 0; np < NP; ++np) {
            const __m256 sw = scales[np][b];
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                float* a = acc[np][t][p];
                _mm256_store_ps(a, _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[np][t]),
                                                   _mm256_mul_ps(sw, _mm256_set1_ps(sx[t][b])), _mm256_load_ps(a)));
            }
        }
    }
    for (int np = 0; np < NP; ++np)
        for (int t = 0; t < T; ++t) {
            const auto v = [&](int p) { return _mm256_load_ps(acc[np][t][p % kP]); };
            const __m256 total = kP == 4 ? _mm256_add_ps(_mm256_add_ps(v(0), v(1)), _mm256_add_ps(v(2), v(3)))
                                         : _mm256_add_ps(v(0), v(1));
            alignas(32) float r[8];
            _mm256_store_ps(r, total);
            std::memcpy(out + int64_t(t) * out_stride + np * kPanel, r, sizeof(float) * size_t(rows[np]));
        }
}

template <int Bits, int NP>
void panels_all_tokens(const Panel* panels, const ActsView* x, const int32_t* off, int64_t B, const int* rows, int n,
                       float* out, int64_t out_stride, const AheadLines& next) {
    const int tiles = std::max(1, n / 4);
    for_token_tiles(n, [&](auto count, int t) {
        constexpr int kT = decltype(count)::value;
        next.prefetch_part(t / 4, tiles);
        const int32_t* o[kT];
        for (int k = 0; k < kT; ++k) o[k] = off + int64_t(t + k) * B;
        panels_tokens<Bits, NP, kT>(panels, x + t, o, B, rows, out + int64_t(t) * out_stride, out_stride);
    });
}

template <int Bits, class S>
void tile_impl(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const ActsView* x, int n, float* out,
               int64_t out_stride) {
    const int64_t B = x[0].blocks;
    constexpr int kVecsPerBlock = Bits == 4 ? 8 : 16;  // codes (and INT8's signed codes)
    struct alignas(32) Vec {
        uint8_t bytes[32];
    };
    thread_local std::vector<Vec> buf;
    thread_local std::vector<float> group_scales;
    thread_local std::vector<int32_t> off;
    buf.resize(size_t(kPanels * B * (kVecsPerBlock + 1)));
    Panel panels[kPanels];
    for (int i = 0; i < kPanels; ++i) {
        __m256i* at = reinterpret_cast<__m256i*>(buf.data() + i * B * (kVecsPerBlock + 1));
        panels[i] = Panel{at, Bits == 8 ? at + B * 8 : nullptr, reinterpret_cast<__m256*>(at + B * kVecsPerBlock)};
    }
    // −offset·Σxq per token and block: INT4 symmetric codes are stored +8 (INT8 codes are signed,
    // asymmetric INT4's zero points are the float correction below).
    const int32_t offset = Bits == 4 && q.symmetric ? 8 : 0;
    off.resize(size_t(int64_t(n) * B));
    for (int t = 0; t < n; ++t)
        for (int64_t b = 0; b < B; ++b) off[size_t(t * B + b)] = -offset * x[t].sum[b];
    for (int64_t r = r0; r < r1; r += kPanels * kPanel) {
        int rows[kPanels];
        int np = 0;
        for (; np < kPanels && r + np * kPanel < r1; ++np) {
            rows[np] = int(std::min<int64_t>(kPanel, r1 - r - np * kPanel));
            pack_panel<Bits, S>(q, base, r + np * kPanel, rows[np], B, panels[np], group_scales);
        }
        // The next pass's codes (16 consecutive rows) come into L2 a slice per tile of tokens, as in
        // the AVX-512 tile, so that packing them does not wait on memory (without it, 16% of a
        // 512-token prefill of the 1B shape was the packing's loads stalled on DRAM).
        const int64_t next_r = r + kPanels * kPanel;
        const AheadLines next{
            reinterpret_cast<const char*>(base + next_r * q.row_bytes),
            next_r < r1 ? (std::min<int64_t>(kPanels * kPanel, r1 - next_r) * q.row_bytes + 63) / 64 : 0};
        if (np == 2)
            panels_all_tokens<Bits, 2>(panels, x, off.data(), B, rows, n, out + r, out_stride, next);
        else
            panels_all_tokens<Bits, 1>(panels, x, off.data(), B, rows, n, out + r, out_stride, next);
        if (!q.symmetric)
            for (int64_t j = r; j < std::min(r1, r + kPanels * kPanel); ++j)
                for (int t = 0; t < n; ++t)
                    out[int64_t(t) * out_stride + j] -= zero_correction_avx2(q, base, j, x[t].cg);
    }
}

// FP16 / BF16 weights × T tokens, 8 rows in the lanes: wt[d] holds column d of the panel widened to
// floats. dot_half_avx2 keeps two 8-lane FMA chains a0, a1 (column d in a_{(d%16)/8}, lane d%8, in steps of
// 16; one last whole 8 into a0), adds them, reduces the 8 lanes as its hsum does (((l0 + l4) +
// (l2 + l6)) + ((l1 + l5) + (l3 + l7))) and adds the portable dot of the last n % 8 columns. Here
// lane e of every row is one vector, so the same operations in the same order give each row's
// dot product. The columns are taken 1,024 at a time, the chains kept in L1 between the chunks
// (as the AVX-512 FP16 tile does): a pass over all the columns for one lane touched every line of
// the T tokens' activations, which at 8,192 columns do not fit L1.
template <int T>
void half_panel_tokens(Half h, const __m256* wt, const uint16_t* w, int64_t in_dim, int rows, const float* const* x,
                       float* const* out) {
    constexpr int64_t kChunk = 1024;  // columns per pass (a multiple of 16)
    const int64_t n16 = in_dim / 16 * 16, n8 = in_dim / 8 * 8;
    __m256 A[T][8];
    alignas(32) __m256 chains[8][T][2];
    for (int64_t c0 = 0; c0 < std::max<int64_t>(n16, 1); c0 += kChunk) {
        const int64_t c1 = std::min(n16, c0 + kChunk);
        for (int e = 0; e < 8; ++e) {
            __m256 s0[T], s1[T];
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                s0[t] = c0 == 0 ? _mm256_setzero_ps() : chains[e][t][0];
                s1[t] = c0 == 0 ? _mm256_setzero_ps() : chains[e][t][1];
            }
            for (int64_t i = c0; i < c1; i += 16) {
                const __m256 w0 = wt[i + e], w1 = wt[i + 8 + e];
#pragma GCC unroll 4
                for (int t = 0; t < T; ++t) {
                    s0[t] = _mm256_fmadd_ps(_mm256_broadcast_ss(x[t] + i + e), w0, s0[t]);
                    s1[t] = _mm256_fmadd_ps(_mm256_broadcast_ss(x[t] + i + 8 + e), w1, s1[t]);
                }
            }
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                chains[e][t][0] = s0[t];
                chains[e][t][1] = s1[t];
            }
        }
    }
    for (int e = 0; e < 8; ++e) {
        __m256 s0[T], s1[T];
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            s0[t] = chains[e][t][0];
            s1[t] = chains[e][t][1];
        }
        if (n8 > n16)
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t)
                s0[t] = _mm256_fmadd_ps(_mm256_broadcast_ss(x[t] + n16 + e), wt[n16 + e], s0[t]);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) A[t][e] = _mm256_add_ps(s0[t], s1[t]);
    }
    for (int t = 0; t < T; ++t) {
        const __m256 r = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(A[t][0], A[t][4]), _mm256_add_ps(A[t][2], A[t][6])),
                                       _mm256_add_ps(_mm256_add_ps(A[t][1], A[t][5]), _mm256_add_ps(A[t][3], A[t][7])));
        alignas(32) float v[8];
        _mm256_store_ps(v, r);
        for (int j = 0; j < rows; ++j)
            out[t][j] = n8 < in_dim ? v[j] + dot_half_portable(h, w + j * in_dim + n8, x[t] + n8, in_dim - n8) : v[j];
    }
}

}  // namespace

void tile_avx2(const QuantInfo& q, const uint8_t* base, int64_t r0, int64_t r1, const ActsView* x, int n, float* out,
               int64_t out_stride) {
    with_bits_and_scale_type(q, [&](auto bits, auto s) {
        tile_impl<decltype(bits)::value, decltype(s)>(q, base, r0, r1, x, n, out, out_stride);
    });
}

void half_tokens_avx2(Half h, const uint16_t* w, int64_t in_dim, int64_t r0, int64_t r1, const float* in, int n,
                      float* out, int64_t out_dim) {
    struct alignas(32) Vec {
        float v[8];
    };
    thread_local std::vector<Vec> buf;
    const int64_t n8 = in_dim / 8 * 8;
    buf.resize(size_t(std::max<int64_t>(n8, 8)));
    __m256* wt = reinterpret_cast<__m256*>(buf.data());
    for (int64_t r = r0; r < r1; r += kPanel) {
        const int rows = int(std::min<int64_t>(kPanel, r1 - r));
        for (int64_t c0 = 0; c0 < n8; c0 += 8) {
            __m256i v[8];
            for (int j = 0; j < kPanel; ++j) {
                const uint16_t* p = w + (r + j) * in_dim + c0;
                v[j] = j >= rows        ? _mm256_setzero_si256()
                       : h == Half::F16 ? _mm256_castps_si256(widen8<Half::F16>(p))
                                        : _mm256_castps_si256(widen8<Half::BF16>(p));
            }
            transpose8(v);
            for (int i = 0; i < 8; ++i) wt[c0 + i] = _mm256_castsi256_ps(v[i]);
        }
        for_token_tiles(n, [&](auto count, int t) {
            constexpr int kT = decltype(count)::value;
            const float* x[kT];
            float* o[kT];
            for (int k = 0; k < kT; ++k) {
                x[k] = in + int64_t(t + k) * in_dim;
                o[k] = out + int64_t(t + k) * out_dim + r;
            }
            half_panel_tokens<kT>(h, wt, w + r * in_dim, in_dim, rows, x, o);
        });
    }
}

}  // namespace edge::runtime::qkernels::detail

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif
