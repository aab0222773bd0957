// edge-gpu-check: the CUDA backend checked and measured on a GPU machine that has nvcc, CMake and
// ninja but none of the project's Debian libraries (no GTest, Qt, nlohmann...). Self-contained:
// models are random Llama-shaped weights built in memory (seeded), quantized with the project's
// RTN; references are plain loops written here and the CPU backend.
//
//   edge-gpu-check check          every kernel vs a CPU reference, and the whole model (FP32, INT8,
//                                 INT4) CUDA backend vs CPU backend, by normalised error
//   edge-gpu-check agent          the executor the board agent runs (engine/runtime/
//                                 engine_executor.cpp): --backend cuda/auto pick CUDA; batch steps
//                                 through a PagedKv (prefix reuse by Truncate, a batch of 4 with a
//                                 shared prefix) match a fresh run and the CPU backend
//   edge-gpu-check bench [shape]  decode / prefill tokens/s at tinyllama-1.1b (default) or
//                                 stories260k shape, FP16/INT8/INT4, vs the device-copy bandwidth
// Exit 0: all checks passed (or "no device": nothing could run, said on stdout); 1: a check failed.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/compile/passes.h"
#include "engine/core/half.h"
#include "engine/core/thread_pool.h"
#include "engine/kv/paged_kv.h"
#include "engine/quant/rtn.h"
#include "engine/runtime/cpu/cpu_backend.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/cuda/cuda_backend.h"
#include "engine/runtime/cuda/cuda_kernels.h"
#include "engine/runtime/cuda/cuda_probe.h"
#include "engine/runtime/exec_program.h"
#include "engine/runtime/open_executor.h"

using edge::model::build_llama_graph;
using edge::model::Graph;
using edge::model::LlamaConfig;
using edge::model::Model;
using edge::runtime::Backend;
using edge::runtime::BackendOptions;
using edge::runtime::CpuBackend;
using edge::runtime::kKvBlock;

using namespace edge;

namespace {

int g_failed = 0;

double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return 1e30;
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i])) return 1e30;
        num = std::max(num, double(std::fabs(a[i] - b[i])));
        den = std::max(den, double(std::fabs(b[i])));
    }
    return den > 0 ? num / den : num;
}

void row(const std::string& what, double err, double tol) {
    const bool ok = err <= tol;
    g_failed += !ok;
    std::printf("| %-44s | %10.3g | %8.0e | %-4s |\n", what.c_str(), err, tol, ok ? "ok" : "FAIL");
}

