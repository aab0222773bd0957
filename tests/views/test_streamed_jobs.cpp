// The studio's engine jobs on a model opened as the studio opens one (lazily: no weight read at
// open): validation (the reference as stored, the plan applied block by block, GPTQ included) and
// sensitivity (block by block) never hold more than one block and the head of FP32 weights - the
// counter in engine/model/weights.h says so - whatever the model's size.
#include <gtest/gtest.h>

#include "engine/model/ir.h"
#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "engine/model/weights.h"
#include "test_helpers.h"
#include "tests/common/test_support.h"
#include "views/models/model_document.h"
#include "views/models/sensitivity_model.h"
#include "views/models/validation_run.h"

using namespace edge::views;
using edge::quant::Precision;

namespace {

struct Opened {
    std::shared_ptr<const LoadedModel> model;
    size_t one_block = 0, head = 0;
};

// A 4-block stories260K-shaped F16 GGUF, opened lazily as the studio opens it.
Opened openSynth(const std::filesystem::path& dir) {
    edge::model::SynthOptions o;
    o.config = edge::model::find_synth_shape("stories260k")->config;
    o.config->n_layers = 4;
    o.path = (dir / "model.gguf").string();
    o.type = edge::DType::F16;
    o.threads = 2;
    EXPECT_TRUE(edge::model::write_synth_model(o).ok());
    edge::model::LoadOptions lo;
    lo.lazy_weights = true;
    auto m = edge::model::load_model(o.path, lo);
    EXPECT_TRUE(m.ok()) << m.message();
    Opened out;
    if (!m.ok()) return out;
    out.one_block = edge::model::largest_block_f32_bytes(*m);
    out.head = size_t(m->output_head()->numel()) * 4;
    auto l = std::make_shared<LoadedModel>();
    l->model = std::move(m).value();
    l->layers = edge::model::list_layers(l->model);
    out.model = l;
    return out;
}

}  // namespace

TEST(StreamedJobs, ValidationAndSensitivityHoldOneBlockOfFp32Weights) {
    const QString text = QString::fromStdString(edge::test::shared("data/tinystories_sample.txt"));
    EDGE_REQUIRE_SHARED(text.toStdString());
    const Opened o = openSynth(edge::test::temp_dir("views-streamed-jobs"));
    ASSERT_TRUE(o.model);
    ASSERT_FALSE(edge::model::weights_resident(o.model->model));
    const size_t limit = o.one_block + o.head + 4096;  // + the final norm

    // INT4 RTN everywhere, GPTQ on the FFN of the last block (calibration carried block by block).
    std::vector<LayerSetting> settings(o.model->layers.size());
    for (size_t i = 0; i < settings.size(); ++i) {
        settings[i].precision = Precision::INT4;
        settings[i].method = o.model->layers[i].name.rfind("blk.3.ffn", 0) == 0 ? PlanMethod::GPTQ : PlanMethod::RTN;
    }
    ValidationSettings vs;
    vs.textPath = text;
    vs.maxParts = 2;
    vs.maxTokens = 48;
    vs.bitflip = false;
    vs.jitterTokens = 4;
    vs.jitterRuns = 1;
    vs.calibSequences = 2;
    vs.calibLength = 32;
    edge::model::reset_f32_weight_peak();
    size_t base = edge::model::f32_weight_stats().live_bytes;
    auto v = runValidation(o.model, settings, vs, nullptr);
    ASSERT_TRUE(v.ok()) << v.message();
    EXPECT_GT(v->report.consistency.tokens, 0);
    size_t peak = edge::model::f32_weight_stats().peak_bytes - base;
    EXPECT_LE(peak, limit) << "validation: one block " << o.one_block << ", head " << o.head;
    EXPECT_FALSE(edge::model::weights_resident(o.model->model)) << "the open model stays unread";

    SensitivitySettings ss;
    ss.textPath = text;
    ss.maxParts = 2;
    ss.maxTokens = 32;
    edge::model::reset_f32_weight_peak();
    base = edge::model::f32_weight_stats().live_bytes;
    auto s = runSensitivity(o.model, ss, nullptr);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(s->size(), o.model->layers.size());
    peak = edge::model::f32_weight_stats().peak_bytes - base;
    EXPECT_GT(peak, o.one_block) << "a block and the head were read as F32";
    EXPECT_LE(peak, limit) << "sensitivity: one block " << o.one_block << ", head " << o.head;
}
