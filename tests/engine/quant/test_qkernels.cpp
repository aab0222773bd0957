// Quantized CPU kernels against the FP32 reference (normalised error), AVX2 against portable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/core/half.h"
#include "engine/model/ggml_dequant.h"
#include "engine/model/ggml_kquant.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/quant/rtn.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "test_support.h"

using edge::model::dequantize;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

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
    const auto d = runtime::qkernels::dequantize(w);
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

// The x86 kernel families with a tile kernel (AVX2: qkernels_avx2_tile.cpp, AVX-512 VNNI:
// qkernels_avx512_tile.cpp) that this processor has.
std::vector<runtime::qkernels::KernelLevel> tile_levels() {
    std::vector<runtime::qkernels::KernelLevel> levels;
#if defined(__x86_64__)
    for (auto level : {runtime::qkernels::KernelLevel::Avx2, runtime::qkernels::KernelLevel::Avx512Vnni})
        if (runtime::qkernels::kernel_available(level)) levels.push_back(level);
#endif
    return levels;
}

}  // namespace

// Every kernel family the processor has (portable, AVX2, AVX-512 VNNI) against the FP32
// reference of the dequantized weights, and against the portable integer sums; odd shapes: 37
// rows (4-row passes plus a remainder), 172 columns (stories260K's FFN: a ragged last group, 6
// blocks = a partial 4-block chunk), 300 (8-block path plus tail), 96 (3 blocks), 1100 (the
// AVX-512 kernels' scale products span three windows of 16 blocks, the last one partial; groups of
// 128 and 512 put 4 groups in a window and a window in a group).
TEST(QuantKernels, MatvecAndMatmatMatchTheReference) {
    ThreadPool pool(2);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<runtime::qkernels::KernelLevel> levels;
    for (auto l : {runtime::qkernels::KernelLevel::Avx2, runtime::qkernels::KernelLevel::Avx512Vnni,
                   runtime::qkernels::KernelLevel::Avx512VnniGfni})
        if (runtime::qkernels::kernel_available(l)) levels.push_back(l);
    for (int64_t cols : {64, 96, 172, 256, 300, 1100}) {
        const Tensor w = random_f32("w", 37, cols, uint32_t(cols));
        for (int n : {1, 5, 11}) {
            std::vector<float> x(size_t(n * cols));
            for (auto& v : x) v = nd(rng);
            const std::vector<std::pair<QGrouping, int64_t>> groupings{
                {QGrouping::PerChannel, 0}, {QGrouping::Group, 32},  {QGrouping::Group, 64}, {QGrouping::Group, 96},
                {QGrouping::Group, 128},    {QGrouping::Group, 512}, {QGrouping::Flat, 32}};
            for (int bits : {8, 4})
                for (bool sym : {true, false})
                    for (auto [g, gs] : groupings)
                        for (auto scales : {QuantSpec::Scales::F32, QuantSpec::Scales::F16}) {
                            if (gs > cols) continue;
                            const QuantSpec spec{bits, sym, g, gs, QMethod::RTN, false, scales};
                            auto q = quantize_rtn(w, spec);
                            ASSERT_TRUE(q.ok()) << q.message();
                            ASSERT_EQ(q->quant->scale_type,
                                      scales == QuantSpec::Scales::F16 ? QScale::F16 : QScale::F32);
                            const std::string what =
                                spec_name(spec) + (scales == QuantSpec::Scales::F16 ? " f16 scales" : " f32 scales");
                            const auto ref = reference(*q, x, n);
                            std::vector<float> port(size_t(n * 37));
                            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
                            runtime::qkernels::matmul(port.data(), x.data(), *q, n, pool);
                            // int8 activations cost ~0.5% relative; the dequantized weights are exact.
                            EXPECT_LT(norm_err(port, ref), 0.01) << what << " cols " << cols << " n " << n;
                            for (auto level : levels) {
                                std::vector<float> simd(size_t(n * 37));
                                runtime::qkernels::force_kernels(level);
                                runtime::qkernels::matmul(simd.data(), x.data(), *q, n, pool);
                                EXPECT_LT(norm_err(simd, ref), 0.01) << runtime::qkernels::kernel_name() << " " << what
                                                                     << " cols " << cols << " n " << n;
                                // Same integer sums; only the float order of the scaling differs.
                                EXPECT_LT(norm_err(simd, port), 2e-6) << runtime::qkernels::kernel_name() << " " << what
                                                                      << " cols " << cols << " n " << n;
                            }
                            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                        }
        }
    }
}

