// The Layers page's model, proxy and page on the real stories260K model: edits with validation,
// undo/redo, bulk edits, plan files, filter/sort, and the size estimate against the engine.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStyleOptionViewItem>
#include <QTableView>
#include <QUndoStack>

#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "test_helpers.h"
#include "test_support.h"
#include "views/models/layer_filter_model.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/pages/layer_delegate.h"
#include "views/pages/layers_page.h"

using namespace edge::views;
using edge::quant::Precision;

namespace {

constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

std::shared_ptr<const LoadedModel> stories() {
    static std::shared_ptr<const LoadedModel> cached = [] {
        auto m = edge::model::load_model(edge::views::test::stories260kPath().toStdString());
        if (!m.ok()) return std::shared_ptr<const LoadedModel>();
        auto l = std::make_shared<LoadedModel>();
        l->model = std::move(*m);
        l->layers = edge::model::list_layers(l->model);
        return std::shared_ptr<const LoadedModel>(l);
    }();
    return cached;
}

QString tempFile(const char* name) {
    return QString::fromStdString((edge::test::temp_dir("layer-plan") / name).string());
}

void writeFile(const QString& path, const QByteArray& text) {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(text);
}

QModelIndex cell(const LayerPlanModel& m, const char* layer, int column) {
    return m.index(m.rowOfLayer(QString::fromLatin1(layer)), column);
}

class LayerPlanTest : public ::testing::Test {
protected:
    void SetUp() override {
        EDGE_REQUIRE_SHARED(edge::views::test::stories260kPath().toStdString());
        ASSERT_TRUE(stories());
        model.setModel(stories());
        ASSERT_EQ(model.rowCount(), int(stories()->layers.size()));
    }
    LayerPlanModel model;
};

}  // namespace

TEST_F(LayerPlanTest, ModelAndProxyPassTheTester) {
    QAbstractItemModelTester tester(&model, kFatal);
    LayerFilterModel proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester proxyTester(&proxy, kFatal);
    proxy.sort(LayerPlanModel::BytesColumn, Qt::DescendingOrder);
    ASSERT_TRUE(model.applyToRows({0, 1, 2}, SettingPatch{Precision::INT4, PlanMethod::RTN, 32, true, 0.25}));
    proxy.setFilterText(QStringLiteral("ffn"));
    proxy.setKindFilter(QStringLiteral("ffn_up"));
    proxy.setBlockFilter(1);
    model.undoStack()->undo();
    model.undoStack()->redo();
    proxy.setFilterText(QString());
    proxy.setKindFilter(QString());
    proxy.setBlockFilter(LayerFilterModel::kAllBlocks);
    model.setModel(nullptr);
    model.setModel(stories());
    EXPECT_EQ(proxy.rowCount(), model.rowCount());
}

