// Every tensor of every quantized GGUF in ../shared dequantizes to what the GGUF project's own
// NumPy dequantizers computed (models/gguf-dequant-reference.json): type, dims, first 8 values,
// sum and sum of |x|, to float32 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/model/ggml_dequant.h"
#include "engine/model/gguf.h"
#include "test_support.h"

using edge::model::can_dequantize;
using edge::model::dequantize;

namespace edge {
namespace {

std::string file_dir(const std::string& file) {
    return file.rfind("synth256-", 0) == 0 ? "models/ktest/" : "models/stories260K/llamacpp/";
}

nlohmann::json load_reference() {
    std::ifstream in(test::shared("models/gguf-dequant-reference.json"));
    return nlohmann::json::parse(in);
}

TEST(GgufDequant, MatchesReferenceForEveryTensorOfEveryFile) {
    const std::string ref_path = test::shared("models/gguf-dequant-reference.json");
    EDGE_REQUIRE_SHARED(ref_path);
    const nlohmann::json ref = load_reference();
    ASSERT_EQ(ref.size(), 11u) << "reference lists 5 ktest and 6 stories260K files";
    std::set<std::string> types_seen;
    size_t tensors_checked = 0;
    for (const auto& [file, tensors] : ref.items()) {
        const std::string path = test::shared(file_dir(file) + file);
        EDGE_REQUIRE_SHARED(path);
        auto f = model::gguf::open(path);
        ASSERT_TRUE(f.ok()) << f.message();
        EXPECT_EQ(f->version, 3u);
        EXPECT_EQ(f->tensors.size(), tensors.size()) << file;
        for (const auto& [name, r] : tensors.items()) {
            SCOPED_TRACE(std::string(file).append(": ").append(name));
            const model::gguf::TensorInfo* t = f->find_tensor(name);
            ASSERT_NE(t, nullptr);
            const model::gguf::GgmlType* gt = model::gguf::ggml_type(t->type_id);
            ASSERT_NE(gt, nullptr);
            EXPECT_EQ(std::string(gt->name), r["type"].get<std::string>());
            types_seen.insert(gt->name);
            const auto ne = r["ne"].get<std::vector<uint64_t>>();
            EXPECT_EQ(t->ne, ne);
            ASSERT_EQ(t->n_elements, r["n"].get<uint64_t>());
            std::vector<float> y(t->n_elements);
            Status s = dequantize(t->type, t->data, y.data(), int64_t(t->n_elements));
            ASSERT_TRUE(s.ok()) << s.message();
            double sum = 0, sum_abs = 0;
            for (float v : y) {
                sum += v;
                sum_abs += std::fabs(v);
            }
            const double ref_abs = r["sum_abs"].get<double>();
            const double mean_abs = ref_abs / double(y.size());
            const auto first8 = r["first8"].get<std::vector<double>>();
            for (size_t i = 0; i < first8.size() && i < y.size(); ++i)
                EXPECT_NEAR(y[i], first8[i], 1e-6 * (std::fabs(first8[i]) + mean_abs)) << "element " << i;
            EXPECT_NEAR(sum, r["sum"].get<double>(), 1e-5 * ref_abs + 1e-9);
            EXPECT_NEAR(sum_abs, ref_abs, 1e-5 * ref_abs + 1e-9);
            ++tensors_checked;
        }
    }
    EXPECT_EQ(tensors_checked, 5u * 21u + 6u * 48u);
    for (const char* t : {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})
        EXPECT_TRUE(types_seen.count(t)) << "no reference tensor of type " << t;
}

// Q5_1 has no reference file: check one hand-built block against the format description.
TEST(GgufDequant, Q5_1HandBuiltBlock) {
    uint8_t blk[24] = {};
    const uint16_t d = 0x3800;  // 0.5 in f16
    const uint16_t m = 0xbc00;  // -1.0
    std::memcpy(blk, &d, 2);
    std::memcpy(blk + 2, &m, 2);
    const uint32_t qh = 0x80000001u;  // fifth bit set for elements 0 and 31
    std::memcpy(blk + 4, &qh, 4);
    for (int j = 0; j < 16; ++j) blk[8 + j] = uint8_t((j & 0xf) | ((15 - j) << 4));
    float y[32];
    ASSERT_TRUE(dequantize(DType::Q5_1, blk, y, 32).ok());
    for (int j = 0; j < 16; ++j) {
        const int lo = j + (j == 0 ? 16 : 0);
        const int hi = (15 - j) + (j == 15 ? 16 : 0);
        EXPECT_FLOAT_EQ(y[j], float(lo) * 0.5f - 1.0f) << j;
        EXPECT_FLOAT_EQ(y[j + 16], float(hi) * 0.5f - 1.0f) << j + 16;
    }
}

TEST(GgufDequant, RejectsPartialBlocksAndUnsupportedTypes) {
    uint8_t blk[34] = {};
    float y[32];
    EXPECT_TRUE(edge::test::fails_with(dequantize(DType::Q8_0, blk, y, 31),
                                       {"31 elements of Q8_0 are not a whole number of 32-element blocks"}));
    EXPECT_TRUE(
        edge::test::fails_with(dequantize(DType::Q8_K, blk, y, 256), {"tensor type Q8_K cannot be dequantized"}));
    EXPECT_FALSE(can_dequantize(DType::I32));
}

}  // namespace
}  // namespace edge
