// Block-streamed AWQ and GPTQ (apply_plan's calibrated path): the hidden states of the calibration
// tokens are carried from block to block, each block read as F32 when its turn comes. The tensors
// equal the whole-model path's (ApplyOptions::whole_model_reference: every weight read first, the
// model run from the first block for every capture) byte for byte, and a lazily opened model never
// has more than one block, or the embedding or head, alive as F32 weights.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/model/edgeq.h"
#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "engine/model/weights.h"
#include "engine/quant/apply.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/common/model_loading.h"
#include "tests/common/test_support.h"

using edge::model::block_of;
using edge::model::EdgeqWriter;
using edge::model::load_edgeq_model;
using edge::model::Model;
using edge::model::save_edgeq;
using edge::tokenizer::make_tokenizer;

namespace edge {
namespace {

// Every tensor of `want` in `got` with the same type, shape and bytes (a tensor `got` left unread,
// a layer kept at FP32 of a lazily opened model, is read for the comparison).
std::string same_tensors(const Model& want, const Model& got) {
    if (want.tensors.size() != got.tensors.size()) return "tensor counts differ";
    for (const Tensor& t : want.tensors) {
        const Tensor* g = got.find(t.name);
        if (!g) return t.name + " missing";
        Result<Tensor> read = Error{};
        if (model::is_unread(*g)) {
            read = model::weight_f32(got, *g);
            if (!read.ok()) return read.message();
            g = &*read;
        }
        if (g->type != t.type || g->shape != t.shape || g->nbytes != t.nbytes ||
            std::memcmp(g->raw(), t.raw(), t.nbytes) != 0)
            return t.name + " differs";
    }
    return {};
}

// AWQ everywhere, GPTQ everywhere, and a plan mixing both with RTN, FP16 and FP32 layers.
const char* const kPlans[] = {
    R"({"version":1,"default":{"precision":"int4","method":"awq","group_size":32}})",
    R"({"version":1,"default":{"precision":"int4","method":"gptq","group_size":32}})",
    R"({"version":1,"default":{"precision":"int8","method":"gptq","group_size":32},
        "layers":{"blk.0.attn_q":{"precision":"int4","method":"awq"},"blk.0.attn_k":{"precision":"int4","method":"awq"},
                  "blk.1.ffn_down":{"precision":"fp16"},"blk.2.attn_output":{"precision":"fp32"},
                  "blk.3.ffn_up":{"precision":"int4","method":"rtn"}}})",
};

// The oracle: the plan applied by reading the whole model and running it from block 0 for each
// block (ApplyOptions::whole_model_reference).
Result<quant::QuantizeResult> whole_model_reference(const Model& m, const quant::QuantPlan& plan,
                                                    const quant::CalibSet& calib) {
    quant::ApplyOptions ref;
    ref.whole_model_reference = true;
    return quant::apply_plan(m, plan, &calib, nullptr, ref);
}

TEST(StreamedCalibration, AwqAndGptqEqualTheWholeModelPathOnStories260K) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const Model eager = test::load_or_die(path, false);
    const quant::CalibSet calib = test::val_calibration(eager, 6, 64);
    ASSERT_FALSE(calib.sequences.empty());
    for (const char* text : kPlans) {
        SCOPED_TRACE(text);
        auto plan = quant::parse_plan(text);
        ASSERT_TRUE(plan.ok()) << plan.message();
        auto whole = whole_model_reference(eager, *plan, calib);
        ASSERT_TRUE(whole.ok()) << whole.message();
        auto streamed = quant::apply_plan(eager, *plan, &calib);
        ASSERT_TRUE(streamed.ok()) << streamed.message();
        EXPECT_EQ(same_tensors(whole->model, streamed->model), "");
        const Model lazy = test::load_or_die(path, true);
        auto from_file = quant::apply_plan(lazy, *plan, &calib);
        ASSERT_TRUE(from_file.ok()) << from_file.message();
        EXPECT_EQ(same_tensors(whole->model, from_file->model), "");
    }
}

// The FP32 weights alive at any moment of a streamed AWQ / GPTQ quantize of a lazily opened F16
// file never exceed one block plus the largest tensor outside the blocks (embedding or head), and
// the .edgeq written through the sink equals the whole-model result.
TEST(StreamedCalibration, ALazyModelHoldsOneBlockAsF32AndStreamsIntoTheEdgeq) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const auto dir = test::temp_dir("streamed-calib");
    const std::string path = test::four_block_f16_gguf(dir, false);
    ASSERT_FALSE(path.empty());
    const Model eager = test::load_or_die(path, false);
    const quant::CalibSet calib = test::val_calibration(eager, 4, 48);
    ASSERT_FALSE(calib.sequences.empty());
    const size_t one_block = model::largest_block_f32_bytes(eager);
    size_t outside = 0;
    for (const Tensor& t : eager.tensors)
        if (block_of(t.name) < 0) outside = std::max(outside, size_t(t.numel()) * 4);
    int plan_index = 0;
    for (const char* text : kPlans) {
        SCOPED_TRACE(text);
        auto plan = quant::parse_plan(text);
        ASSERT_TRUE(plan.ok()) << plan.message();
        auto whole = whole_model_reference(eager, *plan, calib);
        ASSERT_TRUE(whole.ok()) << whole.message();
        const std::string whole_path = (dir / ("whole" + std::to_string(plan_index) + ".edgeq")).string();
        ASSERT_TRUE(save_edgeq(whole->model, whole_path).ok());

        const Model lazy = test::load_or_die(path, true);
        const std::string sunk_path = (dir / ("sunk" + std::to_string(plan_index++) + ".edgeq")).string();
        auto w = EdgeqWriter::create(sunk_path);
        ASSERT_TRUE(w.ok()) << w.message();
        quant::ApplyOptions ao;
        ao.sink = [&](const Tensor& t) { return (*w)->add(t); };
        model::reset_f32_weight_peak();
        const size_t base = model::f32_weight_stats().live_bytes;
        auto q = quant::apply_plan(lazy, *plan, &calib, nullptr, ao);
        ASSERT_TRUE(q.ok()) << q.message();
        const size_t peak = model::f32_weight_stats().peak_bytes - base;
        EXPECT_GT(peak, 0u);
        EXPECT_LE(peak, one_block + outside) << "one block " << one_block << ", embedding/head " << outside;
        EXPECT_LT(peak, 2 * one_block + outside) << "never two blocks at once";
        for (const Tensor& t : q->model.tensors) EXPECT_FALSE(t.data) << t.name << " kept after it was written";
        ASSERT_TRUE((*w)->finish(q->model).ok());
        auto a = load_edgeq_model(whole_path);
        auto b = load_edgeq_model(sunk_path);
        ASSERT_TRUE(a.ok() && b.ok()) << a.message() << b.message();
        EXPECT_EQ(same_tensors(*a, *b), "");
    }
}

}  // namespace
}  // namespace edge
