// RTN quantizers and layouts; the llama2.c q80 golden file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "engine/quant/llama2c_q80.h"
#include "engine/quant/plan.h"
#include "engine/quant/rtn.h"
#include "engine/runtime/cpu/qkernels.h"
#include "test_support.h"

using namespace edge;
using namespace edge::quant;

namespace {

std::vector<float> random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.05f);
    std::vector<float> w(size_t(rows * cols));
    for (auto& v : w) v = nd(rng);
    w[3] = 0.31f;  // an outlier
    return w;
}

// The fp32 weights of a llama2.c v0 checkpoint in the order of the v2 export (test-local reader).
std::vector<std::vector<float>> read_llama2c_v0_in_export_order(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    int32_t h[7];
    f.read(reinterpret_cast<char*>(h), sizeof h);
    const int64_t D = h[0], F = h[1], L = h[2], H = h[3], KVH = h[4], V = std::abs(h[5]);
    const int64_t kv = D / H * KVH;
    auto read = [&](int64_t n) {
        std::vector<float> v(static_cast<size_t>(n));
        f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * 4));
        return v;
    };
    auto split = [&](std::vector<float> all, int64_t per) {
        std::vector<std::vector<float>> out;
        for (int64_t l = 0; l < L; ++l) out.emplace_back(all.begin() + l * per, all.begin() + (l + 1) * per);
        return out;
    };
    auto emb = read(V * D);
    read(L * D);  // rms_att
    auto wq = split(read(L * D * D), D * D), wk = split(read(L * kv * D), kv * D), wv = split(read(L * kv * D), kv * D),
         wo = split(read(L * D * D), D * D);
    read(L * D);  // rms_ffn
    auto w1 = split(read(L * F * D), F * D), w2 = split(read(L * D * F), D * F), w3 = split(read(L * F * D), F * D);
    std::vector<std::vector<float>> out{emb};
    for (auto* g : {&wq, &wk, &wv, &wo, &w1, &w2, &w3})
        for (auto& m : *g) out.push_back(m);
    return out;
}

}  // namespace

TEST(QuantRtn, ReproducesLlama2cQ80Exactly) {
    const std::string q80 = edge::test::shared("models/stories260K/stories260K_q80.bin");
    const std::string bin = edge::test::shared("models/stories260K/stories260K.bin");
    EDGE_REQUIRE_SHARED(q80);
    EDGE_REQUIRE_SHARED(bin);
    auto golden = read_llama2c_q80(q80);
    ASSERT_TRUE(golden.ok()) << golden.message();
    EXPECT_EQ(int(golden->header.group_size), 32);  // by value: the header struct is packed (UBSan)
    EXPECT_EQ(int(golden->header.shared_classifier), 1);
    const auto fp32 = read_llama2c_v0_in_export_order(bin);
    ASSERT_EQ(fp32.size(), golden->weights.size());
    int64_t codes = 0, scales = 0;
    for (size_t i = 0; i < fp32.size(); ++i) {
        const Tensor& g = golden->weights[i];
        QuantSpec spec{8, true, QGrouping::Flat, 32, QMethod::RTN, false, QuantSpec::Scales::F32};  // q80's
        auto q = quantize_rtn(g.name, fp32[i].data(), g.shape, spec);
        ASSERT_TRUE(q.ok()) << q.message();
        const QuantInfo& qi = *q->quant;
        ASSERT_EQ(qi.scale_type, QScale::F32) << g.name;
        ASSERT_EQ(qi.total_bytes, g.quant->total_bytes) << g.name;
        const size_t n = size_t(qi.rows * qi.cols);
        EXPECT_EQ(std::memcmp(q->data.get(), g.data.get(), n), 0) << g.name << ": int8 codes differ";
        EXPECT_EQ(
            std::memcmp(q->data.get() + qi.scales_offset, g.data.get() + qi.scales_offset, size_t(qi.n_groups) * 4), 0)
            << g.name << ": scales differ";
        codes += int64_t(n);
        scales += qi.n_groups;
    }
    EXPECT_EQ(codes, 259328);  // every matrix of stories260K
    EXPECT_EQ(scales, 259328 / 32);
}

// Found by fuzz_llama2c_q80: more KV heads than heads passed the header check, and a header that
// promised more than the file held allocated each matrix before finding the bytes missing.
TEST(QuantRtn, Llama2cQ80HeadersThatCannotBeRightAreRefused) {
    const auto dir = edge::test::temp_dir("q80bad");
    auto write = [&](const char* name, Llama2cV2Header h, size_t extra) {
        std::string bytes(kLlama2cV2HeaderBytes + extra, '\0');
        std::memcpy(bytes.data(), &h, sizeof h);
        std::string path = (dir / name).string();
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    };
    Llama2cV2Header h{kLlama2cMagic, 2, 64, 172, 5, 8, 4, 512, 512, 1, 32};
    h.n_kv_heads = 9;
    const std::string kv = write("kv.bin", h, 0);
    auto r = read_llama2c_q80(kv);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find(kv), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("implausible llama2.c v2 header"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("kv heads 9"), std::string::npos) << r.message();
    h.n_kv_heads = 4;
    h.vocab_size = 1 << 22;  // 4M x 64 codes promised, a few norms present
    const std::string big = write("big.bin", h, 64 * 11 * 4 + 100);
    r = read_llama2c_q80(big);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("truncated at byte"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("token_embd.weight"), std::string::npos) << r.message();
}

