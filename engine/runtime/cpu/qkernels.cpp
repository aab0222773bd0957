#include "qkernels.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "engine/core/half.h"
#include "engine/model/ggml_dequant.h"
#include "kernels.h"
#include "qkernels_impl.h"

using edge::model::can_dequantize;

namespace edge::runtime::qkernels {

using namespace detail;

namespace {

// The cap on the kernel family: force_kernels, or at start the environment's EDGE_KERNELS (a
// family's name as kernel_name() gives it, or "auto"), which lets a processor with AVX-512 run
// the AVX2 kernels of an AVX2-only host, say, in any command (docs/benchmarks.md).
int initial_cap() {
    const char* e = std::getenv("EDGE_KERNELS");
    if (!e || !*e) return int(KernelLevel::Auto);
    const std::pair<const char*, KernelLevel> names[] = {
        {"auto", KernelLevel::Auto},
        {"portable", KernelLevel::Portable},
#if defined(__aarch64__)
        {"neon", KernelLevel::Neon},
        {"neon-dotprod", KernelLevel::NeonDotprod},
#else
        {"avx2", KernelLevel::Avx2},
        {"avx512-vnni", KernelLevel::Avx512Vnni},
        {"avx512-vnni-gfni", KernelLevel::Avx512VnniGfni},
#endif
    };
    std::string known;
    for (const auto& [name, level] : names) {
        if (std::strcmp(e, name) == 0) return int(level);
        known += known.empty() ? name : std::string(", ") + name;
    }
    std::fprintf(stderr, "EDGE_KERNELS=%s: not a kernel family here (%s); using auto\n", e, known.c_str());
    return int(KernelLevel::Auto);
}

std::atomic<int> g_cap{initial_cap()};

[[maybe_unused]] bool cpu_has_avx2() {
#if defined(__x86_64__)
    static const bool has = [] {
        __builtin_cpu_init();
        // F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports has no "f16c".
        unsigned a = 0, b = 0, c = 0, d = 0;
        const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u) != 0;
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    }();
    return has;
#else
    return false;
#endif
}

[[maybe_unused]] bool cpu_has_vnni512() {
#if defined(__x86_64__)
    static const bool has = [] {
        __builtin_cpu_init();
        return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vnni");
    }();
    return has;
#else
    return false;
#endif
}

[[maybe_unused]] bool cpu_has_gfni() {
#if defined(__x86_64__)
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("gfni");
    }();
    return has;
#else
    return false;
#endif
}

std::atomic<int> g_prefetch{int(RowPrefetch::Auto)};
std::atomic<int> g_lead{0};

KernelLevel hw_level() {
#if defined(__aarch64__)
    return cpu_has_neon_dotprod() ? KernelLevel::NeonDotprod : KernelLevel::Neon;  // NEON is part of aarch64
#else
    if (cpu_has_vnni512()) return cpu_has_gfni() ? KernelLevel::Avx512VnniGfni : KernelLevel::Avx512Vnni;
    return cpu_has_avx2() ? KernelLevel::Avx2 : KernelLevel::Portable;
#endif
}

KernelLevel best_level() {
    const KernelLevel hw = hw_level();
    return KernelLevel(std::min(int(hw), g_cap.load(std::memory_order_relaxed)));
}

bool use_avx2() { return best_level() >= KernelLevel::Avx2; }

// Row-mode QI tensors whose groups are whole 32-element blocks, and ggml's Q4_K/Q5_K/Q6_K
// (rows of whole super-blocks), take the integer path.
bool integer_path(const Tensor& w) {
    if (kquant_integer(w.type)) return w.cols() % kKQuantBlock == 0;
    if ((w.type != DType::QI8 && w.type != DType::QI4) || !w.quant) return false;
    const QuantInfo& q = *w.quant;
    return q.row_mode() && (q.grouping == QGrouping::PerChannel || q.group_size % kQBlock == 0);
}