// ggml's Q4_K / Q5_K / Q6_K blocks are multiplied in place by integer dot products (no row is
// dequantized). Checked on blocks made by our quantizers (ggml_kquant.h) and on random bytes
// (every six-bit scale and min, negative Q6_K scales), 37 rows, 256 and 768 columns, 1 / 5 / 13
// tokens: against the dequantized weights times the activations as the kernel quantized them
// (the integer sums are exact: only float rounding remains), against the FP32 activations (the
// int8 activations' cost), the SIMD kernels against the portable ones, and each token's outputs
// the same bits whatever the batch.
TEST(QuantKernels, KQuantBlocksMultiplyInPlaceWithExactIntegerSums) {
    ThreadPool pool(2);
    std::mt19937 rng(21);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    constexpr int64_t kR = 37;
    for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q6_K})
        for (bool random_bytes : {false, true})
            for (int64_t cols : {256, 768}) {
                if (type == DType::Q5_K && !random_bytes) continue;  // no Q5_K quantizer: random blocks only
                Tensor w = Tensor::alloc("w", type, {kR, cols});
                const size_t row_bytes = dtype_bytes(type, cols), block = size_t(dtype_block_bytes(type));
                if (random_bytes) {
                    for (size_t i = 0; i < w.nbytes; ++i) w.data.get()[i] = uint8_t(rng());
                    // The half scales: small and positive (Q6_K: d at byte 208; Q4_K/Q5_K: d, dmin).
                    for (size_t off = 0; off < w.nbytes; off += block)
                        for (size_t f : type == DType::Q6_K ? std::vector<size_t>{208} : std::vector<size_t>{0, 2}) {
                            const uint16_t h = f32_to_f16(0.001f * (1.0f + float(rng() % 100) / 100.0f));
                            std::memcpy(w.data.get() + off + f, &h, 2);
                        }
                } else {
                    const Tensor f = random_f32("w", kR, cols, uint32_t(cols) + 5);
                    for (int64_t r = 0; r < kR; ++r)
                        (type == DType::Q4_K ? model::quantize_row_q4_k : model::quantize_row_q6_k)(
                            f.f32() + r * cols, cols, w.data.get() + size_t(r) * row_bytes);
                }
                ASSERT_TRUE(runtime::qkernels::supported(w));
                const std::string what = std::string(dtype_name(type)) + (random_bytes ? " random" : " quantized") +
                                         " cols " + std::to_string(cols);
                for (int n : {1, 5, 13}) {
                    std::vector<float> x(size_t(n * cols));
                    for (auto& v : x) v = nd(rng);
                    // The activations as the kernels see them: int8 codes times their block scale.
                    std::vector<float> xq(x.size());
                    for (int t = 0; t < n; ++t) {
                        runtime::qkernels::QActs a;
                        runtime::qkernels::quantize_acts(x.data() + t * cols, cols, a);
                        for (int64_t c = 0; c < cols; ++c)
                            xq[size_t(t * cols + c)] = float(a.q[size_t(c)]) * a.scale[size_t(c / 32)];
                    }
                    const auto exact = reference(w, xq, n), ref = reference(w, x, n);
                    std::vector<float> port(size_t(n * kR));
                    runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
                    runtime::qkernels::matmul(port.data(), x.data(), w, n, pool);
                    EXPECT_LT(norm_err(port, exact), 1e-6) << what << " n " << n;
                    for (auto level : tile_levels()) {
                        runtime::qkernels::force_kernels(level);
                        std::vector<float> best(size_t(n * kR));
                        runtime::qkernels::matmul(best.data(), x.data(), w, n, pool);
                        EXPECT_LT(norm_err(best, exact), 1e-6)
                            << runtime::qkernels::kernel_name() << " " << what << " n " << n;
                        EXPECT_LT(norm_err(best, ref), 0.01) << what << " n " << n;
                        for (int t = 0; t < n; ++t) {
                            std::vector<float> one(static_cast<size_t>(kR));
                            runtime::qkernels::matmul(one.data(), x.data() + t * cols, w, 1, pool);
                            // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): the bits are the point
                            EXPECT_EQ(0, std::memcmp(one.data(), best.data() + t * kR, sizeof(float) * size_t(kR)))
                                << runtime::qkernels::kernel_name() << " " << what << " token " << t << " of " << n;
                        }
                    }
                    runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                }
            }
}

