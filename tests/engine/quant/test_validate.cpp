// The post-quantization validation suite (engine/validate/consistency.h) on stories260K.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/validate/consistency.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::Model;
using edge::validate::BitFlipOptions;
using edge::validate::inject_bit_flips;
using edge::validate::validate_quantized;
using edge::validate::ValidateOptions;

using namespace edge;
using namespace edge::quant;

TEST(QuantValidate, Int8PassesTheDefaultsAndBitFlipsAreSeeded) {
    const std::string gguf = edge::test::shared("models/stories260K/stories260K.gguf");
    const std::string sample = edge::test::shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(gguf);
    EDGE_REQUIRE_SHARED(sample);
    auto m = load_model(gguf);
    ASSERT_TRUE(m.ok()) << m.message();
    auto text = read_text_file(sample);
    ASSERT_TRUE(text.ok());
    auto q = apply_plan(*m, uniform_plan(Precision::INT8), nullptr);
    ASSERT_TRUE(q.ok()) << q.message();
    auto ref = std::make_shared<const Model>(*m);
    auto test = std::make_shared<const Model>(q->model);

    ValidateOptions o;
    o.ppl.max_parts = 2;
    o.jitter_tokens = 16;
    o.jitter_runs = 2;
    o.threads = 1;
    auto rep = validate_quantized(ref, test, *text, o);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_LT(rep->consistency.kl_mean, 0.01);
    EXPECT_GT(rep->consistency.top1_agreement, 0.9);
    EXPECT_NEAR(rep->consistency.ppl_ref, 3.55, 0.3);
    EXPECT_TRUE(rep->bitflip_ran);
    EXPECT_GT(rep->bitflip_count, 0);
    EXPECT_EQ(rep->health.size(), size_t(5 * 7 + 1));
    for (const auto& h : rep->health) EXPECT_EQ(h.nan + h.inf, 0) << h.layer;
    EXPECT_NE(rep->to_json().find("\"passed\""), std::string::npos);
    EXPECT_NE(rep->to_table().find("KL mean"), std::string::npos);

    int64_t a = 0, b = 0;
    auto f1 = inject_bit_flips(*test, BitFlipOptions{7, 0.01, 0}, &a);
    auto f2 = inject_bit_flips(*test, BitFlipOptions{7, 0.01, 0}, &b);
    ASSERT_TRUE(f1.ok() && f2.ok());
    EXPECT_EQ(a, b);
    EXPECT_TRUE(edge::test::fails_with(inject_bit_flips(*test, BitFlipOptions{7, 0.01, 9}),
                                       {"output.weight", "bit 9 does not exist in 8-bit codes"}));
    EXPECT_TRUE(edge::test::fails_with(inject_bit_flips(*m, BitFlipOptions{}),
                                       {"the model holds no quantized weights to flip bits in"}));  // nothing quantized

    // A model poisoned with a NaN norm weight is caught per layer and fails the gate.
    Model bad = *m;
    Tensor& n = *bad.find_mut("blk.2.ffn_norm.weight");
    Tensor copy = Tensor::zeros_f32(n.name, n.shape);
    copy.f32_mut()[0] = std::nanf("");
    n = copy;
    auto rb = validate_quantized(ref, std::make_shared<const Model>(bad), *text, o);
    ASSERT_TRUE(rb.ok()) << rb.message();
    EXPECT_FALSE(rb->passed());
    bool named = false;
    for (const auto& f : rb->failures) named |= f.find("blk.2.ffn_gate") != std::string::npos;
    EXPECT_TRUE(named) << rb->to_table();
}
