// Board-side kernel checks (built for aarch64 by the cross build and run under qemu-user; they
// also build natively in any EDGE_AGENT_ONLY build). tests/engine/quant/test_qkernels.cpp and
// tests/engine/backend/test_cross_backend.cpp are compiled into the same binary: on aarch64 their
// "every level the CPU has" loops run the NEON and NEON-dotprod kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "engine/core/half.h"
#include "engine/quant/rtn.h"
#include "engine/runtime/qkernels.h"
#include "test_support.h"

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

std::vector<qkernels::KernelLevel> simd_levels() {
    std::vector<qkernels::KernelLevel> v;
    for (auto l : {qkernels::KernelLevel::Neon, qkernels::KernelLevel::NeonDotprod})  // = Avx2, Avx512Vnni on x86
        if (qkernels::kernel_available(l)) v.push_back(l);
    return v;
}

// Exact integer reference of one quantized matmul as the kernels define it: int8 activations
// (quantize_acts), integer block sums, then the float scaling, in double.
std::vector<double> integer_reference(const Tensor& w, const std::vector<float>& x, int n) {
    const QuantInfo& q = *w.quant;
    const int64_t R = w.rows(), C = w.cols();
    std::vector<double> out(size_t(n * R));
    const uint8_t* base = w.data.get();
    const float* scales = reinterpret_cast<const float*>(base + q.scales_offset);
    for (int t = 0; t < n; ++t) {
        qkernels::QActs a;
        qkernels::quantize_acts(x.data() + size_t(t) * size_t(C), C, a);
        for (int64_t r = 0; r < R; ++r) {
            double acc = 0;
            for (int64_t b = 0; b < a.blocks; ++b) {
                int64_t s = 0;
                const int64_t g = q.group_of(r, b * kQBlock);
                for (int64_t j = 0; j < kQBlock && b * kQBlock + j < C; ++j)
                    s += int64_t(quant_code(q, base, r, b * kQBlock + j) - quant_zero(q, base, g)) * a.q[size_t(b * kQBlock + j)];
                acc += double(scales[g]) * a.scale[size_t(b)] * double(s);
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
    EXPECT_TRUE(qkernels::kernel_available(qkernels::KernelLevel::Neon)) << "NEON is part of every aarch64 CPU";
    EXPECT_STRNE(qkernels::kernel_name(), "portable");
#endif
    const char* expect = std::getenv("EDGE_EXPECT_KERNEL");
    if (expect) {
        EXPECT_STREQ(qkernels::kernel_name(), expect);
    }
    qkernels::force_kernels(qkernels::KernelLevel::Portable);
    EXPECT_STREQ(qkernels::kernel_name(), "portable");
    qkernels::force_kernels(qkernels::KernelLevel::Auto);
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
                for (int64_t gs : {int64_t(32), cols}) {
                    const quant::QuantSpec spec{bits, sym, gs == cols ? QGrouping::PerChannel : QGrouping::Group, gs,
                                                QMethod::RTN};
                    auto q = quant::quantize_rtn(w, spec);
                    ASSERT_TRUE(q.ok()) << q.message();
                    const auto ref = integer_reference(*q, x, 3);
                    std::vector<float> ref_f(ref.begin(), ref.end());
                    qkernels::force_kernels(qkernels::KernelLevel::Portable);
                    std::vector<float> port(size_t(3 * 9));
                    qkernels::matmul(port.data(), x.data(), *q, 3, pool);
                    EXPECT_LT(norm_err(port, ref_f), 1e-5) << "portable bits " << bits << " cols " << cols;
                    for (auto level : simd_levels()) {
                        qkernels::force_kernels(level);
                        std::vector<float> simd(size_t(3 * 9));
                        qkernels::matmul(simd.data(), x.data(), *q, 3, pool);
                        EXPECT_LT(norm_err(simd, ref_f), 1e-5)
                            << qkernels::kernel_name() << " bits " << bits << (sym ? " sym" : " asym") << " gs " << gs
                            << " cols " << cols;
                    }
                    qkernels::force_kernels(qkernels::KernelLevel::Auto);
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
            qkernels::force_kernels(level);
            std::vector<float> out(5);
            qkernels::matmul(out.data(), x.data(), h, 1, pool);
            EXPECT_LT(norm_err(out, ref_f), 1e-6) << qkernels::kernel_name() << " cols " << cols;
        }
        qkernels::force_kernels(qkernels::KernelLevel::Auto);
    }
}