// Our K-quant blocks are valid ggml blocks: they dequantize (ggml_dequant.cpp's reader) to within
// half a quantization step of the values they were made from.
TEST(QuantKernels, KQuantQuantizersWriteBlocksTheReaderGivesBack) {
    const Tensor f = random_f32("w", 4, 512, 3);
    for (DType type : {DType::Q4_K, DType::Q6_K}) {
        std::vector<uint8_t> blocks(dtype_bytes(type, f.numel()));
        (type == DType::Q4_K ? model::quantize_row_q4_k : model::quantize_row_q6_k)(f.f32(), f.numel(), blocks.data());
        std::vector<float> back(size_t(f.numel()));
        ASSERT_TRUE(dequantize(type, blocks.data(), back.data(), f.numel()).ok());
        std::vector<float> ref(f.f32(), f.f32() + f.numel());
        // Q4_K: 15 steps over a sub-block's range (~6 sigma): ~7% RMS; Q6_K: 63 steps: ~1.5%.
        EXPECT_LT(norm_err(back, ref), type == DType::Q4_K ? 0.1 : 0.03) << dtype_name(type);
        EXPECT_GT(norm_err(back, ref), 0.0) << dtype_name(type);
    }
}

// From 4 tokens on, the tile kernels multiply (AVX-512: panels of 16 rows repacked with the rows in
// the lanes, 4 tokens per pass and a remainder of 1-3; AVX2: two panels of 8 rows); fewer go one by
// one through the row kernel. Each token's outputs must be the bits the one-token kernel gives it,
// whatever the batch, for 37 rows (whole panels and a ragged one; row passes of 8, 4 and 1), widths
// with partial chunks and windows and groups that do not divide the width, every row layout, 13
// and 513 tokens, on each family.
TEST(QuantKernels, TokenTilesGiveEachTokenTheOneTokenKernelsBits) {
    const auto levels = tile_levels();
    if (levels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    ThreadPool pool(2);
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int64_t cols : {96, 300, 1100}) {
        const Tensor w = random_f32("w", 37, cols, uint32_t(cols) + 1);
        const int n = cols == 300 ? 513 : 13;
        std::vector<float> x(size_t(n * cols));
        for (auto& v : x) v = nd(rng);
        for (int bits : {8, 4})
            for (bool sym : {true, false})
                for (auto [g, gs] : std::vector<std::pair<QGrouping, int64_t>>{{QGrouping::PerChannel, 0},
                                                                               {QGrouping::Group, 32},
                                                                               {QGrouping::Group, 64},
                                                                               {QGrouping::Group, 512}})
                    for (auto scales : {QuantSpec::Scales::F32, QuantSpec::Scales::F16}) {
                        if (gs > cols) continue;
                        const QuantSpec spec{bits, sym, g, gs, QMethod::RTN, false, scales};
                        auto q = quantize_rtn(w, spec);
                        ASSERT_TRUE(q.ok()) << q.message();
                        for (auto level : levels) {
                            runtime::qkernels::force_kernels(level);
                            std::vector<float> batched(size_t(n * 37)), single(size_t(n * 37));
                            runtime::qkernels::matmul(batched.data(), x.data(), *q, n, pool);
                            for (int t = 0; t < n; ++t)
                                runtime::qkernels::matmul(single.data() + t * 37, x.data() + t * cols, *q, 1, pool);
                            EXPECT_EQ(0, std::memcmp(batched.data(), single.data(), batched.size() * sizeof(float)))
                                << runtime::qkernels::kernel_name() << " " << spec_name(spec) << " cols " << cols;
                        }
                        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                    }
    }
}

