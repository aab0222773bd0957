// Issue 18, the studio's loop end to end through the real engine, a real sshd and the real agent:
// two configurations of stories260K validated (AWQ calibrated on text disjoint from what is
// scored), compiled from the Pareto page, deployed from the Boards page to a board that reports
// aarch64 (a `uname` first on its PATH) and runs what it receives under qemu-user, profiled there;
// the measurements come back to their configurations (matched by the engine's SHA-256) and the
// Pareto page draws them on the board's time per token; saved, closed and reopened, all of it is there.
// Each step is photographed in English and Simplified Chinese (shootStep).
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTest>

#include <fstream>

#include "test_helpers.h"
#include "test_support.h"
#include "views/models/autoplan_run.h"
#include "views/models/board_controller.h"
#include "views/models/board_costs.h"
#include "views/models/board_list_model.h"
#include "views/models/configuration_model.h"
#include "views/models/job.h"
#include "views/models/language.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/project.h"
#include "views/models/workload_list_model.h"
#include "views/pages/boards_page.h"
#include "views/pages/layers_page.h"
#include "views/pages/pareto_page.h"
#include "views/pages/sensitivity_page.h"
#include "views/pages/validation_page.h"

#if defined(EDGE_HAVE_STUDIO_WINDOW) && defined(EDGE_HAVE_SSHD_FIXTURE)
#include "app/studio/board_autoplan.h"
#include "app/studio/main_window.h"
#include "app/studio/project_controller.h"
#include "remote/client/board_agent.h"
#include "remote/client/sha256_file.h"
#include "remote_test_util.h"

using namespace edge::views;
using edge::quant::Precision;
using edge::studio::MainWindow;
using edge::views::test::failsWith;
using edge::views::test::succeeded;
using edge::views::test::waitUntil;
namespace fs = std::filesystem;

