// llama.cpp-compatible numerics (see ggml_compat.h and docs/quant-formats.md). Written from the
// arithmetic ggml's CPU backend documents and performs; every rounding step that llama.cpp takes
// is spelled out here as scalar code (this file is compiled with -ffp-contract=off, so the only
// fused multiply-adds are the explicit std::fma calls).
#include "ggml_compat.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/half.h"
#include "engine/model/gguf.h"
#include "engine/model/rope.h"

using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::validate_llama;

namespace edge::runtime {

const char* numerics_name(Numerics n) { return n == Numerics::LlamaCpp ? "llamacpp" : "fp32"; }

Result<Numerics> parse_numerics(std::string_view s) {
    if (s == "fp32") return Numerics::Fp32;
    if (s == "llamacpp") return Numerics::LlamaCpp;
    return err("unknown numerics '", s, "' (expected fp32 or llamacpp)");
}

namespace ggml_compat {
namespace {

constexpr int kBlock = 32;  // elements per block of every type handled here

inline float h2f(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return f16_to_f32(v);
}
inline float round_f16(float x) { return f16_to_f32(f32_to_f16(x)); }
inline float round_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }
inline float fmac(bool fused, float a, float b, float c) { return fused ? std::fma(a, b, c) : a * b + c; }
inline uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

bool is_block_type(DType t) {
    return t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1;
}
bool has_min(DType t) { return t == DType::Q4_1 || t == DType::Q5_1; }
bool supported(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || is_block_type(t); }

// One stored weight block as integer codes in element order, its scale d and min m (0 when none).
struct WBlock {
    int8_t q[kBlock];
    float d;
    float m;
};

void unpack(DType t, const uint8_t* b, WBlock& w) {
    w.m = 0.0f;
    w.d = h2f(b);
    switch (t) {
        case DType::Q8_0: std::memcpy(w.q, b + 2, kBlock); break;
        case DType::Q4_0:
            for (int j = 0; j < 16; ++j) {
                w.q[j] = int8_t((b[2 + j] & 15) - 8);
                w.q[j + 16] = int8_t((b[2 + j] >> 4) - 8);
            }
            break;
        case DType::Q4_1:
            w.m = h2f(b + 2);
            for (int j = 0; j < 16; ++j) {
                w.q[j] = int8_t(b[4 + j] & 15);
                w.q[j + 16] = int8_t(b[4 + j] >> 4);
            }
            break;
        case DType::Q5_0:
        case DType::Q5_1: {
            const bool one = t == DType::Q5_1;
            if (one) w.m = h2f(b + 2);
            const uint8_t* hp = b + (one ? 4 : 2);
            const uint8_t* qs = hp + 4;
            uint32_t qh;
            std::memcpy(&qh, hp, 4);
            const int off = one ? 0 : 16;
            for (int j = 0; j < 16; ++j) {
                const int h0 = int((qh >> j) << 4) & 0x10;
                const int h1 = int(qh >> (j + 12)) & 0x10;
                w.q[j] = int8_t(((qs[j] & 15) | h0) - off);
                w.q[j + 16] = int8_t(((qs[j] >> 4) | h1) - off);
            }
            break;
        }
        default: break;
    }
}

// An activation block (block_q8_0 / block_q8_1) as the dot kernels read it: codes, d, and for
// Q8_1 s = d * sum(codes).
struct ABlock {
    int8_t q[kBlock];
    float d;
    float s;
};

// quantize_row_q8_0 / quantize_row_q8_1 as the AVX2 build runs them: d = amax/127, codes
// x * (127/amax) rounded half to even, d and s stored as FP16.
void quantize_q8(const float* x, int n, bool fp16_scales, ABlock* out) {
    for (int ib = 0; ib < n / kBlock; ++ib) {
        const float* v = x + ib * kBlock;
        float amax = 0.0f;
        for (int j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(v[j]));
        const float d = amax / 127.f;
        const float id = amax != 0.0f ? 127.f / amax : 0.0f;
        int sum = 0;
        for (int j = 0; j < kBlock; ++j) {
            const int q = int(std::nearbyint(v[j] * id));  // default rounding mode: half to even
            out[ib].q[j] = int8_t(q);
            sum += q;
        }
        out[ib].d = fp16_scales ? round_f16(d) : d;
        out[ib].s = fp16_scales ? round_f16(d * float(sum)) : d * float(sum);
    }
}

// The AVX2 horizontal sum of 8 lanes (hsum_float_8, tinyBLAS hsum): high half + low half, then
// lanes 0+2 and 1+3, then the two.
float hsum8(const float a[8]) {
    float t[4];
    for (int i = 0; i < 4; ++i) t[i] = a[i + 4] + a[i];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

// A stored block row times activation blocks (ggml_vec_dot_<type>_q8_0 / _q8_1).
float dot_blocks(DType t, const uint8_t* row, size_t bb, const ABlock* a, int nb, const Ingredients& ing) {
    WBlock w;
    if (ing.simd_lanes) {
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        float summs = 0.0f;
        for (int ib = 0; ib < nb; ++ib) {
            unpack(t, row + size_t(ib) * bb, w);
            const ABlock& y = a[ib];
            if (has_min(t)) summs = fmac(ing.fma_contract, w.m, y.s, summs);
            const float dd = w.d * y.d;
            for (int k = 0; k < 8; ++k) {
                int s = 0;
                for (int e = 4 * k; e < 4 * k + 4; ++e) s += int(w.q[e]) * int(y.q[e]);
                acc[k] = std::fma(dd, float(s), acc[k]);
            }
        }
        return hsum8(acc) + summs;
    }
    float sumf = 0.0f;  // the generic C kernels
    for (int ib = 0; ib < nb; ++ib) {
        unpack(t, row + size_t(ib) * bb, w);
        const ABlock& y = a[ib];
        int s = 0;
        for (int e = 0; e < kBlock; ++e) s += int(w.q[e]) * int(y.q[e]);
        if (has_min(t))
            sumf += (w.d * y.d) * float(s) + w.m * y.s;
        else
            sumf += float(s) * (w.d * y.d);
    }
    return sumf;
}

// Float-typed dot products over values already rounded to the vec_dot type.
// tinyBLAS (llamafile_sgemm, used when k % 8 == 0): one 8-lane FMA accumulator, hsum8.
float dot_tinyblas(const float* x, const float* y, int n) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int l = 0; l < n; l += 8)
        for (int i = 0; i < 8; ++i) acc[i] = std::fma(x[l + i], y[l + i], acc[i]);
    return hsum8(acc);
}
// ggml_vec_dot_f16 / ggml_vec_dot_f32 (AVX2): four 8-lane FMA accumulators over 32-element steps,
// GGML_F32x8_REDUCE, then the leftovers one by one (summed in double for F16, float for F32).
float dot_vec(const float* x, const float* y, int n, bool double_leftovers) {
    float s[4][8] = {};
    const int np = n & ~31;
    for (int i = 0; i < np; i += 32)
        for (int j = 0; j < 4; ++j)
            for (int e = 0; e < 8; ++e) s[j][e] = std::fma(x[i + 8 * j + e], y[i + 8 * j + e], s[j][e]);
    for (int e = 0; e < 8; ++e) {
        s[0][e] += s[2][e];
        s[1][e] += s[3][e];
    }
    for (int e = 0; e < 8; ++e) s[0][e] += s[1][e];
    float t0[4];
    for (int i = 0; i < 4; ++i) t0[i] = s[0][i] + s[0][i + 4];
    const float r = (t0[0] + t0[1]) + (t0[2] + t0[3]);
    if (double_leftovers) {
        double sum = r;
        for (int i = np; i < n; ++i) sum += double(x[i] * y[i]);
        return float(sum);
    }
    float sum = r;
    for (int i = np; i < n; ++i) sum += x[i] * y[i];
    return sum;
}
// ggml_vec_dot_bf16 (AVX2): four 8-lane accumulators of products (multiply, then add), reduced
// as (c1+c3)+(c2+c4), summed in double with the leftovers.
float dot_bf16(const float* x, const float* y, int n) {
    float c[4][8] = {};
    int i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; ++j)
            for (int e = 0; e < 8; ++e) c[j][e] = x[i + 8 * j + e] * y[i + 8 * j + e] + c[j][e];
    float g8[8];
    for (int e = 0; e < 8; ++e) g8[e] = (c[0][e] + c[2][e]) + (c[1][e] + c[3][e]);
    double sum = hsum8(g8);
    for (; i < n; ++i) sum += double(x[i] * y[i]);
    return float(sum);
}