// The x86 kernels' per-row arithmetic, written out once in scalar code (qkernels_avx512.cpp,
// rows_math; the AVX2 kernels follow it too): whole-block integer sums isum_b = Σ code·xq −
// offset·Σxq, then acc_p = fma(isum_b, s_w·s_x, acc_p) for b ≡ p (mod P), P = 4 (INT4) or 2
// (INT8), and the partials added as (acc_0 + acc_1) + (acc_2 + acc_3). The one-token kernels and
// the tiles of both families must give exactly these bits (symmetric weights, groups of 32, 64 and
// 128, float and half scales, 1, 5 and 70 tokens), so the two families agree to the bit.
TEST(QuantKernels, X86KernelsFollowTheirWrittenArithmeticToTheBit) {
    const auto levels = tile_levels();
    if (levels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    ThreadPool pool(2);
    std::mt19937 rng(21);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    // 7 blocks: partial chunks for both widths; 21 blocks: runs of 8 (the AVX2 one-token INT4
    // kernel's paired blocks) and a tail.
    const int64_t rows = 21;
    for (int64_t cols : {200, 660}) {
        const Tensor w = random_f32("w", rows, cols, 77);
        for (int bits : {4, 8})
            for (int64_t gs : {32, 64, 128})
                for (auto scales : {QuantSpec::Scales::F32, QuantSpec::Scales::F16}) {
                    const QuantSpec spec{bits, true, QGrouping::Group, gs, QMethod::RTN, false, scales};
                    auto q = quantize_rtn(w, spec);
                    ASSERT_TRUE(q.ok()) << q.message();
                    const QuantInfo& qi = *q->quant;
                    const uint8_t* base = q->data.get();
                    for (int n : {1, 5, 70}) {
                        std::vector<float> x(size_t(n * cols));
                        for (auto& v : x) v = nd(rng);
                        std::vector<float> want(size_t(n * rows));
                        const int P = bits == 4 ? 4 : 2, offset = bits == 4 ? 8 : 0;
                        for (int t = 0; t < n; ++t) {
                            runtime::qkernels::QActs a;
                            runtime::qkernels::quantize_acts(x.data() + t * cols, cols, a);
                            for (int64_t r = 0; r < rows; ++r) {
                                float acc[4] = {0, 0, 0, 0};
                                for (int64_t b = 0; b < a.blocks; ++b) {
                                    int32_t isum = 0;
                                    for (int64_t c = b * kQBlock; c < std::min(cols, (b + 1) * kQBlock); ++c)
                                        isum += quant_code(qi, base, r, c) * int32_t(a.q[size_t(c)]);
                                    isum -= offset * a.sum[size_t(b)];
                                    const float prod =
                                        quant_scale(qi, base, qi.group_of(r, b * kQBlock)) * a.scale[size_t(b)];
                                    acc[b % P] = std::fma(float(isum), prod, acc[b % P]);
                                }
                                want[size_t(t * rows + r)] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
                            }
                        }
                        for (auto level : levels) {
                            runtime::qkernels::force_kernels(level);
                            std::vector<float> got(size_t(n * rows));
                            runtime::qkernels::matmul(got.data(), x.data(), *q, n, pool);
                            EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
                                << runtime::qkernels::kernel_name() << " " << spec_name(spec) << ", " << n
                                << " tokens, " << cols << " columns";
                        }
                        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                    }
                }
    }
}

// FP32 weights against several tokens go through panels of 8 rows transposed into the lanes
// (qkernels_float.cpp, f32_rows_lanes): each output must be the bits kernels::dot gives for that row and
// token, for widths with and without unrolled instantiations, ragged panels, 4 to 33 tokens.
TEST(QuantKernels, F32RowsInLanesGiveThePerRowDotsBits) {
    ThreadPool pool(2);
    std::mt19937 rng(8);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int64_t cols : {64, 72, 172, 512})
        for (int n : {4, 5, 33}) {
            const int64_t rows = 29;
            const Tensor w = random_f32("w", rows, cols, uint32_t(cols));
            std::vector<float> x(size_t(n * cols));
            for (auto& v : x) v = nd(rng);
            std::vector<float> got(size_t(n * rows)), want(size_t(n * rows));
            runtime::qkernels::matmul(got.data(), x.data(), w, n, pool);
            for (int t = 0; t < n; ++t)
                for (int64_t r = 0; r < rows; ++r)
                    want[size_t(t * rows + r)] = runtime::kernels::dot(w.f32() + r * cols, x.data() + t * cols, cols);
            EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
                << cols << " columns, " << n << " tokens";
        }
}

