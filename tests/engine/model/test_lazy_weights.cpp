// Lazy weights (engine/model/weights.h): opening reads no tensor data; reading tensors one at a
// time gives exactly what the eager importers give; streamed quantize and compile hold one
// tensor's FP32 copy at a time and write the same bytes as the whole-model path.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/compile/compile.h"
#include "engine/model/edgeq.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "engine/model/weights.h"
#include "engine/quant/apply.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/common/model_loading.h"
#include "tests/common/test_support.h"
#include "tests/engine/model/hf_fixture.h"

using edge::model::EdgeqWriter;
using edge::model::find_synth_shape;
using edge::model::list_layers;
using edge::model::LlamaConfig;
using edge::model::load_edgeq_model;
using edge::model::load_model;
using edge::model::make_synth_model;
using edge::model::Model;
using edge::model::save_edgeq;
using edge::model::synth_tokenizer;
using edge::model::SynthOptions;
using edge::model::write_synth_model;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::TokenizerSpec;

namespace edge {
namespace {

std::string bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string synth_gguf(const std::string& tag, const LlamaConfig& cfg, DType type = DType::F16) {
    const auto dir = test::temp_dir(tag);
    SynthOptions o;
    o.config = cfg;
    o.path = (dir / "model.gguf").string();
    o.type = type;
    o.threads = 2;
    EXPECT_TRUE(write_synth_model(o).ok());
    return o.path;
}

LlamaConfig four_layer_config() {
    LlamaConfig c = find_synth_shape("stories260k")->config;
    c.n_layers = 4;
    return c;
}

TEST(LazyWeights, GgufOpensWithoutReadingAndReadsWhatTheEagerImporterReads) {
    const std::string path = synth_gguf("lazy-gguf", four_layer_config());
    Model lazy = test::load_or_die(path, true);
    Model eager = test::load_or_die(path, false);
    ASSERT_EQ(lazy.tensors.size(), eager.tensors.size());
    EXPECT_TRUE(lazy.weights != nullptr);
    EXPECT_EQ(lazy.weight_bytes(), 0u);
    EXPECT_FALSE(model::weights_resident(lazy));
    EXPECT_TRUE(model::weights_resident(eager));
    EXPECT_EQ(eager.weights, nullptr);  // an eagerly read model keeps no source behind
    EXPECT_EQ(model::stored_weight_bytes(lazy), model::stored_weight_bytes(eager));
    EXPECT_EQ(list_layers(lazy).size(), list_layers(eager).size());
    for (const Tensor& t : lazy.tensors) EXPECT_TRUE(model::is_unread(t)) << t.name;
    ASSERT_TRUE(model::load_weights(lazy).ok());
    EXPECT_EQ(test::compare_models(eager, lazy), "");
}

TEST(LazyWeights, HfFoldersReadLazilyIncludingPermutedAndFusedTensors) {
    auto m = make_synth_model(SynthOptions{"stories260k"});
    ASSERT_TRUE(m.ok());
    for (bool phi3 : {false, true}) {
        for (DType storage : {DType::F32, DType::BF16}) {
            const auto dir = test::temp_dir(std::string("lazy-hf-") + (phi3 ? "phi3-" : "") + dtype_name(storage));
            test::HfFixtureOptions o;
            o.phi3 = phi3;
            o.storage = storage;
            o.sharded = phi3;
            ASSERT_EQ(test::write_hf_folder(*m, dir, o), "");
            Model lazy = test::load_or_die(dir.string(), true);
            Model eager = test::load_or_die(dir.string(), false);
            EXPECT_EQ(lazy.weight_bytes(), 0u);
            ASSERT_TRUE(model::load_weights(lazy).ok());
            EXPECT_EQ(test::compare_models(eager, lazy), "") << dir;
            EXPECT_EQ(test::compare_models(*m, lazy, storage), "") << dir;
        }
    }
}

// Point 3 of "Real models at real size": after the file leaves the page cache, opening it
// lazily (what info, tokenize and the studio do) brings back under 1% of its tensor pages.
TEST(LazyWeights, OpeningLeavesTheTensorPagesOnDisk) {
    LlamaConfig c = four_layer_config();
    c.dim = 512;
    c.hidden_dim = 1536;
    c.n_heads = 8;
    c.n_kv_heads = 4;
    c.head_dim = c.rope_dim = 64;
    c.vocab_size = 4096;
    const std::string path = synth_gguf("lazy-resident", c);  // ~ 34 MB of F16 tensors
    auto f = model::gguf::open(path);
    ASSERT_TRUE(f.ok()) << f.message();
    const uint64_t data_start = f->data_offset;
    f = Error{};  // unmap

    ASSERT_TRUE(test::drop_from_page_cache(path));
    auto resident_fraction = [&] { return test::resident_fraction(path, data_start); };
    const double before = resident_fraction();

    Model m = test::load_or_die(path, true);
    auto tok = make_tokenizer(m.tokenizer);
    ASSERT_TRUE(tok.ok());
    EXPECT_FALSE((*tok)->encode("hello world", true).empty());
    EXPECT_FALSE(list_layers(m).empty());
    const double after = resident_fraction();
    EXPECT_GE(after, 0.0);
    EXPECT_LT(after, 0.01) << "before the open " << before;

    // Reading one tensor brings back (about) its pages only: blk.0.ffn_up is 4.5% of the data.
    auto t = model::weight_f32(m, *m.find("blk.0.ffn_up.weight"));
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_LT(resident_fraction(), 0.10);
}

TEST(LazyWeights, AVocabularyOnlyGgufTokenizesAndRefusesToRun) {
    const auto dir = test::temp_dir("vocab-only");
    const std::string path = (dir / "vocab.gguf").string();
    const TokenizerSpec spec = synth_tokenizer(512);
    {
        model::gguf::Writer w;
        w.set("general.architecture", model::gguf::Value::of_string("llama"));
        w.set("general.name", model::gguf::Value::of_string("vocab only"));
        // llama.cpp's vocabulary files keep the model's hyperparameters.
        w.set("llama.embedding_length", model::gguf::Value::of_u32(64));
        w.set("llama.block_count", model::gguf::Value::of_u32(2));
        w.set("llama.feed_forward_length", model::gguf::Value::of_u32(172));
        w.set("llama.attention.head_count", model::gguf::Value::of_u32(8));
        w.set("tokenizer.ggml.model", model::gguf::Value::of_string("llama"));
        w.set("tokenizer.ggml.tokens", model::gguf::Value::array_of_strings(spec.tokens));
        w.set("tokenizer.ggml.scores", model::gguf::Value::array_of_f32(spec.scores));
        w.set("tokenizer.ggml.token_type", model::gguf::Value::array_of_i32(spec.token_types));
        w.set("tokenizer.ggml.bos_token_id", model::gguf::Value::of_u32(1));
        w.set("tokenizer.ggml.eos_token_id", model::gguf::Value::of_u32(2));
        ASSERT_TRUE(w.open(path).ok());
        ASSERT_TRUE(w.finish().ok());
    }
    Model m = test::load_or_die(path, true);
    EXPECT_TRUE(m.tensors.empty());
    auto tok = make_tokenizer(m.tokenizer);
    ASSERT_TRUE(tok.ok()) << tok.message();
    const auto ids = (*tok)->encode("hello", true);
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids[0], 1);
    EXPECT_EQ((*tok)->decode(ids), "hello");

