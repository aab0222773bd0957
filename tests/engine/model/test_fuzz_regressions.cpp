// Inputs the fuzzers once crashed on (tests/fuzz/regressions/), replayed through the same steps
// as tests/fuzz/fuzz_gguf.cpp so the fix stays in place in the ordinary (non-sanitizer) build.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "engine/model/ggml_dequant.h"
#include "engine/model/gguf.h"
#include "test_support.h"

using edge::model::can_dequantize;
using edge::model::dequantize;
using edge::model::import_gguf;

namespace edge {
namespace {

TEST(FuzzRegressions, EmptyTensorDequantizesWithoutTouchingPointers) {
    // Found by fuzz_gguf: a zero-element tensor has no data and an empty output buffer.
    EXPECT_TRUE(dequantize(DType::F32, nullptr, nullptr, 0).ok());
    EXPECT_TRUE(dequantize(DType::Q4_0, nullptr, nullptr, 0).ok());
}

TEST(FuzzRegressions, ReplayGgufCrashers) {
    const std::filesystem::path dir = std::filesystem::path(EDGE_SOURCE_DIR) / "tests/fuzz/regressions";
    int replayed = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().extension() != ".gguf") continue;
        std::ifstream in(e.path(), std::ios::binary);
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto f = model::gguf::parse(bytes.data(), bytes.size(), e.path().string());
        if (f.ok()) {
            std::vector<float> out;
            for (const auto& t : f->tensors) {
                if (!can_dequantize(t.type) || t.n_elements > (uint64_t(1) << 24)) continue;
                out.resize(t.n_elements);
                (void)dequantize(t.type, t.data, out.data(), int64_t(t.n_elements));
            }
            (void)import_gguf(*f, nullptr);
        }
        ++replayed;
    }
    EXPECT_GE(replayed, 2);
}

TEST(FuzzRegressions, Phi3KvDimOverflowIsRefusedNamingTheSizes) {
    // Found by fuzz_gguf in a one-hour run: a phi3 file's 973078529 KV heads (x head size 4)
    // overflowed kv_dim() while its fused attn_qkv was split, before the configuration was checked.
    const std::filesystem::path file =
        std::filesystem::path(EDGE_SOURCE_DIR) / "tests/fuzz/regressions/gguf-phi3-kv-dim-overflow.gguf";
    std::ifstream in(file, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto f = model::gguf::parse(bytes.data(), bytes.size(), "crash.gguf");
    ASSERT_TRUE(f.ok()) << f.message();
    auto m = import_gguf(*f, nullptr);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.message(), "crash.gguf: 2 attention heads are not a multiple of 973078529 KV heads");
}

}  // namespace
}  // namespace edge
