// Screenshots of every studio page at 1600×1000 in English and Simplified Chinese with
// stories260K loaded: ${build}/screenshots/<lang>/<page>.png. Uses the X display when there is one
// (ctest runs inside xvfb-run), offscreen otherwise. Also checks the model page's pieces.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>
#include <QUndoStack>

#include "test_helpers.h"
#include "test_support.h"
#include "views/layer_chart.h"
#include "views/models/board_controller.h"
#include "views/models/configuration_model.h"
#include "views/models/job.h"
#include "views/models/language.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/pruning_model.h"
#include "views/models/telemetry_store.h"
#include "views/pages/boards_page.h"
#include "views/pages/layers_page.h"
#include "views/pages/model_page.h"
#include "views/pages/pareto_page.h"
#include "views/pages/pruning_page.h"
#include "views/pages/sensitivity_page.h"
#include "views/pages/validation_page.h"
#include "views/style.h"
#include "views/telemetry_chart.h"

#include <fstream>
#ifdef EDGE_HAVE_SSHD_FIXTURE
#include "remote_test_util.h"
#endif

#ifdef EDGE_HAVE_STUDIO_WINDOW
#include "app/studio/main_window.h"

using namespace edge::views;
using edge::studio::MainWindow;
using edge::views::test::waitUntil;

namespace {
void settle() {
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(30);
    }
}
}  // namespace

TEST(Screenshot, StudioPagesInEnglishAndChinese) {
    const QString model = edge::views::test::stories260kPath();
    EDGE_REQUIRE_SHARED(model.toStdString());
    applyStudioStyle(*qApp);
    Language language;
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    MainWindow window(&language);
    window.resize(1600, 1000);
    window.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));

    QSignalSpy changed(window.document(), &ModelDocument::modelChanged);
    window.openPath(model);
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1; }, 60000));
    window.modelPage()->selectLayer(QStringLiteral("blk.2.ffn_down"));
    EXPECT_EQ(window.modelPage()->chart()->selectedLayer(), QStringLiteral("blk.2.ffn_down"));
    // A mixed plan on the Layers page: INT4-AWQ everywhere, two layers at INT8, one pruned.
    LayersPage* layers = window.layersPage();
    LayerPlanModel* plan = layers->planModel();
    QList<int> all;
    for (int r = 0; r < plan->rowCount(); ++r) all << r;
    ASSERT_TRUE(plan->applyToRows(all, SettingPatch{edge::quant::Precision::INT4, PlanMethod::AWQ, 32, true, {}}));
    const QList<int> int8{plan->rowOfLayer(QStringLiteral("blk.0.attn_v")),
                          plan->rowOfLayer(QStringLiteral("blk.4.ffn_down"))};
    ASSERT_TRUE(plan->applyToRows(int8, SettingPatch{edge::quant::Precision::INT8, PlanMethod::GPTQ, 0, true, {}}));
    ASSERT_TRUE(
        plan->applyToRows({plan->rowOfLayer(QStringLiteral("blk.2.ffn_up"))}, SettingPatch{{}, {}, {}, {}, 0.25}));
    layers->selectLayers({QStringLiteral("blk.0.attn_v"), QStringLiteral("blk.4.ffn_down")});

    // Real data for the Sensitivity, Validation and Pareto pages: the engine's per-layer INT4
    // sensitivity, and three validated configurations (the mixed plan, all INT8, all INT4 RTN).
    const QString text = QString::fromStdString(edge::test::shared("data/tinystories_sample.txt"));
    EDGE_REQUIRE_SHARED(text.toStdString());
    SensitivityPage* sens = window.sensitivityPage();
    sens->setTextPath(text);
    sens->run();
    ASSERT_TRUE(waitUntil([&] { return sens->model()->metricCount() > 0; }, 120000));
    sens->selectLayer(sens->model()->ranked(0).front());
    ValidationPage* validation = window.validationPage();
    validation->setTextPath(text);
    validation->setParts(4);
    ConfigurationModel* configs = window.configurations();
    auto validate = [&] {
        const int before = configs->rowCount();
        validation->run();
        return waitUntil([&] { return configs->rowCount() == before + 1; }, 150000);
    };
    ASSERT_TRUE(validate());
    ASSERT_TRUE(plan->applyToRows(all, SettingPatch{edge::quant::Precision::INT8, PlanMethod::RTN, 32, true, {}}));
    ASSERT_TRUE(validate());
    ASSERT_TRUE(plan->applyToRows(all, SettingPatch{edge::quant::Precision::INT4, PlanMethod::RTN, 32, true, {}}));
    ASSERT_TRUE(validate());
    plan->undoStack()->undo();
    plan->undoStack()->undo();
    EXPECT_EQ(plan->settings(), configs->at(0).settings);
    EXPECT_EQ(window.paretoPage()->pointCount(), 3);
    window.paretoPage()->selectRows({0, 2});
    // Size is the deterministic cost (latency on 2 shared cores is noisy): all three are on its frontier.
    window.paretoPage()->setCost(ConfigurationModel::Size);
    EXPECT_EQ(window.paretoPage()->frontRows().size(), 3u);
    EXPECT_GT(window.paretoPage()->diffModel()->differences(), 0);

    // The Pruning page: the real structured-pruning plan of stories260K at 25 % (magnitude), with
    // one MLP group edited to 50 %.
    PruningPage* pruning = window.pruningPage();
    ASSERT_TRUE(waitUntil([&] { return pruning->model()->hasReport(); }, 60000));
    pruning->setGlobalPercent(25);
    ASSERT_TRUE(waitUntil(
        [&] {
            return !pruning->job()->isRunning() &&
                   pruning->model()->report().params_after < pruning->model()->report().params_before;
        },
        60000));
    const int ffn1 = pruning->model()->rowOfLayer(QStringLiteral("blk.1.ffn"));
    ASSERT_TRUE(pruning->model()->setData(pruning->model()->index(ffn1, PruningModel::RatioColumn), 50.0));
    ASSERT_TRUE(
        waitUntil([&] { return !pruning->job()->isRunning() && pruning->model()->mask(ffn1).ratio() > 0.4; }, 60000));
    pruning->selectRow(pruning->model()->rowOfLayer(QStringLiteral("blk.0.attn")));

