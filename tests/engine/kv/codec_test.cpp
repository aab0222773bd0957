#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "engine/kv/codec.h"
#include "engine/kv/codec_table.h"
#include "test_support.h"

using namespace edge::kv;

namespace {
constexpr KvShape kShape{3, 2, 8, 16};
const SlabShape kSlab{6, 16, 2, 8};

std::vector<float> block(uint64_t seed, float scale = 1.0f) {
    std::vector<float> x(kSlab.floats());
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.0f, scale);
    for (auto& v : x) v = g(rng);
    return x;
}
}  // namespace

TEST(KvCodec, LosslessRoundTripIsExact) {
    const auto x = block(1);
    auto c = compress(x.data(), kSlab, Codec::Lz4);
    ASSERT_TRUE(c.ok()) << c.message();
    std::vector<float> y(x.size());
    ASSERT_TRUE(decompress(*c, kSlab, y.data()).ok());
    EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0);
}

TEST(KvCodec, Int8ErrorWithinHalfAScalePerSlabAndHead) {
    auto x = block(2, 3.0f);
    x[5] = 40.0f;  // an outlier widens only its own (slab, head) scale
    for (Codec codec : {Codec::Int8Lz4, Codec::Int8DeltaLz4}) {
        auto c = compress(x.data(), kSlab, codec);
        ASSERT_TRUE(c.ok());
        std::vector<float> y(x.size());
        ASSERT_TRUE(decompress(*c, kSlab, y.data()).ok());
        for (int sl = 0; sl < kSlab.slabs; ++sl)
            for (int h = 0; h < kSlab.heads; ++h) {
                float m = 0, e = 0;
                for (int t = 0; t < kSlab.tokens; ++t)
                    for (int i = 0; i < kSlab.head_dim; ++i) {
                        const size_t j = ((size_t(sl) * 16 + size_t(t)) * 2 + size_t(h)) * 8 + size_t(i);
                        m = std::max(m, std::fabs(x[j]));
                        e = std::max(e, std::fabs(x[j] - y[j]));
                    }
                EXPECT_LE(e, 0.5f * m / 127.0f * 1.0001f) << codec_name(codec) << " slab " << sl << " head " << h;
            }
    }
}

TEST(KvCodec, DeltaCodingIsExactlyInvertible) {
    const auto x = block(3);
    auto a = compress(x.data(), kSlab, Codec::Int8Lz4);
    auto b = compress(x.data(), kSlab, Codec::Int8DeltaLz4);
    ASSERT_TRUE(a.ok() && b.ok());
    std::vector<float> ya(x.size()), yb(x.size());
    ASSERT_TRUE(decompress(*a, kSlab, ya.data()).ok());
    ASSERT_TRUE(decompress(*b, kSlab, yb.data()).ok());
    EXPECT_EQ(std::memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)), 0);
}

TEST(KvCodec, ZeroBlockRoundTrips) {
    const std::vector<float> x(kSlab.floats(), 0.0f);
    for (Codec codec : {Codec::Lz4, Codec::Int8Lz4, Codec::Int8DeltaLz4}) {
        auto c = compress(x.data(), kSlab, codec);
        ASSERT_TRUE(c.ok());
        std::vector<float> y(x.size(), 1.0f);
        ASSERT_TRUE(decompress(*c, kSlab, y.data()).ok());
        EXPECT_EQ(y, x);
    }
}

