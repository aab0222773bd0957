// Bad and hostile GGUF input: every case gives a clear error naming the file and the problem,
// without crashing or allocating absurd amounts.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "test_support.h"

using edge::model::load_gguf_model;
using edge::model::make_synth_model;
using edge::model::SynthOptions;
using edge::model::write_gguf_model;
using edge::model::write_synth_model;

namespace edge {
namespace {

// Hand-assembled GGUF bytes, for layouts the writer refuses to produce.
struct Bytes {
    std::vector<uint8_t> b;
    Bytes& u32(uint32_t v) { return raw(&v, 4); }
    Bytes& u64(uint64_t v) { return raw(&v, 8); }
    Bytes& str(const std::string& s) {
        u64(s.size());
        return raw(s.data(), s.size());
    }
    Bytes& raw(const void* p, size_t n) {
        const auto* c = static_cast<const uint8_t*>(p);
        b.insert(b.end(), c, c + n);
        return *this;
    }
    Bytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
        raw("GGUF", 4);
        u32(version);
        u64(n_tensors);
        return u64(n_kv);
    }
    // A tensor info: name, ggml dims (innermost first), type id, offset.
    Bytes& tensor(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset) {
        str(name);
        u32(uint32_t(ne.size()));
        for (uint64_t e : ne) u64(e);
        u32(type);
        return u64(offset);
    }
    Bytes& pad(size_t a = 32) {
        while (b.size() % a) b.push_back(0);
        return *this;
    }
};

std::string write_file(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::string path = (test::temp_dir("gguf-bad") / name).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return path;
}

// Opens `bytes` as a file and expects an error mentioning the path and every one of `needles`.
void expect_error(const std::string& name, const std::vector<uint8_t>& bytes, const std::vector<std::string>& needles) {
    const std::string path = write_file(name, bytes);
    auto f = model::gguf::open(path);
    ASSERT_FALSE(f.ok()) << name << " parsed";
    EXPECT_EQ(f.message().rfind(path, 0), 0u) << f.message();
    for (const auto& n : needles) EXPECT_NE(f.message().find(n), std::string::npos) << f.message();
    auto m = load_gguf_model(path);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.message(), f.message());
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::string tiny_model(const std::string& dir_tag) {
    SynthOptions o;
    o.shape = "test-tiny";
    o.type = DType::F32;
    o.path = (test::temp_dir(dir_tag) / "tiny.gguf").string();
    EXPECT_TRUE(write_synth_model(o).ok());
    return o.path;
}

TEST(GgufHostile, TruncatedAtManyCutPoints) {
    const std::vector<uint8_t> whole = read_all(tiny_model("gguf-trunc"));
    ASSERT_GT(whole.size(), 10000u);
    std::vector<size_t> cuts;
    for (size_t c = 0; c < 600; ++c) cuts.push_back(c);  // every byte of header and early metadata
    for (size_t c = 600; c < whole.size(); c += whole.size() / 300) cuts.push_back(c);
    cuts.push_back(whole.size() - 1);
    const std::string path = (test::temp_dir("gguf-cut") / "cut.gguf").string();
    auto check = [&](size_t c, const std::string& name, const std::string& msg) {
        EXPECT_EQ(msg.rfind(name + ": ", 0), 0u) << msg;
        const bool says_what = msg.find("truncated") != std::string::npos ||
                               msg.find("past the end") != std::string::npos || msg.find("only") != std::string::npos ||
                               msg.find("absurd") != std::string::npos || msg.find("too short") != std::string::npos;
        EXPECT_TRUE(says_what) << "cut at " << c << ": " << msg;
    };
    for (size_t k = 0; k < cuts.size(); ++k) {
        const size_t c = cuts[k];
        // Every cut through the in-memory parser; every 20th also as a file through the importer.
        auto f = model::gguf::parse(whole.data(), c, "cut.gguf");
        ASSERT_TRUE(edge::test::fails_with(f, {"cut.gguf: "})) << "cut at " << c << " parsed";
        check(c, "cut.gguf", f.message());
        if (k % 20 != 0) continue;
        std::ofstream(path, std::ios::binary | std::ios::trunc)
            .write(reinterpret_cast<const char*>(whole.data()), std::streamsize(c));
        auto m = load_gguf_model(path);
        ASSERT_TRUE(edge::test::fails_with(m, {"cut.gguf: "})) << "cut at " << c << " loaded";
        check(c, path, m.message());
    }
}

TEST(GgufHostile, BadMagicAndVersion) {
    expect_error("magic.gguf", Bytes{}.raw("GGML", 4).u32(3).u64(0).u64(0).b, {"bad magic 'GGML'"});
    expect_error("short.gguf", Bytes{}.raw("GG", 2).b, {"too short"});
    expect_error("v99.gguf", Bytes{}.header(0, 0, 99).b, {"GGUF version 99 is not supported"});
    expect_error("v1.gguf", Bytes{}.header(0, 0, 1).b, {"version 1"});
}

TEST(GgufHostile, AbsurdCounts) {
    expect_error("tensors.gguf", Bytes{}.header(uint64_t(1) << 40, 0).b, {"tensor count 1099511627776 is absurd"});
    expect_error("kv.gguf", Bytes{}.header(0, ~uint64_t(0)).b, {"metadata count", "absurd"});
    // A string claiming 2^62 bytes, an array claiming 2^60 elements, arrays nested too deep.
    expect_error("str.gguf", Bytes{}.header(0, 1).u64(uint64_t(1) << 62).u64(0).u64(0).u64(0).b,
                 {"metadata key #0", "claims"});
    expect_error("arr.gguf", Bytes{}.header(0, 1).str("k").u32(9).u32(4).u64(uint64_t(1) << 60).b,
                 {"metadata 'k'", "claims 1152921504606846976 u32 elements"});
    Bytes deep = Bytes{}.header(0, 1).str("k").u32(9);
    for (int i = 0; i < 40; ++i) deep.u32(9).u64(1);
    expect_error("deep.gguf", deep.b, {"nests arrays more than"});
    expect_error("bool.gguf", Bytes{}.header(0, 1).str("k").u32(7).raw("\x05", 1).b, {"bool"});
    expect_error("vtype.gguf", Bytes{}.header(0, 1).str("k").u32(77).b, {"unknown value type 77"});
    expect_error("dupkey.gguf", Bytes{}.header(0, 2).str("k").u32(0).raw("\x01", 1).str("k").u32(0).raw("\x01", 1).b,
                 {"'k' appears twice"});
}

TEST(GgufHostile, TensorInfoProblems) {
    const uint64_t big = uint64_t(1) << 32;
    expect_error("dims.gguf", Bytes{}.header(1, 0).tensor("t", {big, big, big}, 0, 0).pad().b,
                 {"tensor 't' dimensions [4294967296, 4294967296, 4294967296] overflow"});
    expect_error("bytes.gguf", Bytes{}.header(1, 0).tensor("t", {uint64_t(1) << 20, uint64_t(1) << 20}, 0, 0).pad().b,
                 {"tensor 't' data", "runs past the end of the file"});
    expect_error("ndims.gguf", Bytes{}.header(1, 0).tensor("t", {1, 1, 1, 1, 1}, 0, 0).b, {"5 dimensions"});
    expect_error("type.gguf", Bytes{}.header(1, 0).tensor("t", {4}, 99, 0).pad().raw("0123456789abcdef", 16).b,
                 {"tensor 't' has unknown tensor type id 99"});
    expect_error("q81.gguf", Bytes{}.header(1, 0).tensor("t", {256}, 9, 0).pad().b, {"Q8_1", "not supported"});
    expect_error("block.gguf", Bytes{}.header(1, 0).tensor("t", {20}, 2, 0).pad().b, {"not a multiple of its 32"});
    Bytes past = Bytes{}.header(1, 0).tensor("blk.0.attn_q.weight", {1024}, 0, 1024).pad();
    past.b.resize(past.b.size() + 64);
    expect_error(
        "past.gguf", past.b,
        {"tensor 'blk.0.attn_q.weight' data [offset 1024", "4096 bytes] runs past the end of the file (size "});
    Bytes mis = Bytes{}.header(1, 0).tensor("t", {4}, 0, 4).pad();
    mis.b.resize(mis.b.size() + 64);
    expect_error("misaligned.gguf", mis.b, {"offset 4 is not a multiple of the alignment 32"});
    Bytes align = Bytes{}.header(0, 1).str("general.alignment").u32(4).u32(48);
    expect_error("align.gguf", align.b, {"general.alignment 48 is not a usable power of two"});
    expect_error("dup.gguf", Bytes{}.header(2, 0).tensor("t", {4}, 0, 0).tensor("t", {4}, 0, 0).pad().b,
                 {"tensor 't' appears twice"});
}

TEST(GgufHostile, ShapeThatDisagreesWithTheConfig) {
    const std::string path = (test::temp_dir("gguf-shape") / "shape.gguf").string();
    auto m = make_synth_model(SynthOptions{"test-tiny"});
    ASSERT_TRUE(m.ok());
    Tensor* q = m->find_mut("blk.1.attn_k.weight");
    q->shape = {8, 32};  // the config implies [16, 32] (2 KV heads x 8)
    ASSERT_TRUE(write_gguf_model(*m, path).ok());
    auto back = load_gguf_model(path);
    ASSERT_FALSE(back.ok());
    EXPECT_EQ(back.message(),
              path + ": tensor 'blk.1.attn_k.weight' has shape [8, 32] but the configuration implies [16, 32]");
}

TEST(GgufHostile, ImplausibleLayerCountIsRefusedBeforeTheGraphIsBuilt) {
    // Found by fuzz_gguf: llama.block_count = 0x20000001 made the importer build the op list of
    // 536,870,913 layers (gigabytes) before the configuration was checked.
    const std::string path = (test::temp_dir("gguf-layers") / "layers.gguf").string();
    auto m = make_synth_model(SynthOptions{"test-tiny"});
    ASSERT_TRUE(m.ok());
    m->config.n_layers = 0x20000001;
    ASSERT_TRUE(write_gguf_model(*m, path).ok());
    auto back = load_gguf_model(path);
    ASSERT_FALSE(back.ok());
    EXPECT_EQ(back.message().rfind(path + ": configuration sizes are implausible", 0), 0u) << back.message();
    EXPECT_NE(back.message().find("layers 536870913"), std::string::npos) << back.message();
}

TEST(GgufHostile, AttentionSizesWhoseProductOverflowsAreRefusedFirst) {
    // Found by fuzz_gguf (a one-hour run, tests/fuzz/regressions/gguf-phi3-kv-dim-overflow.gguf):
    // 973078529 KV heads of size 4 overflowed the int kv_dim() while a phi3 file's fused tensors
    // were split, before the configuration was checked. Every reader now checks the configuration
    // (the sizes, and the q_dim / kv_dim products) as soon as it is read: here the product of the
    // heads and a huge key_length.
    const std::string path = (test::temp_dir("gguf-heads") / "heads.gguf").string();
    auto m = make_synth_model(SynthOptions{"test-tiny"});
    ASSERT_TRUE(m.ok());
    m->config.head_dim = 973078529;  // (the rotary dimension stays the file's 8)
    ASSERT_TRUE(write_gguf_model(*m, path).ok());
    auto back = load_gguf_model(path);
    ASSERT_FALSE(back.ok());
    EXPECT_EQ(back.message().rfind(path + ": attention sizes are implausible", 0), 0u) << back.message();
    EXPECT_NE(back.message().find("heads of 973078529"), std::string::npos) << back.message();
}

TEST(GgufHostile, UnknownArchitectureAndMissingKeys) {
    const auto dir = test::temp_dir("gguf-arch");
    auto write = [&](const std::string& name, const std::string& arch, bool with_dim) {
        model::gguf::Writer w;
        w.set("general.architecture", model::gguf::Value::of_string(arch));
        if (with_dim) w.set("llama.embedding_length", model::gguf::Value::of_string("wide"));
        std::string p = (dir / name).string();
        EXPECT_TRUE(w.open(p).ok());
        EXPECT_TRUE(w.finish().ok());
        return p;
    };
    const std::string neox = write("neox.gguf", "gptneox", false);
    auto r = load_gguf_model(neox);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(
        r.message(),
        neox +
            ": architecture 'gptneox' is not supported (EdgeStudio imports 'llama', 'phi3' and 'qwen2' GGUF models)");
    const std::string bad = write("bad.gguf", "llama", true);
    r = load_gguf_model(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), bad + ": metadata 'llama.embedding_length' is a string, expected an integer");
    const std::string missing = write("missing.gguf", "llama", false);
    r = load_gguf_model(missing);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), missing + ": required metadata 'llama.embedding_length' is missing");
}

TEST(GgufHostile, ParseFromMemoryNamesTheBuffer) {
    const std::vector<uint8_t> b = Bytes{}.header(0, 0, 7).b;
    auto f = model::gguf::parse(b.data(), b.size(), "<seed>");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.message(), "<seed>: GGUF version 7 is not supported (this reader handles versions 2 and 3)");
    auto empty = model::gguf::parse(nullptr, 0, "<empty>");
    ASSERT_TRUE(edge::test::fails_with(empty, {"<empty>", "not a GGUF file (0 bytes, too short for the magic)"}));
}

}  // namespace
}  // namespace edge
