// GGUF writer -> reader round trips (every metadata value type, nested arrays, v2 and v3), the
// synth generator through the importer, and stories260K.gguf against ASSETS.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "engine/core/half.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

using edge::model::find_synth_shape;
using edge::model::LlamaConfig;
using edge::model::load_gguf_model;
using edge::model::make_synth_model;
using edge::model::synth_tokenizer;
using edge::model::SynthOptions;
using edge::model::validate_llama;
using edge::model::write_gguf_model;
using edge::model::write_synth_model;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::TokenizerSpec;

namespace edge {
namespace {

using model::gguf::Value;
using model::gguf::ValueType;

std::vector<std::pair<std::string, Value>> every_value_type() {
    std::vector<uint8_t> bools = {1, 0, 1};
    std::vector<uint8_t> u64s(16);
    const uint64_t big[2] = {std::numeric_limits<uint64_t>::max(), 7};
    std::memcpy(u64s.data(), big, 16);
    return {
        {"t.u8", Value::of_u8(250)},
        {"t.i8", Value::of_i8(-120)},
        {"t.u16", Value::of_u16(65000)},
        {"t.i16", Value::of_i16(-32000)},
        {"t.u32", Value::of_u32(4000000000u)},
        {"t.i32", Value::of_i32(-2000000000)},
        {"t.f32", Value::of_f32(3.25e-7f)},
        {"t.bool", Value::of_bool(true)},
        {"t.string", Value::of_string("h\xc3\xa9llo \xe2\x96\x81 world")},
        {"t.empty_string", Value::of_string("")},
        {"t.u64", Value::of_u64(std::numeric_limits<uint64_t>::max())},
        {"t.i64", Value::of_i64(std::numeric_limits<int64_t>::min())},
        {"t.f64", Value::of_f64(-1.0 / 3.0)},
        {"t.arr.f32", Value::array_of_f32({1.5f, -2.0f, 0.0f})},
        {"t.arr.i32", Value::array_of_i32({-1, 0, 1 << 30})},
        {"t.arr.bool", Value::array_raw(ValueType::Bool, bools)},
        {"t.arr.u64", Value::array_raw(ValueType::U64, u64s)},
        {"t.arr.string", Value::array_of_strings({"a", "", "<0x0A>"})},
        {"t.arr.empty", Value::array_of_strings({})},
        {"t.arr.nested", Value::array_of_arrays({Value::array_of_i32({1, 2}), Value::array_of_strings({"x"}),
                                                 Value::array_of_arrays({Value::array_of_f32({9.0f})})})},
    };
}

class GgufMetadataRoundTrip : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GgufMetadataRoundTrip, EveryValueTypeAndTensorData) {
    const uint32_t version = GetParam();
    const std::string path = (test::temp_dir("gguf-meta") / "meta.gguf").string();
    model::gguf::Writer w(version, version == 2 ? 64 : 32);
    const auto kv = every_value_type();
    for (const auto& [k, v] : kv) w.set(k, v);
    ASSERT_TRUE(w.add_tensor("a", DType::F32, {3, 5}).ok());
    ASSERT_TRUE(w.add_tensor("b", DType::F16, {7}).ok());
    ASSERT_TRUE(w.add_tensor("c", DType::BF16, {2, 1, 1, 4}).ok());
    ASSERT_TRUE(w.open(path).ok());
    std::vector<float> a(15), b(7), c(8);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) * 0.25f - 1.0f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i) + 0.5f;
    for (size_t i = 0; i < c.size(); ++i) c[i] = -float(i) * 2.0f;
    ASSERT_TRUE(w.write_f32(a.data(), 4).ok());  // in pieces, crossing nothing
    ASSERT_TRUE(w.write_f32(a.data() + 4, 11).ok());
    ASSERT_TRUE(w.write_f32(b.data(), 7).ok());
    ASSERT_TRUE(w.write_f32(c.data(), 8).ok());
    ASSERT_TRUE(w.finish().ok());

    auto f = model::gguf::open(path);
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_EQ(f->version, version);
    EXPECT_EQ(f->alignment, version == 2 ? 64u : 32u);
    size_t i = 0;
    for (const auto& [k, v] : kv) {
        while (i < f->kv.size() && f->kv[i].first == "general.alignment") ++i;
        ASSERT_LT(i, f->kv.size());
        EXPECT_EQ(f->kv[i].first, k);
        EXPECT_TRUE(f->kv[i].second == v) << k << ": " << f->kv[i].second.to_string() << " vs " << v.to_string();
        ++i;
    }
    EXPECT_EQ(f->find("t.u64")->u(), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(f->find("t.arr.u64")->to_string(), "[2 x u64: 18446744073709551615, 7]");
    EXPECT_EQ(f->find("t.arr.nested")->items[2].items[0].float_at(0), 9.0);
    ASSERT_EQ(f->tensors.size(), 3u);
    EXPECT_EQ(f->tensors[0].ne, (std::vector<uint64_t>{5, 3}));
    EXPECT_EQ(f->tensors[2].shape(), (std::vector<int64_t>{2, 1, 1, 4}));
    for (const auto& t : f->tensors) EXPECT_EQ((t.data - f->bytes) % int64_t(f->alignment), 0) << t.name;
    EXPECT_EQ(std::memcmp(f->tensors[0].data, reinterpret_cast<const uint8_t*>(a.data()), 60), 0);  // bytes as written
    for (size_t k = 0; k < b.size(); ++k) {
        uint16_t hv;
        std::memcpy(&hv, f->tensors[1].data + 2 * k, 2);
        EXPECT_EQ(f16_to_f32(hv), b[k]);
    }
    for (size_t k = 0; k < c.size(); ++k) {
        uint16_t hv;
        std::memcpy(&hv, f->tensors[2].data + 2 * k, 2);
        EXPECT_EQ(bf16_to_f32(hv), c[k]);
    }
}