    auto eager = load_model(path);
    EXPECT_TRUE(test::fails_with(eager, {path, "no tensors", "vocabulary-only"}));
}

constexpr const char* kRtnPlan = R"({"version":1,"default":{"precision":"int4","method":"rtn","group_size":32},
    "layers":{"blk.1.attn_q":{"precision":"fp16"},"blk.2.ffn_down":{"precision":"fp32"}}})";

size_t largest_tensor_f32(const Model& m) {
    size_t n = 0;
    for (const Tensor& t : m.tensors) n = std::max(n, size_t(t.numel()) * 4);
    return n;
}

// Point 2: RTN quantization of a lazily opened model reads one tensor at a time (the FP32
// weights alive never exceed the largest tensor, far below one block plus the head), and the
// result is byte for byte the whole-model result.
TEST(LazyWeights, StreamedRtnQuantizeHoldsOneTensorAndMatchesTheWholeModel) {
    const std::string path = synth_gguf("lazy-quant", four_layer_config());
    auto plan = quant::parse_plan(kRtnPlan);
    ASSERT_TRUE(plan.ok()) << plan.message();
    const auto dir = test::temp_dir("lazy-quant-out");

    Model eager = test::load_or_die(path, false);
    auto whole = quant::apply_plan(eager, *plan, nullptr);
    ASSERT_TRUE(whole.ok()) << whole.message();
    ASSERT_TRUE(save_edgeq(whole->model, (dir / "whole.edgeq").string()).ok());

    Model lazy = test::load_or_die(path, true);
    model::reset_f32_weight_peak();
    const size_t base = model::f32_weight_stats().live_bytes;
    auto streamed = quant::apply_plan(lazy, *plan, nullptr);
    ASSERT_TRUE(streamed.ok()) << streamed.message();
    ASSERT_TRUE(save_edgeq(streamed->model, (dir / "streamed.edgeq").string()).ok());
    const size_t peak = model::f32_weight_stats().peak_bytes - base;
    EXPECT_GT(peak, 0u);
    EXPECT_LE(peak, largest_tensor_f32(eager));
    EXPECT_EQ(model::f32_weight_stats().live_bytes, base);  // nothing read is kept
    EXPECT_EQ(bytes_of((dir / "streamed.edgeq").string()), bytes_of((dir / "whole.edgeq").string()));
}

