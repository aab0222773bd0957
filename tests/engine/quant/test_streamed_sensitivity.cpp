// Block-streamed layer sensitivity: the calibration tokens' states are carried through the blocks
// once, and each block's quantized-layer variants from the state before it, one block read at a
// time. The figures equal the whole-model path's (SensitivityOptions::whole_model_reference: every
// layer's variant of the model run from the first token through LlamaCpu) within 1e-6, and a
// lazily opened model never holds more than one block and the head as F32 weights.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "engine/model/weights.h"
#include "engine/quant/calib.h"
#include "engine/quant/sensitivity.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/common/model_loading.h"
#include "tests/common/test_support.h"

using edge::model::Model;
using edge::quant::layer_sensitivity;
using edge::quant::LayerSensitivity;
using edge::quant::SensitivityOptions;
using edge::tokenizer::make_tokenizer;

namespace edge {
namespace {

// The same layers in the same order, the same bytes, and every figure within 1e-6 (relative to
// the larger of 1 and the figure).
void expect_same(const std::vector<LayerSensitivity>& want, const std::vector<LayerSensitivity>& got) {
    ASSERT_EQ(want.size(), got.size());
    auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(a)); };
    for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(want[i].layer);
        EXPECT_EQ(want[i].layer, got[i].layer);
        EXPECT_EQ(want[i].kind, got[i].kind);
        EXPECT_EQ(want[i].block, got[i].block);
        EXPECT_EQ(want[i].shape, got[i].shape);
        EXPECT_EQ(want[i].bytes, got[i].bytes);
        EXPECT_TRUE(close(want[i].kl_mean, got[i].kl_mean)) << want[i].kl_mean << " vs " << got[i].kl_mean;
        EXPECT_TRUE(close(want[i].kl_max, got[i].kl_max)) << want[i].kl_max << " vs " << got[i].kl_max;
        EXPECT_TRUE(close(want[i].nll_delta, got[i].nll_delta)) << want[i].nll_delta << " vs " << got[i].nll_delta;
    }
}

Result<std::vector<LayerSensitivity>> whole_model(const Model& m, const std::vector<std::vector<int32_t>>& seqs) {
    SensitivityOptions o;
    o.threads = 2;
    o.whole_model_reference = true;
    return layer_sensitivity(m, seqs, o);
}

TEST(StreamedSensitivity, EqualsTheWholeModelPathOnStories260K) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const Model eager = test::load_or_die(path, false);
    const auto seqs = test::val_calibration(eager, 6, 64).sequences;
    ASSERT_FALSE(seqs.empty());
    auto want = whole_model(eager, seqs);
    ASSERT_TRUE(want.ok()) << want.message();
    ASSERT_EQ(want->size(), 36u);  // 5 blocks x 7 linears + the head
    double largest = 0;
    for (const auto& s : *want) largest = std::max(largest, s.kl_mean);
    EXPECT_GT(largest, 1e-4) << "the figures compared are not all zero";
    SensitivityOptions o;
    o.threads = 2;
    auto streamed = layer_sensitivity(eager, seqs, o);
    ASSERT_TRUE(streamed.ok()) << streamed.message();
    expect_same(*want, *streamed);
    const Model lazy = test::load_or_die(path, true);
    auto from_file = layer_sensitivity(lazy, seqs, o);
    ASSERT_TRUE(from_file.ok()) << from_file.message();
    expect_same(*want, *from_file);
    // Room for one block's variants at a time: a pass per block, the same figures.
    o.variant_state_bytes = 1;
    auto per_block = layer_sensitivity(lazy, seqs, o);
    ASSERT_TRUE(per_block.ok()) << per_block.message();
    expect_same(*want, *per_block);
}

// On a lazily opened 4-block F16 file (head untied, then tied to the embedding), the FP32 weights
// alive at any moment never exceed one block plus the head, and the figures equal the whole-model
// path's on the same file read eagerly.
TEST(StreamedSensitivity, ALazyModelHoldsOneBlockAndTheHeadAtMost) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const auto dir = test::temp_dir("streamed-sensitivity");
    for (bool tied : {false, true}) {
        SCOPED_TRACE(tied ? "tied head" : "own head");
        const std::string path = test::four_block_f16_gguf(dir, tied);
        ASSERT_FALSE(path.empty());
        const Model eager = test::load_or_die(path, false);
        const auto seqs = test::val_calibration(eager, 3, 40).sequences;
        ASSERT_FALSE(seqs.empty());
        const size_t one_block = model::largest_block_f32_bytes(eager);
        const size_t head = size_t(eager.output_head()->numel()) * 4;
        auto want = whole_model(eager, seqs);
        ASSERT_TRUE(want.ok()) << want.message();
        ASSERT_EQ(want->size(), 4u * 7u + 1u);

        const Model lazy = test::load_or_die(path, true);
        model::reset_f32_weight_peak();
        const size_t base = model::f32_weight_stats().live_bytes;
        SensitivityOptions o;
        o.threads = 2;
        auto got = layer_sensitivity(lazy, seqs, o);
        ASSERT_TRUE(got.ok()) << got.message();
        const size_t peak = model::f32_weight_stats().peak_bytes - base;
        EXPECT_GT(peak, one_block) << "a block and the head were read as F32";
        EXPECT_LE(peak, one_block + head + 64 * 64) << "one block " << one_block << ", head " << head;
        EXPECT_EQ(model::f32_weight_stats().live_bytes, base) << "every F32 copy let go at the end";
        expect_same(*want, *got);
    }
}

TEST(StreamedSensitivity, ShortSequencesAreRefused) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    const Model lazy = test::load_or_die(path, true);
    EXPECT_TRUE(test::fails_with(layer_sensitivity(lazy, {{1, 5}, {1}}), {"sensitivity sequence", "2 tokens"}));
    EXPECT_TRUE(test::fails_with(layer_sensitivity(lazy, {}), {"sensitivity", "at least one calibration sequence"}));
}

}  // namespace
}  // namespace edge