float row_dot_int(const Tensor& w, int64_t r, const ActsView& x, bool avx2) {
    if (kquant_integer(w.type)) {
        const uint8_t* row = w.data.get() + size_t(r) * dtype_bytes(w.type, w.cols());
#if defined(__x86_64__)
        if (avx2) return row_dot_kquant_avx2(w.type, row, x);
#endif
        return row_dot_kquant_portable(w.type, row, x);
    }
    const QuantInfo& q = *w.quant;
    const uint8_t* base = w.data.get();
#if defined(__x86_64__)
    if (avx2) return q.bits == 8 ? row_dot_q8_avx2(q, base, r, x) : row_dot_q4_avx2(q, base, r, x);
#elif defined(__aarch64__)
    if (avx2) {  // here: NEON at least
        if (best_level() >= KernelLevel::NeonDotprod)
            return q.bits == 8 ? row_dot_q8_dotprod(q, base, r, x) : row_dot_q4_dotprod(q, base, r, x);
        return q.bits == 8 ? row_dot_q8_neon(q, base, r, x) : row_dot_q4_neon(q, base, r, x);
    }
#else
    (void)avx2;
#endif
    return q.bits == 8 ? row_dot_q8_portable(q, base, r, x) : row_dot_q4_portable(q, base, r, x);
}

}  // namespace

namespace detail {

namespace {
inline float scale_f32(float s) { return s; }
inline float scale_f32(uint16_t h) { return f16_to_f32(h); }
}  // namespace

template <class S>
static float row_dot_q8_portable_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const int8_t* codes = reinterpret_cast<const int8_t*>(base + r * q.row_bytes);
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    float acc = 0.0f;
    for (int64_t b = 0; b < x.blocks; ++b) {
        int32_t s = 0;
        const int8_t* c = codes + b * kQBlock;
        const int8_t* xq = x.q + b * kQBlock;
        for (int j = 0; j < kQBlock; ++j) s += int32_t(c[j]) * int32_t(xq[j]);
        const int64_t g = block_group(q, b);
        if (zw) s -= int32_t(zw[g]) * x.sum[b];
        acc += scale_f32(sw[g]) * x.scale[b] * float(s);
    }
    return acc;
}

template <class S>
static float row_dot_q4_portable_t(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    const uint8_t* codes = base + r * q.row_bytes;
    const S* sw = row_scales<S>(q, base, r);
    const int8_t* zw =
        q.symmetric ? nullptr : reinterpret_cast<const int8_t*>(base + q.zeros_offset) + r * q.groups_per_row;
    float acc = 0.0f;
    for (int64_t b = 0; b < x.blocks; ++b) {
        int32_t s = 0;
        const uint8_t* c = codes + b * (kQBlock / 2);
        const int8_t* xq = x.q + b * kQBlock;
        for (int j = 0; j < kQBlock / 2; ++j)
            s += int32_t(c[j] & 0x0f) * int32_t(xq[j]) + int32_t(c[j] >> 4) * int32_t(xq[j + kQBlock / 2]);
        const int64_t g = block_group(q, b);
        s -= int32_t(zw ? zw[g] : 8) * x.sum[b];
        acc += scale_f32(sw[g]) * x.scale[b] * float(s);
    }
    return acc;
}

float row_dot_q8_portable(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) { return row_dot_q8_portable_t<decltype(s)>(q, base, r, x); });
}
float row_dot_q4_portable(const QuantInfo& q, const uint8_t* base, int64_t r, const ActsView& x) {
    return with_scale_type(q, [&](auto s) { return row_dot_q4_portable_t<decltype(s)>(q, base, r, x); });
}

float dot_half_portable(Half h, const uint16_t* w, const float* x, int64_t n) {
    float s = 0.0f;
    if (h == Half::F16)
        for (int64_t i = 0; i < n; ++i) s += f16_to_f32(w[i]) * x[i];
    else
        for (int64_t i = 0; i < n; ++i) s += bf16_to_f32(w[i]) * x[i];
    return s;
}

void quantize_block_portable(const float* x, int64_t n, int8_t* q, float* scale, int32_t* sum) {
    float amax = 0.0f;
    for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float d = amax / 127.0f;
    const float inv = d > 0.0f ? 1.0f / d : 0.0f;
    int32_t s = 0;
    for (int64_t i = 0; i < kQBlock; ++i) {
        const int v = i < n ? int(std::nearbyint(x[i] * inv)) : 0;
        q[i] = int8_t(std::clamp(v, -127, 127));
        s += q[i];
    }
    *scale = d;
    *sum = s;
}

}  // namespace detail

