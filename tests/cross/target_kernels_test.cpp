// Board-side kernel checks (built for aarch64 by the cross build and run under qemu-user; they
// also build natively in any EDGE_AGENT_ONLY build): every kernel family the CPU has (aarch64:
// NEON, NEON + SDOT; x86: AVX2, AVX-512 VNNI) against the scalar references by normalised error,
// from single matrices to the whole stories260K model. Weights are quantized with the engine's
// RTN (engine/quant/rtn.cpp is compiled in; the rest of engine/quant needs BLAS/LAPACK, which the
// board side does not carry).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "engine/core/half.h"
#include "engine/model/loader.h"
#include "engine/quant/rtn.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;

namespace {

double norm_err(const std::vector<float>& a, const std::vector<float>& b) {
    double e = 0, n = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        e += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        n += double(b[i]) * b[i];
    }
    return std::sqrt(e / std::max(n, 1e-30));
}

std::vector<runtime::qkernels::KernelLevel> simd_levels() {
    std::vector<runtime::qkernels::KernelLevel> v;
    for (auto l : {runtime::qkernels::KernelLevel::Neon,
                   runtime::qkernels::KernelLevel::NeonDotprod})  // = Avx2, Avx512Vnni on x86
        if (runtime::qkernels::kernel_available(l)) v.push_back(l);
    return v;
}

// Exact integer reference of one quantized matmul as the kernels define it: int8 activations
// (quantize_acts), integer block sums, then the float scaling, in double.
std::vector<double> integer_reference(const Tensor& w, const std::vector<float>& x, int n) {
    const QuantInfo& q = *w.quant;
    const int64_t R = w.rows(), C = w.cols();
    std::vector<double> out(size_t(n * R));
    const uint8_t* base = w.data.get();
    for (int t = 0; t < n; ++t) {
        runtime::qkernels::QActs a;
        runtime::qkernels::quantize_acts(x.data() + size_t(t) * size_t(C), C, a);
        for (int64_t r = 0; r < R; ++r) {
            double acc = 0;
            for (int64_t b = 0; b < a.blocks; ++b) {
                int64_t s = 0;
                const int64_t g = q.group_of(r, b * kQBlock);
                for (int64_t j = 0; j < kQBlock && b * kQBlock + j < C; ++j)
                    s += int64_t(quant_code(q, base, r, b * kQBlock + j) - quant_zero(q, base, g)) *
                         a.q[size_t(b * kQBlock + j)];
                acc += double(quant_scale(q, base, g)) * a.scale[size_t(b)] * double(s);
            }
            out[size_t(t * R + r)] = acc;
        }
    }
    return out;
}

}  // namespace

// The run-time dispatch picks what the CPU offers: under qemu -cpu max (SDOT present) the
// dot-product kernels, under -cpu cortex-a72 (ARMv8.0, no SDOT) plain NEON. The ctest entries set
// EDGE_EXPECT_KERNEL to the family the emulated CPU must get.
TEST(CrossKernels, RunTimeSelectionMatchesTheCpu) {
#if defined(__aarch64__)
    EXPECT_TRUE(runtime::qkernels::kernel_available(runtime::qkernels::KernelLevel::Neon))
        << "NEON is part of every aarch64 CPU";
    EXPECT_STRNE(runtime::qkernels::kernel_name(), "portable");
#endif
    const char* expect = std::getenv("EDGE_EXPECT_KERNEL");
    if (expect) {
        EXPECT_STREQ(runtime::qkernels::kernel_name(), expect);
    }
    runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
    EXPECT_STREQ(runtime::qkernels::kernel_name(), "portable");
    runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
}