INSTANTIATE_TEST_SUITE_P(Versions, GgufMetadataRoundTrip, ::testing::Values(2u, 3u));

TEST(GgufWriter, RejectsIncompleteTensorsAndLeavesNoFile) {
    const auto dir = test::temp_dir("gguf-writer");
    const std::string path = (dir / "x.gguf").string();
    model::gguf::Writer w;
    ASSERT_TRUE(w.add_tensor("a", DType::F32, {4}).ok());
    ASSERT_TRUE(w.open(path).ok());
    ASSERT_TRUE(w.write_f32(std::vector<float>(3).data(), 3).ok());
    Status s = w.finish();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("'a' is incomplete"), std::string::npos) << s.message();
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_TRUE(edge::test::fails_with(
        w.add_tensor("q", DType::Q4_0, {3, 20}),
        {"q", "tensors must be declared before the GGUF file is opened"}));  // rows not whole blocks
}

TEST(GgufSynth, RoundTripsThroughTheImporter) {
    const auto dir = test::temp_dir("gguf-synth");
    SynthOptions o;
    o.shape = "test-tiny";
    o.seed = 42;
    auto ref = make_synth_model(o);
    ASSERT_TRUE(ref.ok()) << ref.message();
    for (DType type : {DType::F32, DType::F16}) {
        o.type = type;
        o.path = (dir / (std::string("tiny-") + dtype_name(type) + ".gguf")).string();
        Status s = write_synth_model(o);
        ASSERT_TRUE(s.ok()) << s.message();
        auto m = load_gguf_model(o.path);
        ASSERT_TRUE(m.ok()) << m.message();
        ASSERT_TRUE(validate_llama(*m).ok());
        const LlamaConfig& c = m->config;
        EXPECT_EQ(c.dim, 32);
        EXPECT_EQ(c.n_layers, 2);
        EXPECT_EQ(c.n_heads, 4);
        EXPECT_EQ(c.n_kv_heads, 2);
        EXPECT_EQ(c.hidden_dim, 96);
        EXPECT_EQ(c.vocab_size, 384);
        EXPECT_FALSE(c.tied_embeddings);
        EXPECT_EQ(m->tokenizer.model, "llama");
        ASSERT_EQ(m->tokenizer.tokens.size(), 384u);
        EXPECT_EQ(m->tokenizer.tokens[3 + 'A'], "<0x41>");
        EXPECT_EQ(m->tokenizer.token_types[3 + 'A'], 6);
        EXPECT_EQ(m->tokenizer.bos_id, 1);
        ASSERT_EQ(m->tensors.size(), ref->tensors.size());
        for (const Tensor& t : ref->tensors) {
            const Tensor* u = m->find(t.name);
            ASSERT_NE(u, nullptr) << t.name;
            EXPECT_EQ(u->shape, t.shape);
            EXPECT_EQ(u->source_type, t.shape.size() == 1 ? DType::F32 : type) << t.name;
            for (int64_t i = 0; i < t.numel(); ++i)
                ASSERT_NEAR(u->f32()[i], t.f32()[i], type == DType::F32 ? 0.0 : 1e-3 * std::fabs(t.f32()[i]) + 1e-7)
                    << t.name << "[" << i << "]";
        }
    }
    // Every multi-character normal piece is the concatenation of two earlier tokens.
    const TokenizerSpec tok = synth_tokenizer(2000);
    std::set<std::string> have;
    for (size_t i = 0; i < tok.tokens.size(); ++i) {
        const std::string& p = tok.tokens[i];
        if (tok.token_types[i] == 1 && p.size() > 1 && p != "\xe2\x96\x81") {
            bool ok = false;
            for (size_t cut = 1; cut < p.size() && !ok; ++cut)
                ok = have.count(p.substr(0, cut)) && have.count(p.substr(cut));
            EXPECT_TRUE(ok) << "piece '" << p << "' cannot be reached by a pairwise merge";
        }
        have.insert(p);
    }
    EXPECT_EQ(tok.tokens.size(), 2000u);

    // The embedded tokenizer is usable: text round-trips, common words become single pieces.
    auto t = make_tokenizer(synth_tokenizer(32000));
    ASSERT_TRUE(t.ok()) << t.message();
    const std::string text = "Once upon a time, there was a little girl named Lily. \xe4\xbd\xa0!";
    const auto ids = (*t)->encode(text, true);
    EXPECT_EQ(ids.front(), 1);
    EXPECT_LT(ids.size(), text.size() / 2);
    EXPECT_EQ((*t)->decode(ids), text);
}

