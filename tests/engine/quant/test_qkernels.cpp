// Quantized CPU kernels against the FP32 reference (normalised error), AVX2 against portable.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/core/half.h"
#include "engine/quant/rtn.h"
#include "engine/runtime/qkernels.h"

using namespace edge;
using namespace edge::quant;

namespace {

Tensor random_f32(const std::string& name, int64_t rows, int64_t cols, uint32_t seed) {
    Tensor t = Tensor::zeros_f32(name, {rows, cols});
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.1f);
    for (int64_t i = 0; i < rows * cols; ++i) t.f32_mut()[i] = nd(rng);
    return t;
}

double norm_err(const std::vector<float>& a, const std::vector<float>& b) {
    double e = 0, n = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        e += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        n += double(b[i]) * b[i];
    }
    return std::sqrt(e / std::max(n, 1e-30));
}

// Reference: the dequantized weights times the FP32 activations, in double.
std::vector<float> reference(const Tensor& w, const std::vector<float>& x, int n) {
    const auto d = qkernels::dequantize(w);
    const int64_t R = w.rows(), C = w.cols();
    std::vector<float> out(size_t(n * R));
    for (int t = 0; t < n; ++t)
        for (int64_t r = 0; r < R; ++r) {
            double s = 0;
            for (int64_t c = 0; c < C; ++c) s += double(d[size_t(r * C + c)]) * x[size_t(t * C + c)];
            out[size_t(t * R + r)] = float(s);
        }
    return out;
}

}  // namespace

TEST(QuantKernels, MatvecAndMatmatMatchTheReference) {
    ThreadPool pool(2);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int64_t cols : {64, 172, 256, 300}) {  // 300: 8 blocks on the 8-at-a-time path, then a partial tail
        const Tensor w = random_f32("w", 37, cols, uint32_t(cols));
        for (int n : {1, 5, 11}) {
            std::vector<float> x(size_t(n * cols));
            for (auto& v : x) v = nd(rng);
            for (int bits : {8, 4})
                for (bool sym : {true, false})
                    for (auto [g, gs] : std::vector<std::pair<QGrouping, int64_t>>{
                             {QGrouping::PerChannel, 0}, {QGrouping::Group, 32}, {QGrouping::Group, 64}, {QGrouping::Flat, 32}}) {
                        const QuantSpec spec{bits, sym, g, gs, QMethod::RTN};
                        auto q = quantize_rtn(w, spec);
                        ASSERT_TRUE(q.ok()) << q.message();
                        const auto ref = reference(*q, x, n);
                        std::vector<float> simd(size_t(n * 37)), port(size_t(n * 37));
                        qkernels::force_portable(false);
                        qkernels::matmul(simd.data(), x.data(), *q, n, pool);
                        qkernels::force_portable(true);
                        qkernels::matmul(port.data(), x.data(), *q, n, pool);
                        qkernels::force_portable(false);
                        // int8 activations cost ~0.5% relative; the dequantized weights are exact.
                        EXPECT_LT(norm_err(simd, ref), 0.01) << spec_name(spec) << " cols " << cols << " n " << n;
                        EXPECT_LT(norm_err(port, ref), 0.01) << spec_name(spec) << " cols " << cols << " n " << n;
                        EXPECT_LT(norm_err(simd, port), 1e-5) << spec_name(spec) << " cols " << cols << " n " << n;
                    }
        }
    }
}

TEST(QuantKernels, F16WeightsMatchFp32) {
    ThreadPool pool(2);
    const Tensor w = random_f32("w", 19, 172, 3);
    Tensor h = Tensor::alloc("w", DType::F16, {19, 172});
    auto* hp = reinterpret_cast<uint16_t*>(h.data.get());
    for (int64_t i = 0; i < w.numel(); ++i) hp[i] = f32_to_f16(w.f32()[i]);
    std::vector<float> x(172 * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i));
    const auto ref = reference(h, x, 3);
    std::vector<float> out(19 * 3);
    qkernels::matmul(out.data(), x.data(), h, 3, pool);
    EXPECT_LT(norm_err(out, ref), 1e-5);
    qkernels::force_portable(true);
    qkernels::matmul(out.data(), x.data(), h, 3, pool);
    qkernels::force_portable(false);
    EXPECT_LT(norm_err(out, ref), 1e-5);
}

TEST(QuantKernels, ActivationQuantizationRoundsHalfToEvenInBlocksOf32) {
    std::vector<float> x(40, 0.0f);
    x[0] = 127.0f;
    x[1] = 2.5f;  // rne -> 2
    x[2] = -3.5f; // rne -> -4
    x[33] = -1.0f;
    qkernels::QActs a;
    qkernels::quantize_acts(x.data(), 40, a);
    ASSERT_EQ(a.blocks, 2);
    EXPECT_EQ(a.q[1], 2);
    EXPECT_EQ(a.q[2], -4);
    EXPECT_FLOAT_EQ(a.scale[0], 1.0f);
    EXPECT_EQ(a.q[33], -127);
    EXPECT_EQ(a.q[45], 0);  // zero padding
    EXPECT_EQ(a.sum[0], 127 + 2 - 4);
}