std::vector<float> randv(size_t n, uint64_t seed, float scale = 1.0f) {
    std::mt19937_64 r(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = d(r);
    return v;
}

// Device buffer helpers (abort the check on a CUDA error: this is a test program).
#define CK(call)                                                                                            \
    do {                                                                                                    \
        cudaError_t e_ = (call);                                                                            \
        if (e_ != cudaSuccess) {                                                                            \
            std::printf("CUDA error: %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(1);                                                                                   \
        }                                                                                                   \
    } while (0)

template <class T>
T* dev(const std::vector<T>& h) {
    T* p = nullptr;
    CK(cudaMalloc(&p, std::max<size_t>(h.size(), 1) * sizeof(T)));
    if (!h.empty()) CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return p;
}
template <class T>
std::vector<T> host(const T* d, size_t n) {
    std::vector<T> h(n);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

// A weight tensor of one type and its device view.
struct TestWeight {
    Tensor t;
    runtime::cuda::DevWeight w;
    std::string label;
};

TestWeight make_weight(int rows, int cols, const std::string& kind, uint64_t seed) {
    TestWeight tw;
    tw.label = kind;
    const std::vector<float> f = randv(size_t(rows) * cols, seed, 0.05f);
    Tensor t = Tensor::alloc("w", DType::F32, {rows, cols});
    std::memcpy(t.data.get(), f.data(), f.size() * sizeof(float));
    if (kind == "f16") {
        Tensor h = Tensor::alloc("w", DType::F16, {rows, cols});
        auto* p = reinterpret_cast<uint16_t*>(h.data.get());
        for (size_t i = 0; i < f.size(); ++i) p[i] = f32_to_f16(f[i]);
        t = h;
    } else if (kind != "f32") {
        quant::QuantSpec s;
        s.bits = kind.rfind("int8", 0) == 0 ? 8 : 4;
        s.symmetric = kind.find("asym") == std::string::npos;
        s.group_size = kind.find("pc") != std::string::npos ? cols : 32;
        s.grouping = kind.find("pc") != std::string::npos ? QGrouping::PerChannel : QGrouping::Group;
        auto q = quant::quantize_rtn(t, s);
        if (!q.ok()) {
            std::printf("quantize: %s\n", q.message().c_str());
            std::exit(1);
        }
        t = std::move(q).value();
    }
    uint8_t* d = nullptr;
    CK(cudaMalloc(&d, t.nbytes));
    CK(cudaMemcpy(d, t.raw(), t.nbytes, cudaMemcpyHostToDevice));
    runtime::cuda::DevWeight& w = tw.w;
    w.rows = rows;
    w.cols = cols;
    w.data = d;
    w.type = t.type == DType::F32   ? runtime::cuda::kWF32
             : t.type == DType::F16 ? runtime::cuda::kWF16
             : t.type == DType::QI8 ? runtime::cuda::kWQI8
                                    : runtime::cuda::kWQI4;
    if (t.quant) {
        w.scales = d + t.quant->scales_offset;
        w.scales_f16 = t.quant->scale_type == QScale::F16;
        w.zeros = t.quant->symmetric ? nullptr : reinterpret_cast<const int8_t*>(d + t.quant->zeros_offset);
        w.row_bytes = t.quant->row_bytes;
        w.groups_per_row = int(t.quant->groups_per_row);
        w.group_size = int(t.quant->group_size);
    }
    tw.t = std::move(t);
    return tw;
}

// Exact reference of a matmul with a weight as stored: dequantized rows times FP32 inputs, in double.
std::vector<float> ref_matmul(const Tensor& w, const std::vector<float>& in, int n) {
    const int R = int(w.rows()), C = int(w.cols());
    std::vector<float> out(size_t(n) * R), rowv(static_cast<size_t>(C));
    for (int r = 0; r < R; ++r) {
        runtime::qkernels::dequantize_row(w, r, rowv.data());
        for (int t = 0; t < n; ++t) {
            double s = 0;
            for (int c = 0; c < C; ++c) s += double(rowv[size_t(c)]) * in[size_t(t) * C + c];
            out[size_t(t) * R + r] = float(s);
        }
    }
    return out;
}

void check_kernels() {
    std::printf("\n| kernel (CUDA vs CPU reference)               | max|a-b|/max|b| | tol | |\n|---|---|---|---|\n");
    const int D = 256, R = 320, N = 37;
    for (const char* kind : {"f32", "f16", "int8", "int8-asym", "int8-pc", "int4", "int4-asym", "int4-pc"}) {
        TestWeight tw = make_weight(R, D, kind, 7);
        const auto x = randv(size_t(N) * D, 11);
        const auto ref = ref_matmul(tw.t, x, N);
        float* dx = dev(x);
        std::vector<float> zero(size_t(N) * R);
        float* dout = dev(zero);
        CK(cudaError_t(runtime::cuda::launch_gemv(dout, dx, tw.w, nullptr)));
        row(std::string("gemv ") + kind,
            rel_err(host(dout, size_t(R)), std::vector<float>(ref.begin(), ref.begin() + R)), 1e-5);
        CK(cudaError_t(runtime::cuda::launch_gemm(dout, dx, tw.w, N, nullptr)));
        row(std::string("gemm n=37 ") + kind, rel_err(host(dout, zero.size()), ref), 1e-5);
        // embedding: rows of the weight as the token table
        std::vector<int32_t> toks{0, 5, R - 1, 3};
        int32_t* dt = dev(toks);
        CK(cudaError_t(runtime::cuda::launch_embedding(dout, dt, 4, tw.w, nullptr)));
        std::vector<float> er(size_t(4) * D);
        for (int i = 0; i < 4; ++i) runtime::qkernels::dequantize_row(tw.t, toks[size_t(i)], er.data() + size_t(i) * D);
        row(std::string("embedding ") + kind, rel_err(host(dout, er.size()), er), 1e-6);
        cudaFree(dx);
        cudaFree(dout);
        cudaFree(dt);
        cudaFree(const_cast<void*>(tw.w.data));
    }
    {  // rmsnorm
        const auto x = randv(size_t(N) * D, 3), w = randv(size_t(D), 4);
        std::vector<float> ref(x.size());
        for (int t = 0; t < N; ++t)
            runtime::kernels::rmsnorm(ref.data() + size_t(t) * D, x.data() + size_t(t) * D, w.data(), D, 1e-5f);
        float *dx = dev(x), *dw = dev(w), *dy = dev(x);
        CK(cudaError_t(runtime::cuda::launch_rmsnorm(dy, dx, dw, N, D, 1e-5f, nullptr)));
        row("rmsnorm", rel_err(host(dy, x.size()), ref), 1e-5);
        // swiglu, add
        const auto b = randv(x.size(), 5);
        std::vector<float> sw = x, ad(x.size());
        runtime::kernels::swiglu(sw.data(), b.data(), int(sw.size()));
        for (size_t i = 0; i < x.size(); ++i) ad[i] = x[i] + b[i];
        float* db = dev(b);
        CK(cudaMemcpy(dy, dx, x.size() * 4, cudaMemcpyDeviceToDevice));
        CK(cudaError_t(runtime::cuda::launch_swiglu(dy, db, x.size(), nullptr)));
        row("swiglu", rel_err(host(dy, x.size()), sw), 1e-5);
        CK(cudaError_t(runtime::cuda::launch_add(dy, dx, db, x.size(), nullptr)));
        row("add", rel_err(host(dy, x.size()), ad), 0);
        cudaFree(dx);
        cudaFree(dw);
        cudaFree(dy);
        cudaFree(db);
    }
    {  // rope + kv append + attention through a shuffled block table (GQA 8/2 heads, head 32)
        const int H = 8, KVH = 2, HD = 32, half = HD / 2, pos = 21, n = 5, S = 64, KV = KVH * HD;
        std::vector<float> cs(size_t(S) * half), sn(cs.size());
        for (int p = 0; p < S; ++p)
            for (int i = 0; i < half; ++i) {
                const double a = p * std::pow(10000.0, -2.0 * i / HD);
                cs[size_t(p) * half + i] = float(std::cos(a));
                sn[size_t(p) * half + i] = float(std::sin(a));
            }
        auto q = randv(size_t(n) * H * HD, 8), k = randv(size_t(n) * KV, 9), v = randv(size_t(n) * KV, 10);
        auto kc = randv(size_t(S) * KV, 12), vc = randv(size_t(S) * KV, 13);  // logical [pos][kv_dim]
        // reference rope
        std::vector<float> qr = q, kr = k;
        for (int t = 0; t < n; ++t)
            for (int h = 0; h < H + KVH; ++h)
                for (int i = 0; i < half; ++i) {
                    float* vv = h < H ? &qr[(size_t(t) * H + h) * HD] : &kr[(size_t(t) * KVH + h - H) * HD];
                    const float a = vv[2 * i], b = vv[2 * i + 1], c = cs[size_t(pos + t) * half + i],
                                s = sn[size_t(pos + t) * half + i];
                    vv[2 * i] = a * c - b * s;
                    vv[2 * i + 1] = a * s + b * c;
                }
        float *dq = dev(q), *dk = dev(k), *dc = dev(cs), *ds = dev(sn);
        CK(cudaError_t(runtime::cuda::launch_rope(dq, dk, dc, ds, n, pos, H, KVH, HD, half, nullptr)));
        row("rope (q)", rel_err(host(dq, q.size()), qr), 1e-6);
        row("rope (k)", rel_err(host(dk, k.size()), kr), 1e-6);
        for (int t = 0; t < n; ++t) {
            std::memcpy(&kc[size_t(pos + t) * KV], &kr[size_t(t) * KV], KV * 4);
            std::memcpy(&vc[size_t(pos + t) * KV], &v[size_t(t) * KV], KV * 4);
        }
        // reference attention over the logical cache
        std::vector<float> ref(size_t(n) * H * HD);
        for (int t = 0; t < n; ++t)
            for (int h = 0; h < H; ++h) {
                const int len = pos + t + 1, kvo = (h / (H / KVH)) * HD;
                std::vector<float> att(static_cast<size_t>(len));
                for (int p = 0; p < len; ++p)
                    att[size_t(p)] =
                        runtime::kernels::dot(&qr[(size_t(t) * H + h) * HD], &kc[size_t(p) * KV + kvo], HD) /
                        std::sqrt(float(HD));
                runtime::kernels::softmax(att.data(), len);
                for (int i = 0; i < HD; ++i) {
                    double s = 0;
                    for (int p = 0; p < len; ++p) s += att[size_t(p)] * vc[size_t(p) * KV + kvo + i];
                    ref[(size_t(t) * H + h) * HD + i] = float(s);
                }
            }
        // device pools: blocks in reverse order (table maps logical block b -> physical nb-1-b)
        const int nb = S / 16;
        std::vector<int32_t> table(static_cast<size_t>(nb));
        for (int b = 0; b < nb; ++b) table[size_t(b)] = nb - 1 - b;
        std::vector<float> kp(kc.size()), vp(vc.size());
        for (int p = 0; p < pos; ++p) {  // the old positions; the new ones come through kv_append
            const size_t dst = (size_t(table[size_t(p / 16)]) * 16 + p % 16) * KV;
            std::memcpy(&kp[dst], &kc[size_t(p) * KV], KV * 4);
            std::memcpy(&vp[dst], &vc[size_t(p) * KV], KV * 4);
        }
        float *dkp = dev(kp), *dvp = dev(vp), *dv = dev(v), *dout = dev(ref);
        std::vector<float> sc(size_t(n) * H * S);
        float* dsc = dev(sc);
        int32_t* dt = dev(table);
        CK(cudaError_t(runtime::cuda::launch_kv_append(dkp, dvp, dt, dk, dv, n, pos, KV, nullptr)));
        CK(cudaError_t(runtime::cuda::launch_attention(dout, dq, dkp, dvp, dt, dsc, n, pos, H, KVH, HD, S, nullptr)));
        row("kv append + attention (block table)", rel_err(host(dout, ref.size()), ref), 1e-5);
        for (float* p : {dq, dk, dc, ds, dkp, dvp, dv, dout, dsc}) cudaFree(p);
        cudaFree(dt);
    }
    {  // sampling
        auto l = randv(32000, 14);
        l[12345] = 50.0f;
        l[777] = 49.0f;
        float* dl = dev(l);
        std::vector<int32_t> o(1);
        int32_t* dout = dev(o);
        CK(cudaError_t(runtime::cuda::launch_argmax(dout, dl, int(l.size()), nullptr)));
        row("argmax", host(dout, 1)[0] == 12345 ? 0.0 : 1.0, 0);
        CK(cudaError_t(runtime::cuda::launch_topk_sample(dout, dl, int(l.size()), 40, 1.0f, 0.0f, nullptr)));
        row("top-k sample, u=0 -> the largest", host(dout, 1)[0] == 12345 ? 0.0 : 1.0, 0);
        // P(12345) = 1/(1+e^-1) = 0.731 at T=1 (the rest are ~e^-45): u=0.8 falls on 777
        CK(cudaError_t(runtime::cuda::launch_topk_sample(dout, dl, int(l.size()), 40, 1.0f, 0.8f, nullptr)));
        row("top-k sample, u=0.8 -> the second", host(dout, 1)[0] == 777 ? 0.0 : 1.0, 0);
        cudaFree(dl);
        cudaFree(dout);
    }
}

// A random Llama model of a config: F32 weights ~ N(0, 0.02), norms 1; `kind` f16 / int8 / int4
// converts the matrices (embedding included) the way a plan would.
std::shared_ptr<Model> random_model(const LlamaConfig& c, const std::string& kind, ThreadPool& pool) {
    auto m = std::make_shared<Model>();
    m->config = c;
    m->source_path = "random-" + kind;
    std::vector<std::pair<std::string, std::vector<int64_t>>> specs{{"token_embd.weight", {c.vocab_size, c.dim}},
                                                                    {"output_norm.weight", {c.dim}},
                                                                    {"output.weight", {c.vocab_size, c.dim}}};
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        specs.push_back({p + "attn_norm.weight", {c.dim}});
        specs.push_back({p + "attn_q.weight", {c.q_dim(), c.dim}});
        specs.push_back({p + "attn_k.weight", {c.kv_dim(), c.dim}});
        specs.push_back({p + "attn_v.weight", {c.kv_dim(), c.dim}});
        specs.push_back({p + "attn_output.weight", {c.dim, c.q_dim()}});
        specs.push_back({p + "ffn_norm.weight", {c.dim}});
        specs.push_back({p + "ffn_gate.weight", {c.hidden_dim, c.dim}});
        specs.push_back({p + "ffn_up.weight", {c.hidden_dim, c.dim}});
        specs.push_back({p + "ffn_down.weight", {c.dim, c.hidden_dim}});
    }
    m->tensors.resize(specs.size());
    pool.parallel_for(int64_t(specs.size()), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            const auto& [name, shape] = specs[size_t(i)];
            Tensor t = Tensor::alloc(name, DType::F32, shape);
            float* f = t.f32_mut();
            if (shape.size() == 1) {
                std::fill(f, f + t.numel(), 1.0f);
            } else {
                std::mt19937_64 r(1234 + uint64_t(i));
                std::normal_distribution<float> d(0.0f, 0.02f);
                for (int64_t k = 0; k < t.numel(); ++k) f[k] = d(r);
                if (kind == "f16") {
                    Tensor h = Tensor::alloc(name, DType::F16, shape);
                    auto* p = reinterpret_cast<uint16_t*>(h.data.get());
                    for (int64_t k = 0; k < t.numel(); ++k) p[k] = f32_to_f16(f[k]);
                    t = h;
                } else if (kind == "int8" || kind == "int4") {
                    quant::QuantSpec s;
                    s.bits = kind == "int8" ? 8 : 4;
                    auto q = quant::quantize_rtn(t, s);
                    if (q.ok()) t = std::move(q).value();
                }
            }
            m->tensors[size_t(i)] = std::move(t);
        }
    });
    return m;
}

runtime::ExecProgram make_plan(const LlamaConfig& c, int prefill_batch, int max_seq) {
    const Graph g = build_llama_graph(c);
    runtime::ExecProgram p;
    p.ops_before = int(g.ops.size());
    p.nodes = compile::fuse(g);
    p.decode = compile::plan_memory(p.nodes, g, c, 1, max_seq).value();
    p.prefill = compile::plan_memory(p.nodes, g, c, prefill_batch, max_seq).value();
    return p;
}

LlamaConfig shape(const std::string& name) {
    LlamaConfig c;
    if (name == "tinyllama-1.1b") {
        c.dim = 2048, c.hidden_dim = 5632, c.n_layers = 22, c.n_heads = 32, c.n_kv_heads = 4, c.vocab_size = 32000;
        c.context_length = 2048;
    } else {  // stories260k
        c.dim = 64, c.hidden_dim = 172, c.n_layers = 5, c.n_heads = 8, c.n_kv_heads = 4, c.vocab_size = 512;
        c.context_length = 512;
    }
    c.head_dim = c.dim / c.n_heads;
    c.rope_dim = c.head_dim;
    return c;
}

std::vector<float> run_all(Backend& be, const std::vector<int32_t>& prompt, int steps) {
    const int V = be.config().vocab_size;
    std::vector<float> all(prompt.size() * size_t(V));
    auto l = be.run(prompt.data(), int(prompt.size()), 0, all.data());
    if (!l.ok()) {
        std::printf("%s: %s\n", be.name().c_str(), l.message().c_str());
        return {};
    }
    const float* last = *l;
    for (int i = 0; i < steps; ++i) {
        int32_t t = int32_t(std::max_element(last, last + V) - last);
        auto r = be.run(&t, 1, int(prompt.size()) + i);
        if (!r.ok()) return {};
        last = *r;
        all.insert(all.end(), last, last + V);
    }
    return all;
}

void check_models() {
    std::printf("\n| whole model (CUDA backend vs CPU backend)    | max|a-b|/max|b| | tol | |\n|---|---|---|---|\n");
    ThreadPool pool(0);
    const LlamaConfig c = shape("stories260k");
    std::vector<int32_t> prompt;
    for (int i = 0; i < 40; ++i) prompt.push_back((i * 37 + 1) % c.vocab_size);
    for (const char* kind : {"f32", "f16", "int8", "int4"}) {
        auto m = random_model(c, kind, pool);
        const auto plan = make_plan(c, 16, 128);  // the 40-token prompt runs as 3 prefill chunks
        // The CPU's quantized matmuls quantize activations to int8; CUDA multiplies FP32
        // activations by the dequantized weights. So CUDA is compared with the CPU backend
        // running the same weights dequantized to F32 (tight), and with the quantized CPU run (loose).
        auto deq = std::make_shared<Model>(*m);
        for (Tensor& t : deq->tensors)
            if (t.type != DType::F32) {
                const std::vector<float> f = runtime::qkernels::dequantize(t);
                Tensor n = Tensor::alloc(t.name, DType::F32, t.shape);
                std::copy(f.begin(), f.end(), n.f32_mut());
                t = std::move(n);
            }
        CpuBackend cpu, cpu_deq;
        auto cb = runtime::cuda::make_cuda_backend();
        auto s1 = cpu.load(m, plan, BackendOptions{0, 0});
        auto s2 = cb->load(m, plan, BackendOptions{0, 0});
        auto s3 = cpu_deq.load(deq, plan, BackendOptions{0, 0});
        if (!s1.ok() || !s2.ok() || !s3.ok()) {
            std::printf("load: %s %s\n", s1.ok() ? "" : s1.message().c_str(), s2.ok() ? "" : s2.message().c_str());
            ++g_failed;
            continue;
        }
        const auto out = run_all(*cb, prompt, 16);
        const std::string what = std::string("stories260k shape ") + kind + ", 40 prefill + 16 decode";
        row(what + " vs F32 weights", rel_err(out, run_all(cpu_deq, prompt, 16)), 1e-4);
        if (std::string(kind) == "int8" || std::string(kind) == "int4")
            row(what + " vs CPU int8 acts", rel_err(out, run_all(cpu, prompt, 16)), 5e-2);
    }
}

// What the agent does with a .edge on a GPU board, minus the file: make_engine_executor with
// --backend cuda and auto, then batch steps through a PagedKv as the worker and the scheduler run
// them: prefix reuse (the sequence truncated to what a second prompt shares, only the rest run)
// against a fresh run on CUDA and the same steps on the CPU backend (--backend cpu); then one
// step of 4 sequences sharing a 20-token prefix (attached blocks, copy-on-write) against each
// sequence run alone on the CPU.
void check_agent() {
    using namespace edge::runtime;
    std::printf("\n| agent executor (engine/runtime)              | max|a-b|/max|b| | tol | |\n|---|---|---|---|\n");
    ThreadPool pool(0);
    const LlamaConfig c = shape("stories260k");
    std::shared_ptr<const Model> m = random_model(c, "f32", pool);
    const auto plan = make_plan(c, 16, 128);
    auto open = [&](BackendChoice b) { return make_engine_executor(m, plan, OpenOptions{0, 0, b, {}}, "random-f32"); };
    auto cu = open(BackendChoice::Cuda), au = open(BackendChoice::Auto), fresh = open(BackendChoice::Cuda),
         cpu = open(BackendChoice::Cpu);
    for (auto* r : {&cu, &au, &fresh, &cpu})
        if (!r->ok()) {
            std::printf("make_engine_executor: %s\n", r->message().c_str());
            ++g_failed;
            return;
        }
    std::printf("--backend cuda: %s\n--backend auto: %s\n--backend cpu:  %s\n", cu->label.c_str(), au->label.c_str(),
                cpu->label.c_str());
    std::printf("memory: %s\n", describe_memory(cu->exe->held_memory()).c_str());
    row("--backend cuda runs on CUDA", cu->label.rfind("cuda (", 0) == 0 ? 0.0 : 1.0, 0.0);
    row("--backend auto runs on CUDA", au->label.rfind("cuda (", 0) == 0 ? 0.0 : 1.0, 0.0);
    const ExecutorMemory dm = cu->exe->held_memory();
    row("device memory reported (used > 0, <= total)",
        dm.device_total > 0 && dm.device_free < dm.device_total ? 0.0 : 1.0, 0.0);
    row("capabilities: K/V rows on the device", cu->exe->capabilities().kv_on_device ? 0.0 : 1.0, 0.0);

    const edge::kv::KvShape ks{c.n_layers, c.n_kv_heads, c.head_dim, kKvBlock};
    auto make_kv = [&](bool data) { return std::move(edge::kv::PagedKv::create({ks, 32, data, true}).value()); };
    edge::kv::PagedKv kv_cu = make_kv(false), kv_fresh = make_kv(false), kv_cpu = make_kv(true);
    auto step = [&](Executor& e, edge::kv::PagedKv& kv, int seq, std::span<const int32_t> t) -> std::vector<float> {
        const PagedStep st{seq, t};
        auto r = e.step(kv, std::span(&st, 1));
        if (!r.ok()) {
            std::printf("%s: %s\n", e.capabilities().name.c_str(), r.message().c_str());
            return {};
        }
        return std::vector<float>(*r, *r + c.vocab_size);
    };
    // First prompt (20 tokens, two prefill chunks) and 8 greedy tokens, on CUDA and on the CPU.
    std::vector<int32_t> seq;
    for (int i = 0; i < 20; ++i) seq.push_back((i * 53 + 7) % c.vocab_size);
    std::vector<float> lc = step(*cu->exe, kv_cu, 0, seq), lp = step(*cpu->exe, kv_cpu, 0, seq);
    for (int i = 0; i < 8 && !lc.empty() && !lp.empty(); ++i) {
        const int32_t t = int32_t(std::max_element(lc.begin(), lc.end()) - lc.begin());
        seq.push_back(t);
        lc = step(*cu->exe, kv_cu, 0, std::span(&t, 1));
        lp = step(*cpu->exe, kv_cpu, 0, std::span(&t, 1));
    }
    // Second prompt: 24 of the 28 cached tokens, then 6 new ones. Reuse runs 6 tokens at pos 24.
    std::vector<int32_t> p2(seq.begin(), seq.begin() + 24);
    for (int i = 0; i < 6; ++i) p2.push_back((i * 97 + 11) % c.vocab_size);
    for (auto* kv : {&kv_cu, &kv_cpu}) (void)kv->apply(edge::kv::op::Truncate{0, 24});
    const std::span<const int32_t> rest(p2.data() + 24, 6);
    const auto reused = step(*cu->exe, kv_cu, 0, rest);
    const auto reused_cpu = step(*cpu->exe, kv_cpu, 0, rest);
    const auto full = step(*fresh->exe, kv_fresh, 0, p2);
    auto cmp = [](const std::vector<float>& a, const std::vector<float>& b) {
        return a.empty() || b.empty() ? 1e30 : rel_err(a, b);  // a failed run fails the row
    };
    row("prefix reuse (6 at pos 24) vs fresh prefill", cmp(reused, full), 1e-4);
    row("prefix reuse on CUDA vs on the CPU backend", cmp(reused, reused_cpu), 1e-4);

    // A batch of 4 sequences after a shared 20-token prefix (seq 10 holds it; 11..14 attach its
    // full block and fork-free append the rest), against each run alone on the CPU backend.
    edge::kv::PagedKv kv_b = make_kv(false);
    std::vector<int32_t> prefix(seq.begin(), seq.begin() + 20);
    (void)step(*cu->exe, kv_b, 10, prefix);
    std::vector<std::vector<int32_t>> own(4);
    std::vector<PagedStep> batch;
    for (int j = 0; j < 4; ++j) {
        (void)kv_b.apply(edge::kv::op::AttachPrefix{11 + j, prefix});  // shares the first 16
        own[size_t(j)].assign(prefix.begin() + 16, prefix.end());
        for (int i = 0; i < 3 + j; ++i) own[size_t(j)].push_back((j * 31 + i * 7 + 3) % c.vocab_size);
        batch.push_back({11 + j, own[size_t(j)]});
    }
    auto out = cu->exe->step(kv_b, batch);
    double worst = out.ok() ? 0.0 : 1e30;
    if (!out.ok()) std::printf("batch step: %s\n", out.message().c_str());
    for (int j = 0; j < 4 && out.ok(); ++j) {
        edge::kv::PagedKv alone = make_kv(true);
        std::vector<int32_t> all(prefix.begin(), prefix.begin() + 16);
        all.insert(all.end(), own[size_t(j)].begin(), own[size_t(j)].end());
        const auto ref = step(*cpu->exe, alone, 0, all);
        const std::vector<float> got(*out + size_t(j) * c.vocab_size, *out + size_t(j + 1) * c.vocab_size);
        worst = std::max(worst, cmp(got, ref));
    }
    row("batch of 4 with a shared prefix vs each alone on the CPU", worst, 1e-4);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void bench(const std::string& shape_name) {
    ThreadPool pool(0);
    const LlamaConfig c = shape(shape_name);
    // device-to-device copy bandwidth: the ceiling decode is compared against (read + write)
    const size_t bytes = size_t(1) << 30;
    void *a = nullptr, *b = nullptr;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    std::vector<double> bw;
    for (int i = 0; i < 5; ++i) {
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0));
        CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        bw.push_back(2.0 * double(bytes) / (ms / 1e3) / 1e9);
    }
    cudaFree(a);
    cudaFree(b);
    const double gbs = median(bw);
    std::printf("\n%s, device copy bandwidth %.0f GB/s (median of 5, read+write)\n\n", shape_name.c_str(), gbs);
    std::printf(
        "| weights | weight MB | decode tok/s | GB/s read | %% of copy bw | prefill tok/s (256) "
        "|\n|---|---|---|---|---|---|\n");
    for (const char* kind : {"f16", "int8", "int4"}) {
        auto m = random_model(c, kind, pool);
        const auto plan = make_plan(c, 64, 512);
        auto be = runtime::cuda::make_cuda_backend();
        auto st = be->load(m, plan, BackendOptions{0, 512});
        if (!st.ok()) {
            std::printf("| %s | load failed: %s |\n", kind, st.message().c_str());
            ++g_failed;
            continue;
        }
        std::vector<int32_t> prompt(256);
        for (int i = 0; i < 256; ++i) prompt[size_t(i)] = (i * 37 + 1) % c.vocab_size;
        std::vector<double> pre, dec;
        for (int rep = 0; rep < 5; ++rep) {
            auto t0 = std::chrono::steady_clock::now();
            auto l = be->run(prompt.data(), 256, 0);
            auto t1 = std::chrono::steady_clock::now();
            if (!l.ok()) break;
            pre.push_back(256.0 / std::chrono::duration<double>(t1 - t0).count());
            int32_t tok = 1;
            t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < 64; ++i) {
                auto r = be->run(&tok, 1, 256 + i);
                if (!r.ok()) break;
                tok = int32_t(std::max_element(*r, *r + c.vocab_size) - *r);
            }
            t1 = std::chrono::steady_clock::now();
            dec.push_back(64.0 / std::chrono::duration<double>(t1 - t0).count());
        }
        if (dec.empty()) continue;
        const double wmb = double(be->memory().weight_bytes) / 1e6;
        const double tps = median(dec), read = tps * wmb / 1e3;
        std::printf("| %s | %.0f | %.1f | %.0f | %.0f%% | %.0f |\n", kind, wmb, tps, read, 100.0 * read / gbs,
                    median(pre));
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "check";
    const runtime::cuda::ProbeResult p = runtime::cuda::probe();
    if (!p.error.empty() || p.devices == 0) {
        std::printf("no device: %s — nothing ran (the CPU-side parts built)\n",
                    p.error.empty() ? "no CUDA device" : p.error.c_str());
        return 0;
    }
    std::printf("device: %s (compute capability %d), %d device(s)\n", p.name.c_str(), p.compute_capability, p.devices);
    if (mode == "check") {
        check_kernels();
        check_models();
        check_agent();
        std::printf("\n%s: %d check(s) failed\n", g_failed ? "FAILED" : "PASSED", g_failed);
        return g_failed ? 1 : 0;
    }
    if (mode == "agent") {
        check_agent();
        std::printf("\n%s: %d check(s) failed\n", g_failed ? "FAILED" : "PASSED", g_failed);
        return g_failed ? 1 : 0;
    }
    if (mode == "bench") {
        bench(argc > 2 ? argv[2] : "tinyllama-1.1b");
        return g_failed ? 1 : 0;
    }
    std::printf("usage: edge-gpu-check check | agent | bench [tinyllama-1.1b|stories260k]\n");
    return 2;
}
