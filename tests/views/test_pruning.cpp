// The Pruning page on stories260K through the real structured-pruning engine: one row per group
// (KV heads and MLP channels of each block) checked by QAbstractItemModelTester, a global ratio and
// a per-group ratio edited in place re-plan as jobs, counts before/after, the mask view, and a
// ratio the engine refuses (a whole group) shown as an error with the previous plan kept.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>

#include "test_helpers.h"
#include "test_support.h"
#include "views/models/job.h"
#include "views/models/model_document.h"
#include "views/models/pruning_model.h"
#include "views/pages/pruning_mask_view.h"
#include "views/pages/pruning_page.h"

using namespace edge::views;
using edge::views::test::waitUntil;

TEST(PruningPage, MasksRatiosAndCountsOnStories260K) {
    const QString path = edge::views::test::stories260kPath();
    EDGE_REQUIRE_SHARED(path.toStdString());
    ModelDocument doc;
    PruningPage page(&doc);
    PruningModel* m = page.model();
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy loaded(&doc, &ModelDocument::modelChanged);
    doc.open(path);
    ASSERT_TRUE(waitUntil([&] { return loaded.size() == 1; }, 60000));
    ASSERT_TRUE(waitUntil([&] { return m->hasReport(); }, 60000));
    const int blocks = doc.current()->model.config.n_layers;
    ASSERT_EQ(m->rowCount(), 2 * blocks);
    EXPECT_EQ(m->index(0, PruningModel::LayerColumn).data().toString(), QStringLiteral("blk.0.attn"));
    EXPECT_EQ(m->index(1, PruningModel::LayerColumn).data().toString(), QStringLiteral("blk.0.ffn"));
    const int64_t before = m->report().params_before;
    EXPECT_EQ(m->report().params_after, before);  // nothing pruned yet
    EXPECT_TRUE(page.countsLabel()->text().contains(QStringLiteral("Nodes before")));

    // 25 % of every group: each group loses round(0.25 * units) units of the lowest magnitude.
    page.setGlobalPercent(25);
    ASSERT_TRUE(waitUntil([&] { return !page.job()->isRunning() && m->report().params_after < before; }, 60000));
    for (int r = 0; r < m->rowCount(); ++r) {
        const auto& mask = m->mask(r);
        EXPECT_EQ(mask.removed(), int64_t(std::llround(0.25 * double(mask.units)))) << mask.layer;
        EXPECT_EQ(int64_t(mask.kept_units().size()), mask.kept());
    }
    // One group edited in place to 50 %.
    const int ffn = m->rowOfLayer(QStringLiteral("blk.1.ffn"));
    ASSERT_GE(ffn, 0);
    const int64_t units = m->mask(ffn).units;
    ASSERT_TRUE(m->setData(m->index(ffn, PruningModel::RatioColumn), 50.0));
    ASSERT_TRUE(waitUntil(
        [&] { return !page.job()->isRunning() && m->mask(ffn).removed() == std::llround(0.5 * double(units)); },
        60000));
    EXPECT_EQ(m->mask(m->rowOfLayer(QStringLiteral("blk.2.ffn"))).removed(),
              std::llround(0.25 * double(m->mask(m->rowOfLayer(QStringLiteral("blk.2.ffn"))).units)));
    page.selectRow(ffn);
    EXPECT_EQ(page.maskView()->selected(), ffn);
    EXPECT_TRUE(page.detailLabel()->text().contains(QStringLiteral("blk.1.ffn")));
    const int64_t afterEdit = m->report().params_after;

    // 100 % would remove the whole group: refused with the engine's reason, the plan stays.
    ASSERT_TRUE(m->setData(m->index(ffn, PruningModel::RatioColumn), 100.0));
    ASSERT_TRUE(waitUntil([&] { return !page.job()->isRunning() && !page.messageLabel()->text().isEmpty(); }, 60000));
    EXPECT_TRUE(page.messageLabel()->text().contains(QStringLiteral("blk.1.ffn")))
        << page.messageLabel()->text().toStdString();
    EXPECT_EQ(m->report().params_after, afterEdit);
    EXPECT_FALSE(m->rules().contains(QStringLiteral("blk.1.ffn")));
    EXPECT_FALSE(m->setData(m->index(ffn, PruningModel::RatioColumn), 150.0));
}