bool kernel_available(KernelLevel level) { return level == KernelLevel::Auto || int(level) <= int(hw_level()); }
void force_kernels(KernelLevel cap) { g_cap.store(int(cap), std::memory_order_relaxed); }
KernelLevel kernel_level() { return best_level(); }
const char* kernel_name() {
    const KernelLevel l = best_level();
#if defined(__aarch64__)
    return l == KernelLevel::NeonDotprod ? "neon-dotprod" : l == KernelLevel::Neon ? "neon" : "portable";
#else
    return l == KernelLevel::Avx512VnniGfni ? "avx512-vnni-gfni"
           : l == KernelLevel::Avx512Vnni ? "avx512-vnni"
           : l == KernelLevel::Avx2 ? "avx2"
                                    : "portable";
#endif
}
void force_row_prefetch(RowPrefetch p) { g_prefetch.store(int(p), std::memory_order_relaxed); }

RowPrefetch row_prefetch() {
    const auto forced = RowPrefetch(g_prefetch.load(std::memory_order_relaxed));
    if (forced != RowPrefetch::Auto) return forced;
#if defined(__x86_64__)
    static const RowPrefetch by_vendor = [] {
        __builtin_cpu_init();
        return __builtin_cpu_is("amd") ? RowPrefetch::SequentialL1 : RowPrefetch::RowsL2;
    }();
    return by_vendor;
#else
    return RowPrefetch::RowsL2;
#endif
}

void force_prefetch_lead(int passes) { g_lead.store(std::max(0, passes), std::memory_order_relaxed); }

int prefetch_lead(int bits) {
    const int forced = g_lead.load(std::memory_order_relaxed);
    return forced > 0 ? forced : bits == 4 ? 2 : 1;
}

const char* row_prefetch_name(RowPrefetch p) {
    return p == RowPrefetch::RowsL2 ? "rows-l2" : p == RowPrefetch::SequentialL1 ? "sequential-l1" : "auto";
}

void force_portable(bool on) { force_kernels(on ? KernelLevel::Portable : KernelLevel::Auto); }

bool supported(const Tensor& w) {
    switch (w.type) {
        case DType::F32:
        case DType::F16:
        case DType::BF16: return w.data != nullptr;
        case DType::QI8:
        case DType::QI4: return w.data != nullptr && w.quant && w.quant->rows * w.quant->cols == w.numel();
        default:
            // ggml's other block types (Q4_1, Q5_x, K-quants) as a GGUF file stores them, rows of
            // whole blocks: multiplied a dequantized row at a time (the float path).
            return w.data != nullptr && dtype_block_elems(w.type) > 1 && can_dequantize(w.type) &&
                   w.cols() % dtype_block_elems(w.type) == 0;
    }
}

void dequantize_row(const Tensor& w, int64_t r, float* out) {
    const int64_t cols = w.cols();
    switch (w.type) {
        case DType::F32: std::memcpy(out, w.f32() + r * cols, sizeof(float) * size_t(cols)); return;
        case DType::F16:
        case DType::BF16: {
            const auto* p = reinterpret_cast<const uint16_t*>(w.data.get()) + r * cols;
            for (int64_t c = 0; c < cols; ++c) out[c] = w.type == DType::F16 ? f16_to_f32(p[c]) : bf16_to_f32(p[c]);
            return;
        }
        case DType::QI8:
        case DType::QI4: {
            const QuantInfo& q = *w.quant;
            const uint8_t* base = w.data.get();
            // Scale and zero read once per group, not per element (a half scale is a conversion).
            int64_t g_read = -1;
            float scale = 0.0f;
            int zero = 0;
            for (int64_t c = 0; c < cols; ++c) {
                const int64_t g = q.group_of(r, c);
                if (g != g_read) {
                    scale = quant_scale(q, base, g);
                    zero = quant_zero(q, base, g);
                    g_read = g;
                }
                out[c] = scale * float(quant_code(q, base, r, c) - zero);
            }
            return;
        }
        default:
            // ggml block types (supported() checked the rows are whole blocks).
            if (!edge::model::dequantize(w.type, w.data.get() + size_t(r) * dtype_bytes(w.type, cols), out, cols).ok())
                std::fill(out, out + cols, 0.0f);
    }
}

