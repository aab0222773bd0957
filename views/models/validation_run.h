// The studio's engine jobs on a plan (QtCore only): validation and compilation. One validation run: the open model quantized with the Layers page's
// plan (engine/quant apply_plan; AWQ/GPTQ layers calibrate on a text disjoint from what is scored:
// the calibration file, or the evaluation text, minus every paragraph the evaluation scores)
// and checked against the FP32 model by the engine's validation suite (engine/validate:
// perplexity, KL, top-1 agreement, numeric health, bit flips, decode jitter). Runs on a JobSlot
// worker; progress and cancel go through edge::Progress.
#pragma once
#include <QString>

#include <memory>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/quant/calib.h"
#include "engine/validate/consistency.h"
#include "views/models/configuration_model.h"
#include "views/models/layer_plan.h"
#include "views/models/model_document.h"

namespace edge::views {

struct ValidationSettings {
    QString textPath;   // evaluation text
    QString calibPath;  // calibration text ("": the evaluation text's paragraphs that are not scored)
    edge::validate::PplProtocol protocol = edge::validate::PplProtocol::Story;
    int maxParts = 6;     // stories / paragraphs scored
    int maxTokens = 128;  // per part
    bool bitflip = true;
    int jitterTokens = 64, jitterRuns = 5;  // the engine's defaults
    int calibSequences = 8, calibLength = 64;
    // Which of the calibration text's paragraphs calibrate: "all" of them in order, or
    // `calibSamples` chosen "random"ly or as "kmeans" representatives of the model's embeddings
    // (seeded; engine/calib select_paragraphs).
    QString calibSelect = QStringLiteral("all");
    int calibSamples = 16;
    quint64 calibSeed = 1;
    edge::validate::Thresholds thresholds;
};

struct ValidationOutcome {
    edge::validate::ValidationReport report;
    std::vector<LayerSetting> settings;  // the plan that was validated
    uint64_t bytes = 0;                  // weights of the quantized model
    uint64_t fp32Bytes = 0;
    // AWQ/GPTQ plans: where the calibration came from and what was removed from it ("kept 40 of 46
    // paragraphs; 6 also in the evaluation text were removed (lines ...)").
    QString calibration;
};

// Threads the studio's engine jobs use: one core is left to the UI thread.
int workerThreads();

// The calibration set of a plan's AWQ/GPTQ layers (null set when it has none): options.calibPath,
// or the evaluation text `evaluation`, minus every paragraph the evaluation scores under `options`.
struct Calibration {
    std::unique_ptr<edge::quant::CalibSet> set;
    QString note;  // "tinystories_sample.txt: kept 40 of 46 paragraphs; ..."
};
edge::Result<Calibration> prepareCalibration(const LoadedModel& model, const std::vector<LayerSetting>& settings,
                                             const ValidationSettings& options, const std::string& evaluation,
                                             edge::Progress* progress = nullptr);

// A plan with no quantized layer is refused (there is nothing to compare).
edge::Result<ValidationOutcome> runValidation(const std::shared_ptr<const LoadedModel>& model,
                                              const std::vector<LayerSetting>& settings,
                                              const ValidationSettings& options, edge::Progress* progress);

// Compile: the open model quantized with `settings` (calibrated as validation does, see
// prepareCalibration) and compiled for `target` ("cpu", "cuda-sm87", "cuda-sm90") into `outPath`
// (engine/compile: fusion, memory plan, the .edge file), on a JobSlot worker. The artifact names
// the file and its SHA-256.
edge::Result<EngineArtifact> buildEngine(std::shared_ptr<const LoadedModel> model,
                                         const std::vector<LayerSetting>& settings, const ValidationSettings& options,
                                         const QString& target, const QString& outPath, edge::Progress* progress);

// The failures of `report` under `t` (the engine's rules, re-applied when the user edits a
// threshold after the run). Empty = passed.
QStringList validationFailures(const edge::validate::ValidationReport& report, const edge::validate::Thresholds& t);

// The configuration a validation run makes (named `name`, judged under options.thresholds): its
// plan, calibration, quality and size figures, the verdict. What the Validation page adds to the
// Pareto page and `edgestudio-cli configs add` to a project.
Configuration configurationFrom(const ValidationOutcome& outcome, const LoadedModel& model,
                                const ValidationSettings& options, const QString& name);
// `base` with what `c` was validated with where it recorded it: the evaluation text, the
// calibration file, how both were cut. A compile of `c` calibrates on these, so its AWQ/GPTQ
// layers come out as the validated ones.
ValidationSettings validatedSettings(const Configuration& c, ValidationSettings base);

}  // namespace edge::views

namespace edge::views {
// The evaluation text the pages start with: the last one chosen (QSettings "evaluation/text"),
// else ../shared/data/tinystories_sample.txt found beside a parent of the executable's folder or
// the working directory; empty when none exists.
QString defaultEvaluationText();
void rememberEvaluationText(const QString& path);
}  // namespace edge::views
