// Item models: structure, values and QAbstractItemModelTester on a hand-built model and on the
// real model loaded through the engine.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include "test_helpers.h"
#include "test_support.h"
#include "views/models/format.h"
#include "views/models/layer_tree_model.h"
#include "views/models/model_document.h"
#include "views/models/recent_files_model.h"
#include "views/models/summary_model.h"

using namespace edge::views;
using edge::views::test::tinyModel;

namespace {
std::shared_ptr<const LoadedModel> loaded(edge::model::Model m) {
    auto l = std::make_shared<LoadedModel>();
    l->model = std::move(m);
    l->layers = edge::model::list_layers(l->model);
    return l;
}
constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;
}  // namespace

TEST(LayerTreeModel, GroupsLayersUnderBlocksWithSums) {
    LayerTreeModel model;
    QAbstractItemModelTester tester(&model, kFatal);
    EXPECT_EQ(model.rowCount(), 0);
    model.setModel(loaded(tinyModel(2, 8)));
    ASSERT_EQ(model.rowCount(), 1);  // the model
    const QModelIndex top = model.index(0, 0);
    EXPECT_EQ(top.data().toString(), QStringLiteral("tiny"));
    ASSERT_EQ(model.rowCount(top), 3);  // blk.0, blk.1, output
    const QModelIndex b1 = model.index(1, 0, top);
    EXPECT_EQ(b1.data().toString(), QStringLiteral("Block 1"));
    ASSERT_EQ(model.rowCount(b1), 7);
    const QModelIndex q = model.index(0, 0, b1);
    EXPECT_EQ(q.data(LayerTreeModel::LayerNameRole).toString(), QStringLiteral("blk.1.attn_q"));
    EXPECT_EQ(q.siblingAtColumn(LayerTreeModel::KindColumn).data().toString(), QStringLiteral("attn_q"));
    EXPECT_EQ(q.siblingAtColumn(LayerTreeModel::ShapeColumn).data().toString(), QStringLiteral("8 × 8"));
    EXPECT_EQ(q.siblingAtColumn(LayerTreeModel::ParamsColumn).data(LayerTreeModel::SortRole).toLongLong(), 64);
    EXPECT_EQ(q.siblingAtColumn(LayerTreeModel::BytesColumn).data(LayerTreeModel::SortRole).toULongLong(), 256u);
    EXPECT_EQ(q.siblingAtColumn(LayerTreeModel::TypeColumn).data().toString(), QStringLiteral("F32"));
    // Block sum: q,k,v,o 4*64 + gate,up,down 3*128 = 640 parameters.
    EXPECT_EQ(b1.siblingAtColumn(LayerTreeModel::ParamsColumn).data(LayerTreeModel::SortRole).toLongLong(), 640);
    const QModelIndex out = model.index(2, 0, top);
    EXPECT_EQ(out.data(LayerTreeModel::LayerNameRole).toString(), QStringLiteral("output"));
    EXPECT_EQ(model.parent(q), b1);
    EXPECT_EQ(model.parent(b1), top);
    EXPECT_EQ(model.indexOfLayer(QStringLiteral("blk.1.attn_q")), q);
    EXPECT_FALSE(model.indexOfLayer(QStringLiteral("blk.9.attn_q")).isValid());
    model.retranslate();
    model.setModel(nullptr);
    EXPECT_EQ(model.rowCount(), 0);
}

TEST(SummaryModel, ShowsConfigAndCounts) {
    SummaryModel model;
    QAbstractItemModelTester tester(&model, kFatal);
    model.setModel(loaded(tinyModel(3, 8)));
    EXPECT_GT(model.rowCount(), 15);
    EXPECT_EQ(model.value(QStringLiteral("Decoder blocks")), QStringLiteral("3"));
    EXPECT_EQ(model.value(QStringLiteral("Embedding width")), QStringLiteral("8"));
    EXPECT_EQ(model.value(QStringLiteral("Source format")), QStringLiteral("synth"));
    EXPECT_TRUE(model.value(QStringLiteral("Type")).startsWith(QStringLiteral("none")));
    EXPECT_TRUE(model.index(0, 0).data(SummaryModel::IsSectionRole).toBool());
    model.retranslate();
    model.setModel(nullptr);
    EXPECT_EQ(model.rowCount(), 0);
}