#ifdef EDGE_HAVE_SSHD_FIXTURE
    // The Boards page with real telemetry: the open model deployed with edge-agent to a loopback
    // sshd (an ssh config alias) and profiled through the agent.
    std::string why;
    auto sshd = edge::test::Sshd::start(&why);
    ASSERT_TRUE(sshd) << why;
    std::ofstream(sshd->dir / "known_hosts") << sshd->known_hosts_line() << "\n";
    std::ofstream(sshd->dir / "ssh_config")
        << "Host orin-nano-loopback\n  HostName 127.0.0.1\n  Port " << sshd->port << "\n  User " << sshd->user
        << "\n  IdentityFile " << sshd->client_key << "\n";
    QSettings().remove(QStringLiteral("boards/user"));
    BoardsPage* boards = window.boardsPage();
    boards->controller()->setKnownHostsFile(QString::fromStdString((sshd->dir / "known_hosts").string()));
    boards->controller()->setAgentPath(QStringLiteral(EDGE_AGENT_PATH));
    boards->reloadBoards(QString::fromStdString((sshd->dir / "ssh_config").string()));
    ASSERT_TRUE(boards->selectBoard(QStringLiteral("orin-nano-loopback")));
    boards->setFolder(QString::fromStdString((sshd->dir / "edgestudio").string()));
    EXPECT_EQ(boards->enginePath(), QFileInfo(model).canonicalFilePath());  // no "/../" in what the user reads
    QSignalSpy deployed(boards->controller(), &BoardController::deployed);
    QSignalSpy boardFailed(boards->controller(), &BoardController::failed);
    boards->deploy();
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + boardFailed.size() > 0; }, 120000));
    ASSERT_EQ(boardFailed.size(), 0) << boardFailed.front().at(2).toString().toStdString();
    QSignalSpy profiled(boards->controller(), &BoardController::profiled);
    boards->setPrompts({QStringLiteral("Once upon a time"), QStringLiteral("The little dog"),
                        QStringLiteral("Lily and Ben"), QStringLiteral("One day")});
    boards->setMaxTokens(200);
    boards->profile();
    ASSERT_TRUE(waitUntil([&] { return profiled.size() + boardFailed.size() > 0; }, 150000));
    ASSERT_EQ(boardFailed.size(), 0) << boardFailed.front().at(2).toString().toStdString();
    boards->setWindowSeconds(0);
    boards->refreshCharts();
    for (int c = 0; c < BoardsPage::ChartCount; ++c) EXPECT_GT(boards->chart(c)->totalPoints(), 0) << "chart " << c;
