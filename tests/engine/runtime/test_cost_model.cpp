// The board cost model (engine/runtime/cost_model.h): the micro-profile of a compiled engine times
// every linear shape at every precision and splits the engine's measured time per token into its
// products and the rest; its JSON and the per-board file refuse bad input by name.
#include <gtest/gtest.h>

#include <set>

#include "engine/compile/compile.h"
#include "engine/model/ir.h"
#include "engine/runtime/cost_model.h"
#include "tests/common/model_loading.h"
#include "tests/common/test_support.h"

using edge::runtime::BoardCostModel;

namespace edge {
namespace {

TEST(CostModel, TheMicroProfileTimesEveryShapeAtEveryPrecisionAndSplitsTheEnginesTime) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    const model::Model m = test::load_or_die(path, false);
    const std::string engine = (test::temp_dir("cost-model") / "s.edge").string();
    compile::CompileOptions co;
    co.out_path = engine;
    ASSERT_TRUE(compile::compile(m, co).ok());
    runtime::MicroProfileOptions o;
    o.threads = 1;
    o.decode_tokens = 8;
    o.repetitions = 3;
    o.stream_bytes = 1 << 20;
    auto cm = runtime::micro_profile(engine, o);
    ASSERT_TRUE(cm.ok()) << cm.message();
    EXPECT_EQ(cm->engine, "s.edge");
    EXPECT_EQ(cm->threads, 1);
    std::set<std::pair<int64_t, int64_t>> shapes;
    for (const model::LayerInfo& li : model::list_layers(m)) shapes.insert({li.shape[0], li.shape[1]});
    ASSERT_EQ(cm->linears.size(), shapes.size() * 4);  // ffn_down's 172 columns included (partial groups)
    for (const auto& [rows, cols] : shapes)
        for (const char* p : {"fp32", "fp16", "int8", "int4"}) {
            auto us = runtime::linear_us(*cm, rows, cols, p);
            ASSERT_TRUE(us.ok()) << us.message();
            EXPECT_GT(*us, 0.0) << rows << "x" << cols << " " << p;
        }
    double linear_ms = 0;  // the compiled engine holds its layers as F32
    for (const model::LayerInfo& li : model::list_layers(m)) {
        auto us = runtime::linear_us(*cm, li.shape[0], li.shape[1], "fp32");
        ASSERT_TRUE(us.ok()) << us.message();
        linear_ms += *us / 1000.0;
    }
    EXPECT_NEAR(cm->engine_linear_ms, linear_ms, 1e-9);
    EXPECT_GT(cm->engine_tpot_ms, 0.0);
    EXPECT_NEAR(cm->rest_ms, std::max(0.0, cm->engine_tpot_ms - cm->engine_linear_ms), 1e-12);

    auto back = runtime::cost_model_from_json(runtime::cost_model_to_json(*cm), "cm.json");
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->linears.size(), cm->linears.size());
    EXPECT_DOUBLE_EQ(back->rest_ms, cm->rest_ms);
    EXPECT_TRUE(test::fails_with(runtime::linear_us(*cm, 3, 5, "int4"),
                                 {"s.edge", "no timing for a 3x5 weight at int4", "deploy an engine of this model"}));
    EXPECT_TRUE(test::fails_with(runtime::micro_profile("/nonexistent/e.edge", o), {"/nonexistent/e.edge"}));
}

TEST(CostModel, BadFilesAreRefusedByName) {
    using runtime::cost_model_from_json;
    EXPECT_TRUE(test::fails_with(cost_model_from_json("[1]", "c.json"), {"c.json", "a cost model is a JSON object"}));
    EXPECT_TRUE(
        test::fails_with(cost_model_from_json(R"({"version": 2})", "c.json"), {"c.json", "version 2 is not 1"}));
    const std::string head =
        R"({"version": 1, "threads": 2, "engine_tpot_ms": 5, "engine_linear_ms": 4, "rest_ms": 1, )";
    EXPECT_TRUE(
        test::fails_with(cost_model_from_json(head + R"("linears": [{"rows": 8, "cols": 8, "us": 1}]})", "c.json"),
                         {"c.json", "linears[0]", "'precision' must be one of fp32, fp16, int8, int4"}));
    EXPECT_TRUE(test::fails_with(
        cost_model_from_json(head + R"("linears": [{"rows": 8, "cols": 8, "precision": "int4", "us": -1}]})", "c.json"),
        {"c.json", "linears[0]", "'us' is out of range"}));
    EXPECT_TRUE(test::fails_with(cost_model_from_json(R"({"version": 1, "threads": "two"})", "c.json"),
                                 {"c.json", "'threads' must be a number, not \"two\""}));

    BoardCostModel a;
    a.engine = "a.edge";
    a.linears = {{8, 8, "int4", 1.5}};
    auto one = runtime::with_board_cost_model("", "f.json", "orin-a", a);
    ASSERT_TRUE(one.ok()) << one.message();
    BoardCostModel b = a;
    b.engine = "b.edge";
    auto two = runtime::with_board_cost_model(*one, "f.json", "orin-b", b);
    ASSERT_TRUE(two.ok()) << two.message();
    auto ra = runtime::board_cost_model(*two, "f.json", "orin-a");
    ASSERT_TRUE(ra.ok()) << ra.message();
    EXPECT_EQ(ra->engine, "a.edge");
    auto rb = runtime::board_cost_model(*two, "f.json", "orin-b");
    ASSERT_TRUE(rb.ok()) << rb.message();
    EXPECT_EQ(rb->engine, "b.edge");
    EXPECT_TRUE(test::fails_with(
        runtime::board_cost_model(*two, "f.json", "nano"),
        {"f.json", "no cost model for board 'nano'", "has orin-a, orin-b", "deploy to it with --cost-models f.json"}));
    EXPECT_TRUE(test::fails_with(runtime::board_cost_model("{\"boards\": 3}", "f.json", "x"),
                                 {"f.json", "a cost-model file is"}));
}

}  // namespace
}  // namespace edge