// ggml_v_expf for AVX2 + FMA (ARM optimized-routines' expf): a degree-5 polynomial around a
// rounded multiple of ln 2, scaled by 2^n through the exponent bits.
float v_expf(float x) {
    const float r = 0x1.8p23f;
    const float z = std::fma(x, 0x1.715476p+0f, r);
    const float n = z - r;
    const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
    const uint32_t e = bits_of(z) << 23;
    const float k = float_of(e + bits_of(1.0f));
    const float u = b * b;
    const float j =
        std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                 u, 0x1.ffffecp-1f * b);
    if (!(std::fabs(n) > 126.0f)) return std::fma(j, k, k);
    const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
    const float s1 = float_of(g + 0x7f000000u);
    const float s2 = float_of(e - g);
    if (std::fabs(n) > 192.0f) return s1 * s1;
    return std::fma(s2, j, s2) * s1;
}

struct Weight {
    std::string name;
    DType type = DType::F32;
    const uint8_t* data = nullptr;
    int64_t rows = 0, cols = 0;
    size_t row_bytes = 0;
};

// Row r of a weight as float, as ggml's to_float (dequantize_row_*) computes it: (q - off) * d,
// or q * d + m for the types with a min, each product rounded before the add.
void dequantize_row(const Weight& w, int64_t r, float* out) {
    const uint8_t* row = w.data + size_t(r) * w.row_bytes;
    if (w.type == DType::F32) {
        std::memcpy(out, row, sizeof(float) * size_t(w.cols));
    } else if (w.type == DType::F16 || w.type == DType::BF16) {
        for (int64_t i = 0; i < w.cols; ++i) {
            uint16_t h;
            std::memcpy(&h, row + 2 * i, 2);
            out[i] = w.type == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
        }
    } else {
        const size_t bb = size_t(dtype_block_bytes(w.type));
        WBlock b;
        for (int64_t ib = 0; ib < w.cols / kBlock; ++ib) {
            unpack(w.type, row + size_t(ib) * bb, b);
            for (int j = 0; j < kBlock; ++j) {
                const float p = float(b.q[j]) * b.d;
                out[ib * kBlock + j] = has_min(w.type) ? p + b.m : p;
            }
        }
    }
}

