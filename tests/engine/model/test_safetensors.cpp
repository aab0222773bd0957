// safetensors reader/writer: round trips, a third-party file, and hostile headers.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "engine/core/half.h"
#include "engine/model/safetensors.h"
#include "test_support.h"

using edge::model::encode_f32_as;
using edge::model::open_safetensors;
using edge::model::parse_safetensors;
using edge::model::SafetensorsFile;
using edge::model::SafetensorsWriteItem;
using edge::model::serialize_safetensors;
using edge::model::write_safetensors;

namespace edge {
namespace {

std::vector<uint8_t> image(const std::string& header, size_t data_bytes, uint64_t claimed_len = UINT64_MAX) {
    const uint64_t len = claimed_len == UINT64_MAX ? header.size() : claimed_len;
    std::vector<uint8_t> out(8);
    for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(len >> (8 * i));
    out.insert(out.end(), header.begin(), header.end());
    out.resize(out.size() + data_bytes, 0);
    return out;
}

Result<SafetensorsFile> parse(const std::vector<uint8_t>& img) {
    return parse_safetensors(img.data(), img.size(), "mem.safetensors");
}

void expect_error(const std::vector<uint8_t>& img, const std::string& needle) {
    auto r = parse(img);
    ASSERT_FALSE(r.ok()) << "expected an error containing '" << needle << "'";
    EXPECT_NE(r.message().find("mem.safetensors"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find(needle), std::string::npos) << r.message();
}

TEST(Safetensors, RoundTripsF32F16Bf16AndMetadata) {
    const std::vector<float> a = {1.0f, -2.5f, 0.15625f, 3e-3f, 65504.0f, -0.0f};
    std::vector<SafetensorsWriteItem> items = {
        {"a.f32", DType::F32, {2, 3}, encode_f32_as(a.data(), 6, DType::F32)},
        {"b.f16", DType::F16, {3}, encode_f32_as(a.data(), 3, DType::F16)},  // odd byte count
        {"c.bf16", DType::BF16, {6}, encode_f32_as(a.data(), 6, DType::BF16)},
        {"d.empty", DType::F32, {0, 4}, {}},
    };
    auto bytes = serialize_safetensors(items, {{"format", "pt"}});
    ASSERT_TRUE(bytes.ok()) << bytes.message();
    auto f = parse(*bytes);
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_EQ(f->data_start % 8, 0u);
    EXPECT_EQ(f->metadata.at("format"), "pt");
    ASSERT_EQ(f->entries.size(), 4u);
    // Contiguous, no holes (what the format's reference implementation requires).
    uint64_t expect_begin = 0;
    for (const auto& e : f->entries) {
        EXPECT_EQ(e.begin, expect_begin) << e.name;
        expect_begin = e.end;
    }
    EXPECT_EQ(f->data_start + expect_begin, bytes->size());

    auto ta = f->to_f32(*f->find("a.f32"), "A");
    ASSERT_TRUE(ta.ok()) << ta.message();
    EXPECT_EQ(ta->name, "A");
    EXPECT_EQ(ta->shape, (std::vector<int64_t>{2, 3}));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(ta->f32()[i], a[size_t(i)]);
    auto tb = f->to_f32(*f->find("b.f16"), "B");
    ASSERT_TRUE(tb.ok());
    EXPECT_EQ(tb->source_type, DType::F16);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(tb->f32()[i], f16_to_f32(f32_to_f16(a[size_t(i)])));
    auto tc = f->to_f32(*f->find("c.bf16"), "C");
    ASSERT_TRUE(tc.ok());
    EXPECT_EQ(tc->source_type, DType::BF16);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(tc->f32()[i], bf16_to_f32(f32_to_bf16(a[size_t(i)])));
    auto td = f->to_f32(*f->find("d.empty"), "D");
    ASSERT_TRUE(td.ok());
    EXPECT_EQ(td->numel(), 0);
}

TEST(Safetensors, MappedFileAliasesAlignedF32) {
    const auto dir = test::temp_dir("st");
    const std::vector<float> a = {1, 2, 3, 4};
    ASSERT_TRUE(write_safetensors((dir / "x.safetensors").string(),
                                  {{"x", DType::F32, {4}, encode_f32_as(a.data(), 4, DType::F32)}})
                    .ok());
    auto f = open_safetensors((dir / "x.safetensors").string());
    ASSERT_TRUE(f.ok()) << f.message();
    auto t = f->to_f32(f->entries[0], "x");
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->raw(), static_cast<const void*>(f->bytes(f->entries[0])));  // no copy
    EXPECT_EQ(t->f32()[3], 4.0f);
}

TEST(Safetensors, ReadsAThirdPartyFile) {
    const std::string path = test::shared("models/cnn/resnet20_cifar10.safetensors");
    EDGE_REQUIRE_SHARED(path);
    auto f = open_safetensors(path);
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_EQ(f->entries.size(), 97u);
    int64_t params = 0;
    for (const auto& e : f->entries) {
        EXPECT_EQ(e.dtype_name, "F32") << e.name;
        auto t = f->to_f32(e, e.name);
        ASSERT_TRUE(t.ok()) << t.message();
        params += t->numel();
    }
    EXPECT_GE(params, 269722);  // + BatchNorm running statistics
}

TEST(Safetensors, RejectsShortAndTruncatedImages) {
    expect_error({1, 2, 3}, "not a safetensors file");
    expect_error(image("{}", 0, 1000), "exceeds the file");
    expect_error(image("{}", 0, uint64_t(1) << 40), "absurd");
    expect_error(image("{}", 0, 1), "too short");
    // Offsets past the end of the data (a truncated file).
    expect_error(image(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8), "past the end");
}

TEST(Safetensors, RejectsBadHeaders) {
    expect_error(image("not json at all", 0), "does not start with '{'");
    expect_error(image("{\"a\": [1, 2", 0), "not valid JSON");
    expect_error(image(std::string(20, '{') + std::string(20, '}'), 0), "nested too deeply");
    expect_error(image(R"({"__metadata__":{"k":1}})", 0), "__metadata__");
    expect_error(image(R"({"w":5})", 0), "'w'");
    expect_error(image(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 0), "dtype");
    expect_error(image(R"({"w":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}})", 4), "unknown dtype 'Q4'");
    expect_error(image(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4), "non-negative");
    expect_error(image(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4), "non-negative");
    expect_error(image(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4), "reversed");
    expect_error(image(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4), "data_offsets");
    expect_error(image(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4), "needs 8");
    expect_error(image(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,4]}})", 4),
                 "absurd");
    expect_error(image(R"({"w":{"dtype":"F64","shape":[281474976710656,65536],"data_offsets":[0,4]}})", 4), "absurd");
}