TEST(KvCodec, CorruptStreamsAreErrors) {
    const auto x = block(4);
    auto c = compress(x.data(), kSlab, Codec::Int8DeltaLz4);
    ASSERT_TRUE(c.ok());
    std::vector<float> y(x.size());
    const std::vector<uint8_t>& s = *c;
    EXPECT_TRUE(edge::test::fails_with(decompress(std::span<const uint8_t>(s.data(), 10), kSlab, y.data()),
                                       {"KV codec", "stream of 10 bytes is shorter than its header"}));
    EXPECT_TRUE(edge::test::fails_with(decompress(std::span<const uint8_t>(s.data(), s.size() - 1), kSlab, y.data()),
                                       {"KV codec", "stream sizes disagree with the header (truncated or corrupt)"}));
    EXPECT_TRUE(edge::test::fails_with(decompress(s, SlabShape{6, 16, 2, 4}, y.data()),
                                       {"KV codec", "stream holds a 6x16x2x8 block, expected 6x16x2x4"}));
    auto bad = s;
    bad[0] ^= 1;
    EXPECT_TRUE(edge::test::fails_with(decompress(bad, kSlab, y.data()),
                                       {"KV codec", "bad magic (not a compressed KV block)"}));
    bad = s;
    bad[6] = 9;  // codec
    EXPECT_TRUE(edge::test::fails_with(decompress(bad, kSlab, y.data()), {"KV codec", "unknown codec 9"}));
    bad = s;
    for (size_t i = sizeof(CodecHeader); i < bad.size(); ++i) bad[i] = 0xff;
    EXPECT_TRUE(edge::test::fails_with(decompress(bad, kSlab, y.data()), {"KV codec", "corrupt LZ4 payload"}));
    EXPECT_TRUE(edge::test::fails_with(compress(x.data(), SlabShape{0, 16, 2, 8}, Codec::Lz4),
                                       {"KV codec", "shape 0x16x2x8 has a zero or negative extent"}));
    EXPECT_TRUE(edge::test::fails_with(compress(x.data(), kSlab, Codec(7)), {"KV codec", "unknown codec 7"}));
}

TEST(KvCodec, CaptureCutsIntoPagedBlocksAndTheTableRuns) {
    KvCapture cap = synthetic_capture(kShape, 40, 5);
    auto blocks = capture_to_blocks(cap);
    ASSERT_TRUE(blocks.ok()) << blocks.message();
    ASSERT_EQ(blocks->size(), 2 * kShape.block_floats());  // 40 tokens: 2 full blocks
    // block 1, layer 2, V, token 3 == capture V[layer 2][token 19]
    const size_t kvd = size_t(kShape.kv_dim());
    const float* got = blocks->data() + kShape.block_floats() + kShape.slab_offset(2, 1) + 3 * kvd;
    EXPECT_EQ(std::memcmp(got, cap.v.data() + (2 * 40 + 19) * kvd, kvd * sizeof(float)), 0);
    auto rows = measure_codecs(*blocks, kShape, 1);
    ASSERT_TRUE(rows.ok()) << rows.message();
    ASSERT_EQ(rows->size(), 3u);
    EXPECT_EQ((*rows)[0].max_abs_error, 0.0);
    EXPECT_GT((*rows)[2].ratio, 2.0);
    EXPECT_LE((*rows)[2].max_rel_error, 0.5 / 127.0 * 1.001);
    cap.k.pop_back();
    EXPECT_TRUE(edge::test::fails_with(
        capture_to_blocks(cap), {"KV capture", "1919 K and 1920 V floats do not match 3 layers x 40 tokens x 16"}));
}

TEST(KvCodec, DumpFileRoundTrip) {
    const KvCapture cap = synthetic_capture(kShape, 20, 6);
    const std::string path = std::string(EDGE_BUILD_DIR) + "/kv_dump_test.bin";
    ASSERT_TRUE(write_kv_dump(path, cap).ok());
    auto back = read_kv_dump(path, 16);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->k, cap.k);
    EXPECT_EQ(back->v, cap.v);
    EXPECT_EQ(back->shape.n_layers, 3);
    {
        std::FILE* f = std::fopen(path.c_str(), "r+b");
        ASSERT_NE(f, nullptr);
        std::fputs("XXXX", f);
        std::fclose(f);
    }
    EXPECT_TRUE(edge::test::fails_with(read_kv_dump(path, 16), {"kv_dump_test.bin", "not a KV dump (bad magic)"}));
    EXPECT_TRUE(edge::test::fails_with(read_kv_dump(path + ".missing", 16),
                                       {"kv_dump_test.bin.missing", "cannot open the KV dump"}));
    std::remove(path.c_str());
}