struct LayerW {
    std::vector<float> attn_norm, ffn_norm;
    std::vector<float> bq, bk, bv;  // Q/K/V biases (Qwen2), empty when the model has none
    Weight wq, wk, wv, wo, gate, up, down;
};

}  // namespace

struct Executor::Impl {
    Ingredients ing;
    LlamaConfig c;
    int max_seq = 0;
    model::gguf::File file;  // keeps the mapping (and every Weight::data) alive
    Weight embd, head;
    std::vector<float> out_norm;
    std::vector<LayerW> layers;
    std::vector<uint16_t> k16, v16;  // [layer][pos][kv_dim] when f16_kv
    std::vector<float> k32, v32;     // otherwise
    std::vector<float> x, xb, q, k, v, hb, hb2, logits, rope;
    int cap = 0;

    void ensure(int n);
    void matmul(const Weight& w, const float* in, int n, float* out, ThreadPool& pool) const;
    void rope_rotate(float* vec, int heads, const float* cs) const;
    void attention(int l, int n, int pos, ThreadPool& pool);
    // Cells per split-KV chunk for a step of n tokens attending over len cells, 0 for no split:
    // llama.cpp's decode (one token) over a KV view of >= 512 cells, the view being len rounded
    // up to kv_view_pad (at least kv_view_pad; llama.cpp's own cache is assumed large enough),
    // cut into one chunk per thread.
    int split_chunk(int n, int len) const {
        if (n != 1 || ing.split_kv_threads <= 0) return 0;
        const int pad = std::max(1, ing.kv_view_pad);
        const int64_t view = std::max<int64_t>(pad, (int64_t(len) + pad - 1) / pad * pad);
        if (view < 512) return 0;
        return int((view + ing.split_kv_threads - 1) / ing.split_kv_threads);
    }
    float kv_k(size_t i) const { return ing.f16_kv ? f16_to_f32(k16[i]) : k32[i]; }
    float kv_v(size_t i) const { return ing.f16_kv ? f16_to_f32(v16[i]) : v32[i]; }
};