TEST(Safetensors, UnsupportedDtypeNamesTensorAndDtype) {
    auto f = parse(image(R"({"steps":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8));
    ASSERT_TRUE(f.ok()) << f.message();
    auto t = f->to_f32(f->entries[0], "steps");
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("'steps'"), std::string::npos) << t.message();
    EXPECT_NE(t.message().find("I64"), std::string::npos) << t.message();
}

TEST(Safetensors, TruncatedFileOnDiskNamesThePath) {
    const auto dir = test::temp_dir("st");
    const std::vector<float> a(64, 1.0f);
    auto bytes = serialize_safetensors({{"w", DType::F32, {64}, encode_f32_as(a.data(), 64, DType::F32)}});
    ASSERT_TRUE(bytes.ok());
    const std::string path = (dir / "cut.safetensors").string();
    {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes->data()), std::streamsize(bytes->size() - 10));
    }
    auto f = open_safetensors(path);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.message().find(path), std::string::npos) << f.message();
    EXPECT_NE(f.message().find("'w'"), std::string::npos) << f.message();
    auto missing = open_safetensors((dir / "nope.safetensors").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.message().find("nope.safetensors"), std::string::npos);
}

TEST(Safetensors, WriterRejectsInconsistentItems) {
    EXPECT_TRUE(edge::test::fails_with(serialize_safetensors({{"w", DType::F32, {3}, std::vector<uint8_t>(8)}}),
                                       {"safetensors writer", "tensor 'w' has 8 bytes, shape needs 12"}));
    EXPECT_TRUE(edge::test::fails_with(serialize_safetensors({{"w", DType::Q8_0, {32}, std::vector<uint8_t>(34)}}),
                                       {"safetensors writer", "dtype Q8_0 is not supported (F32, F16, BF16)"}));
    EXPECT_TRUE(edge::test::fails_with(serialize_safetensors({{"w", DType::F32, {1}, std::vector<uint8_t>(4)},
                                                              {"w", DType::F32, {1}, std::vector<uint8_t>(4)}}),
                                       {"safetensors writer", "tensor name 'w' is repeated"}));
}

}  // namespace
}  // namespace edge