namespace {

std::string sha256(const QString& path) {
    auto d = edge::client::sha256_of_file(path.toStdString());
    return d.ok() ? edge::client::digest_hex(d.value()) : std::string();
}

// Acceptance 1's pictures: page `page` of the window as the user sees it at this step of the loop,
// in every language the studio ships, as ${build}/screenshots/loop/<lang>/<step>.png (the README's
// screenshots are copies from this run). The language is English again afterwards.
void shootStep(MainWindow& w, Language& language, int page, const QString& step) {
    const QString root = QString::fromStdString(edge::test::build_dir()) + QStringLiteral("/screenshots/loop");
    w.showPage(page);
    for (const QString& lang : Language::available()) {
        ASSERT_TRUE(language.setLanguage(lang));
        QTest::qWait(50);
        const QString dir = root + QLatin1Char('/') + lang;
        ASSERT_TRUE(QDir().mkpath(dir));
        const QString file = dir + QLatin1Char('/') + step + QStringLiteral(".png");
        EXPECT_TRUE(w.grab().toImage().save(file)) << file.toStdString();
    }
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    QTest::qWait(20);
}

// Validates the current Layers plan; returns the new configuration's row (-1 on failure).
int validate(MainWindow& w) {
    QSignalSpy added(w.validationPage(), &ValidationPage::configurationAdded);
    w.validationPage()->run();
    if (!waitUntil([&] { return added.size() == 1; }, 180000)) return -1;
    return added.front().at(0).toInt();
}

// Adds the sshd as a user board of the Boards page and selects it, as a user would in Add board;
// the error (empty when it worked).
QString addBoard(MainWindow& w, const edge::test::Sshd& sshd, const QString& name, const QString& folder,
                 const QString& launcher) {
    BoardsPage* boards = w.boardsPage();
    boards->controller()->setKnownHostsFile(QString::fromStdString(sshd.write_known_hosts()));
    boards->controller()->setAgentSearchDir(QStringLiteral(EDGE_FRONTEND_DIR));  // as the studio finds agents
    if (const auto r = boards->boards()->addUserBoard(
            name, QStringLiteral("%1@127.0.0.1:%2").arg(QString::fromStdString(sshd.user)).arg(sshd.port), folder,
            QString::fromStdString(sshd.client_key), launcher);
        !r)
        return r.message();
    boards->setFolder(folder);
    return boards->selectBoard(name) ? QString() : QStringLiteral("board %1 not in the list").arg(name);
}

// The state both failure tests start from: stories260K opened, every layer INT8 RTN, validated,
// compiled for the CPU, deployed to the sshd as board "lab-board" (folder dir/board) and profiled
// once, so configuration 0 has an engine and one board measurement. "" or what went wrong.
std::string measuredConfiguration(MainWindow& w, const QString& model, const QString& text,
                                  const edge::test::Sshd& sshd, const QString& dir) {
    QSignalSpy changed(w.document(), &ModelDocument::modelChanged);
    w.openPath(model);
    if (!waitUntil([&] { return changed.size() == 1; }, 60000)) return "the model did not open";
    LayerPlanModel* plan = w.layersPage()->planModel();
    QList<int> all;
    for (int r = 0; r < plan->rowCount(); ++r) all << r;
    SettingPatch int8;
    int8.precision = Precision::INT8;
    int8.method = PlanMethod::RTN;
    if (!plan->applyToRows(all, int8)) return "the plan was not applied";
    w.validationPage()->setTextPath(text);
    w.validationPage()->setParts(2);
    if (validate(w) != 0) return "validation did not add configuration 0";
    QSignalSpy compiled(w.paretoPage(), &ParetoPage::engineCompiled);
    if (!w.paretoPage()->compileConfiguration(0, QStringLiteral("cpu"))) return "compile did not start";
    if (!waitUntil([&] { return compiled.size() == 1; }, 180000))
        return "compile: " + w.paretoPage()->compileMessage().toStdString();
    BoardsPage* boards = w.boardsPage();
    BoardController* controller = boards->controller();
    const QString added = addBoard(w, sshd, QStringLiteral("lab-board"), dir + QStringLiteral("/board"), QString());
    if (!added.isEmpty()) return added.toStdString();
    boards->setPrompts({QStringLiteral("Once upon a time")});
    boards->setMaxTokens(16);
    QSignalSpy deployed(controller, &BoardController::deployed);
    QSignalSpy profiled(controller, &BoardController::profiled);
    QSignalSpy failed(controller, &BoardController::failed);
    boards->deploy();
    if (!waitUntil([&] { return deployed.size() + failed.size() > 0; }, 120000)) return "deploy did not end";
    if (failed.size() > 0) return "deploy: " + failed.front().at(2).toString().toStdString();
    boards->profile();
    if (!waitUntil([&] { return profiled.size() + failed.size() > 0; }, 120000)) return "profile did not end";
    if (failed.size() > 0) return "profile: " + failed.front().at(2).toString().toStdString();
    QCoreApplication::processEvents();
    if (w.configurations()->at(0).measurements.size() != 1) return "the measurement did not reach configuration 0";
    return "";
}

// What the failure tests start from: a studio window over its own loopback sshd and folder
// (tmp/board), configuration 0 measured on "lab-board" (measuredConfiguration); `error` says what
// went wrong on the way.
struct MeasuredStudio {
    explicit MeasuredStudio(const char* tag)
        : model(edge::views::test::stories260kPath()),
          text(QString::fromStdString(edge::test::shared("data/tinystories_sample.txt"))),
          tmp(edge::test::temp_dir(tag)),
          dir(QString::fromStdString(tmp.string())) {
        QSettings().remove(QStringLiteral("boards/user"));
        sshd = edge::test::Sshd::start(&error);
        if (!sshd) return;
        if (!language.setLanguage(QStringLiteral("en"))) {
            error = "the English translation did not load";
            return;
        }
        window = std::make_unique<MainWindow>(&language, nullptr, dir + QStringLiteral("/autosave.edgeproj"));
        window->show();
        error = measuredConfiguration(*window, model, text, *sshd, dir);
    }
    ~MeasuredStudio() { QSettings().remove(QStringLiteral("boards/user")); }
    QString model, text;
    fs::path tmp;
    QString dir;
    std::string error;
    std::unique_ptr<edge::test::Sshd> sshd;
    Language language;
    std::unique_ptr<MainWindow> window;
};

}  // namespace

