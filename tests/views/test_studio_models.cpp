// The item models and files behind the Validation, Pareto, Sensitivity pages and projects:
// QAbstractItemModelTester on each, verdicts under edited thresholds, the Pareto frontier, plan
// diffs, analysis JSON (docs/analysis.md), the .edgeproj round trip, malformed projects, and
// autosave + crash recovery.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QFile>
#include <QJsonObject>
#include <QSignalSpy>

#include <cmath>

#include "test_helpers.h"
#include "test_support.h"
#include "views/models/configuration_model.h"
#include "views/models/project.h"
#include "views/models/sensitivity_model.h"
#include "views/models/validation_report_model.h"
#include "views/models/validation_run.h"

using namespace edge::views;
using edge::quant::Precision;
using edge::views::test::failsWith;
using edge::views::test::succeeded;

namespace {
constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

std::shared_ptr<const LoadedModel> loaded(edge::model::Model m) {
    auto l = std::make_shared<LoadedModel>();
    l->model = std::move(m);
    l->layers = edge::model::list_layers(l->model);
    return l;
}

edge::validate::ValidationReport sampleReport() {
    edge::validate::ValidationReport r;
    r.consistency.ppl_ref = 3.5;
    r.consistency.ppl_test = 3.62;
    r.consistency.kl_mean = 0.031;
    r.consistency.kl_p99 = 0.2;
    r.consistency.top1_agreement = 0.93;
    r.consistency.tokens = 600;
    r.health = {{"blk.0.attn_q", 1000, 0, 0}};
    r.scales = {{"blk.0.attn_q.weight", 0.001, 0.1, 100.0}};
    r.bitflip_ran = true;
    r.bitflip_count = 40;
    r.bitflip_conf_drop = 0.02;
    r.jitter = {0.20, 0.45, 0.22, 4500.0, 96};
    return r;
}

Configuration config(const QString& name, double ppl, double ms, quint64 bytes, Precision p) {
    Configuration c;
    c.name = name;
    c.ppl = ppl;
    c.pplRef = 3.5;
    c.decodeMs = ms;
    c.bytes = bytes;
    c.layers = {QStringLiteral("blk.0.attn_q"), QStringLiteral("blk.0.attn_k")};
    LayerSetting s;
    s.precision = p;
    s.method = p == Precision::INT4 || p == Precision::INT8 ? PlanMethod::RTN : PlanMethod::None;
    c.settings = {s, LayerSetting{}};
    c.failures = {QStringLiteral("mean KL 0.1 ≥ 0.08")};
    c.when = QDateTime::fromString(QStringLiteral("2026-12-01T00:00:00Z"), Qt::ISODate);
    return c;
}
}  // namespace