TEST_F(LayerPlanTest, EditsValidateAndUndoRestoresExactly) {
    const std::vector<LayerSetting> initial = model.settings();
    QSignalSpy totals(&model, &LayerPlanModel::totalsChanged);
    const uint64_t fp32Total = model.estimatedBytes();
    EXPECT_EQ(model.fp32Bytes(), fp32Total);  // stories260K is held in F32
    EXPECT_DOUBLE_EQ(model.averageBits(), 32.0);

    const QModelIndex prec = cell(model, "blk.0.ffn_up", LayerPlanModel::PrecisionColumn);
    ASSERT_TRUE(model.setData(prec, QStringLiteral("int4")));
    LayerSetting s = model.setting(prec.row());
    EXPECT_EQ(s.precision, Precision::INT4);
    EXPECT_EQ(s.method, PlanMethod::RTN);
    EXPECT_EQ(s.group, 32);
    EXPECT_EQ(totals.size(), 1);
    EXPECT_LT(model.estimatedBytes(), fp32Total);
    ASSERT_TRUE(model.setData(prec.siblingAtColumn(LayerPlanModel::MethodColumn), QStringLiteral("gptq")));
    ASSERT_TRUE(model.setData(prec.siblingAtColumn(LayerPlanModel::GroupColumn), 64));
    ASSERT_TRUE(model.setData(prec.siblingAtColumn(LayerPlanModel::SymmetricColumn), false));
    ASSERT_TRUE(model.setData(prec.siblingAtColumn(LayerPlanModel::PruningColumn), 0.3));
    const std::vector<LayerSetting> edited = model.settings();
    EXPECT_EQ(model.undoStack()->count(), 5);
    EXPECT_EQ(prec.siblingAtColumn(LayerPlanModel::MethodColumn).data().toString(), QStringLiteral("GPTQ"));

    // Impossible edits are refused with a reason and change nothing.
    const int64_t cols = rowLength(stories()->layers[size_t(prec.row())]);
    EXPECT_FALSE(model.setData(prec.siblingAtColumn(LayerPlanModel::GroupColumn), qlonglong(cols + 1)));
    EXPECT_TRUE(model.lastError().contains(QStringLiteral("larger than a row")));
    EXPECT_FALSE(model.setData(prec, QStringLiteral("int3")));
    EXPECT_FALSE(model.setData(prec.siblingAtColumn(LayerPlanModel::MethodColumn), QStringLiteral("magic")));
    EXPECT_FALSE(model.setData(prec.siblingAtColumn(LayerPlanModel::PruningColumn), 1.5));
    EXPECT_FALSE(model.setData(prec.siblingAtColumn(LayerPlanModel::NameColumn), QStringLiteral("x")));
    const QModelIndex fp = cell(model, "blk.1.attn_q", LayerPlanModel::MethodColumn);
    EXPECT_FALSE(model.setData(fp, QStringLiteral("gptq")));  // FP32 takes no method
    EXPECT_FALSE(model.setData(fp.siblingAtColumn(LayerPlanModel::GroupColumn), 32));
    EXPECT_EQ(model.settings(), edited);
    EXPECT_EQ(model.undoStack()->count(), 5);

    // FP16 on a GPTQ layer: the method resets to none.
    ASSERT_TRUE(model.setData(prec, QStringLiteral("fp16")));
    EXPECT_EQ(model.setting(prec.row()).method, PlanMethod::None);
    EXPECT_EQ(model.setting(prec.row()).pruning, 0.3);
    EXPECT_EQ(prec.siblingAtColumn(LayerPlanModel::MethodColumn).data().toString(), QStringLiteral("—"));

    model.undoStack()->undo();
    EXPECT_EQ(model.settings(), edited);
    while (model.undoStack()->canUndo()) model.undoStack()->undo();
    EXPECT_EQ(model.settings(), initial);
    EXPECT_EQ(model.estimatedBytes(), fp32Total);
    for (int i = 0; i < 5; ++i) model.undoStack()->redo();
    EXPECT_EQ(model.settings(), edited);
}

TEST_F(LayerPlanTest, BulkEditIsOneUndoStepAndAllOrNothing) {
    const std::vector<LayerSetting> initial = model.settings();
    QList<int> all;
    for (int r = 0; r < model.rowCount(); ++r) all << r;
    ASSERT_TRUE(model.applyToRows(all, SettingPatch{Precision::INT4, PlanMethod::AWQ, 32, true, {}}));
    EXPECT_EQ(model.undoStack()->count(), 1);
    for (int r = 0; r < model.rowCount(); ++r) {
        EXPECT_EQ(model.setting(r).precision, Precision::INT4);
        // A tied output head cannot take AWQ: the bulk edit gives it RTN.
        const bool tiedOut = isTiedOutput(stories()->model, stories()->layers[size_t(r)]);
        EXPECT_EQ(model.setting(r).method, tiedOut ? PlanMethod::RTN : PlanMethod::AWQ);
    }
    EXPECT_NEAR(model.averageBits(), 4.0 + 16.0 / 32.0, 0.3);  // codes + one half scale per 32 (+ row padding)
    const std::vector<LayerSetting> int4 = model.settings();

    // A group larger than some rows: refused as a whole.
    EXPECT_FALSE(model.applyToRows(all, SettingPatch{Precision::INT8, PlanMethod::RTN, 100000, {}, {}}));
    EXPECT_FALSE(model.lastError().isEmpty());
    EXPECT_EQ(model.settings(), int4);
    EXPECT_EQ(model.undoStack()->count(), 1);

    // FP16 with GPTQ: method reset to none, one step.
    ASSERT_TRUE(model.applyToRows({0, 3}, SettingPatch{Precision::FP16, PlanMethod::GPTQ, {}, {}, {}}));
    EXPECT_EQ(model.setting(3).method, PlanMethod::None);
    EXPECT_EQ(model.undoStack()->count(), 2);
    model.undoStack()->undo();
    EXPECT_EQ(model.settings(), int4);
    model.undoStack()->undo();
    EXPECT_EQ(model.settings(), initial);
}