// The AVX-512 row kernels' two prefetch plans (8 INT4 rows per pass into L2, or 4 rows in address
// order into L1, 1 to 3 passes ahead) fetch the same lines and compute each row alike:
// bit-identical outputs, for row counts that exercise 8-, 4- and 1-row passes and widths with
// partial chunks.
TEST(QuantKernels, RowPrefetchPlansGiveIdenticalResults) {
    if (!runtime::qkernels::kernel_available(runtime::qkernels::KernelLevel::Avx512Vnni))
        GTEST_SKIP() << "no AVX-512 VNNI on this processor";
    ThreadPool pool(2);
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<runtime::qkernels::KernelLevel> levels{runtime::qkernels::KernelLevel::Avx512Vnni};
    if (runtime::qkernels::kernel_available(runtime::qkernels::KernelLevel::Avx512VnniGfni))
        levels.push_back(runtime::qkernels::KernelLevel::Avx512VnniGfni);
    for (int64_t rows : {29, 45, 200})
        for (int64_t cols : {96, 172, 2048}) {
            const Tensor w = random_f32("w", rows, cols, uint32_t(rows * cols));
            for (const QuantSpec& spec :
                 {QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN},
                  QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN, false, QuantSpec::Scales::F32},
                  QuantSpec{4, false, QGrouping::Group, 64, QMethod::RTN},
                  QuantSpec{8, true, QGrouping::Group, 32, QMethod::RTN},
                  QuantSpec{4, true, QGrouping::PerChannel, 0, QMethod::RTN}}) {
                auto q = quantize_rtn(w, spec);
                ASSERT_TRUE(q.ok()) << q.message();
                for (int n : {1, 3}) {
                    std::vector<float> x(size_t(n * cols));
                    for (auto& v : x) v = nd(rng);
                    for (auto level : levels) {
                        runtime::qkernels::force_kernels(level);
                        std::vector<float> l2(size_t(n * rows)), l1(size_t(n * rows));
                        runtime::qkernels::force_row_prefetch(runtime::qkernels::RowPrefetch::RowsL2);
                        runtime::qkernels::matmul(l2.data(), x.data(), *q, n, pool);
                        runtime::qkernels::force_row_prefetch(runtime::qkernels::RowPrefetch::SequentialL1);
                        EXPECT_EQ(runtime::qkernels::row_prefetch(), runtime::qkernels::RowPrefetch::SequentialL1);
                        for (int lead : {1, 2, 3}) {
                            runtime::qkernels::force_prefetch_lead(lead);
                            EXPECT_EQ(runtime::qkernels::prefetch_lead(spec.bits), lead);
                            runtime::qkernels::matmul(l1.data(), x.data(), *q, n, pool);
                            EXPECT_EQ(std::memcmp(l2.data(), l1.data(), l2.size() * sizeof(float)), 0)
                                << runtime::qkernels::kernel_name() << " " << spec_name(spec) << " " << rows << "x"
                                << cols << " n " << n << " lead " << lead;
                        }
                        runtime::qkernels::force_prefetch_lead(0);
                    }
                    runtime::qkernels::force_row_prefetch(runtime::qkernels::RowPrefetch::Auto);
                    runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                }
            }
        }
    EXPECT_NE(runtime::qkernels::row_prefetch(), runtime::qkernels::RowPrefetch::Auto);
    EXPECT_EQ(runtime::qkernels::prefetch_lead(4), 2);  // Auto: the same lead in bytes for INT4 and INT8
    EXPECT_EQ(runtime::qkernels::prefetch_lead(8), 1);
}

// matmul_gate_up_swiglu (gate and up products and the SwiGLU in one parallel region) gives exactly
// matmul_multi of {gate, up} followed by kernels::swiglu, for every weight type, kernel family and
// thread count; the up product is left in the scratch.
TEST(QuantKernels, GateUpSwigluEqualsProductsThenSwiglu) {
    constexpr int64_t kRows = 75, kCols = 300;
    std::vector<std::pair<Tensor, Tensor>> pairs;
    pairs.emplace_back(random_f32("g", kRows, kCols, 1), random_f32("u", kRows, kCols, 2));
    for (const QuantSpec& spec : {QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN},
                                  QuantSpec{4, false, QGrouping::Group, 64, QMethod::RTN},
                                  QuantSpec{8, true, QGrouping::Group, 32, QMethod::RTN},
                                  QuantSpec{8, true, QGrouping::Flat, 32, QMethod::RTN}}) {
        auto g = quantize_rtn(random_f32("g", kRows, kCols, 3), spec);
        auto u = quantize_rtn(random_f32("u", kRows, kCols, 4), spec);
        ASSERT_TRUE(g.ok() && u.ok());
        pairs.emplace_back(std::move(g).value(), std::move(u).value());
    }
    std::vector<runtime::qkernels::KernelLevel> levels{runtime::qkernels::KernelLevel::Portable};
    for (auto l : {runtime::qkernels::KernelLevel::Avx2, runtime::qkernels::KernelLevel::Avx512Vnni,
                   runtime::qkernels::KernelLevel::Avx512VnniGfni})
        if (runtime::qkernels::kernel_available(l)) levels.push_back(l);
    std::mt19937 rng(13);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int threads : {1, 2, 3})
        for (int n : {1, 4}) {
            ThreadPool pool(threads);
            std::vector<float> x(size_t(n * kCols));
            for (auto& v : x) v = nd(rng);
            for (auto level : levels) {
                runtime::qkernels::force_kernels(level);
                for (size_t p = 0; p < pairs.size(); ++p) {
                    const auto& [gate, up] = pairs[p];
                    std::vector<float> a(size_t(n * kRows)), b(size_t(n * kRows)), fused(size_t(n * kRows), -1.0f),
                        scratch(size_t(n * kRows));
                    const runtime::qkernels::MatmulJob jobs[2] = {{a.data(), &gate}, {b.data(), &up}};
                    runtime::qkernels::matmul_multi(jobs, 2, x.data(), n, pool);
                    for (int t = 0; t < n; ++t)
                        runtime::kernels::swiglu(a.data() + t * kRows, b.data() + t * kRows, int(kRows));
                    runtime::qkernels::matmul_gate_up_swiglu(fused.data(), scratch.data(), x.data(), gate, up, n, pool);
                    ASSERT_EQ(std::memcmp(fused.data(), a.data(), a.size() * sizeof(float)), 0)
                        << runtime::qkernels::kernel_name() << " pair " << p << " threads " << threads << " n " << n;
                    ASSERT_EQ(std::memcmp(scratch.data(), b.data(), b.size() * sizeof(float)), 0)
                        << "the up product, pair " << p;
                }
            }
            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
        }
}

