// Acceptance 2 of issue 8, end to end through the real engine on stories260K, asserted on model
// and widget state: open the model, measure per-layer sensitivity (a bar click selects the layer
// in the Layers table), set the two most sensitive layers to INT8 and the rest to INT4-AWQ, run
// validation (report table, verdict, the Pareto point appears, hover names it), undo, save the
// project and reopen it in a new window (plan, configurations, points), click the point to open
// its plan; crash recovery from the autosave; a corrupt project, or a project whose model is
// corrupt, leaves the state intact. A watchdog timer measures the event loop's longest stall while
// the analysis and validation jobs run.
#include <gtest/gtest.h>

#include <qcustomplot.h>
#include <QAction>
#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTimer>
#include <QUrl>

#include "test_helpers.h"
#include "test_support.h"
#include "views/models/configuration_model.h"
#include "views/models/job.h"
#include "views/models/language.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/project.h"
#include "views/models/validation_report_model.h"
#include "views/pages/layers_page.h"
#include "views/pages/pareto_page.h"
#include "views/pages/sensitivity_page.h"
#include "views/pages/validation_page.h"

#ifdef EDGE_HAVE_STUDIO_WINDOW
#include "app/studio/main_window.h"
#include "app/studio/project_controller.h"

using namespace edge::views;
using edge::quant::Precision;
using edge::studio::MainWindow;
using edge::views::test::failsWith;
using edge::views::test::succeeded;
using edge::views::test::waitUntil;

namespace {
// Longest gap between ticks of a 10 ms timer: how long the event loop was unable to run.
class Watchdog {
public:
    Watchdog() {
        QObject::connect(&timer_, &QTimer::timeout, [this] {
            if (clock_.isValid()) {
                const qint64 gap = clock_.restart();
                worst_ = std::max(worst_, gap);
                if (qEnvironmentVariableIsSet("EDGE_WATCHDOG_TRACE") && gap > 25)
                    std::printf("[ watchdog ] stall %lld ms\n", (long long)gap);
            } else {
                clock_.start();
            }
        });
        timer_.start(10);
    }
    qint64 worstMs() const { return worst_; }

private:
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 worst_ = 0;
};

std::unique_ptr<MainWindow> makeWindow(Language* language, const QString& autosave) {
    auto w = std::make_unique<MainWindow>(language, nullptr, autosave);
    w->resize(1600, 1000);
    w->show();
    return w;
}

// Clicks `button` of the unsaved-changes question once it is shown (it runs its own event loop).
void answerUnsavedChanges(QMessageBox::StandardButton button) {
    auto tries = std::make_shared<int>(0);
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [button, tries, poll] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (box && box->objectName() == QLatin1String("unsavedChanges")) {
            box->button(button)->click();
            return;
        }
        if (++*tries < 500) QTimer::singleShot(10, *poll);
    };
    QTimer::singleShot(0, *poll);
}

bool openModel(MainWindow& w, const QString& path) {
    QSignalSpy changed(w.document(), &ModelDocument::modelChanged);
    w.openPath(path);
    return waitUntil([&] { return changed.size() == 1; }, 60000);
}
}  // namespace

