// Layer-wise GPTQ (one block at a time, hidden states carried through the quantized blocks)
// gives exactly the tensors of whole-model GPTQ (apply_plan) on stories260K.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/quant/layerwise.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::Model;
using edge::tokenizer::make_tokenizer;

using namespace edge;
using namespace edge::quant;

namespace {

struct Fixture {
    Model model;
    CalibSet calib;
};

Fixture load(int n_seq, int seq_len) {
    Fixture f;
    auto m = load_model(edge::test::shared("models/stories260K/stories260K.gguf"));
    EXPECT_TRUE(m.ok()) << m.message();
    f.model = std::move(m).value();
    std::ifstream in(edge::test::shared("data/tinystories_val.txt"));
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str().substr(ss.str().size() / 2);  // second half, as the bench
    auto tok = make_tokenizer(f.model.tokenizer);
    EXPECT_TRUE(tok.ok()) << tok.message();
    auto c = calib_from_text(**tok, text, n_seq, seq_len);
    EXPECT_TRUE(c.ok()) << c.message();
    f.calib = std::move(c).value();
    return f;
}

}  // namespace

TEST(QuantLayerwise, EqualsWholeModelGptqByteForByte) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    EDGE_REQUIRE_SHARED(edge::test::shared("data/tinystories_val.txt"));
    const Fixture f = load(8, 64);
    for (bool act_order : {false, true}) {
        QuantPlan plan = uniform_plan(Precision::INT4, QMethod::GPTQ, 32, /*symmetric=*/false);
        plan.gptq.act_order = act_order;
        auto whole = apply_plan(f.model, plan, &f.calib, nullptr, ApplyOptions{2});
        ASSERT_TRUE(whole.ok()) << whole.message();

        LayerwiseOptions o;
        o.spec = QuantSpec{4, false, QGrouping::Group, 32, QMethod::GPTQ};
        o.gptq = plan.gptq;
        o.threads = 2;
        std::map<std::string, Tensor> got;
        auto r = gptq_layerwise(
            f.model, f.calib,
            [&](Tensor&& t) -> Status {
                got.emplace(t.name, std::move(t));
                return {};
            },
            o);
        ASSERT_TRUE(r.ok()) << r.message();
        EXPECT_EQ(r->blocks_done, f.model.config.n_layers);
        EXPECT_TRUE(r->head_done);
        ASSERT_EQ(got.size(), size_t(7 * f.model.config.n_layers + 1));
        int compared = 0;
        for (const auto& [name, t] : got) {
            const Tensor* w = whole->model.find(name);
            ASSERT_NE(w, nullptr) << name;
            ASSERT_EQ(w->type, DType::QI4) << name;
            ASSERT_EQ(t.type, DType::QI4) << name;
            ASSERT_EQ(w->nbytes, t.nbytes) << name;
            EXPECT_EQ(std::memcmp(w->data.get(), t.data.get(), t.nbytes), 0) << name << " act_order " << act_order;
            ++compared;
        }
        EXPECT_EQ(compared, 36);
    }
}

TEST(QuantLayerwise, StopsAfterTheAskedBlocksAndRefusesNonF32) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    EDGE_REQUIRE_SHARED(edge::test::shared("data/tinystories_val.txt"));
    Fixture f = load(4, 32);
    LayerwiseOptions o;
    o.max_blocks = 2;
    o.threads = 1;
    std::vector<std::string> names;
    auto r = gptq_layerwise(
        f.model, f.calib,
        [&](Tensor&& t) -> Status {
            names.push_back(t.name);
            return {};
        },
        o);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->blocks_done, 2);
    EXPECT_FALSE(r->head_done);
    EXPECT_EQ(names.size(), 14u);
    for (const auto& n : names) EXPECT_TRUE(n.rfind("blk.0.", 0) == 0 || n.rfind("blk.1.", 0) == 0) << n;

    auto q = apply_plan(f.model, uniform_plan(Precision::INT8), nullptr);
    ASSERT_TRUE(q.ok()) << q.message();
    auto bad = gptq_layerwise(
        q->model, f.calib, [](Tensor&&) -> Status { return {}; }, o);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("F32"), std::string::npos) << bad.message();
    EXPECT_TRUE(edge::test::fails_with(gptq_layerwise(
                                           f.model, CalibSet{}, [](Tensor&&) -> Status { return {}; }, o),
                                       {"layer-wise GPTQ", "no calibration sequences"}));
}