// matmul_multi (Q/K/V, gate|up in one parallel region, activations prepared once per layout)
// gives what separate matmul calls give, for weights of mixed types and layouts sharing an input,
// on every kernel family and thread count.
TEST(QuantKernels, MatmulMultiEqualsSeparateProducts) {
    constexpr int64_t kCols = 256;
    std::vector<Tensor> ws;
    auto add_q = [&](int64_t rows, QuantSpec spec, uint32_t seed) {
        auto q = quantize_rtn(random_f32("w" + std::to_string(seed), rows, kCols, seed), spec);
        ASSERT_TRUE(q.ok()) << q.message();
        ws.push_back(std::move(q).value());
    };
    add_q(37, QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN}, 1);
    add_q(5, QuantSpec{4, false, QGrouping::Group, 64, QMethod::RTN}, 2);  // another layout: own activations
    add_q(11, QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN}, 3);  // shares the first one's
    add_q(9, QuantSpec{8, true, QGrouping::Group, 32, QMethod::RTN}, 4);
    add_q(6, QuantSpec{8, true, QGrouping::Flat, 32, QMethod::RTN}, 5);  // dequantize-a-row path
    ws.push_back(random_f32("f32", 7, kCols, 6));
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<runtime::qkernels::KernelLevel> levels{runtime::qkernels::KernelLevel::Portable};
    for (auto l : {runtime::qkernels::KernelLevel::Avx2, runtime::qkernels::KernelLevel::Avx512Vnni,
                   runtime::qkernels::KernelLevel::Avx512VnniGfni})
        if (runtime::qkernels::kernel_available(l)) levels.push_back(l);
    for (int threads : {1, 2, 3})
        for (int n : {1, 3, 9}) {
            ThreadPool pool(threads);
            std::vector<float> x(size_t(n * kCols));
            for (auto& v : x) v = nd(rng);
            for (auto level : levels) {
                runtime::qkernels::force_kernels(level);
                std::vector<std::vector<float>> sep(ws.size()), multi(ws.size());
                std::vector<runtime::qkernels::MatmulJob> jobs;
                for (size_t j = 0; j < ws.size(); ++j) {
                    sep[j].assign(size_t(n * ws[j].rows()), 0.0f);
                    multi[j].assign(size_t(n * ws[j].rows()), -1.0f);
                    runtime::qkernels::matmul(sep[j].data(), x.data(), ws[j], n, pool);
                    jobs.push_back({multi[j].data(), &ws[j]});
                }
                runtime::qkernels::matmul_multi(jobs.data(), int(jobs.size()), x.data(), n, pool);
                for (size_t j = 0; j < ws.size(); ++j)
                    for (size_t i = 0; i < sep[j].size(); ++i)
                        ASSERT_EQ(multi[j][i], sep[j][i]) << runtime::qkernels::kernel_name() << " weight " << j
                                                          << " element " << i << " threads " << threads << " n " << n;
            }
            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
        }
}

