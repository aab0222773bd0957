// The CPU backend runs a compiled plan (.edge) over one arena and gives the logits of the
// uncompiled model (LlamaCpu): stories260K at FP32, INT8 and INT4; the unfused plan (every op a
// node of its own) gives them too; bad plans are refused naming the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "backend_test_util.h"
#include "engine/compile/compile.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/runtime/cpu/cpu_backend.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "test_support.h"

using edge::model::build_llama_graph;
using edge::model::Graph;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::BackendMemory;
using edge::runtime::BackendOptions;
using edge::runtime::CpuBackend;
using edge::runtime::LlamaCpu;
using edge::runtime::make_backend;
using edge::runtime::RuntimeOptions;

using namespace edge;
using namespace edge::compile;
using edge::test::rel_err;

namespace {

std::string stories_path() { return edge::test::shared("models/stories260K/stories260K.gguf"); }

struct Case {
    const char* name;
    std::optional<quant::Precision> precision;
    double tol;
};

class CpuBackendRoundTrip : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(CpuBackendRoundTrip, SameLogitsAsTheUncompiledModel) {
    EDGE_REQUIRE_SHARED(stories_path());
    const Case c = GetParam();
    auto loaded = load_model(stories_path());
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    const Model src = std::move(loaded).value();
    auto ref_model = std::make_shared<Model>(src);
    CompileOptions opts;
    if (c.precision) {
        opts.plan = quant::uniform_plan(*c.precision);
        auto q = quant::apply_plan(src, *opts.plan, nullptr);
        ASSERT_TRUE(q.ok()) << q.message();
        ref_model = std::make_shared<Model>(std::move(q.value().model));
    }
    opts.prefill_batch = 4;  // the 5-token prompt runs as two prefill chunks
    opts.max_seq = 64;
    opts.out_path = (edge::test::temp_dir("backend") / (std::string("stories_") + c.name + ".edge")).string();
    auto rep = edge::compile::compile(src, opts);
    ASSERT_TRUE(rep.ok()) << rep.message();

    auto eng = load_engine(opts.out_path);
    ASSERT_TRUE(eng.ok()) << eng.message();
    auto model = std::make_shared<const Model>(std::move(eng->file.model));
    CpuBackend be;
    ASSERT_TRUE(be.load(model, eng->program, BackendOptions{2, 0}).ok());
    EXPECT_EQ(be.max_seq(), 64);  // the plan was sized for 64 positions
    const BackendMemory mem = be.memory();
    EXPECT_EQ(mem.arena_bytes, std::max(eng->program.decode.arena_bytes, eng->program.prefill.arena_bytes));
    EXPECT_EQ(mem.weight_bytes, 0u);  // read in place
    EXPECT_EQ(mem.mapped_weight_bytes, model->weight_bytes());
    EXPECT_EQ(mem.kv_bytes, 0u);  // its own cache is made by the first run(), not for step() callers