// Every tensor of `want` in `got` with the same type, shape and bytes.
std::string same_tensors(const Model& want, const Model& got) {
    if (want.tensors.size() != got.tensors.size()) return "tensor counts differ";
    for (const Tensor& t : want.tensors) {
        const Tensor* g = got.find(t.name);
        if (!g) return t.name + " missing";
        if (g->type != t.type || g->shape != t.shape || g->nbytes != t.nbytes ||
            std::memcmp(g->raw(), t.raw(), t.nbytes) != 0)
            return t.name + " differs";
        if (bool(g->quant) != bool(t.quant) ||
            (t.quant && (g->quant->bits != t.quant->bits || g->quant->group_size != t.quant->group_size)))
            return t.name + ": quantization parameters differ";
    }
    return {};
}

// quantize's path: converted block by block into an EdgeqWriter (data section first), holding one
// block at a time; the file loads to the same tensors as the whole-model save.
TEST(LazyWeights, QuantizeStreamsIntoTheEdgeqWriter) {
    const std::string path = synth_gguf("lazy-sink", four_layer_config());
    auto plan = quant::parse_plan(kRtnPlan);
    ASSERT_TRUE(plan.ok());
    const auto dir = test::temp_dir("lazy-sink-out");
    Model eager = test::load_or_die(path, false);
    auto whole = quant::apply_plan(eager, *plan, nullptr);
    ASSERT_TRUE(whole.ok());
    ASSERT_TRUE(save_edgeq(whole->model, (dir / "whole.edgeq").string()).ok());

    Model lazy = test::load_or_die(path, true);
    auto w = EdgeqWriter::create((dir / "sunk.edgeq").string());
    ASSERT_TRUE(w.ok());
    quant::ApplyOptions ao;
    ao.sink = [&](const Tensor& t) { return (*w)->add(t); };
    model::reset_f32_weight_peak();
    const size_t base = model::f32_weight_stats().live_bytes;
    auto q = quant::apply_plan(lazy, *plan, nullptr, nullptr, ao);
    ASSERT_TRUE(q.ok()) << q.message();
    EXPECT_LE(model::f32_weight_stats().peak_bytes - base, largest_tensor_f32(eager));
    for (const Tensor& t : q->model.tensors) EXPECT_FALSE(t.data) << t.name << " kept after it was written";
    EXPECT_FALSE(std::filesystem::exists(dir / "sunk.edgeq"));  // not before finish()
    ASSERT_TRUE((*w)->finish(q->model).ok());
    auto a = load_edgeq_model((dir / "whole.edgeq").string());
    auto b = load_edgeq_model((dir / "sunk.edgeq").string());
    ASSERT_TRUE(a.ok() && b.ok()) << a.message() << b.message();
    EXPECT_EQ(same_tensors(*a, *b), "");
}

TEST(LazyWeights, StreamedCompileMatchesTheWholeModelAndHoldsOneTensor) {
    const std::string path = synth_gguf("lazy-compile", four_layer_config());
    const auto dir = test::temp_dir("lazy-compile-out");
    const std::string plan_path = (dir / "plan.json").string();
    std::ofstream(plan_path) << kRtnPlan;
    auto plan = quant::load_plan(plan_path);
    ASSERT_TRUE(plan.ok());

    compile::CompileOptions o;
    o.plan = *plan;
    o.out_path = (dir / "whole.edge").string();
    Model eager = test::load_or_die(path, false);
    ASSERT_TRUE(compile::compile(eager, o).ok());

    model::reset_f32_weight_peak();
    const size_t base = model::f32_weight_stats().live_bytes;
    o.out_path = (dir / "streamed.edge").string();
    auto r = compile::compile_file(path, plan_path, o);  // opens lazily
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_LE(model::f32_weight_stats().peak_bytes - base, largest_tensor_f32(eager));
    EXPECT_EQ(bytes_of((dir / "streamed.edge").string()), bytes_of((dir / "whole.edge").string()));
    auto back = compile::load_engine((dir / "streamed.edge").string());
    ASSERT_TRUE(back.ok()) << back.message();
}

TEST(LazyWeights, AJobThatNeedsEveryWeightGetsACopyWithThemRead) {
    const std::string path = synth_gguf("lazy-with", four_layer_config());
    auto lazy = std::make_shared<const Model>(test::load_or_die(path, true));
    auto full = model::with_weights(lazy);
    ASSERT_TRUE(full.ok()) << full.message();
    EXPECT_NE(full->get(), lazy.get());
    EXPECT_TRUE(model::weights_resident(**full));
    auto again = model::with_weights(*full);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->get(), full->get());  // already resident: the same object
}

}  // namespace
}  // namespace edge