TEST(RecentFilesModel, MostRecentFirstBoundedAndPersisted) {
    {
        RecentFilesModel model;
        QAbstractItemModelTester tester(&model, kFatal);
        model.clear();
        for (int i = 0; i < 12; ++i) model.add(QStringLiteral("/models/m%1.gguf").arg(i));
        EXPECT_EQ(model.rowCount(), RecentFilesModel::kMaxEntries);
        EXPECT_EQ(model.paths().front(), QStringLiteral("/models/m11.gguf"));
        model.add(QStringLiteral("/models/m5.gguf"));
        EXPECT_EQ(model.paths().front(), QStringLiteral("/models/m5.gguf"));
        EXPECT_EQ(model.rowCount(), RecentFilesModel::kMaxEntries);
        model.remove(QStringLiteral("/models/m11.gguf"));
        EXPECT_EQ(model.rowCount(), RecentFilesModel::kMaxEntries - 1);
        EXPECT_EQ(model.index(0).data(RecentFilesModel::PathRole).toString(), QStringLiteral("/models/m5.gguf"));
    }
    RecentFilesModel again;  // read back from QSettings
    EXPECT_EQ(again.paths().front(), QStringLiteral("/models/m5.gguf"));
    again.clear();
    EXPECT_EQ(RecentFilesModel().rowCount(), 0);
}

TEST(ItemModels, TesterPassesOnTheRealModel) {
    const QString path = edge::views::test::realModelPath();
    EDGE_REQUIRE_SHARED(path.toStdString());
    ModelDocument doc;
    LayerTreeModel layers;
    SummaryModel summary;
    RecentFilesModel recent;
    QAbstractItemModelTester t1(&layers, kFatal), t2(&summary, kFatal), t3(&recent, kFatal);
    QObject::connect(&doc, &ModelDocument::modelChanged, &layers, [&] {
        layers.setModel(doc.current());
        summary.setModel(doc.current());
        recent.add(doc.path());
    });
    doc.open(path);
    ASSERT_TRUE(edge::views::test::waitUntil([&] { return doc.current() != nullptr; }));
    const auto& m = doc.current()->model;
    EXPECT_EQ(layers.rowCount(layers.index(0, 0)), m.config.n_layers + 1);  // blocks + output
    EXPECT_EQ(summary.value(QStringLiteral("Decoder blocks")), QString::number(m.config.n_layers));
    EXPECT_EQ(summary.value(QStringLiteral("Source format")), QStringLiteral("gguf"));
    const QModelIndex top = layers.index(0, 0);
    EXPECT_EQ(top.siblingAtColumn(LayerTreeModel::ParamsColumn).data(LayerTreeModel::SortRole).toLongLong(), [&] {
        int64_t sum = 0;
        for (const auto& l : doc.current()->layers) sum += l.params;
        return sum;
    }());
    layers.retranslate();
    summary.retranslate();
    recent.clear();
}

TEST(Format, NumbersShapesAndBytes) {
    EXPECT_EQ(groupedCount(6738415616), QStringLiteral("6\u2009738\u2009415\u2009616"));
    EXPECT_EQ(groupedCount(12), QStringLiteral("12"));
    EXPECT_EQ(compactCount(260000), QStringLiteral("260.0 K"));
    EXPECT_EQ(compactCount(6738415616), QStringLiteral("6.74 B"));
    EXPECT_EQ(humanBytes(1024 * 1024), QStringLiteral("1.00 MiB"));
    EXPECT_EQ(humanBytes(12), QStringLiteral("12 B"));
    EXPECT_EQ(shapeText({512, 64}), QStringLiteral("512 × 64"));
}
