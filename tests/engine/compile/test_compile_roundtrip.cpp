// compile -> load -> run gives the logits of the uncompiled model (stories260K, FP32/INT8/INT4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/compile/compile.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::Model;
using edge::model::read_edge_file;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;
using namespace edge::compile;

namespace {

const std::vector<int32_t> kPrompt{1, 403, 407, 261, 378};

std::string stories_path() { return edge::test::shared("models/stories260K/stories260K.gguf"); }

// Logits of the prompt (prefill, every position) then 8 greedy decode steps, concatenated.
std::vector<float> run(const std::shared_ptr<const Model>& m) {
    auto rt = LlamaCpu::create(m, RuntimeOptions{2, 64});
    EXPECT_TRUE(rt.ok()) << rt.message();
    if (!rt.ok()) return {};
    const int V = m->config.vocab_size;
    std::vector<float> all(kPrompt.size() * size_t(V));
    const float* l = (*rt)->prefill(kPrompt.data(), int(kPrompt.size()), 0, all.data());
    for (int i = 0; i < 8; ++i) {
        const int32_t t = argmax(l, V);
        l = (*rt)->forward(t, int(kPrompt.size()) + i);
        all.insert(all.end(), l, l + V);
    }
    return all;
}

double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    EXPECT_EQ(a.size(), b.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        num = std::max(num, double(std::fabs(a[i] - b[i])));
        den = std::max(den, double(std::fabs(b[i])));
    }
    return den > 0 ? num / den : num;
}

struct Case {
    const char* name;
    std::optional<quant::Precision> precision;
    double tol;
};

class CompileRoundTrip : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(CompileRoundTrip, SameLogitsAsTheUncompiledModel) {
    EDGE_REQUIRE_SHARED(stories_path());
    const Case c = GetParam();
    auto loaded = load_model(stories_path());
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    const Model src = std::move(loaded).value();

    // The reference: the same weights, uncompiled.
    auto ref_model = std::make_shared<Model>(src);
    CompileOptions opts;
    if (c.precision) {
        opts.plan = quant::uniform_plan(*c.precision);
        auto q = quant::apply_plan(src, *opts.plan, nullptr);
        ASSERT_TRUE(q.ok()) << q.message();
        ref_model = std::make_shared<Model>(std::move(q.value().model));
    }
    const auto dir = edge::test::temp_dir("compile");
    opts.out_path = (dir / (std::string("stories_") + c.name + ".edge")).string();
    auto rep = edge::compile::compile(src, opts);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_EQ(rep->nodes_before, 3 + 14 * 5);
    EXPECT_EQ(rep->nodes_after, 2 + 6 * 5);
    EXPECT_GT(rep->file_bytes, rep->weight_bytes);

    // load_model dispatches .edge by magic; tensors alias the mapping.
    auto mf = MappedFile::open(opts.out_path);
    ASSERT_TRUE(mf.ok()) << mf.message();
    auto ef = read_edge_file(*mf);
    ASSERT_TRUE(ef.ok()) << ef.message();
    EXPECT_EQ(ef->target, "cpu");
    for (const Tensor& t : ef->model.tensors) {
        const uint8_t* p = t.data.get();
        EXPECT_TRUE(p >= (*mf)->data() && p + t.nbytes <= (*mf)->data() + (*mf)->size()) << t.name << " is a copy";
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << t.name;
        const Tensor* r = ref_model->find(t.name);
        ASSERT_NE(r, nullptr) << t.name;
        EXPECT_EQ(t.type, r->type) << t.name;
    }
    auto via_loader = load_model(opts.out_path);
    ASSERT_TRUE(via_loader.ok()) << via_loader.message();
    EXPECT_EQ(via_loader->source_format, "edge");
    EXPECT_EQ(via_loader->tokenizer.tokens, src.tokenizer.tokens);

    const auto a = run(std::make_shared<Model>(std::move(via_loader).value()));
    const auto b = run(ref_model);
    ASSERT_FALSE(b.empty());
    EXPECT_LE(rel_err(a, b), c.tol) << c.name;

    auto eng = load_engine(opts.out_path);
    ASSERT_TRUE(eng.ok()) << eng.message();
    EXPECT_EQ(eng->program.nodes.size(), size_t(rep->nodes_after));
    EXPECT_EQ(eng->program.decode.arena_bytes, rep->decode.arena_bytes);
}

INSTANTIATE_TEST_SUITE_P(Stories, CompileRoundTrip,
                         ::testing::Values(Case{"fp32", std::nullopt, 1e-4}, Case{"int8", quant::Precision::INT8, 1e-3},
                                           Case{"int4", quant::Precision::INT4, 1e-3}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Compile, TargetsAndErrors) {
    EXPECT_TRUE(parse_target("cuda-sm87").ok());
    auto bad = parse_target("tpu");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("tpu"), std::string::npos);
    Model empty;
    empty.source_path = "x.gguf";
    auto r = edge::compile::compile(empty, CompileOptions{});
    ASSERT_TRUE(edge::test::fails_with(r, {"x.gguf", "no output path given for the engine file"}));

    EDGE_REQUIRE_SHARED(stories_path());
    auto m = load_model(stories_path());
    ASSERT_TRUE(m.ok()) << m.message();
    CompileOptions o;
    o.out_path = "/nonexistent-folder/x.edge";
    auto w = edge::compile::compile(*m, o);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.message().find("/nonexistent-folder/x.edge"), std::string::npos) << w.message();
    EXPECT_FALSE(std::filesystem::exists("/nonexistent-folder/x.edge.partial"));
}