namespace {

void rmsnorm(float* y, const float* x, const float* w, int n, float eps) {
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += double(x[i] * x[i]);
    const float mean = float(sum / double(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int i = 0; i < n; ++i) y[i] = (x[i] * scale) * w[i];
}

Result<Weight> find_weight(const model::gguf::File& f, const Model& m, const std::string& name) {
    const model::gguf::TensorInfo* ti = f.find_tensor(name);
    const Tensor* t = m.find(name);
    if (!ti || !t) return err(f.path, ": tensor '", name, "' is missing");
    if (t->type != DType::F32 || t->source_type != ti->type || t->shape != ti->shape())
        return err(f.path, ": tensor '", name, "' was changed after import (", dtype_name(t->type),
                   "); llama.cpp numerics run the tensors as the GGUF file stores them");
    if (!supported(ti->type))
        return err(f.path, ": tensor '", name, "' has type ", dtype_name(ti->type),
                   "; llama.cpp numerics cover F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1");
    if (ti->ne.size() != 2) return err(f.path, ": tensor '", name, "' is not a matrix");
    Weight w;
    w.name = name;
    w.type = ti->type;
    w.data = ti->data;
    w.cols = int64_t(ti->ne[0]);
    w.rows = int64_t(ti->ne[1]);
    w.row_bytes = size_t(ti->nbytes) / size_t(w.rows);
    return w;
}

std::vector<float> norm_weight(const Model& m, const std::string& name) {
    const Tensor* t = m.find(name);
    return std::vector<float>(t->f32(), t->f32() + t->numel());
}

}  // namespace

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::create(const Model& model, int max_seq, const Ingredients& ing) {
    if (model.source_format != "gguf")
        return err("llama.cpp numerics need a GGUF model; '", model.source_path, "' was imported from ",
                   model.source_format.empty() ? std::string("another format") : model.source_format);
    EDGE_TRY(validate_llama(model));
    if (ing.split_kv_threads < 0 || ing.split_kv_threads > 4096)
        return err("llama.cpp numerics: split-KV thread count ", ing.split_kv_threads, " is out of range (0..4096)");
    if (ing.kv_view_pad < 1 || ing.kv_view_pad > (1 << 20))
        return err("llama.cpp numerics: KV view padding ", ing.kv_view_pad, " is out of range (1..1048576)");
    auto f = model::gguf::open(model.source_path);
    if (!f.ok()) return f.error();
    if (auto arch = f->get_string("general.architecture"); !arch.ok() || arch->value_or("") != "llama")
        return err(model.source_path, ": llama.cpp numerics run GGUF architecture 'llama' as stored; this file is '",
                   arch.ok() ? arch->value_or("?") : std::string("?"),
                   "' (its fused tensors run on the FP32 executor)");
    auto impl = std::make_unique<Impl>();
    impl->ing = ing;
    impl->c = model.config;
    impl->max_seq = max_seq;
    impl->file = std::move(f).value();
    const model::gguf::File& file = impl->file;
    const LlamaConfig& c = impl->c;
    if (c.rope_dim % 2 != 0 || c.rope_dim > c.head_dim)
        return err(file.path, ": rope dimension ", c.rope_dim, " is not usable");
    auto get = [&](const std::string& n, Weight& out) -> Status {
        auto w = find_weight(file, model, n);
        if (!w.ok()) return w.error();
        out = std::move(w).value();
        return {};
    };
    EDGE_TRY(get("token_embd.weight", impl->embd));
    EDGE_TRY(get(model.output_head()->name, impl->head));
    impl->out_norm = norm_weight(model, "output_norm.weight");
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        LayerW L;
        L.attn_norm = norm_weight(model, p + "attn_norm.weight");
        L.ffn_norm = norm_weight(model, p + "ffn_norm.weight");
        if (c.attn_qkv_bias) {
            L.bq = norm_weight(model, p + "attn_q.bias");
            L.bk = norm_weight(model, p + "attn_k.bias");
            L.bv = norm_weight(model, p + "attn_v.bias");
        }
        EDGE_TRY(get(p + "attn_q.weight", L.wq));
        EDGE_TRY(get(p + "attn_k.weight", L.wk));
        EDGE_TRY(get(p + "attn_v.weight", L.wv));
        EDGE_TRY(get(p + "attn_output.weight", L.wo));
        EDGE_TRY(get(p + "ffn_gate.weight", L.gate));
        EDGE_TRY(get(p + "ffn_up.weight", L.up));
        EDGE_TRY(get(p + "ffn_down.weight", L.down));
        impl->layers.push_back(std::move(L));
    }
    const size_t kv = size_t(c.n_layers) * size_t(max_seq) * size_t(c.kv_dim());
    if (ing.f16_kv) {
        impl->k16.assign(kv, 0);
        impl->v16.assign(kv, 0);
    } else {
        impl->k32.assign(kv, 0.0f);
        impl->v32.assign(kv, 0.0f);
    }
    impl->logits.resize(size_t(c.vocab_size));
    impl->ensure(1);
    return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

size_t Executor::kv_cache_bytes() const {
    const Impl& m = *impl_;
    return (m.k16.size() + m.v16.size()) * sizeof(uint16_t) + (m.k32.size() + m.v32.size()) * sizeof(float);
}

void Executor::Impl::ensure(int n) {
    if (n <= cap) return;
    cap = n;
    const size_t N = size_t(n);
    x.resize(N * c.dim);
    xb.resize(N * size_t(std::max(c.dim, c.q_dim())));
    q.resize(N * c.q_dim());
    k.resize(N * c.kv_dim());
    v.resize(N * c.kv_dim());
    hb.resize(N * c.hidden_dim);
    hb2.resize(N * c.hidden_dim);
}

// out[t][o] = W[o] . in[t] with the activations converted to W's vec_dot type once per token.
void Executor::Impl::matmul(const Weight& w, const float* in, int n, float* out, ThreadPool& pool) const {
    const int64_t K = w.cols, R = w.rows;
    const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, K));
    if (!ing.quantized_activations || w.type == DType::F32) {
        // FP32 activations; F32 weights go through tinyBLAS / ggml_vec_dot_f32 either way.
        const bool f32 = w.type == DType::F32 && ing.quantized_activations;
        pool.parallel_for(
            R,
            [&](int64_t b, int64_t e) {
                std::vector<float> row(static_cast<size_t>(K));
                for (int64_t o = b; o < e; ++o) {
                    dequantize_row(w, o, row.data());
                    for (int t = 0; t < n; ++t) {
                        const float* y = in + int64_t(t) * K;
                        float s = 0.0f;
                        if (f32)
                            s = K % 8 == 0 && ing.simd_lanes ? dot_tinyblas(row.data(), y, int(K))
                                                             : dot_vec(row.data(), y, int(K), false);
                        else
                            for (int64_t i = 0; i < K; ++i) s += row[size_t(i)] * y[i];
                        out[int64_t(t) * R + o] = s;
                    }
                }
            },
            grain);
        return;
    }
    if (is_block_type(w.type)) {
        const int nb = int(K / kBlock);
        std::vector<ABlock> act(size_t(n) * size_t(nb));
        for (int t = 0; t < n; ++t) quantize_q8(in + int64_t(t) * K, int(K), ing.fp16_act_scales, &act[size_t(t) * nb]);
        const size_t bb = size_t(dtype_block_bytes(w.type));
        pool.parallel_for(
            R,
            [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o)
                    for (int t = 0; t < n; ++t)
                        out[int64_t(t) * R + o] =
                            dot_blocks(w.type, w.data + size_t(o) * w.row_bytes, bb, &act[size_t(t) * nb], nb, ing);
            },
            grain);
        return;
    }
    // F16 / BF16 weights meet activations rounded to the same type.
    const bool f16 = w.type == DType::F16;
    std::vector<float> act(size_t(n) * size_t(K));
    for (size_t i = 0; i < act.size(); ++i) act[i] = f16 ? round_f16(in[i]) : round_bf16(in[i]);
    pool.parallel_for(
        R,
        [&](int64_t b, int64_t e) {
            std::vector<float> row(static_cast<size_t>(K));
            for (int64_t o = b; o < e; ++o) {
                dequantize_row(w, o, row.data());
                for (int t = 0; t < n; ++t) {
                    const float* y = &act[size_t(t) * size_t(K)];
                    float s;
                    if (!ing.simd_lanes) {
                        double d = 0.0;
                        for (int64_t i = 0; i < K; ++i) d += double(row[size_t(i)] * y[i]);
                        s = float(d);
                    } else if (K % 8 == 0) {
                        s = dot_tinyblas(row.data(), y, int(K));
                    } else {
                        s = f16 ? dot_vec(row.data(), y, int(K), true) : dot_bf16(row.data(), y, int(K));
                    }
                    out[int64_t(t) * R + o] = s;
                }
            }
        },
        grain);
}