TEST(StudioLoop, TwoConfigurationsCompiledDeployedToAnAarch64BoardProfiledAndOnPareto) {
    const QString model = edge::views::test::stories260kPath();
    EDGE_REQUIRE_SHARED(model.toStdString());
    const QString text = QString::fromStdString(edge::test::shared("data/tinystories_sample.txt"));
    EDGE_REQUIRE_SHARED(text.toStdString());
    QSettings().remove(QStringLiteral("boards/user"));
    const fs::path tmp = edge::test::temp_dir("studio-loop");
    const QString dir = QString::fromStdString(tmp.string());

    // The board: a loopback sshd whose `uname -m` says what the board is.
#if defined(EDGE_AARCH64_AGENT) && defined(EDGE_QEMU_AARCH64)
    const std::string machine = "aarch64";
    const QString launcher = QStringLiteral(EDGE_QEMU_AARCH64 " -L /usr/aarch64-linux-gnu");
    const std::string agent = EDGE_AARCH64_AGENT;
#else
    const std::string machine = edge::client::host_arch();
    const QString launcher;
    const std::string agent = EDGE_AGENT_PATH;
#endif
    std::string why;
    auto sshd = edge::test::Sshd::start_as_machine(&why, machine);
    ASSERT_TRUE(sshd) << why;

    Language language;
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    auto window = std::make_unique<MainWindow>(&language, nullptr, dir + QStringLiteral("/autosave.edgeproj"));
    window->resize(1600, 1000);
    window->show();
    QSignalSpy changed(window->document(), &ModelDocument::modelChanged);
    window->openPath(model);
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1; }, 60000));
    shootStep(*window, language, MainWindow::ModelPageIndex, QStringLiteral("01-model"));
    // Saved first, so engines go next to the project (loop.engines/).
    const QString project = dir + QStringLiteral("/loop.edgeproj");
    ASSERT_TRUE(window->saveProject(project));

    // Two plans: INT8 RTN everywhere, and INT4-AWQ g32 everywhere (calibrated).
    LayerPlanModel* plan = window->layersPage()->planModel();
    QList<int> all;
    for (int r = 0; r < plan->rowCount(); ++r) all << r;
    ValidationPage* validation = window->validationPage();
    validation->setTextPath(text);
    validation->setParts(2);
    SettingPatch int8;
    int8.precision = Precision::INT8;
    int8.method = PlanMethod::RTN;
    ASSERT_TRUE(plan->applyToRows(all, int8)) << plan->lastError().toStdString();
    shootStep(*window, language, MainWindow::LayersPageIndex, QStringLiteral("02-layers-int8"));
    const int c1 = validate(*window);
    ASSERT_EQ(c1, 0);
    SettingPatch int4;
    int4.precision = Precision::INT4;
    int4.method = PlanMethod::AWQ;
    int4.group = 32;
    ASSERT_TRUE(plan->applyToRows(all, int4)) << plan->lastError().toStdString();
    // Calibrated on k-means representatives of what is left of the sample (as calib-select chooses).
    validation->setCalibrationSelection(QStringLiteral("kmeans"), 2, 3);
    const int c2 = validate(*window);
    ASSERT_EQ(c2, 1);
    shootStep(*window, language, MainWindow::ValidationPageIndex, QStringLiteral("03-validation-int4-awq"));
    ConfigurationModel* configs = window->configurations();
    // AWQ calibrated on the sample minus the stories validation scored, and says so.
    EXPECT_TRUE(configs->at(c2).calibration.contains(QStringLiteral("also in the evaluation text were removed")))
        << configs->at(c2).calibration.toStdString();
    EXPECT_TRUE(configs->at(c2).calibration.contains(QStringLiteral("k-means chose 2 of 3 paragraphs (seed 3)")))
        << configs->at(c2).calibration.toStdString();
    EXPECT_EQ(configs->at(c2).calibSelect, QStringLiteral("kmeans"));
    EXPECT_TRUE(configs->at(c1).calibration.isEmpty());  // RTN needs no calibration

    // Compile both from the Pareto page.
    ParetoPage* pareto = window->paretoPage();
    for (int row : {c1, c2}) {
        QSignalSpy compiled(pareto, &ParetoPage::engineCompiled);
        ASSERT_TRUE(pareto->compileConfiguration(row, QStringLiteral("cpu"))) << pareto->compileMessage().toStdString();
        ASSERT_TRUE(waitUntil([&] { return compiled.size() == 1 || !pareto->compileJob()->isRunning(); }, 180000));
        ASSERT_EQ(compiled.size(), 1) << pareto->compileMessage().toStdString();
        const EngineArtifact* e = configs->at(row).engine(QStringLiteral("cpu"));
        ASSERT_NE(e, nullptr);
        EXPECT_TRUE(e->path.startsWith(dir + QStringLiteral("/loop.engines/"))) << e->path.toStdString();
        EXPECT_EQ(e->sha256.toStdString(), sha256(e->path));
    }
    EXPECT_NE(configs->at(c1).engine(QStringLiteral("cpu"))->sha256,
              configs->at(c2).engine(QStringLiteral("cpu"))->sha256);
    shootStep(*window, language, MainWindow::ParetoPageIndex, QStringLiteral("04-pareto-compiled"));

    // Deploy each to the board from the Boards page, then profile it there.
    BoardsPage* boards = window->boardsPage();
    BoardController* controller = boards->controller();
    const QString added =
        addBoard(*window, *sshd, QStringLiteral("emulated-orin"), dir + QStringLiteral("/board"), launcher);
    ASSERT_TRUE(added.isEmpty()) << added.toStdString();
    boards->setPrompts({QStringLiteral("Once upon a time"), QStringLiteral("Lily wanted")});
    boards->setMaxTokens(24);
    ASSERT_TRUE(boards->savePromptsAs(QStringLiteral("two stories")).ok());  // a named, saved workload
    for (int row : {c1, c2}) {
        const EngineArtifact e = *configs->at(row).engine(QStringLiteral("cpu"));
        boards->setEnginePath(e.path);
        QSignalSpy deployed(controller, &BoardController::deployed);
        QSignalSpy failed(controller, &BoardController::failed);
        boards->deploy();
        ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 0; }, 120000));
        ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
        EXPECT_EQ(controller->lastDeploy().engineSha256, e.sha256);
        EXPECT_EQ(controller->lastDeploy().agentSha256.toStdString(), sha256(QString::fromStdString(agent)))
            << "the agent sent is not the one built for " << machine;
        auto arch = edge::client::elf_arch((tmp / "board/current/edge-agent").string());
        ASSERT_TRUE(arch.ok()) << arch.message();
        EXPECT_EQ(arch.value(), machine);
        QSignalSpy profiled(controller, &BoardController::profiled);
        boards->profile();
        ASSERT_TRUE(waitUntil([&] { return profiled.size() + failed.size() > 0; }, 180000));
        ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
        QCoreApplication::processEvents();
        ASSERT_EQ(configs->at(row).measurements.size(), 1u) << "the board's measurement did not reach " << row;
        const BoardMeasurement& m = configs->at(row).measurements.back();
        EXPECT_EQ(m.board, QStringLiteral("emulated-orin"));
        EXPECT_EQ(m.engineSha256, e.sha256);
        EXPECT_EQ(m.workload, QStringLiteral("two stories"));
        EXPECT_GT(m.tpotP50Ms, 0.0);
        EXPECT_GE(m.tpotP99Ms, m.tpotP50Ms);
        EXPECT_GT(m.tokensPerS, 0.0);
        EXPECT_GT(m.peakRssMiB, 0.0);
    }

    shootStep(*window, language, MainWindow::BoardsPageIndex, QStringLiteral("05-boards-profiled"));
    // Pareto on the board's time per token: both points, named with their board.
    pareto->setCost(ConfigurationModel::BoardTpot);
    EXPECT_EQ(pareto->pointCount(), 2);
    window->showPage(MainWindow::ParetoPageIndex);
    QTest::qWait(50);
    pareto->plot()->replot();
    QTest::mouseMove(pareto->plot(), pareto->pointPosition(c2).toPoint());
    EXPECT_TRUE(pareto->hoverText().contains(QStringLiteral("on emulated-orin"))) << pareto->hoverText().toStdString();
    shootStep(*window, language, MainWindow::ParetoPageIndex, QStringLiteral("06-pareto-board-tpot"));
    QTest::mouseMove(pareto->plot(), pareto->pointPosition(c2).toPoint());
    // A point opens its configuration's plan in the Layers page.
    QTest::mouseClick(pareto->plot(), Qt::LeftButton, {}, pareto->pointPosition(c1).toPoint());
    EXPECT_EQ(window->currentPage(), int(MainWindow::LayersPageIndex));
    EXPECT_EQ(plan->setting(0).precision, Precision::INT8);

    // Saved, closed, reopened: engines and measurements are there.
    ASSERT_TRUE(window->saveProject(project));
    EXPECT_TRUE(window->close());
    window.reset();
    auto reopened = std::make_unique<MainWindow>(&language, nullptr, dir + QStringLiteral("/autosave.edgeproj"));
    reopened->resize(1600, 1000);
    reopened->show();
    QSignalSpy applied(reopened->project(), &edge::studio::ProjectController::applied);
    ASSERT_TRUE(reopened->openProject(project));
    ASSERT_TRUE(waitUntil([&] { return applied.size() == 1; }, 60000));
    ConfigurationModel* again = reopened->configurations();
    ASSERT_EQ(again->rowCount(), 2);
    for (int row : {c1, c2}) {
        ASSERT_NE(again->at(row).engine(QStringLiteral("cpu")), nullptr);
        ASSERT_EQ(again->at(row).measurements.size(), 1u);
        EXPECT_EQ(again->at(row).measurements[0].board, QStringLiteral("emulated-orin"));
    }
    EXPECT_FALSE(again->at(c2).calibration.isEmpty());
    EXPECT_EQ(again->at(c2).calibSelect, QStringLiteral("kmeans"));
    EXPECT_EQ(again->at(c2).calibSamples, 2);
    EXPECT_EQ(again->at(c2).measurements[0].workload, QStringLiteral("two stories"));
    ASSERT_EQ(reopened->boardsPage()->workloads()->rowCount(), 1);
    EXPECT_EQ(reopened->boardsPage()->workloads()->at(0).prompts.size(), 2);
    reopened->paretoPage()->setCost(ConfigurationModel::BoardTpot);
    EXPECT_EQ(reopened->paretoPage()->pointCount(), 2);
    shootStep(*reopened, language, MainWindow::ParetoPageIndex, QStringLiteral("07-reopened"));
    EXPECT_TRUE(reopened->close());
    QSettings().remove(QStringLiteral("boards/user"));
}
// Acceptance 6: a profile while the board's engine is missing ends in a dialog naming the engine;
// the configuration and its earlier measurement stay as they were.
TEST(StudioLoop, AProfileWhileTheBoardsEngineIsMissingIsADialogAndKeepsTheMeasurements) {
    EDGE_REQUIRE_SHARED(edge::views::test::stories260kPath().toStdString());
    MeasuredStudio studio("studio-loop-missing");
    ASSERT_EQ(studio.error, "");
    const fs::path& tmp = studio.tmp;
    MainWindow* window = studio.window.get();
    BoardsPage* boards = window->boardsPage();
    QSignalSpy failed(boards->controller(), &BoardController::failed);
    const BoardMeasurement before = window->configurations()->at(0).measurements[0];

    // The engine disappears from the board (a user cleaned up the folder).
    const fs::path engine = tmp / "board" / "current" / "C1-cpu.edge";
    ASSERT_TRUE(fs::exists(engine));
    fs::remove(engine);
    boards->profile();
    ASSERT_TRUE(waitUntil([&] { return failed.size() > 0; }, 120000));
    auto* box = boards->findChild<QMessageBox*>(QStringLiteral("boardError"));
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->text().contains(QStringLiteral("C1-cpu.edge"))) << box->text().toStdString();
    box->done(0);
    ASSERT_EQ(window->configurations()->at(0).measurements.size(), 1u);
    EXPECT_EQ(window->configurations()->at(0).measurements[0].tpotP50Ms, before.tpotP50Ms);
    EXPECT_NE(window->configurations()->at(0).engine(QStringLiteral("cpu")), nullptr);
    window->project()->discardChanges();
    EXPECT_TRUE(window->close());
}