// Extreme codes and activations: INT8 asymmetric codes of -128/127 with zero points at the ends,
// activations at ±127 after quantization, long rows (many 4-block steps plus a tail): the NEON
// int16 partial sums must not overflow and every family must give the integer reference exactly
// up to float rounding.
TEST(CrossKernels, ExtremeValuesGiveTheIntegerSums) {
    ThreadPool pool(2);
    for (int64_t cols : {32, 128, 160, 4096 + 96}) {
        Tensor w = Tensor::zeros_f32("w", {9, cols});
        std::mt19937 rng{uint32_t(cols)};
        std::uniform_int_distribution<int> sign(0, 1);
        for (int64_t i = 0; i < w.numel(); ++i) w.f32_mut()[i] = sign(rng) ? 1.0f : -0.999f;
        w.f32_mut()[0] = 0.0f;
        std::vector<float> x(size_t(3 * cols));
        for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0) ? -5.0f : (i % 3 == 1 ? 5.0f : 0.25f);
        for (int bits : {8, 4})
            for (bool sym : {true, false})
                for (int64_t gs : {int64_t(32), cols})
                    for (auto scales : {quant::QuantSpec::Scales::F32, quant::QuantSpec::Scales::F16}) {
                        const quant::QuantSpec spec{
                            bits,  sym,   gs == cols ? QGrouping::PerChannel : QGrouping::Group, gs, QMethod::RTN,
                            false, scales};
                        auto q = quant::quantize_rtn(w, spec);
                        ASSERT_TRUE(q.ok()) << q.message();
                        const auto ref = integer_reference(*q, x, 3);
                        std::vector<float> ref_f(ref.begin(), ref.end());
                        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
                        std::vector<float> port(size_t(3 * 9));
                        runtime::qkernels::matmul(port.data(), x.data(), *q, 3, pool);
                        EXPECT_LT(norm_err(port, ref_f), 1e-5) << "portable bits " << bits << " cols " << cols;
                        for (auto level : simd_levels()) {
                            runtime::qkernels::force_kernels(level);
                            std::vector<float> simd(size_t(3 * 9));
                            runtime::qkernels::matmul(simd.data(), x.data(), *q, 3, pool);
                            EXPECT_LT(norm_err(simd, ref_f), 1e-5)
                                << runtime::qkernels::kernel_name() << " bits " << bits << (sym ? " sym" : " asym")
                                << " gs " << gs << " cols " << cols
                                << (scales == quant::QuantSpec::Scales::F16 ? " half scales" : " float scales");
                        }
                        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                    }
    }
}

// F16 weights: the NEON conversion (vcvt_f32_f16) is exact, so only the summation order differs.
TEST(CrossKernels, F16DotOnEveryFamily) {
    ThreadPool pool(1);
    for (int64_t cols : {3, 16, 172, 1001}) {
        Tensor h = Tensor::alloc("w", DType::F16, {5, cols});
        auto* hp = reinterpret_cast<uint16_t*>(h.data.get());
        std::vector<double> ref(5, 0.0);
        std::vector<float> x(static_cast<size_t>(cols));
        for (int64_t c = 0; c < cols; ++c) x[size_t(c)] = std::cos(float(c) * 0.37f);
        for (int64_t r = 0; r < 5; ++r)
            for (int64_t c = 0; c < cols; ++c) {
                hp[r * cols + c] = f32_to_f16(std::sin(float(r * cols + c)) * 3.0f);
                ref[size_t(r)] += double(f16_to_f32(hp[r * cols + c])) * x[size_t(c)];
            }
        const std::vector<float> ref_f(ref.begin(), ref.end());
        for (auto level : simd_levels()) {
            runtime::qkernels::force_kernels(level);
            std::vector<float> out(5);
            runtime::qkernels::matmul(out.data(), x.data(), h, 1, pool);
            EXPECT_LT(norm_err(out, ref_f), 1e-6) << runtime::qkernels::kernel_name() << " cols " << cols;
        }
        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
    }
}

// Random weights, every layout the integer path takes (per channel, groups of 32/64/96) and one
// it does not (flat groups: dequantize-a-row fallback), odd shapes (37 rows, 172 = a ragged group
// and 6 blocks, 300 = 4-block steps plus a tail): each family against the FP64 product of the
// dequantized weights (the int8 activations cost ~0.5%) and against the portable kernels (the
// same integer sums; only the float order of the scaling differs).
TEST(CrossKernels, RandomMatricesMatchTheReference) {
    ThreadPool pool(2);
    std::mt19937 rng{5};
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int64_t cols : {64, 96, 172, 300}) {
        Tensor w = Tensor::zeros_f32("w", {37, cols});
        for (int64_t i = 0; i < w.numel(); ++i) w.f32_mut()[i] = 0.1f * nd(rng);
        for (int n : {1, 5}) {
            std::vector<float> x(static_cast<size_t>(n * cols));
            for (auto& v : x) v = nd(rng);
            for (int bits : {8, 4})
                for (bool sym : {true, false})
                    for (auto [g, gs] : std::vector<std::pair<QGrouping, int64_t>>{{QGrouping::PerChannel, 0},
                                                                                   {QGrouping::Group, 32},
                                                                                   {QGrouping::Group, 64},
                                                                                   {QGrouping::Group, 96},
                                                                                   {QGrouping::Flat, 32}}) {
                        if (gs > cols) continue;
                        auto q = quant::quantize_rtn(w, quant::QuantSpec{bits, sym, g, gs, QMethod::RTN});
                        ASSERT_TRUE(q.ok()) << q.message();
                        const std::vector<float> d = runtime::qkernels::dequantize(*q);
                        std::vector<float> ref(size_t(n * 37));
                        for (int t = 0; t < n; ++t)
                            for (int64_t r = 0; r < 37; ++r) {
                                double s = 0;
                                for (int64_t c = 0; c < cols; ++c)
                                    s += double(d[size_t(r * cols + c)]) * x[size_t(t * cols + c)];
                                ref[size_t(t * 37 + r)] = float(s);
                            }
                        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
                        std::vector<float> port(size_t(n * 37));
                        runtime::qkernels::matmul(port.data(), x.data(), *q, n, pool);
                        EXPECT_LT(norm_err(port, ref), 0.01) << "portable bits " << bits << " cols " << cols;
                        for (auto level : simd_levels()) {
                            runtime::qkernels::force_kernels(level);
                            std::vector<float> simd(size_t(n * 37));
                            runtime::qkernels::matmul(simd.data(), x.data(), *q, n, pool);
                            EXPECT_LT(norm_err(simd, ref), 0.01)
                                << runtime::qkernels::kernel_name() << " bits " << bits << " cols " << cols;
                            EXPECT_LT(norm_err(simd, port), 2e-6)
                                << runtime::qkernels::kernel_name() << " bits " << bits << (sym ? " sym" : " asym")
                                << " gs " << gs << " cols " << cols << " n " << n;
                        }
                        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                    }
        }
    }
}