std::vector<float> dequantize(const Tensor& w) {
    std::vector<float> out(size_t(w.numel()));
    const int64_t rows = w.rows(), cols = w.cols();
    for (int64_t r = 0; r < rows; ++r) dequantize_row(w, r, out.data() + r * cols);
    return out;
}

void quantize_acts(const float* x, int64_t n, QActs& out) {
    out.blocks = (n + kQBlock - 1) / kQBlock;
    out.q.resize(size_t(out.blocks * kQBlock));
    out.scale.resize(size_t(out.blocks));
    out.sum.resize(size_t(out.blocks));
#if defined(__x86_64__)
    if (best_level() >= KernelLevel::Avx512Vnni) {
        quantize_acts_avx512(x, n, out.q.data(), out.scale.data(), out.sum.data());
        return;
    }
    if (best_level() >= KernelLevel::Avx2) {
        quantize_acts_avx2(x, n, out.q.data(), out.scale.data(), out.sum.data());
        return;
    }
#endif
    for (int64_t b = 0; b < out.blocks; ++b)
        quantize_block_portable(x + b * kQBlock, std::min(kQBlock, n - b * kQBlock), &out.q[size_t(b * kQBlock)],
                                &out.scale[size_t(b)], &out.sum[size_t(b)]);
}

namespace detail {
void group_act_sums(const QuantInfo& q, const float* scale, const int32_t* sum, int64_t blocks, float* cg) {
    const int64_t bpg = q.grouping == QGrouping::PerChannel ? blocks : q.group_size / kQBlock;
    std::fill(cg, cg + q.groups_per_row, 0.0f);
    for (int64_t g = 0, b = 0; b < blocks; ++g)  // (an integer division per block cost ~1 µs per 2048 inputs)
        for (int64_t k = 0; k < bpg && b < blocks; ++k, ++b) cg[g] += scale[b] * float(sum[b]);
}
}  // namespace detail

namespace {

#if defined(__x86_64__)
// One token's activations in the VnniActs layout (qkernels_impl.h), quantized straight into it
// (the codes of INT4 weights' layout were once copied there 16 bytes at a time from the natural
// order: two memmove calls per block, ~7 µs per block of TinyLlama-1.1B, on one thread, each
// decode step).
struct VnniBuffers {
    std::vector<int8_t> q;
    std::vector<float> scale, cg;
    std::vector<int32_t> sum, lane_off;
};

void prepare_vnni(const float* x, int64_t n, const QuantInfo& qi, VnniBuffers& buf) {
    const int64_t B = (n + kQBlock - 1) / kQBlock, Bp = (B + 3) / 4 * 4;
    buf.q.resize(size_t(Bp * kQBlock));
    buf.scale.resize(size_t(Bp + 16));
    buf.sum.resize(size_t(B));
    // The padding blocks (to whole chunks of 4) and scales are zero: the codes from the last
    // chunk's start on (INT4's layout spreads a block over its chunk) are cleared, then the
    // blocks written over them.
    std::fill(buf.q.begin() + (qi.bits == 4 ? B / 4 * 4 : B) * kQBlock, buf.q.end(), int8_t(0));
    std::fill(buf.scale.begin() + B, buf.scale.end(), 0.0f);
    quantize_acts_avx512(x, n, buf.q.data(), buf.scale.data(), buf.sum.data(), qi.bits == 4);
    buf.cg.resize(size_t(qi.groups_per_row));
    group_act_sums(qi, buf.scale.data(), buf.sum.data(), B, buf.cg.data());
    const int64_t chunks = (B + (qi.bits == 4 ? 3 : 1)) / (qi.bits == 4 ? 4 : 2);
    buf.lane_off.resize(size_t(chunks * 16));
    vnni_lanes_avx512(qi.bits, buf.q.data(), chunks, buf.lane_off.data());
}

// n tokens' activations in the TileActs layout (qkernels_impl.h), quantized in parallel over the
// tokens (a serial quantization of 128 tokens × 8192 inputs before each down projection was a gap
// in which one core waited).
struct TileBuffers {
    std::vector<int8_t> q;
    std::vector<float> scale, cg;
    std::vector<int32_t> off, sum;
    TileActs acts{};
};

void prepare_tile(const float* in, int64_t in_dim, int n, const QuantInfo& qi, TileBuffers& buf, ThreadPool& pool) {
    const int64_t B = (in_dim + kQBlock - 1) / kQBlock, per_chunk = qi.bits == 4 ? 4 : 2;
    const int64_t padded = (B + per_chunk - 1) / per_chunk * per_chunk, G = qi.groups_per_row;
    buf.q.resize(size_t(n * padded * kQBlock));
    buf.scale.resize(size_t(n * padded));
    buf.off.resize(size_t(n * padded));
    buf.sum.resize(size_t(n * padded));
    buf.cg.resize(qi.symmetric ? 0 : size_t(n * G));
    // The codes' fixed offset, removed inside the integer sums (rows_pass: lane_off).
    const int32_t offset = qi.bits == 8 ? 128 : qi.symmetric ? 8 : 0;
    pool.parallel_for(n, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            int8_t* q = buf.q.data() + t * padded * kQBlock;
            float* scale = buf.scale.data() + t * padded;
            int32_t* sum = buf.sum.data() + t * padded;
            int32_t* off = buf.off.data() + t * padded;
            quantize_acts_avx512(in + t * in_dim, in_dim, q, scale, sum, false);
            std::fill(q + B * kQBlock, q + padded * kQBlock, int8_t(0));
            std::fill(scale + B, scale + padded, 0.0f);
            std::fill(sum + B, sum + padded, 0);
            for (int64_t b = 0; b < padded; ++b) off[b] = -offset * sum[b];
            if (!qi.symmetric) group_act_sums(qi, scale, sum, B, buf.cg.data() + t * G);
        }
    });
    buf.acts = TileActs{buf.q.data(), buf.scale.data(), buf.off.data(), buf.cg.data(), padded, G};
}
#endif