// Rotates the first rope_dim dimensions of each head by the angles in cs (cos, sin interleaved),
// adjacent pairs (llama's normal RoPE mode).
void Executor::Impl::rope_rotate(float* vec, int heads, const float* cs) const {
    const bool f = ing.fma_contract;
    for (int h = 0; h < heads; ++h) {
        float* p = vec + size_t(h) * c.head_dim;
        for (int i = 0; i < c.rope_dim / 2; ++i) {
            const float co = cs[2 * i], si = cs[2 * i + 1];
            const float x0 = p[2 * i], x1 = p[2 * i + 1];
            p[2 * i] = f ? std::fma(x0, co, -(x1 * si)) : x0 * co - x1 * si;
            p[2 * i + 1] = f ? std::fma(x0, si, x1 * co) : x0 * si + x1 * co;
        }
    }
}

// Causal attention of n tokens at positions pos.. over the cache of layer l; output in xb.
void Executor::Impl::attention(int l, int n, int pos, ThreadPool& pool) {
    const int KV = c.kv_dim(), QD = c.q_dim(), HD = c.head_dim;
    const int kv_mul = c.n_heads / c.n_kv_heads;
    const float scale = 1.0f / std::sqrt(float(HD));
    const size_t base = size_t(l) * size_t(max_seq) * size_t(KV);
    const bool fc = ing.fma_contract;
    pool.parallel_for(int64_t(n) * c.n_heads, [&](int64_t b, int64_t e) {
        std::vector<float> qh(static_cast<size_t>(HD)), kr(static_cast<size_t>(HD)), acc(static_cast<size_t>(HD));
        std::vector<float> merged(static_cast<size_t>(HD));
        std::vector<float> sc;
        for (int64_t job = b; job < e; ++job) {
            const int t = int(job / c.n_heads), h = int(job % c.n_heads);
            const int len = pos + t + 1;
            const size_t hoff = size_t(h / kv_mul) * HD;
            // Q meets K in K's vec_dot type: F16 (rounded) for an F16 cache.
            for (int i = 0; i < HD; ++i) {
                const float qv = q[size_t(t) * QD + size_t(h) * HD + i];
                qh[size_t(i)] = ing.f16_kv ? round_f16(qv) : qv;
            }
            auto score = [&](int s) {
                for (int i = 0; i < HD; ++i) kr[size_t(i)] = kv_k(base + size_t(s) * KV + hoff + i);
                return dot_vec(kr.data(), qh.data(), HD, ing.f16_kv) * scale;
            };
            float* out = &xb[size_t(t) * QD + size_t(h) * HD];
            if (ing.flash_attn) {
                // ggml_compute_forward_flash_attn_ext_f16, one query row over cells [s0, s1):
                // online softmax, the V accumulator rounded to the cache type after every scale
                // and mad. Returns the running max M and sum S; acc holds the unnormalised sum.
                const bool h16 = ing.f16_kv;
                auto fa_range = [&](int s0, int s1, float& M, float& S) {
                    std::fill(acc.begin(), acc.end(), 0.0f);
                    S = 0.0f;
                    M = -INFINITY;
                    for (int s = s0; s < s1; ++s) {
                        const float sv = score(s);
                        const float Mold = M;
                        float ms = 1.0f, vs = 1.0f;
                        if (sv > M) {
                            M = sv;
                            ms = std::exp(Mold - M);
                            for (float& a : acc) a = h16 ? round_f16(a * ms) : a * ms;
                        } else {
                            vs = std::exp(sv - M);
                        }
                        const size_t vo = base + size_t(s) * KV + hoff;
                        for (int i = 0; i < HD; ++i) {
                            const float r = fmac(fc, kv_v(vo + i), vs, acc[size_t(i)]);
                            acc[size_t(i)] = h16 ? round_f16(r) : r;
                        }
                        S = fmac(fc, S, ms, vs);
                    }
                };
                float M = 0.0f, S = 0.0f;
                const int chunk = split_chunk(n, len);
                if (chunk <= 0) {
                    fa_range(0, len, M, S);
                    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
                    for (int i = 0; i < HD; ++i) out[i] = acc[size_t(i)] * inv;
                } else {
                    // Split-KV decode: one partial per chunk of cells, merged in chunk order in
                    // float as ggml_flash_attn_ext_reduce_partials (fmaxf of the maxima, two expf
                    // rescales, the old sum contracted to FMA), then scaled by 1/S.
                    float Mf = -INFINITY, Sf = 0.0f;
                    std::fill(merged.begin(), merged.end(), 0.0f);
                    for (int c0 = 0; c0 < len; c0 += chunk) {
                        fa_range(c0, std::min(len, c0 + chunk), M, S);
                        if (S == 0.0f) continue;
                        const float Mn = std::max(Mf, M);
                        const float so = std::exp(Mf - Mn), sn = std::exp(M - Mn);
                        for (int i = 0; i < HD; ++i)
                            merged[size_t(i)] = fmac(fc, merged[size_t(i)], so, acc[size_t(i)] * sn);
                        Sf = fmac(fc, Sf, so, S * sn);
                        Mf = Mn;
                    }
                    const float inv = Sf == 0.0f ? 1.0f : 1.0f / Sf;
                    for (int i = 0; i < HD; ++i) out[i] = merged[size_t(i)] * inv;
                }
            } else {
                // Non-flash path (ggml_soft_max_ext, then V^T x probabilities): scores over the
                // cache padded to 256 cells (masked cells weigh 0), exp through ggml_v_expf in
                // 8-wide chunks, each chunk's horizontal sum added in double, probabilities
                // scaled by 1/sum and rounded to F16 to meet the F16 V cache in ggml_vec_dot_f16.
                const int padded = (len + 255) / 256 * 256;
                sc.assign(size_t(padded), 0.0f);
                float mx = -INFINITY;
                for (int s = 0; s < len; ++s) mx = std::max(mx, sc[size_t(s)] = score(s));
                double sum = 0.0;
                for (int s0 = 0; s0 < padded; s0 += 8) {
                    float ch[8];
                    for (int j = 0; j < 8; ++j) {
                        const int s = s0 + j;
                        ch[j] =
                            s < len ? (ing.vec_expf ? v_expf(sc[size_t(s)] - mx) : std::exp(sc[size_t(s)] - mx)) : 0.0f;
                        sc[size_t(s)] = ch[j];
                    }
                    sum += double(hsum8(ch));
                }
                const float inv = float(1.0 / sum);
                for (int s = 0; s < padded; ++s)
                    sc[size_t(s)] = ing.f16_kv ? round_f16(sc[size_t(s)] * inv) : sc[size_t(s)] * inv;
                std::vector<float> vcol(static_cast<size_t>(padded), 0.0f);
                for (int i = 0; i < HD; ++i) {
                    for (int s = 0; s < len; ++s) vcol[size_t(s)] = kv_v(base + size_t(s) * KV + hoff + i);
                    out[i] = dot_vec(vcol.data(), sc.data(), padded, ing.f16_kv);
                }
            }
        }
    });
}