TEST_F(LayerPlanTest, PlanFileRoundTripsAndBadFilesChangeNothing) {
    ASSERT_TRUE(model.applyToRows({0, 1, 2, 3}, SettingPatch{Precision::INT8, PlanMethod::GPTQ, 0, true, 0.5}));
    ASSERT_TRUE(model.applyToRows({4, 5}, SettingPatch{Precision::INT4, PlanMethod::RTN, 64, false, {}}));
    ASSERT_TRUE(model.applyToRows({6}, SettingPatch{Precision::FP16, {}, {}, {}, 0.2}));
    const std::vector<LayerSetting> saved = model.settings();
    const QString path = tempFile("roundtrip.plan.json");
    ASSERT_TRUE(model.savePlan(path)) << model.lastError().toStdString();
    // The file is an engine plan.
    auto plan = edge::quant::load_plan(path.toStdString());
    ASSERT_TRUE(plan.ok()) << plan.message();
    ASSERT_TRUE(edge::quant::resolve_plan(stories()->model, *plan).ok());

    model.setModel(stories());
    ASSERT_NE(model.settings(), saved);
    ASSERT_TRUE(model.loadPlan(path)) << model.lastError().toStdString();
    EXPECT_EQ(model.settings(), saved);
    EXPECT_EQ(model.undoStack()->count(), 1);  // opening a plan is one undo step

    struct Bad {
        const char* name;
        QByteArray text;
        const char* problem;
    };
    const Bad bad[] = {
        {"garbage.plan.json", "{ not json", "not valid JSON"},
        {"unknown.plan.json", R"({"version": 1, "layers": {"blk.99.attn_q": {"precision": "int8"}}})", "blk.99.attn_q"},
        {"group.plan.json", R"({"version": 1, "default": {"precision": "int4", "group_size": 100000}})",
         "larger than a row"},
        {"version.plan.json", R"({"version": 7})", "version"},
        {"prune.plan.json", R"({"version": 1, "prune": {"layers": {"blk.0.attn_q": 3.0}}})", "pruning"},
    };
    for (const Bad& b : bad) {
        const QString p = tempFile(b.name);
        writeFile(p, b.text);
        EXPECT_FALSE(model.loadPlan(p)) << b.name;
        EXPECT_TRUE(model.lastError().contains(QString::fromLatin1(b.name))) << model.lastError().toStdString();
        EXPECT_TRUE(model.lastError().contains(QString::fromLatin1(b.problem))) << model.lastError().toStdString();
        EXPECT_EQ(model.settings(), saved);
        EXPECT_EQ(model.undoStack()->count(), 1);
    }
    EXPECT_FALSE(model.loadPlan(tempFile("missing.plan.json")));
    EXPECT_TRUE(model.lastError().contains(QStringLiteral("missing.plan.json")));
    EXPECT_EQ(model.settings(), saved);
}

TEST_F(LayerPlanTest, ProxyFiltersAndSortsNumerically) {
    LayerFilterModel proxy;
    proxy.setSourceModel(&model);
    proxy.setFilterText(QStringLiteral("FFN_DOWN"));
    const int blocks = stories()->model.config.n_layers;
    EXPECT_EQ(proxy.rowCount(), blocks);
    proxy.setFilterText(QString());
    proxy.setKindFilter(QStringLiteral("attn_q"));
    EXPECT_EQ(proxy.rowCount(), blocks);
    proxy.setKindFilter(QString());
    proxy.setBlockFilter(0);
    EXPECT_EQ(proxy.rowCount(), 7);
    proxy.setBlockFilter(-1);
    EXPECT_EQ(proxy.index(0, 0).data().toString(), QStringLiteral("output"));
    proxy.setBlockFilter(LayerFilterModel::kAllBlocks);

    for (int column : {int(LayerPlanModel::ParamsColumn), int(LayerPlanModel::BytesColumn)}) {
        proxy.sort(column, Qt::DescendingOrder);
        for (int r = 1; r < proxy.rowCount(); ++r)
            EXPECT_GE(proxy.index(r - 1, column).data(LayerPlanModel::SortRole).toLongLong(),
                      proxy.index(r, column).data(LayerPlanModel::SortRole).toLongLong());
    }
    // Numbers, not text: the largest layer (the output / embedding) comes first.
    proxy.sort(LayerPlanModel::ParamsColumn, Qt::DescendingOrder);
    EXPECT_EQ(proxy.index(0, 0).data().toString(), QStringLiteral("output"));
}