// From this many tokens on, VNNI weights are multiplied by the tile kernel (rows in lanes, a panel
// of 16 rows repacked once for all the tokens); fewer go one token at a time through the row kernel.
// Both give the same bits.
constexpr int kTileMinTokens = 4;

// How a weight is multiplied: AVX-512 VNNI tiles, the AVX2/portable integer row dots, or floats
// (F32, F16, BF16 and the dequantize-a-row fallback).
enum class Path { Vnni, Int, Float };

Path path_of(const Tensor& w) {
    if (!integer_path(w)) return Path::Float;
#if defined(__x86_64__)
    if (w.quant && best_level() >= KernelLevel::Avx512Vnni && vnni512_layout_ok(*w.quant)) return Path::Vnni;
#endif
    return Path::Int;
}

// Whether two weights read the same prepared activations (the VNNI layout depends on the bits
// and the groups, the group sums of asymmetric weights on the groups; the float path reads the
// input as it is).
bool same_acts(Path p, const Tensor& a, const Tensor& b) {
    if (p == Path::Float) return true;
    if (!a.quant || !b.quant) return !a.quant && !b.quant;  // (K-quants: the plain blocks)
    const QuantInfo &x = *a.quant, &y = *b.quant;
    // Int: the AVX2 kernels' group sums (ActsView::cg) and tile choice depend on the groups too.
    return (p == Path::Int || x.bits == y.bits) && x.symmetric == y.symmetric && x.grouping == y.grouping &&
           x.group_size == y.group_size && x.groups_per_row == y.groups_per_row && row_layout_ok(x) == row_layout_ok(y);
}

// The activations of n tokens prepared for one weight layout. Buffers are reused across calls
// (one set per slot and calling thread).
struct Slot {
    Path path = Path::Float;
    std::vector<QActs> acts;
#if defined(__x86_64__)
    std::vector<VnniBuffers> bufs;
    std::vector<VnniActs> vnni;
#endif
    std::vector<ActsView> views;
    std::vector<std::vector<float>> cgs;     // asymmetric weights on the AVX2 path: ActsView::cg
    std::vector<std::vector<int8_t>> pairs;  // INT4 one token at a time on AVX2: ActsView::qp

    // kTileMinTokens tokens or more: the tile kernel (Vnni: tile_vnni512 on `tile`; Int on the
    // AVX2 level: tile_avx2 on `views`), else one token at a time.
    bool tiled = false;
#if defined(__x86_64__)
    TileBuffers tile;
#endif