const float* Executor::prefill(const int32_t* tokens, int n, int pos, float* all_logits, ThreadPool& pool) {
    Impl& m = *impl_;
    const LlamaConfig& c = m.c;
    if (n <= 0 || pos < 0) return m.logits.data();
    if (pos + n > m.max_seq) n = std::max(0, m.max_seq - pos);
    if (n <= 0) return m.logits.data();
    m.ensure(n);
    const int D = c.dim, KV = c.kv_dim(), QD = c.q_dim(), F = c.hidden_dim;
    for (int t = 0; t < n; ++t) {
        int32_t tok = tokens[t];
        if (tok < 0 || tok >= c.vocab_size) tok = 0;
        dequantize_row(m.embd, tok, &m.x[size_t(t) * D]);
    }
    // RoPE angles per position (ggml_rope_cache_init): theta starts at pos and is multiplied by
    // theta_scale = base^(-2/n_dims) once per pair; a scaled model's pair i uses theta / factor_i
    // (ggml's freq_factors, GGUF rope_freqs.weight; Phi-3's long or short factors chosen by the
    // context), and cos/sin carry the attention factor (ggml's mscale).
    const int half = c.rope_dim / 2;
    const std::vector<float>& ff = model::rope_factors_for(c, m.max_seq);
    const float mscale = c.rope_attn_factor;
    m.rope.resize(size_t(n) * size_t(2 * half));
    const float theta_scale = std::pow(c.rope_theta, -2.0f / float(c.rope_dim));
    for (int t = 0; t < n; ++t) {
        float theta = float(pos + t);
        for (int i = 0; i < half; ++i) {
            const float th = m.ing.rope_iterative
                                 ? theta
                                 : float(pos + t) * std::pow(c.rope_theta, -2.0f * float(i) / float(c.rope_dim));
            const float thf = ff.empty() ? th : th / ff[size_t(i)];
            m.rope[size_t(t) * 2 * half + 2 * i] = std::cos(thf) * mscale;
            m.rope[size_t(t) * 2 * half + 2 * i + 1] = std::sin(thf) * mscale;
            theta *= theta_scale;
        }
    }
    for (int l = 0; l < c.n_layers; ++l) {
        const LayerW& L = m.layers[size_t(l)];
        for (int t = 0; t < n; ++t)
            rmsnorm(&m.xb[size_t(t) * D], &m.x[size_t(t) * D], L.attn_norm.data(), D, c.norm_eps);
        m.matmul(L.wq, m.xb.data(), n, m.q.data(), pool);
        m.matmul(L.wk, m.xb.data(), n, m.k.data(), pool);
        m.matmul(L.wv, m.xb.data(), n, m.v.data(), pool);
        if (!L.bq.empty())  // ggml_add of the F32 bias row to every token's projection
            for (int t = 0; t < n; ++t) {
                for (int i = 0; i < QD; ++i) m.q[size_t(t) * QD + i] += L.bq[size_t(i)];
                for (int i = 0; i < KV; ++i) m.k[size_t(t) * KV + i] += L.bk[size_t(i)];
                for (int i = 0; i < KV; ++i) m.v[size_t(t) * KV + i] += L.bv[size_t(i)];
            }
        for (int t = 0; t < n; ++t) {
            const float* cs = &m.rope[size_t(t) * 2 * half];
            m.rope_rotate(&m.q[size_t(t) * QD], c.n_heads, cs);
            m.rope_rotate(&m.k[size_t(t) * KV], c.n_kv_heads, cs);
            const size_t off = (size_t(l) * m.max_seq + size_t(pos + t)) * KV;
            for (int i = 0; i < KV; ++i) {
                const float kv = m.k[size_t(t) * KV + i], vv = m.v[size_t(t) * KV + i];
                if (m.ing.f16_kv) {
                    m.k16[off + i] = f32_to_f16(kv);
                    m.v16[off + i] = f32_to_f16(vv);
                } else {
                    m.k32[off + i] = kv;
                    m.v32[off + i] = vv;
                }
            }
        }
        m.attention(l, n, pos, pool);
        m.matmul(L.wo, m.xb.data(), n, m.hb2.data(), pool);
        for (size_t i = 0; i < size_t(n) * D; ++i) m.x[i] += m.hb2[i];

        for (int t = 0; t < n; ++t)
            rmsnorm(&m.xb[size_t(t) * D], &m.x[size_t(t) * D], L.ffn_norm.data(), D, c.norm_eps);
        m.matmul(L.gate, m.xb.data(), n, m.hb.data(), pool);
        m.matmul(L.up, m.xb.data(), n, m.hb2.data(), pool);
        // ggml_vec_swiglu_f32: silu(gate) * up; 8-wide chunks through ggml_v_silu (ggml_v_expf),
        // the tail through expf.
        for (int t = 0; t < n; ++t) {
            float* g = &m.hb[size_t(t) * F];
            const float* u = &m.hb2[size_t(t) * F];
            int i = 0;
            if (m.ing.vec_expf)
                for (; i + 7 < F; i += 8)
                    for (int j = i; j < i + 8; ++j) g[j] = (g[j] / (1.0f + v_expf(0.0f - g[j]))) * u[j];
            for (; i < F; ++i) g[i] = (g[i] / (1.0f + std::exp(-g[i]))) * u[i];
        }
        m.matmul(L.down, m.hb.data(), n, m.xb.data(), pool);
        for (size_t i = 0; i < size_t(n) * D; ++i) m.x[i] += m.xb[i];
    }
    const int V = c.vocab_size;
    if (all_logits) {
        for (int t = 0; t < n; ++t) rmsnorm(&m.x[size_t(t) * D], &m.x[size_t(t) * D], m.out_norm.data(), D, c.norm_eps);
        m.matmul(m.head, m.x.data(), n, all_logits, pool);
        std::memcpy(m.logits.data(), all_logits + size_t(n - 1) * V, sizeof(float) * size_t(V));
    } else {
        float* last = &m.x[size_t(n - 1) * D];
        rmsnorm(last, last, m.out_norm.data(), D, c.norm_eps);
        m.matmul(m.head, last, 1, m.logits.data(), pool);
    }
    return m.logits.data();
}

}  // namespace ggml_compat
}  // namespace edge::runtime