TEST(StudioEndToEnd, SensitivePlanValidateParetoUndoSaveReopen) {
    const QString model = edge::views::test::stories260kPath();
    EDGE_REQUIRE_SHARED(model.toStdString());
    const QString text = QString::fromStdString(edge::test::shared("data/tinystories_sample.txt"));
    EDGE_REQUIRE_SHARED(text.toStdString());
    const QString dir = QString::fromStdString(edge::test::temp_dir("views-e2e").string());
    Language language;
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    auto window = makeWindow(&language, dir + QStringLiteral("/autosave.edgeproj"));
    ASSERT_TRUE(openModel(*window, model));
    const int layerCount = int(window->document()->current()->layers.size());

    // Sensitivity through the engine, as a job; a click on a bar selects the layer in the table.
    // The watchdogs run only while the event loop is free (from a job's start to its result shown),
    // not while this test's own code runs.
    SensitivityPage* sens = window->sensitivityPage();
    window->showPage(MainWindow::SensitivityPageIndex);
    sens->setTextPath(text);
    qint64 stall = 0;
    {
        Watchdog watchdog;
        sens->run();
        ASSERT_TRUE(waitUntil([&] { return sens->model()->metricCount() > 0; }, 120000));
        stall = watchdog.worstMs();
    }
    EXPECT_EQ(sens->barCount(), layerCount);
    const QStringList ranked = sens->model()->ranked(0);
    const QStringList top2 = ranked.mid(0, 2);
    const double topKl = sens->model()->value(sens->model()->rowOfLayer(top2[0]), 0);
    EXPECT_GT(topKl, 0.0);
    EXPECT_GE(topKl, sens->model()->value(sens->model()->rowOfLayer(ranked.back()), 0));
    QCustomPlot* bars = sens->barPlot();
    bars->replot();
    const int topRow = sens->model()->rowOfLayer(top2[0]);
    const QPoint barPoint(int(bars->xAxis->coordToPixel(topRow)), int(bars->yAxis->coordToPixel(topKl * 0.5)));
    // The heatmap holds every metric scaled to its maximum: the top layer's KL cell is 1.
    auto* map = qobject_cast<QCPColorMap*>(sens->heatmapPlot()->plottable(0));
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(map->data()->keySize(), layerCount);
    EXPECT_EQ(map->data()->valueSize(), sens->model()->metricCount());
    EXPECT_DOUBLE_EQ(map->data()->cell(topRow, 0), 1.0);
    EXPECT_DOUBLE_EQ(map->data()->data(topRow, 0), 1.0);
    // An analysis file (docs/analysis.md) adds metrics and the selected layer's eigenvalue spectrum;
    // a file naming a layer the model lacks is refused with a message and changes nothing.
    const QString analysis = dir + QStringLiteral("/analysis.json");
    {
        QFile a(analysis);
        ASSERT_TRUE(a.open(QIODevice::WriteOnly));
        a.write("{\"version\": 1, \"layers\": [{\"layer\": \"" + top2[0].toUtf8() +
                "\", \"eigenvalues\": [4.0, 1.5, -0.25], \"importance\": 1.0}]}");
    }
    ASSERT_TRUE(sens->loadAnalysisFile(analysis));
    EXPECT_EQ(sens->model()->metricCount(), 4);
    sens->selectLayer(top2[0]);
    EXPECT_FALSE(sens->spectrumPlot()->isHidden());
    ASSERT_EQ(sens->spectrumPlot()->graphCount(), 1);
    EXPECT_EQ(sens->spectrumPlot()->graph(0)->dataCount(), 3);
    {
        QFile a(analysis);
        ASSERT_TRUE(a.open(QIODevice::WriteOnly));
        a.write("{\"layers\": [{\"layer\": \"blk.99.attn_q\", \"importance\": 1}]}");
    }
    EXPECT_FALSE(sens->loadAnalysisFile(analysis));
    EXPECT_EQ(sens->model()->metricCount(), 4);
    sens->selectLayer(top2[1]);
    EXPECT_TRUE(sens->spectrumPlot()->isHidden());  // no spectrum for that layer
    // A heatmap cell selects its layer too (without leaving the page).
    QCustomPlot* heat = sens->heatmapPlot();
    heat->replot();
    const int lastRow = sens->model()->layerCount() - 1;
    QTest::mouseClick(heat, Qt::LeftButton, {},
                      QPoint(int(heat->xAxis->coordToPixel(lastRow)), int(heat->yAxis->coordToPixel(0))));
    EXPECT_EQ(sens->selectedLayer(), sens->model()->layer(lastRow));
    window->showPage(MainWindow::SensitivityPageIndex);
    QTest::mouseClick(bars, Qt::LeftButton, {}, barPoint);
    EXPECT_EQ(sens->selectedLayer(), top2[0]);
    EXPECT_EQ(window->currentPage(), int(MainWindow::LayersPageIndex));
    LayersPage* layers = window->layersPage();
    LayerPlanModel* plan = layers->planModel();
    EXPECT_EQ(layers->selectedRows(), QList<int>{plan->rowOfLayer(top2[0])});

    // The two most sensitive layers at INT8, the rest INT4-AWQ (two undo steps).
    QList<int> all;
    for (int r = 0; r < plan->rowCount(); ++r) all << r;
    ASSERT_TRUE(plan->applyToRows(all, SettingPatch{Precision::INT4, PlanMethod::AWQ, 32, true, {}}));
    const QList<int> sensitive{plan->rowOfLayer(top2[0]), plan->rowOfLayer(top2[1])};
    ASSERT_TRUE(plan->applyToRows(sensitive, SettingPatch{Precision::INT8, PlanMethod::RTN, 32, true, {}}));
    const std::vector<LayerSetting> mixed = plan->settings();
    int int8 = 0, awq = 0;
    for (const auto& s : mixed) {
        int8 += s.precision == Precision::INT8;
        awq += s.precision == Precision::INT4 && s.method == PlanMethod::AWQ;
    }
    EXPECT_EQ(int8, 2);
    EXPECT_EQ(int8 + awq, layerCount);

    // Validation as a job: the report, the verdict and a Pareto point.
    ValidationPage* validation = window->validationPage();
    window->showPage(MainWindow::ValidationPageIndex);
    validation->setTextPath(text);
    validation->setParts(4);
    QSignalSpy added(validation, &ValidationPage::configurationAdded);
    // Cancel: the job stops, nothing is added, the page says so.
    QSignalSpy cancelled(validation->job(), &JobSlot::cancelled);
    validation->run();
    ASSERT_TRUE(validation->job()->isRunning());
    validation->cancel();
    ASSERT_TRUE(waitUntil([&] { return !validation->job()->isRunning(); }, 60000));
    EXPECT_EQ(cancelled.size(), 1);
    QTest::qWait(100);
    EXPECT_EQ(added.size(), 0);
    EXPECT_EQ(window->configurations()->rowCount(), 0);
    {
        Watchdog watchdog;
        validation->run();
        EXPECT_TRUE(validation->job()->isRunning());
        ASSERT_TRUE(waitUntil([&] { return added.size() == 1; }, 150000));
        stall = std::max(stall, watchdog.worstMs());
    }
    ValidationReportModel* report = validation->reportModel();
    ASSERT_TRUE(report->hasReport());
    const auto& r = *report->report();
    EXPECT_GT(r.consistency.tokens, 100);
    EXPECT_GT(r.consistency.ppl_ref, 1.0);
    EXPECT_GT(r.consistency.ppl_test, 1.0);
    EXPECT_GT(r.consistency.top1_agreement, 0.5);
    EXPECT_TRUE(r.bitflip_ran);
    EXPECT_GT(r.bitflip_count, 0);
    EXPECT_GT(r.jitter.samples, 0);
    EXPECT_NE(report->verdict(ValidationReportModel::KlMean), ValidationReportModel::NotJudged);
    EXPECT_FALSE(validation->verdictLabel()->text().isEmpty());
    EXPECT_EQ(validation->table()->model()->rowCount(), int(ValidationReportModel::CheckCount));
    EXPECT_EQ(validation->layerTable()->model()->rowCount(), layerCount);
    ConfigurationModel* configs = window->configurations();
    ASSERT_EQ(configs->rowCount(), 1);
    const Configuration c1 = configs->at(0);
    EXPECT_EQ(c1.name, QStringLiteral("C1"));
    EXPECT_EQ(c1.settings, mixed);
    EXPECT_DOUBLE_EQ(c1.ppl, r.consistency.ppl_test);
    EXPECT_GT(c1.decodeMs, 0.0);
    EXPECT_LT(c1.bytes, c1.fp32Bytes);
    EXPECT_EQ(c1.passed, report->passed());
    EXPECT_EQ(c1.failures, report->failures());
    ParetoPage* pareto = window->paretoPage();
    EXPECT_EQ(pareto->pointCount(), 1);
    EXPECT_EQ(pareto->frontRows(), std::vector<int>{0});
    window->showPage(MainWindow::ParetoPageIndex);
    QTest::qWait(50);
    pareto->plot()->replot();
    QTest::mouseMove(pareto->plot(), pareto->pointPosition(0).toPoint());
    EXPECT_TRUE(pareto->hoverText().startsWith(QStringLiteral("C1 · perplexity"))) << pareto->hoverText().toStdString();
    pareto->setCost(ConfigurationModel::Size);
    EXPECT_EQ(pareto->pointCount(), 1);
    EXPECT_DOUBLE_EQ(pareto->plot()->graph(0)->data()->at(0)->key, double(c1.bytes) / 1024.0);
    pareto->setCost(ConfigurationModel::Latency);
    // The event loop kept running while the engine worked (watchdog; 2 shared cores, no assert
    // on speed beyond the 100 ms bound).
    EXPECT_LT(stall, 100) << "longest event-loop stall during the jobs: " << stall << " ms";
    std::printf("[ watchdog ] longest event-loop stall during sensitivity + validation: %lld ms\n", (long long)stall);

    // Undo: the two sensitive layers return to INT4-AWQ; the configuration keeps its plan.
    layers->undoAction()->trigger();
    EXPECT_EQ(plan->setting(sensitive[0]).precision, Precision::INT4);
    EXPECT_EQ(plan->setting(sensitive[1]).method, PlanMethod::AWQ);
    EXPECT_EQ(configs->at(0).settings, mixed);
    const std::vector<LayerSetting> afterUndo = plan->settings();

    // Save, reopen in a new window: model, plan, thresholds, configurations and the point.
    const QString project = dir + QStringLiteral("/e2e.edgeproj");
    ASSERT_TRUE(window->saveProject(project));
    auto reopened = makeWindow(&language, dir + QStringLiteral("/autosave2.edgeproj"));
    QSignalSpy applied(reopened->project(), &edge::studio::ProjectController::applied);
    ASSERT_TRUE(reopened->openProject(project));
    ASSERT_TRUE(waitUntil([&] { return applied.size() == 1; }, 60000));
    EXPECT_EQ(reopened->document()->path(), window->document()->path());
    EXPECT_EQ(reopened->layersPage()->planModel()->settings(), afterUndo);
    ASSERT_EQ(reopened->configurations()->rowCount(), 1);
    EXPECT_EQ(reopened->configurations()->at(0).settings, mixed);
    EXPECT_DOUBLE_EQ(reopened->configurations()->at(0).ppl, c1.ppl);
    EXPECT_EQ(reopened->paretoPage()->pointCount(), 1);
    EXPECT_EQ(reopened->sensitivityPage()->barCount(), layerCount);
    EXPECT_EQ(reopened->validationPage()->settings().textPath, text);
    // Clicking the point opens C1's plan in the Layers page (one more undo step).
    reopened->showPage(MainWindow::ParetoPageIndex);
    QTest::qWait(50);
    reopened->paretoPage()->plot()->replot();
    QTest::mouseClick(reopened->paretoPage()->plot(), Qt::LeftButton, {},
                      reopened->paretoPage()->pointPosition(0).toPoint());
    EXPECT_EQ(reopened->currentPage(), int(MainWindow::LayersPageIndex));
    EXPECT_EQ(reopened->layersPage()->planModel()->settings(), mixed);

    // A corrupt project: an error dialog naming the file; the state stays.
    const QString corrupt = dir + QStringLiteral("/corrupt.edgeproj");
    QFile f(corrupt);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("{\"format\": \"edgeproj\", \"version\": 1, \"model\": ");
    f.close();
    EXPECT_FALSE(reopened->openProject(corrupt));
    auto* box = reopened->findChild<QMessageBox*>(QStringLiteral("projectError"));
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->text().contains(QStringLiteral("corrupt.edgeproj"))) << box->text().toStdString();
    box->close();
    EXPECT_EQ(reopened->layersPage()->planModel()->settings(), mixed);
    EXPECT_EQ(reopened->configurations()->rowCount(), 1);
    // A project whose model is corrupt: the loader's error dialog, nothing of the project applied.
    const QString badModel = dir + QStringLiteral("/broken.gguf");
    QFile bm(badModel);
    ASSERT_TRUE(bm.open(QIODevice::WriteOnly));
    bm.write("GGUF\x03\x00\x00\x00", 8);
    bm.close();
    edge::views::ProjectData other = reopened->project()->snapshot();
    other.modelPath = badModel;
    other.configurations.clear();
    ASSERT_TRUE(succeeded(edge::views::saveProjectFile(dir + QStringLiteral("/badmodel.edgeproj"), other)));
    QSignalSpy loadFailed(reopened->document(), &ModelDocument::loadFailed);
    ASSERT_TRUE(reopened->openProject(dir + QStringLiteral("/badmodel.edgeproj")));
    ASSERT_TRUE(waitUntil([&] { return loadFailed.size() == 1; }));
    auto* loadBox = reopened->findChild<QMessageBox*>(QStringLiteral("loadError"));
    ASSERT_NE(loadBox, nullptr);
    EXPECT_TRUE(loadBox->text().contains(QStringLiteral("broken.gguf"))) << loadBox->text().toStdString();
    loadBox->close();
    EXPECT_FALSE(reopened->project()->isApplying());
    EXPECT_EQ(reopened->document()->path(), window->document()->path());
    EXPECT_EQ(reopened->configurations()->rowCount(), 1);
    EXPECT_EQ(reopened->layersPage()->planModel()->settings(), mixed);

    // Crash: the first window's autosave is written, then the window dies without closing.
    ASSERT_TRUE(window->project()->autosave()->saveNow());
    window.reset();
    auto recovered = makeWindow(&language, dir + QStringLiteral("/autosave.edgeproj"));
    ASSERT_TRUE(recovered->project()->autosave()->recoverable());
    QSignalSpy recoveredSpy(recovered->project(), &edge::studio::ProjectController::applied);
    ASSERT_TRUE(succeeded(recovered->project()->recover()));
    ASSERT_TRUE(waitUntil([&] { return recoveredSpy.size() == 1; }, 60000));
    EXPECT_EQ(recovered->layersPage()->planModel()->settings(), afterUndo);
    EXPECT_EQ(recovered->configurations()->rowCount(), 1);
    // Recovered work is in no project file: closing asks; discarding removes the recovery file.
    EXPECT_TRUE(recovered->project()->isModified());
    answerUnsavedChanges(QMessageBox::Discard);
    EXPECT_TRUE(recovered->close());
    EXPECT_FALSE(QFile::exists(dir + QStringLiteral("/autosave.edgeproj")));
    answerUnsavedChanges(QMessageBox::Discard);  // the point click above edited the plan
    EXPECT_TRUE(reopened->close());
}