    void prepare(Path p, const Tensor& w, const float* in, int n, ThreadPool& pool) {
        path = p;
        tiled = false;
        if (p == Path::Float) return;
        const int64_t in_dim = w.cols();
#if defined(__x86_64__)
        if (p == Path::Vnni && n >= kTileMinTokens) {
            tiled = true;
            prepare_tile(in, in_dim, n, *w.quant, tile, pool);
            return;
        }
        if (p == Path::Vnni) {
            if (bufs.size() < size_t(n)) bufs.resize(size_t(n));
            vnni.resize(size_t(n));
            for (int t = 0; t < n; ++t) {
                VnniBuffers& v = bufs[size_t(t)];
                prepare_vnni(in + int64_t(t) * in_dim, in_dim, *w.quant, v);
                vnni[size_t(t)] =
                    VnniActs{v.q.data(), v.scale.data(), v.cg.data(), v.lane_off.data(), int64_t(v.sum.size())};
            }
            return;
        }
#endif
        if (acts.size() < size_t(n)) acts.resize(size_t(n));
        // (In parallel over the tokens: serial, it left a core idle before each batched product.)
        pool.parallel_for(n, [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) quantize_acts(in + t * in_dim, in_dim, acts[size_t(t)]);
        });
        views.resize(size_t(n));
        for (int t = 0; t < n; ++t)
            views[size_t(t)] = ActsView{acts[size_t(t)].q.data(), acts[size_t(t)].scale.data(),
                                        acts[size_t(t)].sum.data(), acts[size_t(t)].blocks};
#if defined(__x86_64__)
        // The AVX2 kernels' rows_math: asymmetric weights need each token's group sums, and from
        // kTileMinTokens tokens on the tile kernel multiplies (the same bits as one at a time).
        if (w.quant && use_avx2() && row_layout_ok(*w.quant)) {
            const QuantInfo& qi = *w.quant;
            if (!qi.symmetric) {
                if (cgs.size() < size_t(n)) cgs.resize(size_t(n));
                for (int t = 0; t < n; ++t) {
                    std::vector<float>& cg = cgs[size_t(t)];
                    cg.resize(size_t(qi.groups_per_row));
                    group_act_sums(qi, views[size_t(t)].scale, views[size_t(t)].sum, views[size_t(t)].blocks,
                                   cg.data());
                    views[size_t(t)].cg = cg.data();
                }
            }
            tiled = n >= kTileMinTokens;
            if (!tiled && qi.bits == 4) {
                if (pairs.size() < size_t(n)) pairs.resize(size_t(n));
                for (int t = 0; t < n; ++t) {
                    ActsView& v = views[size_t(t)];
                    pairs[size_t(t)].resize(size_t(v.blocks * kQBlock));
                    pair_acts_avx2(v.q, v.blocks, pairs[size_t(t)].data());
                    v.qp = pairs[size_t(t)].data();
                }
            }
        }
#endif
    }
};

constexpr int kTile = 8;  // tokens that meet one weight row while it is in cache