// The AVX-512 activation quantizer gives bit-identical codes, scales and sums to the portable one.
TEST(QuantKernels, ActivationQuantizationIsIdenticalOnEveryPath) {
    const auto levels = tile_levels();  // the x86 families here (AVX2, AVX-512 VNNI)
    if (levels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    for (int64_t n : {1, 31, 32, 33, 172, 2048, 5632}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (auto& v : x) v = nd(rng);
        x[0] = 0.5f;  // ties, zeros
        if (n > 3) x[3] = 0.0f;
        runtime::qkernels::QActs want;
        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Portable);
        runtime::qkernels::quantize_acts(x.data(), n, want);
        for (auto level : levels) {
            runtime::qkernels::QActs a;
            runtime::qkernels::force_kernels(level);
            runtime::qkernels::quantize_acts(x.data(), n, a);
            EXPECT_EQ(a.q, want.q) << runtime::qkernels::kernel_name() << " " << n;
            EXPECT_EQ(a.scale, want.scale) << runtime::qkernels::kernel_name() << " " << n;
            EXPECT_EQ(a.sum, want.sum) << runtime::qkernels::kernel_name() << " " << n;
        }
        runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
    }
}

namespace {
// w's values rounded to a 16-bit float tensor (F16 or BF16) of the same shape.
Tensor halves_of(const Tensor& w, DType type) {
    Tensor h = Tensor::alloc("w", type, {w.rows(), w.cols()});
    auto* hp = reinterpret_cast<uint16_t*>(h.data.get());
    for (int64_t i = 0; i < w.numel(); ++i)
        hp[i] = type == DType::F16 ? f32_to_f16(w.f32()[i]) : f32_to_bf16(w.f32()[i]);
    return h;
}
}  // namespace

// FP16 and BF16 weights against the dequantized reference (the widening is exact, so only the sum
// order differs), on every path present: portable, AVX2/F16C, AVX-512 (172 columns: 2 full 64-wide
// steps and a masked tail), one token and five (the tiles).
TEST(QuantKernels, HalfWeightsMatchFp32) {
    ThreadPool pool(2);
    const Tensor w = random_f32("w", 19, 172, 3);
    for (DType type : {DType::F16, DType::BF16})
        for (int n : {1, 5}) {
            const Tensor h = halves_of(w, type);
            std::vector<float> x(size_t(172 * n));
            for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i));
            const auto ref = reference(h, x, n);
            std::vector<float> out(size_t(19 * n));
            for (auto l : {runtime::qkernels::KernelLevel::Portable, runtime::qkernels::KernelLevel::Avx2,
                           runtime::qkernels::KernelLevel::Avx512Vnni}) {
                if (!runtime::qkernels::kernel_available(l)) continue;
                runtime::qkernels::force_kernels(l);
                runtime::qkernels::matmul(out.data(), x.data(), h, n, pool);
                EXPECT_LT(norm_err(out, ref), 1e-5)
                    << runtime::qkernels::kernel_name() << " " << dtype_name(type) << ", " << n << " tokens";
            }
            runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
        }
}

// 16-bit float weights (FP16, BF16) against 4+ tokens go through panels of rows transposed into the
// lanes (AVX-512: half_tokens_avx512, 16 rows; AVX2: half_tokens_avx2, 8): each output must be the
// bits the one-token dot_half_avx512 / dot_half_avx2 gives, for widths with a tail and without (13:
// the portable tail alone), ragged panels, 4 to 513 tokens, on each family and the portable loop.
TEST(QuantKernels, HalfRowsInLanesGiveTheOneTokenBits) {
    auto levels = tile_levels();
    levels.push_back(runtime::qkernels::KernelLevel::Portable);
    ThreadPool pool(2);
    std::mt19937 rng(12);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (DType type : {DType::F16, DType::BF16})
        for (int64_t cols : {64, 172, 200, 2048, 13, 1100, 3000})
            for (int n : {4, 7, 37, 513}) {
                if (n == 513 && cols > 200) continue;
                const int64_t rows = 35;
                const Tensor w = random_f32("w", rows, cols, uint32_t(cols + n));
                const Tensor h = halves_of(w, type);
                std::vector<float> x(size_t(n * cols));
                for (auto& v : x) v = nd(rng);
                for (auto level : levels) {
                    runtime::qkernels::force_kernels(level);
                    std::vector<float> got(size_t(n * rows)), want(size_t(n * rows));
                    runtime::qkernels::matmul(got.data(), x.data(), h, n, pool);
                    for (int t = 0; t < n; ++t)
                        runtime::qkernels::matmul(want.data() + t * rows, x.data() + t * cols, h, 1, pool);
                    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
                        << runtime::qkernels::kernel_name() << " " << dtype_name(type) << ", " << cols << " columns, "
                        << n << " tokens";
                }
                runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
            }
}

