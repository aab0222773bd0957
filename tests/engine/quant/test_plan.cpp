// Plans: parsing, resolution against a model, refusals that name what is wrong.
#include <gtest/gtest.h>

#include "engine/model/loader.h"
#include "engine/quant/plan.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::Model;

using namespace edge;
using namespace edge::quant;

namespace {
Model stories() {
    auto m = load_model(edge::test::shared("models/stories260K/stories260K.gguf"));
    EXPECT_TRUE(m.ok()) << m.message();
    return std::move(m).value();
}
}  // namespace

TEST(QuantPlan, GlobMatching) {
    EXPECT_TRUE(glob_match("blk.*.ffn_down", "blk.3.ffn_down"));
    EXPECT_TRUE(glob_match("blk.?.attn_*", "blk.0.attn_output"));
    EXPECT_FALSE(glob_match("blk.*.ffn_down", "blk.3.ffn_up"));
    EXPECT_TRUE(glob_match("*", "output"));
    EXPECT_FALSE(glob_match("blk.1*", "output"));
}

TEST(QuantPlan, ResolvesRulesPatternsAndKeep) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    const Model m = stories();
    auto p = parse_plan(R"({"version":1,
        "default":{"precision":"int4","method":"rtn","group_size":32},
        "layers":{"blk.*.ffn_down":{"precision":"int8","group_size":"channel"},
                  "blk.0.attn_q":{"precision":"fp16"}},
        "keep":["output"]})");
    ASSERT_TRUE(p.ok()) << p.message();
    auto r = resolve_plan(m, *p);
    ASSERT_TRUE(r.ok()) << r.message();
    int seen = 0;
    for (const LayerChoice& c : *r) {
        if (c.layer == "blk.2.ffn_down") {
            EXPECT_EQ(c.precision, Precision::INT8);
            EXPECT_EQ(c.spec.grouping, QGrouping::PerChannel);
            ++seen;
        } else if (c.layer == "blk.0.attn_q") {
            EXPECT_EQ(c.precision, Precision::FP16);
            ++seen;
        } else if (c.layer == "output") {
            EXPECT_EQ(c.precision, Precision::FP32);
            ++seen;
        } else if (c.layer == "blk.4.attn_v") {
            EXPECT_EQ(c.precision, Precision::INT4);
            EXPECT_EQ(c.spec.group_size, 32);
            ++seen;
        }
    }
    EXPECT_EQ(seen, 4);
    auto round = parse_plan(plan_to_json(*p));
    ASSERT_TRUE(round.ok()) << round.message();
    EXPECT_EQ(round->rules.size(), 2u);
}

TEST(QuantPlan, RefusesUnknownLayersAndImpossibleSettings) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    const Model m = stories();
    auto expect_error = [&](const std::string& json, const std::string& needle) {
        auto p = parse_plan(json, "bad.plan.json");
        if (p.ok()) {
            auto r = resolve_plan(m, *p);
            ASSERT_FALSE(r.ok()) << json;
            EXPECT_NE(r.message().find(needle), std::string::npos) << r.message();
        } else {
            EXPECT_NE(p.message().find(needle), std::string::npos) << p.message();
        }
    };
    expect_error(R"({"layers":{"blk.9.attn_q":{"precision":"int8"}}})", "blk.9.attn_q");
    expect_error(R"({"keep":["blk.7.*"]})", "blk.7.*");
    expect_error(R"({"default":{"precision":"int4","group_size":256}})", "larger than a row");
    expect_error(R"({"layers":{"blk.*.ffn_down":{"precision":"int4","group_size":256}}})", "blk.0.ffn_down");
    expect_error(R"({"default":{"precision":"int3"}})", "int3");
    expect_error(R"({"default":{"precision":"int4","scales":"fp8"}})", "\"scales\" must be");
    expect_error(R"({"default":{"precision":"fp16","method":"gptq"}})", "impossible");
    expect_error(R"({"default":{"precision":"int4","method":"gptq","grouping":"flat"}})", "flat");
    expect_error(R"({"default":{"precision":"int4","bogus":1}})", "bogus");
    expect_error(R"({"layerz":{}})", "layerz");
    expect_error("{not json", "not valid JSON");
}

// Regression (fuzz_plan, 2026-12-04, UBSan): {"awq": {"grid": 1.9e30}} was converted to int
// before its range was checked. Whole numbers are now checked first, and the value is quoted.
TEST(QuantPlan, HugeOrFractionalNumbersAreRefusedBeforeConversion) {
    for (const char* grid :
         {"1922222222222222222222222222222", "1e30", "-1e30", "2.5", "\"10\"", "18446744073709551615"})
        EXPECT_TRUE(edge::test::fails_with(
            edge::quant::parse_plan(std::string("{\"awq\": {\"grid\": ") + grid + "}}", "p.plan.json"),
            {"p.plan.json", "awq grid must be a whole number in 1..1000"}))
            << grid;
    EXPECT_TRUE(edge::test::fails_with(edge::quant::parse_plan(R"({"gptq": {"block": 1e30}})", "p.plan.json"),
                                       {"p.plan.json", "gptq block must be a whole number"}));
    auto ok = edge::quant::parse_plan(R"({"awq": {"grid": 40}, "gptq": {"block": 64}})", "p.plan.json");
    ASSERT_TRUE(ok.ok()) << ok.message();
    EXPECT_EQ(ok->awq.grid, 40);
    EXPECT_EQ(ok->gptq.block, 64);
}

// Regression (issue 21): a value nested 100,000 deep used to overflow the stack while the error
// message was built (dump() of the whole value). Now the reader refuses the nesting up front, and
// a bad value is quoted as a short excerpt.
TEST(QuantPlan, DeeplyNestedJsonIsRefusedNotACrash) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_TRUE(
        edge::test::fails_with(edge::quant::parse_plan("{\"default\": {\"group\": " + deep + "}}", "deep.plan.json"),
                               {"deep.plan.json", "nested more than"}));
    // Just under the limit the value reaches the rule parser, whose message quotes a bounded excerpt.
    const std::string ok_depth = std::string(100, '[') + std::string(100, ']');
    auto r =
        edge::quant::parse_plan("{\"default\": {\"precision\": \"int4\", \"group\": " + ok_depth + "}}", "p.plan.json");
    ASSERT_TRUE(edge::test::fails_with(r, {"p.plan.json", "group"}));
    EXPECT_LT(r.message().size(), 300u) << r.message();
}