TEST(ValidationReportModel, JudgesChecksAndReJudgesOnThresholdEdits) {
    ValidationReportModel model;
    QAbstractItemModelTester tester(&model, kFatal);
    EXPECT_EQ(model.rowCount(), int(ValidationReportModel::CheckCount));
    EXPECT_FALSE(model.passed());
    EXPECT_EQ(model.verdict(ValidationReportModel::KlMean), ValidationReportModel::NotJudged);
    model.setReport(sampleReport());
    EXPECT_TRUE(model.passed());
    EXPECT_EQ(model.verdict(ValidationReportModel::KlMean), ValidationReportModel::Pass);
    EXPECT_EQ(model.verdict(ValidationReportModel::Jitter), ValidationReportModel::Pass);
    EXPECT_EQ(model.index(ValidationReportModel::Perplexity, ValidationReportModel::ValueColumn).data().toString(),
              QStringLiteral("3.5000 → 3.6200 (600 tokens)"));
    // Only the gated checks' thresholds are editable.
    EXPECT_TRUE(model.flags(model.index(ValidationReportModel::KlMean, ValidationReportModel::ThresholdColumn)) &
                Qt::ItemIsEditable);
    EXPECT_FALSE(model.flags(model.index(ValidationReportModel::Top1, ValidationReportModel::ThresholdColumn)) &
                 Qt::ItemIsEditable);
    QSignalSpy verdict(&model, &ValidationReportModel::verdictChanged);
    const QModelIndex kl = model.index(ValidationReportModel::KlMean, ValidationReportModel::ThresholdColumn);
    ASSERT_TRUE(model.setData(kl, 0.01));
    EXPECT_EQ(verdict.size(), 1);
    EXPECT_EQ(model.verdict(ValidationReportModel::KlMean), ValidationReportModel::Fail);
    EXPECT_FALSE(model.passed());
    ASSERT_EQ(model.failures().size(), 1);
    EXPECT_TRUE(model.failures().front().contains(QStringLiteral("0.0310")));
    EXPECT_FALSE(model.setData(kl, -1.0));  // refused: not a positive number
    EXPECT_FALSE(model.setData(kl, QStringLiteral("abc")));
    // Bit-flip threshold is edited in percent.
    ASSERT_TRUE(
        model.setData(model.index(ValidationReportModel::BitFlip, ValidationReportModel::ThresholdColumn), 1.0));
    EXPECT_DOUBLE_EQ(model.thresholds().bitflip_conf_drop_max, 0.01);
    EXPECT_EQ(model.verdict(ValidationReportModel::BitFlip), ValidationReportModel::Fail);
    // The same rules as the engine: jitter p99-p50 = 0.25 ms against 0.2 fails.
    edge::validate::Thresholds t = model.thresholds();
    t.jitter_ms_max = 0.2;
    model.setThresholds(t);
    EXPECT_EQ(model.verdict(ValidationReportModel::Jitter), ValidationReportModel::Fail);
    EXPECT_EQ(validationFailures(sampleReport(), t).size(), 3);
    model.clear();
    EXPECT_FALSE(model.hasReport());

    // Per layer: health and scale ranges joined by name (tensor names lose ".weight").
    ValidationLayerModel layers;
    QAbstractItemModelTester layerTester(&layers, kFatal);
    edge::validate::ValidationReport r = sampleReport();
    r.health.push_back({"output", 500, 2, 1});
    layers.setReport(&r);
    ASSERT_EQ(layers.rowCount(), 2);
    EXPECT_EQ(layers.index(0, ValidationLayerModel::LayerColumn).data().toString(), QStringLiteral("blk.0.attn_q"));
    EXPECT_EQ(layers.index(0, ValidationLayerModel::RatioColumn).data().toString(), QStringLiteral("100"));
    EXPECT_EQ(layers.index(1, ValidationLayerModel::NanColumn).data().toString(), QStringLiteral("2"));
    EXPECT_EQ(layers.index(1, ValidationLayerModel::RatioColumn).data().toString(), QStringLiteral("—"));
    EXPECT_TRUE(layers.index(1, 0).data(Qt::ForegroundRole).isValid());  // non-finite values are flagged
    layers.setReport(nullptr);
    EXPECT_EQ(layers.rowCount(), 0);
}

// A configuration keeps how its evaluation and calibration text were cut, so a compile later
// calibrates AWQ/GPTQ layers on the same sequences whatever the Validation page says by then.
TEST(ConfigurationModel, AConfigurationRecordsItsCalibrationCutsAndCompilesWithThem) {
    Configuration c = config(QStringLiteral("C1"), 3.9, 0.2, 1000, Precision::INT4);
    c.evaluationPath = QStringLiteral("/d/eval.txt");
    c.calibPath = QStringLiteral("/d/calib.txt");
    c.scoredProtocol = QStringLiteral("para");
    c.scoredParts = 2;
    c.scoredTokens = 96;
    c.calibSequences = 4;
    c.calibLength = 48;
    Configuration back;
    ASSERT_TRUE(succeeded(configurationFromJson(configurationToJson(c), &back)));
    EXPECT_EQ(back.scoredProtocol, QStringLiteral("para"));
    EXPECT_EQ(back.scoredParts, 2);
    EXPECT_EQ(back.calibLength, 48);
    ValidationSettings now;  // the page's settings at compile time differ
    now.textPath = QStringLiteral("/d/other.txt");
    now.maxParts = 6;
    now.calibSequences = 8;
    const ValidationSettings used = validatedSettings(back, now);
    EXPECT_EQ(used.textPath, QStringLiteral("/d/eval.txt"));
    EXPECT_EQ(used.calibPath, QStringLiteral("/d/calib.txt"));
    EXPECT_EQ(used.protocol, edge::validate::PplProtocol::Para);
    EXPECT_EQ(used.maxParts, 2);
    EXPECT_EQ(used.maxTokens, 96);
    EXPECT_EQ(used.calibSequences, 4);
    EXPECT_EQ(used.calibLength, 48);
    // A configuration saved before the cuts were recorded compiles with the page's.
    Configuration old = c;
    old.scoredProtocol.clear();
    old.scoredParts = old.scoredTokens = old.calibSequences = old.calibLength = 0;
    EXPECT_EQ(validatedSettings(old, now).maxParts, 6);
    QJsonObject bad = configurationToJson(c);
    QJsonObject calib = bad.value(QStringLiteral("calibration")).toObject();
    calib.insert(QStringLiteral("length"), -3);
    bad.insert(QStringLiteral("calibration"), calib);
    EXPECT_TRUE(failsWith(configurationFromJson(bad, &back),
                          {QStringLiteral("configuration C1"), QStringLiteral("\"length\" is not a count")}));
}