TEST(QuantRtn, EveryLayoutRoundTripsWithinHalfAStep) {
    const int64_t rows = 7, cols = 172;  // a ragged row length, like stories260K's ffn_down
    const auto w = random_matrix(rows, cols, 1);
    for (int bits : {8, 4})
        for (bool sym : {true, false})
            for (auto [grouping, gs] : std::vector<std::pair<QGrouping, int64_t>>{{QGrouping::PerChannel, 0},
                                                                                  {QGrouping::Group, 32},
                                                                                  {QGrouping::Group, 64},
                                                                                  {QGrouping::Group, 128},
                                                                                  {QGrouping::Group, 48},
                                                                                  {QGrouping::Flat, 32}}) {
                QuantSpec spec{bits, sym, grouping, gs, QMethod::RTN};
                auto q = quantize_rtn("t", w.data(), {rows, cols}, spec);
                ASSERT_TRUE(q.ok()) << spec_name(spec) << ": " << q.message();
                const QuantInfo& qi = *q->quant;
                const auto deq = runtime::qkernels::dequantize(*q);
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t c = 0; c < cols; ++c) {
                        const GroupParams p = get_group(*q, qi.group_of(r, c));
                        const float e = std::fabs(deq[size_t(r * cols + c)] - w[size_t(r * cols + c)]);
                        ASSERT_LE(e, p.scale * 0.5f * 1.0001f + 1e-7f) << spec_name(spec) << " at " << r << "," << c;
                    }
                Tensor ref = Tensor::zeros_f32("t", {rows, cols});
                std::memcpy(ref.data.get(), w.data(), w.size() * 4);
                const ErrorReport rep = error_report(ref, *q);
                EXPECT_TRUE(rep.within_bound) << spec_name(spec) << ": " << rep.frobenius << " > " << rep.bound;
                EXPECT_GT(rep.frobenius, 0.0);
            }
}

TEST(QuantRtn, Int4SymmetricUsesDeltaOf2MaxOver15) {
    const std::vector<float> w{-1.0f, 1.0f, 0.5f, 0.0f, -0.2f, 0.9f, 0.07f, -0.66f};
    const QuantSpec spec{4, true, QGrouping::PerChannel, 0, QMethod::RTN, false, QuantSpec::Scales::F32};
    auto q = quantize_rtn("t", w.data(), {1, 8}, spec);
    ASSERT_TRUE(q.ok());
    const GroupParams p = get_group(*q, 0);
    EXPECT_FLOAT_EQ(p.scale, 2.0f / 15.0f);
    EXPECT_LE(quant_code(*q->quant, q->data.get(), 0, 0), 1);   // about -7.5: -8 or -7 (float rounding of Δ)
    EXPECT_EQ(quant_code(*q->quant, q->data.get(), 0, 1), 15);  // +7.5 -> 8, clamped to 7
    EXPECT_EQ(quant_code(*q->quant, q->data.get(), 0, 3), 8);   // zero is exact
    Tensor ref = Tensor::zeros_f32("t", {1, 8});
    std::memcpy(ref.data.get(), w.data(), 32);
    const ErrorReport rep = error_report(ref, *q);
    EXPECT_NEAR(rep.delta, 2.0 / 15.0, 1e-7);
    EXPECT_TRUE(rep.within_bound);
}