// A deploy whose link dies mid-upload (the board's sshd stopped while the engine's .part grows on
// the board): the retries fail, a dialog names the board and what failed, the board keeps its live
// version, and the configuration keeps its engine and its measurements.
TEST(StudioLoop, ADeployInterruptedMidUploadIsADialogAndKeepsTheLiveVersionAndMeasurements) {
    EDGE_REQUIRE_SHARED(edge::views::test::stories260kPath().toStdString());
    MeasuredStudio studio("studio-loop-interrupted");
    ASSERT_EQ(studio.error, "");
    const fs::path& tmp = studio.tmp;
    MainWindow* window = studio.window.get();
    auto& sshd = studio.sshd;
    BoardsPage* boards = window->boardsPage();
    BoardController* controller = boards->controller();
    const BoardMeasurement before = window->configurations()->at(0).measurements.at(0);
    const fs::path live = fs::read_symlink(tmp / "board" / "current");

    // The next engine is large enough that the upload is still going when the link is cut.
    const fs::path big = tmp / "large.edge";
    {
        std::ofstream f(big, std::ios::binary);
        std::vector<char> chunk(1 << 20);
        for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = char((i * 2654435761u) >> 24);
        for (int i = 0; i < 512; ++i) f.write(chunk.data(), std::streamsize(chunk.size()));
    }
    auto partBytes = [&]() -> uintmax_t {
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(tmp / "board", ec); it != fs::recursive_directory_iterator();
             it.increment(ec))
            if (it->path().filename() == "large.edge.part") return it->file_size(ec);
        return 0;
    };
    QSignalSpy failed(controller, &BoardController::failed);
    QSignalSpy deployed(controller, &BoardController::deployed);
    boards->setEnginePath(QString::fromStdString(big.string()));
    boards->deploy();
    ASSERT_TRUE(waitUntil([&] { return partBytes() > 0 || deployed.size() + failed.size() > 0; }, 120000));
    ASSERT_EQ(deployed.size() + failed.size(), 0) << "the upload ended before it could be cut";
    sshd->kill_with_sessions();  // the link goes down mid-upload, and the board stays unreachable
    ASSERT_TRUE(waitUntil([&] { return failed.size() + deployed.size() > 0; }, 120000));
    ASSERT_EQ(failed.size(), 1);
    auto* box = boards->findChild<QMessageBox*>(QStringLiteral("boardError"));
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->text().contains(QStringLiteral("lab-board"))) << box->text().toStdString();
    EXPECT_TRUE(box->text().contains(QStringLiteral("failed"))) << box->text().toStdString();
    box->done(0);
    EXPECT_GT(partBytes(), 0u) << "the part sent stays for the next attempt to resume";
    EXPECT_LT(partBytes(), fs::file_size(big));
    EXPECT_EQ(fs::read_symlink(tmp / "board" / "current"), live) << "the live version is untouched";
    ASSERT_EQ(window->configurations()->at(0).measurements.size(), 1u);
    EXPECT_EQ(window->configurations()->at(0).measurements[0].tpotP50Ms, before.tpotP50Ms);
    EXPECT_NE(window->configurations()->at(0).engine(QStringLiteral("cpu")), nullptr);
    EXPECT_FALSE(controller->busy());
    window->project()->discardChanges();
    EXPECT_TRUE(window->close());
}