// The estimate is the exact quantized layout: it must equal what apply_plan produces.
TEST_F(LayerPlanTest, EstimateMatchesApplyPlanForUniformInt4) {
    QList<int> all;
    for (int r = 0; r < model.rowCount(); ++r) all << r;
    ASSERT_TRUE(model.applyToRows(all, SettingPatch{Precision::INT4, PlanMethod::RTN, 32, true, {}}));
    auto result = edge::quant::apply_plan(stories()->model, edge::quant::uniform_plan(Precision::INT4), nullptr);
    ASSERT_TRUE(result.ok()) << result.message();
    ASSERT_EQ(result->layers.size(), size_t(model.rowCount()));
    uint64_t engine = 0;
    for (const auto& report : result->layers) {
        const int r = model.rowOfLayer(QString::fromStdString(report.layer));
        ASSERT_GE(r, 0) << report.layer;
        EXPECT_EQ(model.rowBytes(r), report.bytes_after) << report.layer;
        engine += report.bytes_after;
    }
    EXPECT_EQ(model.estimatedBytes(), engine);
}

TEST_F(LayerPlanTest, PageBulkEditUndoAndFooter) {
    ModelDocument document;
    LayersPage page(&document);
    document.setModel(stories()->model, edge::views::test::stories260kPath());
    ASSERT_EQ(page.planModel()->rowCount(), model.rowCount());
    const QString before = page.footer()->text();
    page.selectLayers({QStringLiteral("blk.0.attn_q"), QStringLiteral("blk.1.ffn_up")});
    EXPECT_EQ(page.selectedRows().size(), 2);
    page.setBulkChoice(QStringLiteral("int8"), QStringLiteral("gptq"), 0);
    ASSERT_TRUE(page.applyBulkEdit());
    LayerPlanModel* m = page.planModel();
    EXPECT_EQ(m->setting(m->rowOfLayer(QStringLiteral("blk.1.ffn_up"))).method, PlanMethod::GPTQ);
    EXPECT_EQ(m->setting(m->rowOfLayer(QStringLiteral("blk.1.ffn_up"))).group, 0);
    EXPECT_NE(page.footer()->text(), before);
    ASSERT_TRUE(page.undoAction()->isEnabled());
    page.undoAction()->trigger();
    EXPECT_EQ(page.footer()->text(), before);
    EXPECT_EQ(m->setting(m->rowOfLayer(QStringLiteral("blk.0.attn_q"))).precision, Precision::FP32);
    page.redoAction()->trigger();
    EXPECT_EQ(m->setting(m->rowOfLayer(QStringLiteral("blk.0.attn_q"))).precision, Precision::INT8);
}

TEST_F(LayerPlanTest, DelegateOffersTheModelsChoicesAndCommitsThem) {
    LayerDelegate delegate;
    QWidget parent;
    const QModelIndex prec = cell(model, "blk.0.ffn_down", LayerPlanModel::PrecisionColumn);
    std::unique_ptr<QWidget> editor(delegate.createEditor(&parent, QStyleOptionViewItem(), prec));
    auto* combo = qobject_cast<QComboBox*>(editor.get());
    ASSERT_NE(combo, nullptr);
    EXPECT_EQ(combo->count(), 4);
    delegate.setEditorData(combo, prec);
    EXPECT_EQ(combo->currentData().toString(), QStringLiteral("fp32"));
    combo->setCurrentIndex(combo->findData(QStringLiteral("int8")));
    delegate.setModelData(combo, &model, prec);
    EXPECT_EQ(model.setting(prec.row()).precision, Precision::INT8);

    // Group choices never exceed the row; per channel is always offered.
    const QModelIndex group = prec.siblingAtColumn(LayerPlanModel::GroupColumn);
    std::unique_ptr<QWidget> groupEditor(delegate.createEditor(&parent, QStyleOptionViewItem(), group));
    auto* groups = qobject_cast<QComboBox*>(groupEditor.get());
    ASSERT_NE(groups, nullptr);
    EXPECT_GE(groups->findData(qlonglong(0)), 0);
    for (int i = 0; i < groups->count(); ++i)
        EXPECT_LE(groups->itemData(i).toLongLong(), rowLength(stories()->layers[size_t(prec.row())]));

    const QModelIndex pruning = prec.siblingAtColumn(LayerPlanModel::PruningColumn);
    std::unique_ptr<QWidget> spinEditor(delegate.createEditor(&parent, QStyleOptionViewItem(), pruning));
    auto* spin = qobject_cast<QSpinBox*>(spinEditor.get());
    ASSERT_NE(spin, nullptr);
    spin->setValue(40);
    delegate.setModelData(spin, &model, pruning);
    EXPECT_DOUBLE_EQ(model.setting(prec.row()).pruning, 0.4);
    EXPECT_EQ(model.undoStack()->count(), 2);
}