TEST(ConfigurationModel, FrontierDiffAndJsonRoundTrip) {
    EXPECT_EQ(paretoFront({1, 2, 3, 4}, {5, 4, 6, 1}), (std::vector<int>{0, 1, 3}));
    EXPECT_EQ(paretoFront({2, 1}, {1, 1}), (std::vector<int>{1}));
    ConfigurationModel model;
    QAbstractItemModelTester tester(&model, kFatal);
    model.add(config(QStringLiteral("C1"), 3.9, 0.20, 1000, Precision::INT4));
    model.add(config(QStringLiteral("C2"), 3.6, 0.30, 2000, Precision::INT8));
    model.add(config(QStringLiteral("C3"), 3.95, 0.35, 1500, Precision::INT8));  // dominated by both
    EXPECT_EQ(model.nextName(), QStringLiteral("C4"));
    EXPECT_EQ(model.front(ConfigurationModel::Latency), (std::vector<int>{0, 1}));
    EXPECT_EQ(model.front(ConfigurationModel::Size), (std::vector<int>{0, 1}));
    EXPECT_TRUE(model.index(0, 0).data(ConfigurationModel::FrontRole).toBool());
    EXPECT_FALSE(model.index(2, 0).data(ConfigurationModel::FrontRole).toBool());
    // The board axes come from the newest measurement; tokens/s and top-1 are maximised.
    BoardMeasurement m1, m2;
    m1.board = m2.board = QStringLiteral("orin");
    m1.tpotP50Ms = 2.0, m1.ttftMs = 30, m1.tokensPerS = 500, m1.peakRssMiB = 90;
    m2.tpotP50Ms = 3.0, m2.ttftMs = 20, m2.tokensPerS = 330, m2.peakRssMiB = 120;
    Configuration c1 = model.at(0), c2 = model.at(1), c3 = model.at(2);
    c1.measurements = {m1};
    c2.measurements = {m2};
    c1.top1 = 0.90, c2.top1 = 0.95, c3.top1 = 0.80;
    ConfigurationModel boards;
    boards.setConfigurations({c1, c2, c3});
    EXPECT_EQ(boards.front(ConfigurationModel::BoardTpot), (std::vector<int>{0, 1}));
    EXPECT_EQ(boards.front(ConfigurationModel::BoardTtft), (std::vector<int>{1}));  // C2 beats C1 on both
    EXPECT_EQ(boards.front(ConfigurationModel::BoardTokensPerS, ConfigurationModel::Top1), (std::vector<int>{0, 1}));
    EXPECT_EQ(boards.front(ConfigurationModel::BoardPeakMemory, ConfigurationModel::KlMean), (std::vector<int>{0}));
    EXPECT_TRUE(std::isnan(ConfigurationModel::cost(c3, ConfigurationModel::BoardTokensPerS)));
    EXPECT_DOUBLE_EQ(ConfigurationModel::quality(c2, ConfigurationModel::Top1), 95.0);
    c1.predictedTpotMs[QStringLiteral("orin")] = 1.9;
    PlanDiffModel boardDiff;
    QAbstractItemModelTester boardDiffTester(&boardDiff, kFatal);
    boardDiff.setPair(&c1, &c2);
    EXPECT_EQ(boardDiff.figureRows(), 6 + 5);  // and per board: TPOT, predicted, TTFT, tokens/s, peak memory
    EXPECT_EQ(boardDiff.index(2 + 6, 0).data().toString(), QStringLiteral("orin: TPOT p50, ms"));
    EXPECT_EQ(boardDiff.index(2 + 7, PlanDiffModel::AColumn).data().toString(), QStringLiteral("1.900"));
    EXPECT_EQ(boardDiff.index(2 + 7, PlanDiffModel::BColumn).data().toString(), QStringLiteral("—"));

    model.removeLast();
    EXPECT_EQ(model.rowCount(), 2);

    PlanDiffModel diff;
    QAbstractItemModelTester diffTester(&diff, kFatal);
    diff.setPair(&model.at(0), &model.at(1));
    // Two layers, then the figures: perplexity, mean KL, top-1, weights, host ms/token, calibration.
    ASSERT_EQ(diff.rowCount(), 2 + 6);
    EXPECT_EQ(diff.figureRows(), 6);
    EXPECT_EQ(diff.differences(), 1);
    EXPECT_TRUE(diff.index(2, 0).data(PlanDiffModel::FigureRole).toBool());
    EXPECT_EQ(diff.index(2, 0).data().toString(), QStringLiteral("perplexity"));
    EXPECT_TRUE(diff.index(2, 0).data(PlanDiffModel::DiffRole).toBool());  // 3.9 vs 3.6
    EXPECT_TRUE(diff.index(0, 0).data(PlanDiffModel::DiffRole).toBool());
    EXPECT_EQ(diff.index(0, PlanDiffModel::AColumn).data().toString(), QStringLiteral("INT4 RTN g32"));
    EXPECT_EQ(diff.index(0, PlanDiffModel::BColumn).data().toString(), QStringLiteral("INT8 RTN g32"));
    EXPECT_EQ(diff.headerData(PlanDiffModel::BColumn, Qt::Horizontal).toString(), QStringLiteral("C2"));

    Configuration back;
    ASSERT_TRUE(succeeded(configurationFromJson(configurationToJson(model.at(1)), &back)));
    EXPECT_EQ(back.name, QStringLiteral("C2"));
    EXPECT_EQ(back.settings, model.at(1).settings);
    EXPECT_EQ(back.layers, model.at(1).layers);
    EXPECT_EQ(back.bytes, 2000u);
    EXPECT_EQ(back.when, model.at(1).when);
    EXPECT_EQ(back.failures, model.at(1).failures);
    EXPECT_EQ(model.index(1, ConfigurationModel::VerdictColumn).data(Qt::ToolTipRole).toString(),
              QStringLiteral("mean KL 0.1 ≥ 0.08"));
    EXPECT_TRUE(failsWith(configurationFromJson(QJsonObject{{QStringLiteral("name"), QStringLiteral("x")}}, &back),
                          {QStringLiteral("no name or perplexity")}));
}