// synth --type q4_k_m: Q4_K matrices, Q6_K for the head and for attn_v / ffn_down of the first and
// last eighth of the layers and every third between (llama.cpp's Q4_K_M rule), each tensor read
// back within its quantization error of the F32 model of the same seed; a shape whose rows are
// not whole super-blocks is refused naming the tensor.
TEST(GgufSynth, Q4KmFileHasLlamaCppsTypeMixAndTheSeedsWeights) {
    const auto dir = test::temp_dir("gguf-synth-q4km");
    SynthOptions o;
    LlamaConfig c = find_synth_shape("test-tiny")->config;
    c.dim = 256;
    c.hidden_dim = 512;
    c.n_layers = 16;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = c.rope_dim = 64;
    o.config = c;
    o.seed = 9;
    auto ref = make_synth_model(o);
    ASSERT_TRUE(ref.ok()) << ref.message();
    o.q4_k_m = true;
    o.path = (dir / "q4km.gguf").string();
    ASSERT_TRUE(write_synth_model(o).ok());
    auto m = load_gguf_model(o.path);
    ASSERT_TRUE(m.ok()) << m.message();
    std::set<int> more_bits;
    for (const Tensor& t : ref->tensors) {
        const Tensor* u = m->find(t.name);
        ASSERT_NE(u, nullptr) << t.name;
        if (t.shape.size() == 1) {
            EXPECT_EQ(u->source_type, DType::F32) << t.name;
            continue;
        }
        int layer = -1;
        std::sscanf(t.name.c_str(), "blk.%d.", &layer);
        const bool v_or_down =
            t.name.find("attn_v") != std::string::npos || t.name.find("ffn_down") != std::string::npos;
        if (u->source_type == DType::Q6_K && v_or_down) more_bits.insert(layer);
        if (!v_or_down) {
            EXPECT_EQ(u->source_type, t.name == "output.weight" ? DType::Q6_K : DType::Q4_K) << t.name;
        }
        double e = 0, n = 0;
        for (int64_t i = 0; i < t.numel(); ++i) {
            e += std::pow(double(u->f32()[i]) - t.f32()[i], 2);
            n += std::pow(double(t.f32()[i]), 2);
        }
        EXPECT_LT(std::sqrt(e / n), u->source_type == DType::Q4_K ? 0.1 : 0.03) << t.name;
    }
    // 16 layers: 0, 1 (first eighth), 14, 15 (last eighth), and 4, 7, 10, 13 (every third between).
    EXPECT_EQ(more_bits, (std::set<int>{0, 1, 4, 7, 10, 13, 14, 15}));

    SynthOptions tiny;
    tiny.shape = "test-tiny";
    tiny.q4_k_m = true;
    tiny.path = (dir / "tiny.gguf").string();
    const Status bad = write_synth_model(tiny);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("token_embd.weight has rows of 32 elements, not whole Q4_K blocks of 256"),
              std::string::npos)
        << bad.message();
}

