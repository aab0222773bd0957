// Run-time language switch: the shipped translations load from the binary's resources and visible
// widgets retranslate themselves.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QApplication>
#include <QLabel>
#include <QTest>

#include "test_helpers.h"
#include "views/layer_chart.h"
#include "views/models/language.h"
#include "views/models/layer_tree_model.h"
#include "views/models/model_document.h"
#include "views/models/recent_files_model.h"
#include "views/pages/home_page.h"
#include "views/pages/model_page.h"

using namespace edge::views;

namespace {
bool hasLabel(QWidget* root, const QString& text) {
    for (QLabel* l : root->findChildren<QLabel*>())
        if (l->text() == text) return true;
    for (QAbstractButton* b : root->findChildren<QAbstractButton*>())
        if (b->text() == text) return true;
    return false;
}
}  // namespace

TEST(Language, ShipsEnglishAndSimplifiedChinese) {
    EXPECT_EQ(Language::available(), (QStringList{QStringLiteral("en"), QStringLiteral("zh_CN")}));
    EXPECT_EQ(Language::nativeName(QStringLiteral("zh_CN")), QStringLiteral("简体中文"));
    Language language;
    EXPECT_FALSE(language.setLanguage(QStringLiteral("xx")));
    EXPECT_EQ(language.current(), QStringLiteral("en"));
}

TEST(Language, SwitchRetranslatesVisibleWidgets) {
    Language language;
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    ModelDocument doc;
    ModelPage page(&doc);
    page.resize(1000, 700);
    page.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&page));
    EXPECT_TRUE(hasLabel(&page, QStringLiteral("No model loaded")));

    ASSERT_TRUE(language.setLanguage(QStringLiteral("zh_CN")));
    QCoreApplication::processEvents();
    EXPECT_EQ(language.current(), QStringLiteral("zh_CN"));
    EXPECT_FALSE(hasLabel(&page, QStringLiteral("No model loaded")));
    EXPECT_TRUE(hasLabel(&page, QStringLiteral("尚未加载模型")));
    EXPECT_EQ(page.layerModel()->headerData(LayerTreeModel::NameColumn, Qt::Horizontal).toString(),
              QStringLiteral("名称"));

    // With a model shown, the tree's group rows follow the language too.
    doc.setModel(edge::views::test::tinyModel(2, 8), QStringLiteral("/models/tiny.gguf"));
    const QModelIndex block = page.layerModel()->index(0, 0, page.layerModel()->index(0, 0));
    EXPECT_EQ(block.data().toString(), QStringLiteral("第 0 块"));

    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    QCoreApplication::processEvents();
    EXPECT_EQ(block.data().toString(), QStringLiteral("Block 0"));
    EXPECT_EQ(page.layerModel()->headerData(LayerTreeModel::NameColumn, Qt::Horizontal).toString(),
              QStringLiteral("Name"));
}

TEST(Language, HomePageFollowsTheSwitch) {
    Language language;
    RecentFilesModel recent;
    ModelDocument doc;
    HomePage home(&doc, &recent);
    home.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&home));
    ASSERT_TRUE(language.setLanguage(QStringLiteral("zh_CN")));
    QCoreApplication::processEvents();
    EXPECT_TRUE(hasLabel(&home, QStringLiteral("最近打开的模型")));
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    QCoreApplication::processEvents();
    EXPECT_TRUE(hasLabel(&home, QStringLiteral("Recent models")));
}