// Output rows [b, e) of out = in · wᵀ for all n tokens.
void rows(const Slot& s, const Tensor& w, const float* in, int n, float* out, int64_t b, int64_t e, bool avx2) {
    const int64_t out_dim = w.rows(), in_dim = w.cols();
#if defined(__x86_64__)
    if (s.path == Path::Vnni) {
        if (s.tiled) {
            tile_vnni512(*w.quant, w.data.get(), b, e, s.tile.acts, n, out, out_dim);
            return;
        }
        const bool gfni = best_level() >= KernelLevel::Avx512VnniGfni;
        const RowPrefetch pf = row_prefetch();
        const int lead = pf == RowPrefetch::SequentialL1 ? prefetch_lead(w.quant->bits) : 1;
        for (int t = 0; t < n; ++t)
            rows_vnni512(*w.quant, w.data.get(), b, e, s.vnni[size_t(t)], out + int64_t(t) * out_dim, gfni, pf, lead);
        return;
    }
#endif
    if (s.path == Path::Int) {
#if defined(__x86_64__)
        if (s.tiled) {
            tile_avx2(*w.quant, w.data.get(), b, e, s.views.data(), n, out, out_dim);
            return;
        }
        if (!kquant_integer(w.type) && avx2 && w.quant->bits == 4 && s.views[0].qp) {
            const RowPrefetch pf = row_prefetch();
            for (int t = 0; t < n; ++t)
                rows_q4_avx2(*w.quant, w.data.get(), b, e, s.views[size_t(t)], out + int64_t(t) * out_dim, pf,
                             prefetch_lead(4));
            return;
        }
        if (kquant_integer(w.type) && avx2) {
            // Each row meets all the tokens while it is in L1, tiles of tokens sharing its unpacking.
            const size_t row_bytes = dtype_bytes(w.type, in_dim);
            const bool vnni = best_level() >= KernelLevel::Avx512Vnni;
            for (int64_t o = b; o < e; ++o) {
                const uint8_t* row = w.data.get() + size_t(o) * row_bytes;
                vnni ? tokens_kquant_vnni512(w.type, row, s.views.data(), n, out + o, out_dim)
                     : tokens_kquant_avx2(w.type, row, s.views.data(), n, out + o, out_dim);
            }
            return;
        }
#endif
        for (int t0 = 0; t0 < n; t0 += kTile) {
            const int t1 = std::min(n, t0 + kTile);
            for (int64_t o = b; o < e; ++o)
                for (int t = t0; t < t1; ++t)
                    out[int64_t(t) * out_dim + o] = row_dot_int(w, o, s.views[size_t(t)], avx2);
        }
        return;
    }
#if defined(__x86_64__)
    if (w.type == DType::F32 && n >= kTileMinTokens && f32_lanes_apply(in_dim)) {
        f32_rows_lanes(w.f32(), in, n, out, out_dim, in_dim, b, e);
        return;
    }
#endif
    // 16-bit floats as stored (an FP16 GGUF, a BF16 Hugging Face folder: validation's reference
    // side): rows in lanes for 4+ tokens, else one dot per row and token, the same bits either way.
#if defined(__x86_64__)
    const bool half = w.type == DType::F16 || w.type == DType::BF16;
#else
    const bool half = w.type == DType::F16;  // (BF16 rows are widened and take kernels::dot)
#endif
    const Half h = w.type == DType::BF16 ? Half::BF16 : Half::F16;
    const auto* hw = reinterpret_cast<const uint16_t*>(w.data.get());
#if defined(__x86_64__)
    const bool half_512 = half && best_level() >= KernelLevel::Avx512Vnni;
    if (half && avx2 && n >= kTileMinTokens) {
        half_512 ? half_tokens_avx512(h, hw, in_dim, b, e, in, n, out, out_dim)
                 : half_tokens_avx2(h, hw, in_dim, b, e, in, n, out, out_dim);
        return;
    }
#endif
    thread_local std::vector<float> row;
    for (int t0 = 0; t0 < n; t0 += kTile) {
        const int t1 = std::min(n, t0 + kTile);
        for (int64_t o = b; o < e; ++o) {
            const float* wr = nullptr;
            if (w.type == DType::F32) {
                wr = w.f32() + o * in_dim;
#if defined(__aarch64__)
            } else if (w.type == DType::F16 && avx2) {  // (NEON)
                for (int t = t0; t < t1; ++t)
                    out[int64_t(t) * out_dim + o] = dot_f16_neon(hw + o * in_dim, in + int64_t(t) * in_dim, in_dim);
                continue;
#endif
            } else if (half) {
                for (int t = t0; t < t1; ++t) {
                    const uint16_t* hr = hw + o * in_dim;
                    const float* x = in + int64_t(t) * in_dim;
#if defined(__x86_64__)
                    out[int64_t(t) * out_dim + o] = half_512 ? dot_half_avx512(h, hr, x, in_dim)
                                                    : avx2   ? dot_half_avx2(h, hr, x, in_dim)
                                                             : dot_half_portable(h, hr, x, in_dim);
#else
                    out[int64_t(t) * out_dim + o] = dot_half_portable(h, hr, x, in_dim);
#endif
                }
                continue;
            } else {
                row.resize(size_t(in_dim));
                dequantize_row(w, o, row.data());
                wr = row.data();
            }
            for (int t = t0; t < t1; ++t)
                out[int64_t(t) * out_dim + o] = kernels::dot(wr, in + int64_t(t) * in_dim, in_dim);
        }
    }
}

}  // namespace