// Issue 18: autoplan against a board in the studio. A deployment with "Measure cost model" has the
// agent time the board (its cost model, saved with the project); every configuration gets its
// predicted time per token there; the Layers page's autoplan chooses FP16/INT8/INT4 per layer from
// the Sensitivity page's measurements within a time budget on the board; validated, compiled,
// deployed and profiled, its measured time stands beside the prediction on the Pareto page.
TEST(StudioLoop, AutoplanAgainstABoardsCostModelAndThePredictionBesideTheMeasurement) {
    EDGE_REQUIRE_SHARED(edge::views::test::stories260kPath().toStdString());
    MeasuredStudio studio("studio-loop-autoplan");
    ASSERT_EQ(studio.error, "");
    MainWindow* window = studio.window.get();
    BoardsPage* boards = window->boardsPage();
    BoardController* controller = boards->controller();
    ConfigurationModel* configs = window->configurations();
    const QString board = QStringLiteral("lab-board");
    QSignalSpy deployed(controller, &BoardController::deployed);
    QSignalSpy profiled(controller, &BoardController::profiled);
    QSignalSpy failed(controller, &BoardController::failed);
    QSignalSpy measuredCost(controller, &BoardController::costModelMeasured);

    // Deployed again with the cost model measured: C1 (INT8) gets its prediction on the board.
    boards->setMeasureCostModel(true);
    boards->deploy();
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 0; }, 180000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    ASSERT_EQ(measuredCost.size(), 1);
    const edge::runtime::BoardCostModel* cm = boards->costModels()->find(board);
    ASSERT_NE(cm, nullptr);
    EXPECT_GT(cm->engine_tpot_ms, 0.0);
    EXPECT_FALSE(cm->linears.empty());
    ASSERT_EQ(configs->at(0).predictedTpotMs.count(board), 1u);
    EXPECT_GT(configs->at(0).predictedTpotMs.at(board), 0.0);
    boards->setMeasureCostModel(false);

    // Autoplan needs the layers' sensitivity and a board that has a cost model.
    edge::studio::BoardAutoplan* autoplan = window->boardAutoplan();
    QSignalSpy planned(autoplan, &edge::studio::BoardAutoplan::finished);
    EXPECT_FALSE(autoplan->start(board, 1.0));
    ASSERT_EQ(planned.size(), 1);
    EXPECT_TRUE(planned.back().at(1).toString().contains(QStringLiteral("run the Sensitivity page first")));
    EXPECT_FALSE(autoplan->start(QStringLiteral("elsewhere"), 1.0));
    EXPECT_TRUE(planned.back().at(1).toString().contains(QStringLiteral("elsewhere has no cost model yet")));
    window->sensitivityPage()->run();
    ASSERT_TRUE(waitUntil([&] { return !window->sensitivityPage()->job()->isRunning(); }, 180000));
    ASSERT_FALSE(window->sensitivityPage()->model()->empirical().empty());

    // The budget: halfway between the fastest plan and the least-loss one (what a loose budget gives).
    auto loaded = window->document()->current();
    auto loose = autoplanForBoard(loaded, window->sensitivityPage()->model()->empirical(), *cm, 1e6);
    ASSERT_TRUE(loose.ok()) << loose.message();
    const double budget = 0.5 * (loose->fastestMs + loose->predictedTpotMs);
    ASSERT_LT(loose->fastestMs, loose->predictedTpotMs);
    EXPECT_TRUE(autoplan->start(board, 0.5 * loose->fastestMs));
    ASSERT_TRUE(waitUntil([&] { return planned.size() == 3; }, 60000));
    EXPECT_FALSE(planned.back().at(0).toBool());
    EXPECT_TRUE(planned.back().at(1).toString().contains(QStringLiteral("below the fastest plan")))
        << planned.back().at(1).toString().toStdString();
    for (QMessageBox* box : window->findChildren<QMessageBox*>()) box->done(0);  // the refusals' dialogs
    ASSERT_TRUE(autoplan->start(board, budget));
    ASSERT_TRUE(waitUntil([&] { return planned.size() == 4; }, 60000));
    ASSERT_TRUE(planned.back().at(0).toBool()) << planned.back().at(1).toString().toStdString();
    const std::vector<LayerSetting> chosen = window->layersPage()->planModel()->settings();
    const auto predicted = predictTpot(boards->costModels()->all(), *loaded, chosen);
    ASSERT_EQ(predicted.count(board), 1u);
    EXPECT_LE(predicted.at(board), budget) << planned.back().at(1).toString().toStdString();
    EXPECT_NE(chosen, loose->settings) << "the least-loss plan is over the budget";

    // Validated, compiled, deployed and profiled: the prediction and the measurement side by side.
    const int c2 = validate(*window);
    ASSERT_EQ(c2, 1);
    EXPECT_NEAR(configs->at(c2).predictedTpotMs.at(board), predicted.at(board), 1e-9);
    QSignalSpy compiled(window->paretoPage(), &ParetoPage::engineCompiled);
    ASSERT_TRUE(window->paretoPage()->compileConfiguration(c2, QStringLiteral("cpu")));
    ASSERT_TRUE(
        waitUntil([&] { return compiled.size() == 1 || !window->paretoPage()->compileJob()->isRunning(); }, 180000));
    ASSERT_EQ(compiled.size(), 1) << window->paretoPage()->compileMessage().toStdString();
    boards->setEnginePath(configs->at(c2).engine(QStringLiteral("cpu"))->path);
    boards->deploy();
    ASSERT_TRUE(waitUntil([&] { return deployed.size() + failed.size() > 1; }, 180000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    EXPECT_EQ(measuredCost.size(), 1) << "measured only when asked";
    boards->profile();
    ASSERT_TRUE(waitUntil([&] { return profiled.size() + failed.size() > 0; }, 180000));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(2).toString().toStdString();
    QCoreApplication::processEvents();
    ASSERT_EQ(configs->at(c2).measurements.size(), 1u);
    ParetoPage* pareto = window->paretoPage();
    pareto->setCost(ConfigurationModel::BoardTpot);
    window->showPage(MainWindow::ParetoPageIndex);
    QTest::qWait(50);
    pareto->plot()->replot();
    EXPECT_EQ(pareto->pointCount(), 2);
    EXPECT_EQ(pareto->predictedCount(), 2);
    QTest::mouseMove(pareto->plot(), QPoint(2, 2));
    QTest::mouseMove(pareto->plot(), pareto->pointPosition(c2).toPoint());
    EXPECT_TRUE(pareto->hoverText().contains(QStringLiteral("predicted"))) << pareto->hoverText().toStdString();
    shootStep(*window, studio.language, MainWindow::ParetoPageIndex, QStringLiteral("08-pareto-predicted"));

    // Saved and reopened: the board's cost model and the predictions are in the project.
    const QString project = studio.dir + QStringLiteral("/autoplan.edgeproj");
    ASSERT_TRUE(window->saveProject(project));
    ProjectData saved;
    ASSERT_TRUE(succeeded(loadProjectFile(project, &saved)));
    ASSERT_EQ(saved.costModels.count(board), 1u);
    EXPECT_EQ(saved.costModels.at(board).linears.size(), cm->linears.size());
    EXPECT_NEAR(saved.configurations[size_t(c2)].predictedTpotMs.at(board), predicted.at(board), 1e-9);
    EXPECT_TRUE(window->close());
}
#endif