#endif

    const QString root = QString::fromStdString(edge::test::build_dir()) + QStringLiteral("/screenshots");
    for (const QString& lang : Language::available()) {
        ASSERT_TRUE(language.setLanguage(lang));
        const QString dir = root + QLatin1Char('/') + lang;
        ASSERT_TRUE(QDir().mkpath(dir));
        for (int page = 0; page < MainWindow::PageCount; ++page) {
            window.showPage(page);
            settle();
            const QImage shot = window.grab().toImage();
            EXPECT_EQ(shot.size(), QSize(1600, 1000) * window.devicePixelRatio());
            const QString file = dir + QLatin1Char('/') + MainWindow::pageKey(page) + QStringLiteral(".png");
            EXPECT_TRUE(shot.save(file)) << file.toStdString();
        }
    }
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
}

TEST(Screenshot, ModelPageWiresTreeChartAndErrors) {
    const QString model = edge::views::test::stories260kPath();
    EDGE_REQUIRE_SHARED(model.toStdString());
    Language language;
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    MainWindow window(&language);
    window.resize(1600, 1000);
    window.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
    QSignalSpy changed(window.document(), &ModelDocument::modelChanged);
    window.openPath(model);
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1; }, 60000));
    EXPECT_EQ(window.currentPage(), int(MainWindow::ModelPageIndex));

    // The chart draws one bar per layer from the loaded model's real sizes.
    ModelPage* page = window.modelPage();
    const auto& layers = window.document()->current()->layers;
    EXPECT_EQ(page->chart()->barCount(), int(layers.size()));
    EXPECT_EQ(page->chart()->barValue(QStringLiteral("blk.0.ffn_up")), double(layers[5].params));
    page->chart()->setMetric(LayerChart::Bytes);
    EXPECT_EQ(page->chart()->barValue(QStringLiteral("blk.0.ffn_up")), double(layers[5].bytes));
    // Tree selection drives the chart; a chart click drives the tree.
    page->selectLayer(QStringLiteral("blk.1.attn_k"));
    EXPECT_EQ(page->selectedLayer(), QStringLiteral("blk.1.attn_k"));
    EXPECT_EQ(page->chart()->selectedLayer(), QStringLiteral("blk.1.attn_k"));
    emit page->chart()->layerClicked(QStringLiteral("output"));
    EXPECT_EQ(page->selectedLayer(), QStringLiteral("output"));

    // A corrupt file: an error dialog with the engine's message, the model stays.
    const auto before = window.document()->current();
    const QString corrupt = QString::fromStdString((edge::test::temp_dir("views-shot") / "broken.gguf").string());
    QFile f(corrupt);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("GGUF\x03\x00\x00\x00", 8);
    f.close();
    QSignalSpy failed(window.document(), &ModelDocument::loadFailed);
    window.openPath(corrupt);
    ASSERT_TRUE(waitUntil([&] { return failed.size() == 1; }));
    auto* box = window.findChild<QMessageBox*>(QStringLiteral("loadError"));
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->text().contains(QStringLiteral("broken.gguf")));
    EXPECT_EQ(box->text(), failed.front().at(1).toString());
    EXPECT_EQ(window.document()->current(), before);
    EXPECT_EQ(page->chart()->barCount(), int(layers.size()));
    box->close();
}
#endif