TEST(SensitivityModel, EmpiricalMetricsAndAnalysisJson) {
    SensitivityModel model;
    QAbstractItemModelTester tester(&model, kFatal);
    model.setModel(loaded(edge::views::test::tinyModel(2, 8)));
    ASSERT_EQ(model.layerCount(), 15);  // 2 blocks x 7 + output
    EXPECT_EQ(model.metricCount(), 0);
    std::vector<edge::quant::LayerSensitivity> s(2);
    s[0].layer = "blk.0.attn_q";
    s[0].kl_mean = 0.5;
    s[1].layer = "blk.1.ffn_down";
    s[1].kl_mean = 2.0;
    s[1].nll_delta = -0.1;
    model.setEmpirical(s);
    ASSERT_EQ(model.metricCount(), 3);
    EXPECT_EQ(model.metricKey(0), QStringLiteral("kl_mean"));
    const int q = model.rowOfLayer(QStringLiteral("blk.0.attn_q"));
    EXPECT_DOUBLE_EQ(model.value(q, 0), 0.5);
    EXPECT_DOUBLE_EQ(model.normalized(q, 0), 0.25);
    EXPECT_TRUE(std::isnan(model.value(model.rowOfLayer(QStringLiteral("output")), 0)));
    EXPECT_EQ(model.ranked(0).mid(0, 2),
              (QStringList{QStringLiteral("blk.1.ffn_down"), QStringLiteral("blk.0.attn_q")}));

    // The analysis JSON of docs/analysis.md: numeric keys become metrics, eigenvalues a spectrum.
    const QByteArray json = R"({"version": 1, "model": "tiny", "layers": [
        {"layer": "blk.0.attn_q", "kind": "attn_q", "block": 0, "shape": [8, 8], "params": 64,
         "eigenvalues": [0.91, 0.42, -0.12], "eig_mean_abs": 0.48, "importance": 0.3, "rank": 2},
        {"layer": "blk.1.attn_k", "block": 1, "eigenvalues": [2.0], "eig_mean_abs": 2.0, "importance": 1.0, "rank": 1}]})";
    ASSERT_TRUE(succeeded(model.loadAnalysisJson(json, QStringLiteral("a.json"))));
    EXPECT_EQ(model.metricCount(), 5);  // kl_mean, kl_max, nll_delta, eig_mean_abs, importance
    const QStringList keys = [&] {
        QStringList k;
        for (int m = 0; m < model.metricCount(); ++m) k << model.metricKey(m);
        return k;
    }();
    EXPECT_FALSE(keys.contains(QStringLiteral("rank")));
    EXPECT_FALSE(keys.contains(QStringLiteral("block")));
    EXPECT_EQ(model.spectrum(QStringLiteral("blk.0.attn_q")), (std::vector<double>{0.91, 0.42, -0.12}));
    EXPECT_TRUE(model.hasSpectra());
    EXPECT_EQ(model.columnCount(), 6);
    // A layer the model lacks, or no layers at all: an error naming the file; nothing changes.
    EXPECT_TRUE(failsWith(
        model.loadAnalysisJson(R"({"layers": [{"layer": "blk.9.attn_q", "x": 1}]})", QStringLiteral("b.json")),
        {QStringLiteral("b.json"), QStringLiteral("blk.9.attn_q")}));
    EXPECT_TRUE(failsWith(model.loadAnalysisJson("not json", QStringLiteral("c.json")), {QStringLiteral("c.json")}));
    EXPECT_EQ(model.metricCount(), 5);
}