// Issue 18, acceptance 4: closing with unsaved changes asks; cancel keeps everything (the autosave
// too); save writes the project and then closes; discard closes and removes the autosave. The title
// names the project with a modified mark; the window comes back where it was; a model file dropped
// on the window opens it.
TEST(StudioEndToEnd, ClosingWithUnsavedChangesAsksAndTheAutosaveSurvivesUntilSavedOrDiscarded) {
    const QString model = edge::views::test::stories260kPath();
    EDGE_REQUIRE_SHARED(model.toStdString());
    const QString dir = QString::fromStdString(edge::test::temp_dir("views-close").string());
    const QString autosave = dir + QStringLiteral("/autosave.edgeproj");
    Language language;
    ASSERT_TRUE(language.setLanguage(QStringLiteral("en")));
    auto window = makeWindow(&language, autosave);
    EXPECT_FALSE(window->project()->isModified());
    EXPECT_TRUE(window->windowTitle().startsWith(QStringLiteral("Untitled"))) << window->windowTitle().toStdString();
    // Nothing changed: closing does not ask.
    EXPECT_TRUE(window->close());

    window = makeWindow(&language, autosave);
    window->resize(1234, 777);
    // Dropping the model file on the window opens it.
    QSignalSpy changed(window->document(), &ModelDocument::modelChanged);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(model)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.get(), &enter);
    EXPECT_TRUE(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.get(), &drop);
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1; }, 60000));
    EXPECT_EQ(window->document()->path(), model);
    EXPECT_TRUE(window->project()->isModified());
    EXPECT_TRUE(window->isWindowModified());
    EXPECT_TRUE(window->windowTitle().startsWith(QStringLiteral("stories260K.gguf[*]")))
        << window->windowTitle().toStdString();

    LayerPlanModel* plan = window->layersPage()->planModel();
    SettingPatch int8;
    int8.precision = Precision::INT8;
    ASSERT_TRUE(plan->applyToRows({0}, int8));
    const std::vector<LayerSetting> edited = plan->settings();
    ASSERT_TRUE(window->project()->autosave()->saveNow());
    ASSERT_TRUE(QFile::exists(autosave));

    // Cancel: the window stays with its plan, the autosave stays.
    answerUnsavedChanges(QMessageBox::Cancel);
    EXPECT_FALSE(window->close());
    EXPECT_TRUE(window->isVisible());
    EXPECT_EQ(plan->settings(), edited);
    EXPECT_TRUE(QFile::exists(autosave));
    EXPECT_TRUE(window->project()->isModified());

    // Saved as a project: not modified, the title names the project, the autosave gone.
    const QString project = dir + QStringLiteral("/close.edgeproj");
    ASSERT_TRUE(window->saveProject(project));
    EXPECT_FALSE(window->project()->isModified());
    EXPECT_FALSE(window->isWindowModified());
    EXPECT_TRUE(window->windowTitle().startsWith(QStringLiteral("close.edgeproj")))
        << window->windowTitle().toStdString();
    EXPECT_FALSE(QFile::exists(autosave));

    // Another edit, then Save in the question: the project file gets it and the window closes.
    SettingPatch int4;
    int4.precision = Precision::INT4;
    ASSERT_TRUE(plan->applyToRows({1}, int4));
    const std::vector<LayerSetting> saved = plan->settings();
    EXPECT_TRUE(window->project()->isModified());
    answerUnsavedChanges(QMessageBox::Save);
    EXPECT_TRUE(window->close());
    edge::views::ProjectData onDisk;
    ASSERT_TRUE(succeeded(edge::views::loadProjectFile(project, &onDisk)));
    EXPECT_EQ(onDisk.plan, saved);
    EXPECT_FALSE(QFile::exists(autosave));

    // Reopened: where the window was; the project back; an edit discarded leaves the file as saved.
    auto again = std::make_unique<MainWindow>(&language, nullptr, autosave);
    again->show();
    EXPECT_EQ(again->size(), QSize(1234, 777));
    QSignalSpy applied(again->project(), &edge::studio::ProjectController::applied);
    ASSERT_TRUE(again->openProject(project));
    ASSERT_TRUE(waitUntil([&] { return applied.size() == 1; }, 60000));
    EXPECT_FALSE(again->project()->isModified());
    EXPECT_EQ(again->layersPage()->planModel()->settings(), saved);
    ASSERT_TRUE(again->layersPage()->planModel()->applyToRows({2}, int8));
    ASSERT_TRUE(again->project()->autosave()->saveNow());
    answerUnsavedChanges(QMessageBox::Discard);
    EXPECT_TRUE(again->close());
    EXPECT_FALSE(QFile::exists(autosave));
    ASSERT_TRUE(succeeded(edge::views::loadProjectFile(project, &onDisk)));
    EXPECT_EQ(onDisk.plan, saved);
}
#endif