void matmul(float* out, const float* in, const Tensor& w, int n, ThreadPool& pool) {
    const MatmulJob job{out, &w};
    matmul_multi(&job, 1, in, n, pool);
}

namespace {

// The products of jobs[0..count) (same input, same columns) in one parallel region. Without
// `paired` the threads split the rows of all products laid end to end; with it every product has
// the same rows, a thread's share [b, e) is those rows of each product, and paired(b, e) runs on
// them right after.
void run_products(const MatmulJob* jobs, int count, const float* in, int n, ThreadPool& pool,
                  const std::function<void(int64_t, int64_t)>* paired) {
    constexpr int kMaxJobs = 8;
    const int64_t in_dim = jobs[0].w->cols();
    const bool avx2 = use_avx2();
    // Activations prepared once per distinct layout (Q/K/V or gate/up of one plan share one).
    thread_local std::vector<Slot> slots(kMaxJobs);
    int slot_of[kMaxJobs];
    int n_slots = 0;
    int64_t starts[kMaxJobs + 1];
    starts[0] = 0;
    bool any_vnni = false;
    for (int j = 0; j < count; ++j) {
        const Tensor& w = *jobs[j].w;
        const Path p = path_of(w);
        any_vnni = any_vnni || p == Path::Vnni;
        int found = -1;
        for (int k = 0; k < j && found < 0; ++k)
            if (slots[size_t(slot_of[k])].path == p && same_acts(p, *jobs[k].w, w)) found = slot_of[k];
        if (found < 0) {
            found = n_slots++;
            slots[size_t(found)].prepare(p, w, in, n, pool);
        }
        slot_of[j] = found;
        starts[j + 1] = starts[j] + w.rows();
    }
    const int64_t total = paired ? jobs[0].w->rows() : starts[count];
    const int64_t per_row = paired ? count : 1;  // products a row of the region stands for
    int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, in_dim * per_row));
    if (any_vnni) grain = std::max<int64_t>(grain, n >= kTileMinTokens ? 16 : 4);  // (tiles: whole panels of 16 rows)
    // (The slots are this thread's: the workers must read them through a pointer, not by the
    // thread_local's name.)
    const Slot* prepared = slots.data();
    pool.parallel_for(
        total,
        [&](int64_t b, int64_t e) {
            if (paired) {
                for (int j = 0; j < count; ++j) rows(prepared[slot_of[j]], *jobs[j].w, in, n, jobs[j].out, b, e, avx2);
                (*paired)(b, e);
                return;
            }
            for (int j = 0; j < count; ++j) {
                const int64_t lo = std::max(b, starts[j]), hi = std::min(e, starts[j + 1]);
                if (lo < hi)
                    rows(prepared[slot_of[j]], *jobs[j].w, in, n, jobs[j].out, lo - starts[j], hi - starts[j], avx2);
            }
        },
        grain);
}

}  // namespace

void matmul_multi(const MatmulJob* jobs, int count, const float* in, int n, ThreadPool& pool) {
    if (count <= 0 || n <= 0) return;
    constexpr int kMaxJobs = 8;
    if (count > kMaxJobs) {
        for (int i = 0; i < count; i += kMaxJobs) matmul_multi(jobs + i, std::min(kMaxJobs, count - i), in, n, pool);
        return;
    }
    run_products(jobs, count, in, n, pool, nullptr);
}

void matmul_gate_up_swiglu(float* out, float* up_scratch, const float* in, const Tensor& gate, const Tensor& up, int n,
                           ThreadPool& pool) {
    if (n <= 0) return;
    const int64_t F = gate.rows();
    const MatmulJob jobs[2] = {{out, &gate}, {up_scratch, &up}};
    const std::function<void(int64_t, int64_t)> swiglu = [&](int64_t b, int64_t e) {
        for (int t = 0; t < n; ++t) kernels::swiglu(out + t * F + b, up_scratch + t * F + b, int(e - b));
    };
    run_products(jobs, 2, in, n, pool, &swiglu);
}

}  // namespace edge::runtime::qkernels