// INT4 stores its group scales as IEEE half by default (0.5625 instead of 0.625 byte per weight
// at groups of 32); the codes are chosen against the rounded scale, so the error bound holds, and
// a tensor whose scales half cannot hold keeps float32 (auto) or is refused (fp16 asked for).
TEST(QuantRtn, IntegerCodesDefaultToHalfScalesWhereTheyFit) {
    const auto w = random_matrix(64, 2048, 11);
    auto q = quantize_rtn("blk.0.attn_q.weight", w.data(), {64, 2048},
                          QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN});
    ASSERT_TRUE(q.ok()) << q.message();
    const QuantInfo& qi = *q->quant;
    EXPECT_EQ(qi.scale_type, QScale::F16);
    EXPECT_EQ(qi.total_bytes, size_t(64 * 1024 + 64 * 64 * 2));  // codes, then 2 bytes per group
    EXPECT_DOUBLE_EQ(double(qi.total_bytes) / (64.0 * 2048.0), 0.5625);
    Tensor ref = Tensor::zeros_f32("blk.0.attn_q.weight", {64, 2048});
    std::memcpy(ref.data.get(), w.data(), w.size() * 4);
    const ErrorReport half = error_report(ref, *q);
    EXPECT_TRUE(half.within_bound) << half.frobenius << " > " << half.bound;
    // Against float32 scales the error barely moves (the half rounding of the scale is 2^-11).
    auto f32 = quantize_rtn("blk.0.attn_q.weight", w.data(), {64, 2048},
                            QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN, false, QuantSpec::Scales::F32});
    ASSERT_TRUE(f32.ok());
    EXPECT_EQ(f32->quant->scale_type, QScale::F32);
    EXPECT_EQ(f32->quant->total_bytes, size_t(64 * 1024 + 64 * 64 * 4));
    EXPECT_NEAR(half.relative, error_report(ref, *f32).relative, 0.002);
    // Every scale stored is exactly the one the codes were chosen with (half, widened).
    for (int64_t g = 0; g < qi.n_groups; ++g) {
        const float s = get_group(*q, g).scale;
        EXPECT_EQ(f16_to_f32(f32_to_f16(s)), s);
    }
    // INT8 takes half scales where they fit too (8.5 bits per weight at g32, Q8_0's size), float32
    // when asked.
    auto i8 = quantize_rtn("x", w.data(), {64, 2048}, QuantSpec{8, true, QGrouping::Group, 32, QMethod::RTN});
    ASSERT_TRUE(i8.ok());
    EXPECT_EQ(i8->quant->scale_type, QScale::F16);
    auto i8f = quantize_rtn("x", w.data(), {64, 2048},
                            QuantSpec{8, true, QGrouping::Group, 32, QMethod::RTN, false, QuantSpec::Scales::F32});
    ASSERT_TRUE(i8f.ok());
    EXPECT_EQ(i8f->quant->scale_type, QScale::F32);
    auto i8h = quantize_rtn("x", w.data(), {64, 2048},
                            QuantSpec{8, true, QGrouping::Group, 32, QMethod::RTN, false, QuantSpec::Scales::F16});
    ASSERT_TRUE(i8h.ok());
    EXPECT_EQ(i8h->quant->scale_type, QScale::F16);

    // Scales below half's normal range (weights ~1e-6): auto falls back to float32 for the
    // tensor; fp16 asked for is an error naming the tensor and the group.
    std::vector<float> tiny(w.begin(), w.begin() + 4 * 64);
    for (float& v : tiny) v *= 1e-5f;
    auto a = quantize_rtn("blk.3.ffn_up.weight", tiny.data(), {4, 64},
                          QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN});
    ASSERT_TRUE(a.ok()) << a.message();
    EXPECT_EQ(a->quant->scale_type, QScale::F32);
    auto f = quantize_rtn("blk.3.ffn_up.weight", tiny.data(), {4, 64},
                          QuantSpec{4, true, QGrouping::Group, 32, QMethod::RTN, false, QuantSpec::Scales::F16});
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.message().find("blk.3.ffn_up.weight"), std::string::npos) << f.message();
    EXPECT_NE(f.message().find("group 0"), std::string::npos) << f.message();
    EXPECT_NE(f.message().find("fp32"), std::string::npos) << f.message();
}

TEST(QuantRtn, RefusesImpossibleSettingsAndNonFiniteWeights) {
    auto w = random_matrix(4, 172, 2);
    auto big = quantize_rtn("blk.0.ffn_down.weight", w.data(), {4, 172},
                            QuantSpec{4, true, QGrouping::Group, 256, QMethod::RTN});
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.message().find("blk.0.ffn_down.weight"), std::string::npos);
    EXPECT_NE(big.message().find("larger than a row"), std::string::npos);
    auto bits = quantize_rtn("x", w.data(), {4, 172}, QuantSpec{3, true, QGrouping::Group, 32, QMethod::RTN});
    EXPECT_TRUE(edge::test::fails_with(bits, {"x: cannot quantize a 4x172 tensor as int3", "bits must be 8 or 4"}));
    w[200] = std::nanf("");
    auto nan = quantize_rtn("blk.1.attn_q.weight", w.data(), {4, 172}, QuantSpec{});
    ASSERT_FALSE(nan.ok());
    EXPECT_NE(nan.message().find("blk.1.attn_q.weight"), std::string::npos);
    EXPECT_NE(nan.message().find("row 1"), std::string::npos);
}

TEST(QuantRtn, ClipSearchNeverIncreasesTheGroupError) {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (bool sym : {true, false})
        for (int trial = 0; trial < 50; ++trial) {
            std::vector<float> w(32);
            for (float& v : w) v = nd(rng) * (trial % 5 == 0 ? 3.0f : 1.0f);
            const GroupParams a = group_params(w.data(), 32, 4, sym), b = group_params_clip(w.data(), 32, 4, sym);
            double ea = 0, eb = 0;
            for (float v : w) {
                ea += std::pow(v - dequantize_value(quantize_value(v, a, 4, sym), a), 2);
                eb += std::pow(v - dequantize_value(quantize_value(v, b, 4, sym), b), 2);
            }
            EXPECT_LE(eb, ea + 1e-9);
        }
    auto p = parse_plan(R"({"default": {"precision": "int4", "clip": true}})");
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_TRUE(p->defaults->clip.value_or(false));
    EXPECT_TRUE(edge::test::fails_with(parse_plan(R"({"default": {"precision": "int4", "clip": 1}})"),
                                       {"<plan>", "default", "\"clip\" must be true or false"}));
}