// Whole model: stories260K with every linear weight RTN INT4 / INT8 (groups of 32, the default
// half scales; the 172-wide ffn_down has a ragged group), 24 tokens prefilled. Each weight's
// product on every kernel family agrees with the portable one to float rounding (< 1e-6); the
// logits of every token agree to 5e-3: the activations are quantized to int8 again before each
// product, so a 1e-7 difference that moves a value across a rounding boundary flips one code by
// one step, and a few such flips through 5 layers left INT8 with half scales at 1.2e-3 (float
// scales happened to stay under 1e-4). A wrong kernel is off by 1e-1 or more.
TEST(CrossKernels, WholeModelLogitsAgreeAcrossKernelFamilies) {
    const std::string path = edge::test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    auto m = load_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    std::vector<int32_t> toks{1};
    for (int i = 1; i < 24; ++i) toks.push_back(int32_t((i * 37 + 11) % 500 + 3));
    for (int bits : {4, 8}) {
        auto qm = std::make_shared<Model>(*m);
        int quantized = 0;
        for (Tensor& t : qm->tensors) {
            if (t.shape.size() != 2 || t.type != DType::F32 || t.name == "token_embd.weight") continue;
            auto q = quant::quantize_rtn(t, quant::QuantSpec{bits, true, QGrouping::Group, 32, QMethod::RTN});
            ASSERT_TRUE(q.ok()) << t.name << ": " << q.message();
            const int64_t C = (*q).cols(), R = (*q).rows();
            std::vector<float> x(static_cast<size_t>(C)), port(static_cast<size_t>(R)), simd(port.size());
            for (int64_t c = 0; c < C; ++c) x[static_cast<size_t>(c)] = std::cos(float(c) * 0.37f);
            ThreadPool one(1);
            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
            runtime::qkernels::matmul(port.data(), x.data(), *q, 1, one);
            for (auto level : simd_levels()) {
                runtime::qkernels::force_kernels(level);
                runtime::qkernels::matmul(simd.data(), x.data(), *q, 1, one);
                EXPECT_LT(norm_err(simd, port), 1e-6) << t.name << " INT" << bits << " level " << int(level);
            }
            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
            t = std::move(*q);
            ++quantized;
        }
        ASSERT_GE(quantized, 7 * qm->config.n_layers) << "every block's 7 linear weights";
        std::shared_ptr<const Model> model = qm;
        const int V = model->config.vocab_size;
        auto logits = [&](runtime::qkernels::KernelLevel level) {
            runtime::qkernels::force_kernels(level);
            auto rt = LlamaCpu::create(model, RuntimeOptions{2, 64});
            EXPECT_TRUE(rt.ok()) << rt.message();
            std::vector<float> all(toks.size() * size_t(V));
            if (rt.ok()) (*rt)->prefill(toks.data(), int(toks.size()), 0, all.data());
            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
            return all;
        };
        const auto port = logits(runtime::qkernels::KernelLevel::Portable);
        for (auto level : simd_levels()) {
            const auto simd = logits(level);
            EXPECT_LT(norm_err(simd, port), 5e-3) << "INT" << bits << " level " << int(level);
        }
    }
}
