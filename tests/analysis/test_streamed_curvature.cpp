// The LibTorch sensitivity statistics block by block: gradient norms from a reverse pass over the
// blocks from their saved inputs, Hessian spectra from forward-over-reverse Hessian-vector
// products, one block's weights alive at a time. They equal the whole-model graph's
// (CurvatureOptions::whole_model_reference) on stories260K and on synthesized models with an own
// and a tied head, and a lazily opened model never holds more than one block and the head as F32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/analysis/torch_llama.h"
#include "engine/core/memory_budget.h"
#include "engine/model/ir.h"
#include "engine/model/weights.h"
#include "tests/common/model_loading.h"
#include "tests/common/test_support.h"

using edge::analysis::CurvatureOptions;
using edge::analysis::LayerCurvature;
using edge::analysis::torch_layer_curvature;
using edge::model::Model;

namespace edge {
namespace {

CurvatureOptions small_options() {
    CurvatureOptions o;
    o.topk = 2;
    o.lanczos_steps = 6;
    o.hessian_sequences = 2;
    o.seq_len = 24;
    o.batches = 2;
    o.batch_size = 2;
    o.threads = 1;  // at these sizes LibTorch's second thread only waits (OpenMP spinning)
    return o;
}

// Same layers, same order; gradient norms and eigenvalues within `tol` relative to the largest
// figure of their kind in the layer (float rounding: the two graphs sum the same products in
// different orders, and six Lanczos steps carry it into the Ritz values: 2.5e-6 at most seen).
void expect_same(const std::vector<LayerCurvature>& want, const std::vector<LayerCurvature>& got, double tol) {
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(want[i].layer);
        EXPECT_EQ(want[i].layer, got[i].layer);
        EXPECT_EQ(want[i].params, got[i].params);
        auto same = [tol](const std::vector<double>& a, const std::vector<double>& b) {
            ASSERT_EQ(a.size(), b.size());
            double scale = 0;
            for (double x : a) scale = std::max(scale, std::abs(x));
            for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], tol * scale) << "figure " << j;
        };
        same(want[i].grad_norms, got[i].grad_norms);
        same(want[i].eigenvalues, got[i].eigenvalues);
    }
}

TEST(StreamedCurvature, EqualsTheWholeModelGraphOnStories260K) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const Model m = test::load_or_die(path, false);
    const auto seqs = test::val_calibration(m, 4, 25).sequences;
    ASSERT_FALSE(seqs.empty());
    CurvatureOptions o = small_options();
    o.whole_model_reference = true;
    auto want = torch_layer_curvature(m, seqs, o);
    ASSERT_TRUE(want.ok()) << want.message();
    o.whole_model_reference = false;
    auto got = torch_layer_curvature(m, seqs, o);
    ASSERT_TRUE(got.ok()) << got.message();
    ASSERT_EQ(got->size(), model::list_layers(m).size());
    expect_same(*want, *got, 1e-5);
}

TEST(StreamedCurvature, ALazyModelHoldsOneBlockAndTheHeadAtMost) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    const auto dir = test::temp_dir("streamed-curvature");
    for (bool tied : {false, true}) {
        SCOPED_TRACE(tied ? "tied head" : "own head");
        const std::string path = test::four_block_f16_gguf(dir, tied);
        ASSERT_FALSE(path.empty());
        const Model eager = test::load_or_die(path, false);
        const auto seqs = test::val_calibration(eager, 3, 25).sequences;
        ASSERT_FALSE(seqs.empty());
        const size_t one_block = model::largest_block_f32_bytes(eager);
        const size_t head = size_t(eager.output_head()->numel()) * 4;
        CurvatureOptions o = small_options();
        o.whole_model_reference = true;
        auto want = torch_layer_curvature(eager, seqs, o);
        ASSERT_TRUE(want.ok()) << want.message();
        ASSERT_EQ(want->size(), 4u * 7u + 1u);

        const Model lazy = test::load_or_die(path, true);
        model::reset_f32_weight_peak();
        const size_t base = model::f32_weight_stats().live_bytes;
        o.whole_model_reference = false;
        auto got = torch_layer_curvature(lazy, seqs, o);
        ASSERT_TRUE(got.ok()) << got.message();
        const size_t peak = model::f32_weight_stats().peak_bytes - base;
        EXPECT_GT(peak, one_block) << "a block and the head were read as F32";
        // the final norm is the only other F32 weight held
        EXPECT_LE(peak, one_block + head + size_t(eager.config.dim) * 4)
            << "one block " << one_block << ", head " << head;
        EXPECT_EQ(model::f32_weight_stats().live_bytes, base) << "every F32 copy let go at the end";
        expect_same(*want, *got, 1e-5);
    }
}

TEST(StreamedCurvature, AJobThatWouldNotFitSaysSoFirst) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    const Model lazy = test::load_or_die(path, true);
    std::vector<std::vector<int32_t>> seqs{{1, 2, 3, 4, 5}, {1, 6, 7, 8}};
    set_memory_limit(uint64_t(64) << 10);
    auto r = torch_layer_curvature(lazy, seqs, small_options());
    set_memory_limit(std::nullopt);
    EXPECT_TRUE(test::fails_with(r, {"stories260K.gguf: sensitivity analysis", "one block and the head as F32",
                                     "--memory-limit", "shorter --seq-len"}));
}

}  // namespace
}  // namespace edge