TEST(GgufSynth, TiedModelAndExportRoundTrip) {
    const auto dir = test::temp_dir("gguf-export");
    SynthOptions o;
    o.shape = "test-tiny";
    o.tied_embeddings = true;
    auto m = make_synth_model(o);
    ASSERT_TRUE(m.ok()) << m.message();
    const std::string path = (dir / "tied.gguf").string();
    Status s = write_gguf_model(*m, path);
    ASSERT_TRUE(s.ok()) << s.message();
    auto back = load_gguf_model(path);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_TRUE(back->config.tied_embeddings);
    EXPECT_EQ(back->find("output.weight"), nullptr);
    EXPECT_EQ(back->output_head()->name, "token_embd.weight");
    for (const Tensor& t : m->tensors)
        EXPECT_EQ(std::memcmp(t.raw(), back->find(t.name)->raw(), t.nbytes), 0) << t.name;
    EXPECT_TRUE(edge::test::fails_with(write_synth_model(SynthOptions{"no-such-shape"}),
                                       {"synth", "unknown shape 'no-such-shape'", "test-tiny"}));
}

TEST(GgufStories260K, LoadsWithTheConfigOfAssetsMd) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    std::vector<double> fractions;
    Progress progress([&](double f, const std::string&) { fractions.push_back(f); });
    auto m = load_gguf_model(path, &progress);
    ASSERT_TRUE(m.ok()) << m.message();
    const LlamaConfig& c = m->config;
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.hidden_dim, 172);
    EXPECT_EQ(c.n_layers, 5);
    EXPECT_EQ(c.n_heads, 8);
    EXPECT_EQ(c.n_kv_heads, 4);
    EXPECT_EQ(c.head_dim, 8);
    EXPECT_EQ(c.vocab_size, 512);
    EXPECT_EQ(c.rope_dim, 8);
    EXPECT_FLOAT_EQ(c.norm_eps, 1e-5f);
    EXPECT_EQ(c.context_length, 2048);
    EXPECT_FALSE(c.tied_embeddings);
    EXPECT_EQ(m->tensors.size(), 48u);
    EXPECT_EQ(m->source_format, "gguf");
    EXPECT_EQ(m->find("blk.0.ffn_down.weight")->shape, (std::vector<int64_t>{64, 172}));
    const Tensor* e = m->find("token_embd.weight");
    const Tensor* o = m->find("output.weight");
    ASSERT_TRUE(e && o);
    EXPECT_EQ(std::memcmp(e->raw(), o->raw(), e->nbytes), 0);
    EXPECT_EQ(m->tokenizer.model, "llama");
    EXPECT_EQ(m->tokenizer.tokens.size(), 512u);
    EXPECT_EQ(m->tokenizer.bos_id, 1);
    EXPECT_EQ(m->tokenizer.eos_id, 2);
    EXPECT_EQ(m->tokenizer.scores.size(), 512u);
    EXPECT_FALSE(m->graph.ops.empty());
    EXPECT_EQ(m->metadata.size(), 2u + 19u);
    ASSERT_FALSE(fractions.empty());
    EXPECT_DOUBLE_EQ(fractions.back(), 1.0);

    auto f = model::gguf::open(path);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->kv.size(), 19u);

    // Cancellation is honoured.
    Progress cancelled;
    cancelled.cancel();
    auto none = load_gguf_model(path, &cancelled);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.message().find("cancelled"), std::string::npos);
}

TEST(GgufStories260K, QuantizedVariantsLoadAsF32WithSourceTypes) {
    for (const char* q : {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0"}) {
        const std::string path = test::shared(std::string("models/stories260K/llamacpp/stories260K-") + q + ".gguf");
        EDGE_REQUIRE_SHARED(path);
        auto m = load_gguf_model(path);
        ASSERT_TRUE(m.ok()) << m.message();
        EXPECT_EQ(dtype_name(m->find("blk.0.attn_q.weight")->source_type), std::string(q));
        EXPECT_EQ(m->find("blk.0.attn_q.weight")->type, DType::F32);
    }
}

}  // namespace
}  // namespace edge