    auto ref = LlamaCpu::create(ref_model, RuntimeOptions{2, 64});
    ASSERT_TRUE(ref.ok()) << ref.message();
    const auto a = edge::test::run_backend(be);
    EXPECT_EQ(be.memory().kv_bytes, size_t(2 * 5 * 64 * model->config.kv_dim() * 4));
    const auto b = edge::test::run_reference(**ref);
    ASSERT_FALSE(a.empty());
    EXPECT_LE(rel_err(a, b), c.tol) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Stories, CpuBackendRoundTrip,
                         ::testing::Values(Case{"fp32", std::nullopt, 1e-4}, Case{"int8", quant::Precision::INT8, 1e-3},
                                           Case{"int4", quant::Precision::INT4, 1e-3}),
                         [](const auto& info) { return std::string(info.param.name); });

// Every op as its own node (no fusion): embedding, rmsnorm, linear, rope, attention, add, swiglu
// each run by the backend, same logits as the fused plan and as the reference.
TEST(CpuBackend, UnfusedPlanRunsEveryOp) {
    EDGE_REQUIRE_SHARED(stories_path());
    auto loaded = load_model(stories_path());
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    auto model = std::make_shared<const Model>(std::move(loaded).value());
    const Graph g = build_llama_graph(model->config);
    ExecProgram plan;
    plan.nodes = unfused_nodes(g);
    auto d = plan_memory(plan.nodes, g, model->config, 1, 32);
    auto p = plan_memory(plan.nodes, g, model->config, 8, 32);
    ASSERT_TRUE(d.ok() && p.ok());
    plan.decode = *d;
    plan.prefill = *p;
    std::set<std::string> kinds;
    for (const auto& n : plan.nodes) kinds.insert(n.kind);
    EXPECT_EQ(kinds, (std::set<std::string>{"embedding", "rmsnorm", "linear", "rope", "attention", "add", "swiglu"}));

    CpuBackend be;
    auto st = be.load(model, plan, BackendOptions{1, 0});
    ASSERT_TRUE(st.ok()) << st.message();
    auto ref = LlamaCpu::create(model, RuntimeOptions{1, 32});
    ASSERT_TRUE(ref.ok());
    EXPECT_LE(rel_err(edge::test::run_backend(be), edge::test::run_reference(**ref)), 1e-4);
}

TEST(CpuBackend, RefusesBadPlansNamingTheNode) {
    EDGE_REQUIRE_SHARED(stories_path());
    auto loaded = load_model(stories_path());
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    auto model = std::make_shared<const Model>(std::move(loaded).value());
    auto plan = build_exec_program(*model, 4, 32);
    ASSERT_TRUE(plan.ok()) << plan.message();

    {  // a value without an arena buffer
        ExecProgram bad = *plan;
        bad.nodes[3].inputs[0] = "blk.0.nowhere";
        CpuBackend be;
        auto st = be.load(model, bad, {});
        ASSERT_FALSE(st.ok());
        EXPECT_NE(st.message().find("blk.0.nowhere"), std::string::npos) << st.message();
        EXPECT_NE(st.message().find(bad.nodes[3].name), std::string::npos) << st.message();
    }
    {  // a kind the runtime has no kernel for
        ExecProgram bad = *plan;
        bad.nodes[2].kind = "conv2d";
        CpuBackend be;
        auto st = be.load(model, bad, {});
        ASSERT_FALSE(st.ok());
        EXPECT_NE(st.message().find("conv2d"), std::string::npos) << st.message();
    }
    {  // a buffer past the arena
        ExecProgram bad = *plan;
        bad.decode.arena_bytes = 64;
        CpuBackend be;
        auto st = be.load(model, bad, {});
        ASSERT_FALSE(st.ok());
        EXPECT_NE(st.message().find("runs past the arena"), std::string::npos) << st.message();
    }
    {  // more rows of logits and scores than the batch they serve
        ExecProgram bad = *plan;
        bad.prefill.wide_rows = bad.prefill.batch + 1;
        CpuBackend be;
        EXPECT_TRUE(test::fails_with(be.load(model, bad, {}),
                                     {"memory plan 1 has 5 rows of logits and scores", "outside 1..4"}));
    }
    {  // more positions than the plan was sized for
        CpuBackend be;
        auto st = be.load(model, *plan, BackendOptions{1, 128});
        ASSERT_FALSE(st.ok());
        EXPECT_NE(st.message().find("sized for 32"), std::string::npos) << st.message();
    }
    {  // skipping positions or running past the sequence length is an error, not a crash
        CpuBackend be;
        ASSERT_TRUE(be.load(model, *plan, BackendOptions{1, 0}).ok());
        const int32_t t = 1;
        EXPECT_TRUE(test::fails_with(be.run(&t, 1, 32), {"position 32", "0 tokens"}));
        const std::vector<int32_t> full(32, 1);
        ASSERT_TRUE(be.run(full.data(), 32, 0).ok());
        EXPECT_TRUE(test::fails_with(be.run(&t, 1, 32), {"cpu:", "would reach 33", "maximum of 32"}));
    }
    std::string why;
    auto any = make_backend("auto", &why);
    ASSERT_TRUE(any.ok()) << any.message();
    if ((*any)->name() == "cpu") {
        EXPECT_FALSE(why.empty());
    }
    EXPECT_TRUE(edge::test::fails_with(make_backend("tpu"), {"unknown backend 'tpu' (expected cpu, cuda or auto)"}));
}
