// The validated configurations of a project (QtCore/QtGui only): each validation run adds one —
// its per-layer plan, perplexity, KL, top-1 agreement, decode latency and weight bytes — and the
// Pareto page draws them. paretoFront() marks the configurations no other one beats on both
// perplexity and the chosen cost (decode latency or size). PlanDiffModel shows two configurations'
// plans side by side.
#pragma once
#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

#include <map>
#include <vector>

#include "views/models/layer_plan.h"
#include "views/models/result.h"

namespace edge::views {

// An engine compiled from a configuration (the studio's Compile action): where it is, its SHA-256
// (what the board's SHA256SUMS must list for a measurement to belong to it) and its target. A
// configuration's plan never changes once validated (editing the Layers plan and validating again
// makes a new configuration), so its engines and measurements cannot go stale.
struct EngineArtifact {
    QString target;  // "cpu", "cuda-sm87", "cuda-sm90"
    QString path, sha256;
    quint64 bytes = 0;
    QDateTime when;
};

// What a board measured running a configuration's engine (a profile on the Boards page).
struct BoardMeasurement {
    QString board, machine;  // the board's name; "hostname · cpu · backend" as its agent says
    QString engineSha256;
    int prompts = 0, tokens = 0;
    double tpotP50Ms = 0, tpotP99Ms = 0, ttftMs = 0, tokensPerS = 0, peakRssMiB = 0;
    double kvHitRate = -1;  // < 0: not reported
    QString workload;       // the named profile workload it ran ("": prompts typed for that run)
    QDateTime when;
};

struct Configuration {
    QString name;
    std::vector<QString> layers;  // canonical names, in model order
    std::vector<LayerSetting> settings;
    // The calibration set AWQ/GPTQ layers saw: the file ("": the evaluation text) and what was
    // removed from it so that it shares no paragraph with what the evaluation scores.
    QString calibPath, calibration, evaluationPath;
    // How the evaluation and calibration text were cut (what a compile must cut the same way to
    // quantize AWQ/GPTQ layers as they were validated): the scoring protocol, parts and tokens per
    // part, calibration sequences and their length. 0 / "": not recorded (older projects).
    QString scoredProtocol;
    int scoredParts = 0, scoredTokens = 0, calibSequences = 0, calibLength = 0;
    // How the calibration paragraphs were chosen out of that text: "" / "all" (every paragraph,
    // in order), "random" or "kmeans" (calibSamples of them, seeded by calibSeed: engine/calib
    // select_paragraphs, what `calib-select` does).
    QString calibSelect;
    int calibSamples = 0;
    quint64 calibSeed = 1;
    double pplRef = 0, ppl = 0, klMean = 0, top1 = 0;
    double decodeMs = 0, tokensPerS = 0;  // mean per-token decode latency of the quantized model
    quint64 bytes = 0, fp32Bytes = 0;
    bool passed = false;
    QStringList failures;  // why it failed, as the Validation page said it
    QDateTime when;
    std::vector<EngineArtifact> engines;         // per target, newest last
    std::vector<BoardMeasurement> measurements;  // per board run, newest last
    // Predicted time per output token (ms) per board, from the board's cost model (what the
    // measurement on that board checks; views/models/board_costs.h).
    std::map<QString, double> predictedTpotMs;
    const EngineArtifact* engine(const QString& target) const;
    // The newest measurement (of `board`, or of any board when empty); null when none.
    const BoardMeasurement* measurement(const QString& board = QString()) const;
};

QJsonObject settingsToJson(const std::vector<QString>& layers, const std::vector<LayerSetting>& settings);
// false (and `error`) on a malformed object.
Result settingsFromJson(const QJsonObject& o, std::vector<QString>* layers, std::vector<LayerSetting>* settings);
QJsonObject configurationToJson(const Configuration& c);
Result configurationFromJson(const QJsonObject& o, Configuration* c);

// Indices of the points not dominated (both coordinates minimised), sorted by x.
std::vector<int> paretoFront(const std::vector<double>& x, const std::vector<double>& y);

class ConfigurationModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, PerplexityColumn, KlColumn, LatencyColumn, SizeColumn, VerdictColumn, ColumnCount };
    // Latency: the host's decode timing from validation; the Board* costs come from the newest
    // board measurement (time per output token p50, time to first token, tokens/s, peak memory);
    // configurations never measured on a board have no such cost.
    enum Cost { Latency, Size, BoardTpot, BoardTtft, BoardTokensPerS, BoardPeakMemory };
    // The quality axis: perplexity of the quantized model, mean KL from the FP32 model, top-1 agreement.
    enum Quality { Perplexity, KlMean, Top1 };
    enum Role { FrontRole = Qt::UserRole, SortRole };

    explicit ConfigurationModel(QObject* parent = nullptr);

    int add(Configuration c);  // returns its row
    void removeLast();
    void setConfigurations(std::vector<Configuration> list);
    // Records an engine compiled for row (replacing one of the same target).
    void setEngine(int row, const EngineArtifact& engine);
    // Attaches a board's measurement to the configuration whose engine has `m.engineSha256`;
    // returns its row, or -1 when no configuration compiled that engine.
    int addMeasurement(const BoardMeasurement& m);
    void setPredictions(int row, std::map<QString, double> predictedTpotMs);
    // The row whose engine (any target) has this SHA-256, or -1.
    int rowOfEngine(const QString& sha256) const;
    const std::vector<Configuration>& configurations() const { return list_; }
    const Configuration& at(int row) const { return list_.at(size_t(row)); }
    QString nextName() const;
    static double cost(const Configuration& c, Cost cost);
    static double quality(const Configuration& c, Quality quality);
    static bool isBoardCost(Cost c) { return c >= BoardTpot; }
    // Tokens/s and top-1 agreement are better higher: the frontier maximises them.
    static bool higherIsBetter(Cost c) { return c == BoardTokensPerS; }
    static bool higherIsBetter(Quality q) { return q == Top1; }
    // Rows on the frontier for `cost` against `quality`.
    std::vector<int> front(Cost cost, Quality quality = Perplexity) const;
    void retranslate();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    // An engine was compiled for `row`, or a board measured it.
    void artifactsChanged(int row);

private:
    std::vector<Configuration> list_;
};

// Layer × {A, B}: the settings of two configurations, then their figures (quality, size, host
// latency, calibration, and per board the measured and predicted times); DiffRole is true where
// they differ, FigureRole on the figure rows.
class PlanDiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { LayerColumn, AColumn, BColumn, ColumnCount };
    enum Role { DiffRole = Qt::UserRole, FigureRole };
    explicit PlanDiffModel(QObject* parent = nullptr);
    void setPair(const Configuration* a, const Configuration* b);
    int differences() const;  // layers whose settings differ
    int figureRows() const;
    static QString settingText(const LayerSetting& s);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString layer;
        QString a, b;
        bool differs = false;
        bool figure = false;
    };
    std::vector<Row> rows_;
    QString nameA_, nameB_;
};

}  // namespace edge::views