// fuzz_project's first finding: a byte count of 2.57e78 was converted to an unsigned integer
// (undefined behaviour). Byte counts are whole numbers from 0 to 2^53; anything else is refused
// naming the configuration (and the engine) and the field.
TEST(Project, AByteCountOutOfRangeIsRefusedNamingTheConfiguration) {
    const QByteArray head = R"({"format": "edgeproj", "version": 1, "model": "m.gguf", "configurations": [)";
    ProjectData out;
    for (const char* bytes : {"2.57e78", "-1", "1.5", "\"12\""})
        EXPECT_TRUE(failsWith(projectFromJson(head + R"({"name": "C1", "ppl": 3.6, "bytes": )" + bytes + "}]}",
                                              QStringLiteral("p.edgeproj"), &out),
                              {QStringLiteral("p.edgeproj"), QStringLiteral("configuration C1"),
                               QStringLiteral("\"bytes\" is not a byte count")}))
            << bytes;
    EXPECT_TRUE(failsWith(
        projectFromJson(head + R"({"name": "C2", "ppl": 3.6, "engines": [{"target": "cpu", "bytes": 1e300}]}]})",
                        QStringLiteral("p.edgeproj"), &out),
        {QStringLiteral("configuration C2: engine 0"), QStringLiteral("byte count")}));
    // The third: a group size of 8.9e80 converted to an integer. Plan entries are checked too.
    const QByteArray plan = R"({"format": "edgeproj", "version": 1, "model": "m.gguf", "plan": {"layers": [
        {"layer": "blk.0.attn_q", "precision": "int4", "method": "rtn", )";
    EXPECT_TRUE(failsWith(projectFromJson(plan + R"("group": 8.9e80}]}})", QStringLiteral("p.edgeproj"), &out),
                          {QStringLiteral("plan entry 0 (blk.0.attn_q)"), QStringLiteral("is not a group size")}));
    EXPECT_TRUE(failsWith(projectFromJson(plan + R"("pruning": 2}]}})", QStringLiteral("p.edgeproj"), &out),
                          {QStringLiteral("plan entry 0 (blk.0.attn_q)"), QStringLiteral("not a ratio")}));
    ASSERT_TRUE(succeeded(
        projectFromJson(head + R"({"name": "C3", "ppl": 3.6, "bytes": 9007199254740992, "plan": {"layers": []}}]})",
                        QStringLiteral("p.edgeproj"), &out)));
    EXPECT_EQ(out.configurations.at(0).bytes, 9007199254740992ull);
}

