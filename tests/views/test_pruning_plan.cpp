// Issue 18: the Pruning page's ratios reach the plan and take effect. "Use in the plan" puts each
// group's ratio on its layers in the Layers plan (one undo step); the plan file carries them by
// group, which the CLI's compile reads; validation and the Pareto page's compile then prune the
// model first, so the engine has the shapes `edgestudio-cli prune --ratio 0.25` gives.
#include <gtest/gtest.h>

#include <QPushButton>
#include <QSignalSpy>
#include <QUndoStack>

#include <fstream>

#include "engine/compile/compile.h"
#include "engine/prune/structured.h"
#include "test_helpers.h"
#include "tests/common/test_support.h"
#include "views/models/configuration_model.h"
#include "views/models/job.h"
#include "views/models/language.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/pruning_model.h"
#include "views/pages/layers_page.h"
#include "views/pages/pareto_page.h"
#include "views/pages/pruning_page.h"
#include "views/pages/validation_page.h"

#if defined(EDGE_HAVE_STUDIO_WINDOW)
#include "app/studio/main_window.h"
#include "app/studio/project_controller.h"

using namespace edge::views;
using edge::studio::MainWindow;
using edge::views::test::waitUntil;

namespace {
int rowOf(LayerPlanModel* plan, const std::string& layer) {
    for (int r = 0; r < plan->rowCount(); ++r)
        if (plan->index(r, LayerPlanModel::NameColumn).data().toString().toStdString() == layer) return r;
    return -1;
}
}  // namespace

TEST(PruningInThePlan, ThePagesRatiosAreValidatedAndCompiledIntoThePrunedShapes) {
    const QString model = edge::views::test::stories260kPath();
    EDGE_REQUIRE_SHARED(model.toStdString());
    const QString text = QString::fromStdString(edge::test::shared("data/tinystories_sample.txt"));
    const auto tmp = edge::test::temp_dir("views-pruning-plan");
    Language language;
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    MainWindow window(&language, nullptr, QString::fromStdString((tmp / "autosave.edgeproj").string()));
    window.show();
    QSignalSpy changed(window.document(), &ModelDocument::modelChanged);
    window.openPath(model);
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1; }, 60000));

    // 25 % on the Pruning page, then "Use in the plan".
    PruningPage* page = window.pruningPage();
    page->setGlobalPercent(25);
    ASSERT_TRUE(waitUntil(
        [&] {
            return !page->job()->isRunning() && page->model()->hasReport() &&
                   page->model()->report().layers.front().removed() > 0;
        },
        60000));
    LayerPlanModel* plan = window.layersPage()->planModel();
    const int undoBefore = plan->undoStack()->count();
    page->usePlanButton()->click();
    EXPECT_EQ(plan->undoStack()->count(), undoBefore + 1) << "one undo step";
    for (const char* layer : {"blk.0.attn_q", "blk.0.attn_output", "blk.4.ffn_down"})
        EXPECT_DOUBLE_EQ(plan->setting(rowOf(plan, layer)).pruning, 0.25) << layer;
    EXPECT_DOUBLE_EQ(plan->setting(rowOf(plan, "output")).pruning, 0.0);
    // An edit of one layer's ratio is its group's.
    ASSERT_TRUE(plan->setData(plan->index(rowOf(plan, "blk.1.ffn_up"), LayerPlanModel::PruningColumn), 0.5));
    EXPECT_DOUBLE_EQ(plan->setting(rowOf(plan, "blk.1.ffn_gate")).pruning, 0.5);
    EXPECT_DOUBLE_EQ(plan->setting(rowOf(plan, "blk.1.attn_q")).pruning, 0.25);
    plan->undoStack()->undo();
    EXPECT_DOUBLE_EQ(plan->setting(rowOf(plan, "blk.1.ffn_gate")).pruning, 0.25);

    // The plan file says it by group, and the CLI's path prunes the same way from it.
    const std::vector<LayerSetting> settings = plan->settings();
    const QByteArray json = settingsToPlanJson(window.document()->current()->layers, settings);
    EXPECT_TRUE(json.contains("\"blk.0.attn\":0.25")) << json.toStdString();
    const std::string planPath = (tmp / "pruned.plan.json").string();
    std::ofstream(planPath) << json.toStdString();
    auto byFile = edge::prune::prune_with_plan(window.document()->current()->model, planPath);
    ASSERT_TRUE(byFile.ok()) << byFile.message();
    EXPECT_EQ(byFile->report.config_after, "dim 64, heads 6/3 kv, ffn 129");

    // Validation and the Pareto page's compile prune first.
    QSignalSpy added(window.validationPage(), &ValidationPage::configurationAdded);
    // Validation needs a quantized layer: INT8 RTN on the head.
    SettingPatch int8;
    int8.precision = edge::quant::Precision::INT8;
    int8.method = PlanMethod::RTN;
    ASSERT_TRUE(plan->applyToRows({rowOf(plan, "output")}, int8));
    window.validationPage()->setTextPath(text);
    window.validationPage()->setParts(2);
    window.validationPage()->run();
    ASSERT_TRUE(waitUntil([&] { return added.size() == 1; }, 180000));
    const Configuration& c = window.configurations()->at(added.front().at(0).toInt());
    EXPECT_DOUBLE_EQ(c.settings[size_t(rowOf(plan, "blk.2.ffn_up"))].pruning, 0.25);
    EXPECT_LT(c.bytes, c.fp32Bytes * 0.85) << "the pruned model is what was measured";
    QSignalSpy compiled(window.paretoPage(), &ParetoPage::engineCompiled);
    ASSERT_TRUE(window.paretoPage()->compileConfiguration(added.front().at(0).toInt(), QStringLiteral("cpu")));
    ASSERT_TRUE(waitUntil([&] { return compiled.size() == 1; }, 180000))
        << window.paretoPage()->compileMessage().toStdString();
    auto engine = edge::compile::load_engine(compiled.front().at(1).toString().toStdString());
    ASSERT_TRUE(engine.ok()) << engine.message();
    EXPECT_EQ(engine->file.model.config.n_kv_heads, 3);
    EXPECT_EQ(engine->file.model.config.hidden_dim, 129);
    window.project()->discardChanges();
    EXPECT_TRUE(window.close());
}
#endif