TEST(QuantKernels, ActivationQuantizationRoundsHalfToEvenInBlocksOf32) {
    std::vector<float> x(40, 0.0f);
    x[0] = 127.0f;
    x[1] = 2.5f;   // rne -> 2
    x[2] = -3.5f;  // rne -> -4
    x[33] = -1.0f;
    runtime::qkernels::QActs a;
    runtime::qkernels::quantize_acts(x.data(), 40, a);
    ASSERT_EQ(a.blocks, 2);
    EXPECT_EQ(a.q[1], 2);
    EXPECT_EQ(a.q[2], -4);
    EXPECT_FLOAT_EQ(a.scale[0], 1.0f);
    EXPECT_EQ(a.q[33], -127);
    EXPECT_EQ(a.q[45], 0);  // zero padding
    EXPECT_EQ(a.sum[0], 127 + 2 - 4);
}

// Whole model: stories260K with every linear INT4 / INT8 RTN g32 (the head and the 172-wide
// ffn_down included; float32 and half scales), 48 tokens prefilled, logits of every token on each
// kernel family against the portable one. Per matmul the families agree to ~1e-7 (the same int8
// integer sums, only the float order of the block scaling differs: MatvecAndMatmat above). Through
// the model, though, a matmul output that the next layer requantizes to int8 can sit within that
// 1e-7 of a rounding boundary: one activation code then differs by one, and attention spreads it
// over the later tokens (measured: a single flip at block 1's Q/K/V input moves the logits by
// 5e-3 normalised). So the bound is 2e-2 (a wrong kernel is off by O(1)) and the greedy choice
// must agree at (nearly) every position.
TEST(QuantKernels, WholeModelLogitsAgreeAcrossKernelFamilies) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    auto m = load_model(edge::test::shared("models/stories260K/stories260K.gguf"));
    ASSERT_TRUE(m.ok()) << m.message();
    std::vector<int32_t> toks{1};
    for (int i = 1; i < 48; ++i) toks.push_back(int32_t((i * 37 + 11) % 500 + 3));
    for (auto prec : {quant::Precision::INT4, quant::Precision::INT8})
        for (auto scales : {QuantSpec::Scales::F32, QuantSpec::Scales::F16}) {
            quant::QuantPlan plan = quant::uniform_plan(prec);
            plan.defaults->scales = scales;
            auto q = quant::apply_plan(*m, plan, nullptr);
            ASSERT_TRUE(q.ok()) << q.message();
            auto model = std::make_shared<const Model>(q->model);
            const int V = model->config.vocab_size;
            auto logits = [&](runtime::qkernels::KernelLevel level) {
                runtime::qkernels::force_kernels(level);
                auto rt = LlamaCpu::create(model, RuntimeOptions{2, 64});
                EXPECT_TRUE(rt.ok());
                std::vector<float> all(toks.size() * size_t(V));
                (*rt)->prefill(toks.data(), int(toks.size()), 0, all.data());
                runtime::qkernels::force_kernels(runtime::qkernels::KernelLevel::Auto);
                return all;
            };
            const auto port = logits(runtime::qkernels::KernelLevel::Portable);
            for (auto level : {runtime::qkernels::KernelLevel::Avx2, runtime::qkernels::KernelLevel::Avx512Vnni,
                               runtime::qkernels::KernelLevel::Avx512VnniGfni}) {
                if (!runtime::qkernels::kernel_available(level)) continue;
                const auto simd = logits(level);
                EXPECT_LT(norm_err(simd, port), 2e-2)
                    << int(prec) << " scales " << int(scales) << " level " << int(level);
                int same = 0;
                for (size_t t = 0; t < toks.size(); ++t) {
                    const auto a = simd.begin() + std::ptrdiff_t(t) * V, b = port.begin() + std::ptrdiff_t(t) * V;
                    same += std::max_element(a, a + V) - a == std::max_element(b, b + V) - b;
                }
                EXPECT_GE(same, int(toks.size()) - 2)
                    << int(prec) << " scales " << int(scales) << " level " << int(level);
            }
        }
}