TEST(Project, RoundTripMalformedFilesAndCrashRecovery) {
    ProjectData p;
    p.modelPath = QStringLiteral("/models/stories260K.gguf");
    p.layers = {QStringLiteral("blk.0.attn_q"), QStringLiteral("output")};
    LayerSetting int4;
    int4.precision = Precision::INT4;
    int4.method = PlanMethod::AWQ;
    int4.pruning = 0.25;
    p.plan = {int4, LayerSetting{}};
    p.evaluationText = QStringLiteral("/data/t.txt");
    p.thresholds.kl_mean_max = 0.05;
    p.configurations = {config(QStringLiteral("C1"), 3.7, 0.25, 4096, Precision::INT4)};
    edge::quant::LayerSensitivity ls;
    ls.layer = "blk.0.attn_q";
    ls.kind = "attn_q";
    ls.block = 0;
    ls.shape = {64, 64};
    ls.kl_mean = 0.125;
    p.sensitivity = {ls};
    p.boards = {QStringLiteral("orin-nano")};
    p.page = QStringLiteral("pareto");

    ProjectData back;
    ASSERT_TRUE(succeeded(projectFromJson(projectToJson(p), QStringLiteral("p.edgeproj"), &back)));
    EXPECT_EQ(back.modelPath, p.modelPath);
    EXPECT_EQ(back.layers, p.layers);
    EXPECT_EQ(back.plan, p.plan);
    EXPECT_EQ(back.evaluationText, p.evaluationText);
    EXPECT_DOUBLE_EQ(back.thresholds.kl_mean_max, 0.05);
    ASSERT_EQ(back.configurations.size(), 1u);
    EXPECT_EQ(back.configurations[0].settings, p.configurations[0].settings);
    ASSERT_EQ(back.sensitivity.size(), 1u);
    EXPECT_DOUBLE_EQ(back.sensitivity[0].kl_mean, 0.125);
    EXPECT_EQ(back.boards, p.boards);
    EXPECT_EQ(back.page, p.page);

    // Malformed documents: errors naming the file; `out` untouched.
    ProjectData untouched = back;
    for (const QByteArray& bad :
         {QByteArray("{\"format\": \"edgeproj\", \"version\": 1"),
          QByteArray("{\"format\": \"other\", \"version\": 1, \"model\": \"m\"}"),
          QByteArray("{\"format\": \"edgeproj\", \"version\": 7, \"model\": \"m\"}"),
          QByteArray("{\"format\": \"edgeproj\", \"version\": 1}"),
          QByteArray("{\"format\": \"edgeproj\", \"version\": 1, \"model\": \"m\", "
                     "\"plan\": {\"layers\": [{\"layer\": \"x\", \"precision\": \"int3\"}]}}")}) {
        const Result r = projectFromJson(bad, QStringLiteral("bad.edgeproj"), &back);
        EXPECT_FALSE(r.ok()) << bad.toStdString();
        EXPECT_TRUE(r.message().startsWith(QStringLiteral("bad.edgeproj: "))) << r.message().toStdString();
        EXPECT_EQ(back.modelPath, untouched.modelPath);
    }
    const QString dir = QString::fromStdString(edge::test::temp_dir("views-project").string());
    EXPECT_TRUE(failsWith(loadProjectFile(dir + QStringLiteral("/missing.edgeproj"), &back),
                          {QStringLiteral("missing.edgeproj"), QStringLiteral("cannot read")}));

    // Autosave: a change is written after the delay; a crash (no discard) leaves the file behind,
    // and the next session recovers exactly what was there; a clean exit removes it.
    const QString recovery = dir + QStringLiteral("/autosave.edgeproj");
    QFile::remove(recovery);
    {
        ProjectAutosave autosave([&] { return p; }, recovery, 20);
        EXPECT_FALSE(autosave.recoverable());
        QSignalSpy saved(&autosave, &ProjectAutosave::saved);
        autosave.markDirty();
        autosave.markDirty();  // coalesced
        EXPECT_TRUE(autosave.isDirty());
        ASSERT_TRUE(edge::views::test::waitUntil([&] { return saved.size() == 1; }, 5000));
        EXPECT_FALSE(autosave.isDirty());
        // The process "crashes" here: the object goes away without discard().
    }
    ProjectAutosave next([] { return ProjectData{}; }, recovery, 20);
    ASSERT_TRUE(next.recoverable());
    ProjectData recovered;
    ASSERT_TRUE(succeeded(loadProjectFile(next.path(), &recovered)));
    EXPECT_EQ(recovered.plan, p.plan);
    EXPECT_EQ(recovered.configurations.size(), 1u);
    EXPECT_FALSE(next.saveNow());  // an empty session (no model) writes nothing over it
    EXPECT_TRUE(next.recoverable());
    next.discard();
    EXPECT_FALSE(next.recoverable());
}
