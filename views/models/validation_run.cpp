#include "views/models/validation_run.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QThread>

#include <algorithm>
#include <optional>

#include "engine/calib/select_text.h"
#include "engine/compile/compile.h"
#include "engine/model/weights.h"
#include "engine/prune/structured.h"
#include "engine/quant/apply.h"
#include "engine/quant/calib.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/validate/perplexity.h"
#include "remote/client/sha256_file.h"

namespace edge::views {
namespace {

class ValidationText {
    Q_DECLARE_TR_FUNCTIONS(Validation)
};

// Maps an engine stage's [0,1] onto [lo,hi] of the job's progress and passes a cancel down.
class StageProgress {
public:
    StageProgress(edge::Progress* outer, double lo, double hi)
        : outer_(outer), lo_(lo), hi_(hi), inner_([this](double f, const std::string& stage) {
              if (edge::is_cancelled(outer_)) inner_.cancel();
              edge::report(outer_, lo_ + std::clamp(f, 0.0, 1.0) * (hi_ - lo_), stage);
          }) {
        if (edge::is_cancelled(outer_)) inner_.cancel();
    }
    edge::Progress* get() { return &inner_; }

private:
    edge::Progress* outer_;
    double lo_, hi_;
    edge::Progress inner_;
};

edge::Error error(const QString& text) { return edge::Error{text.toStdString()}; }

bool needsCalibration(const std::vector<LayerSetting>& settings) {
    return std::any_of(settings.begin(), settings.end(), [](const LayerSetting& s) {
        return s.quantized() && (s.method == PlanMethod::AWQ || s.method == PlanMethod::GPTQ);
    });
}

// The reference (the weights as stored, read in [0, mid)) and the model quantized with
// `settings` ([mid, hi) of the job's progress, block by block from the file): validation's first
// two stages. Layers the plan leaves at FP32 are read as stored too.
struct Quantized {
    std::shared_ptr<const edge::model::Model> ref;
    edge::quant::QuantizeResult result;
    uint64_t sourceBytes = 0;  // the model quantized: the pruned one when the plan prunes
};

// The plan's pruning applied (its groups' heads or channels removed, the model read as F32 for
// it), or nothing when no ratio is set.
edge::Result<std::optional<edge::prune::PrunedModel>> prunedFor(const LoadedModel& model,
                                                                const std::vector<LayerSetting>& settings) {
    const edge::prune::PruneSpec spec = settingsToPruneSpec(model.layers, settings);
    if (!edge::prune::prunes_anything(spec)) return std::optional<edge::prune::PrunedModel>();
    auto p = edge::prune::prune_with_spec(model.model, spec, ValidationText::tr("the plan's pruning").toStdString());
    if (!p.ok()) return p.error();
    return std::optional<edge::prune::PrunedModel>(std::move(p).value());
}
edge::Result<Quantized> quantizeStaged(const LoadedModel& model, const std::vector<LayerSetting>& settings,
                                       const edge::quant::CalibSet* calib, edge::Progress* progress, double mid,
                                       double hi) {
    auto ref = [&] {
        StageProgress stage(progress, 0.0, mid);
        return model.asStored(stage.get());
    }();
    if (!ref.ok()) return ref.error();
    auto pruned = prunedFor(model, settings);
    if (!pruned.ok()) return pruned.error();
    const edge::model::Model& source = *pruned ? (*pruned)->model : model.model;
    StageProgress stage(progress, mid, hi);
    edge::quant::ApplyOptions ao;
    ao.threads = workerThreads();
    auto q = edge::quant::apply_plan(source, settingsToPlan(model.layers, settings), calib, stage.get(), ao);
    if (!q.ok()) return q.error();
    if (!edge::model::weights_resident(q->model)) EDGE_TRY(edge::model::load_weights_as_stored(q->model));
    const uint64_t sourceBytes = *pruned ? source.weight_bytes() : (*ref)->weight_bytes();
    return Quantized{*ref, std::move(q).value(), sourceBytes};
}

}  // namespace

Configuration configurationFrom(const ValidationOutcome& outcome, const LoadedModel& model,
                                const ValidationSettings& options, const QString& name) {
    Configuration c;
    c.name = name;
    for (const auto& l : model.layers) c.layers.push_back(QString::fromStdString(l.name));
    c.settings = outcome.settings;
    c.calibPath = options.calibPath;
    c.calibration = outcome.calibration;
    c.evaluationPath = options.textPath;
    const auto& cr = outcome.report.consistency;
    c.pplRef = cr.ppl_ref;
    c.ppl = cr.ppl_test;
    c.klMean = cr.kl_mean;
    c.top1 = cr.top1_agreement;
    c.decodeMs = outcome.report.jitter.mean_ms;
    c.tokensPerS = outcome.report.jitter.tokens_per_s;
    c.bytes = outcome.bytes;
    c.fp32Bytes = outcome.fp32Bytes;
    c.scoredProtocol = QString::fromLatin1(edge::validate::ppl_protocol_name(options.protocol));
    c.scoredParts = options.maxParts;
    c.scoredTokens = options.maxTokens;
    c.calibSequences = options.calibSequences;
    c.calibLength = options.calibLength;
    c.calibSelect = options.calibSelect;
    c.calibSamples = options.calibSelect == QLatin1String("all") ? 0 : options.calibSamples;
    c.calibSeed = options.calibSeed;
    c.failures = validationFailures(outcome.report, options.thresholds);
    c.passed = c.failures.isEmpty();
    c.when = QDateTime::currentDateTimeUtc();
    return c;
}

ValidationSettings validatedSettings(const Configuration& c, ValidationSettings base) {
    if (!c.evaluationPath.isEmpty()) base.textPath = c.evaluationPath;
    base.calibPath = c.calibPath;
    if (auto p = edge::validate::parse_ppl_protocol(c.scoredProtocol.toStdString()); p.ok()) base.protocol = *p;
    if (c.scoredParts > 0) base.maxParts = c.scoredParts;
    if (c.scoredTokens > 0) base.maxTokens = c.scoredTokens;
    if (c.calibSequences > 0) base.calibSequences = c.calibSequences;
    if (c.calibLength > 0) base.calibLength = c.calibLength;
    base.calibSelect = c.calibSelect.isEmpty() ? QStringLiteral("all") : c.calibSelect;
    if (c.calibSamples > 0) base.calibSamples = c.calibSamples;
    base.calibSeed = c.calibSeed;
    return base;
}

int workerThreads() { return std::max(1, QThread::idealThreadCount() - 1); }

edge::Result<Calibration> prepareCalibration(const LoadedModel& model, const std::vector<LayerSetting>& settings,
                                             const ValidationSettings& options, const std::string& text,
                                             edge::Progress* progress) {
    Calibration out;
    if (!needsCalibration(settings)) return out;
    auto tok = edge::tokenizer::make_tokenizer(model.model.tokenizer);
    if (!tok.ok()) return tok.error();
    std::string source = text;
    QString sourcePath = options.textPath;
    if (!options.calibPath.isEmpty()) {
        QFile cf(options.calibPath);
        if (!cf.open(QIODevice::ReadOnly))
            return error(ValidationText::tr("Calibration: cannot read the calibration text %1").arg(options.calibPath));
        source = cf.readAll().toStdString();
        sourcePath = options.calibPath;
    }
    // What the evaluation scores never calibrates: those paragraphs leave the calibration text.
    edge::validate::PplOptions scored;
    scored.protocol = options.protocol;
    scored.max_parts = options.maxParts;
    scored.max_tokens = options.maxTokens;
    auto evalText = edge::validate::ppl_scored_text(**tok, text, scored);
    if (!evalText.ok()) return evalText.error();
    const edge::quant::DisjointCalib d = edge::quant::remove_evaluation_paragraphs(source, evalText.value());
    QString what = QString::fromStdString(edge::quant::describe(d));
    const QString fileName = QFileInfo(sourcePath).fileName();
    std::string calibText = d.text;
    if (options.calibSelect != QLatin1String("all")) {
        // The configuration's selection among what is left: k-means representatives of the
        // model's embeddings, or a seeded random draw.
        auto method = edge::calib::parse_select_method(options.calibSelect.toStdString());
        if (!method.ok())
            return error(ValidationText::tr("Calibration: %1").arg(QString::fromStdString(method.message())));
        auto stored = model.asStored();
        if (!stored.ok()) return stored.error();
        edge::calib::TextSelectOptions to;
        to.select.n = options.calibSamples;
        to.select.method = method.value();
        to.select.seed = options.calibSeed;
        to.select.threads = workerThreads();
        to.embed.max_tokens = options.calibLength;
        to.embed.threads = workerThreads();
        StageProgress stage(progress, 0.0, 0.1);
        auto picked = edge::calib::select_paragraphs(stored.value(), **tok, edge::calib::split_paragraphs(d.text), to,
                                                     fileName.toStdString(), stage.get());
        if (!picked.ok())
            return error(QString::fromStdString(picked.message()) + QStringLiteral(" (") + what + QStringLiteral(")"));
        if (edge::is_cancelled(progress)) return error(ValidationText::tr("Calibration cancelled"));
        calibText = picked->text();
        what += ValidationText::tr("; %1 chose %2 of %3 paragraphs (seed %4)")
                    .arg(options.calibSelect == QLatin1String("kmeans") ? ValidationText::tr("k-means")
                                                                        : ValidationText::tr("a random draw"))
                    .arg(picked->chosen.size())
                    .arg(picked->pool_size)
                    .arg(options.calibSeed);
    }
    out.note = QStringLiteral("%1: %2").arg(fileName, what);
    auto set = edge::quant::calib_from_text(**tok, calibText, options.calibSequences, options.calibLength);
    if (!set.ok())
        return error(fileName + QStringLiteral(": ") + QString::fromStdString(set.message()) + QStringLiteral(" (") +
                     what + QStringLiteral(")"));
    out.set = std::make_unique<edge::quant::CalibSet>(std::move(set).value());
    return out;
}

edge::Result<ValidationOutcome> runValidation(const std::shared_ptr<const LoadedModel>& model,
                                              const std::vector<LayerSetting>& settings,
                                              const ValidationSettings& options, edge::Progress* progress) {
    if (!model) return error(ValidationText::tr("Validation: no model is open"));
    if (settings.size() != model->layers.size())
        return error(ValidationText::tr("Validation: the plan does not match the open model"));
    const bool anyQuantized = std::any_of(settings.begin(), settings.end(), [](const LayerSetting& s) {
        return s.precision != edge::quant::Precision::FP32;
    });
    if (!anyQuantized)
        return error(ValidationText::tr("Validation: every layer is FP32 — set a precision on the Layers page first"));
    QFile file(options.textPath);
    if (!file.open(QIODevice::ReadOnly))
        return error(ValidationText::tr("Validation: cannot read the evaluation text %1").arg(options.textPath));
    const std::string text = file.readAll().toStdString();
    if (text.empty())
        return error(ValidationText::tr("Validation: the evaluation text %1 is empty").arg(options.textPath));

    auto calibration = prepareCalibration(*model, settings, options, text, progress);
    if (!calibration.ok()) return calibration.error();
    const std::unique_ptr<edge::quant::CalibSet>& calib = calibration->set;
    const QString calibNote = calibration->note;
    // The reference runs the whole FP32 model: its weights are read now (once per open model).
    auto staged = quantizeStaged(*model, settings, calib.get(), progress, 0.1, 0.35);
    if (!staged.ok()) return staged.error();
    const std::shared_ptr<const edge::model::Model>& ref = staged->ref;
    edge::quant::QuantizeResult* quantized = &staged->result;
    if (edge::is_cancelled(progress)) return error(ValidationText::tr("Validation cancelled"));

    ValidationOutcome out;
    out.settings = settings;
    out.calibration = calibNote;
    out.fp32Bytes = uint64_t(model->model.parameter_count()) * 4u;
    for (const auto& l : quantized->layers) out.bytes += l.bytes_after;
    // Layers outside the plan's list (embeddings, norms) are counted as the model holds them.
    uint64_t layerBefore = 0;
    for (const auto& l : quantized->layers) layerBefore += l.bytes_before;
    const uint64_t total = staged->sourceBytes;
    if (total > layerBefore) out.bytes += total - layerBefore;

    auto test = std::make_shared<const edge::model::Model>(std::move(quantized->model));
    edge::validate::ValidateOptions vo;
    vo.ppl.protocol = options.protocol;
    vo.ppl.max_parts = options.maxParts;
    vo.ppl.max_tokens = options.maxTokens;
    vo.thresholds = options.thresholds;
    vo.run_bitflip = options.bitflip;
    vo.jitter_tokens = options.jitterTokens;
    vo.jitter_runs = options.jitterRuns;
    vo.threads = workerThreads();
    StageProgress stage(progress, 0.35, 1.0);
    auto report = edge::validate::validate_quantized(ref, test, text, vo, stage.get());
    if (!report.ok()) return report.error();
    if (edge::is_cancelled(progress)) return error(ValidationText::tr("Validation cancelled"));
    out.report = std::move(report).value();
    return out;
}

edge::Result<EngineArtifact> buildEngine(std::shared_ptr<const LoadedModel> model,
                                         const std::vector<LayerSetting>& settings, const ValidationSettings& options,
                                         const QString& target, const QString& outPath, edge::Progress* progress) {
    if (!model) return error(ValidationText::tr("Compile: no model is open"));
    if (settings.size() != model->layers.size())
        return error(ValidationText::tr("Compile: the plan does not match the open model"));
    auto t = edge::compile::parse_target(target.toStdString());
    if (!t.ok()) return t.error();
    std::string text;
    if (needsCalibration(settings)) {
        QFile file(options.textPath);
        if (!file.open(QIODevice::ReadOnly))
            return error(ValidationText::tr("Compile: cannot read the evaluation text %1").arg(options.textPath));
        text = file.readAll().toStdString();
    }
    auto calibration = prepareCalibration(*model, settings, options, text, progress);
    if (!calibration.ok()) return calibration.error();
    // Quantized block by block from the file straight into the engine (compile's streamed path).
    edge::compile::CompileOptions co;
    co.target = t.value();
    co.out_path = outPath.toStdString();
    co.threads = workerThreads();
    co.plan = settingsToPlan(model->layers, settings);
    co.calib = calibration->set.get();
    auto pruned = prunedFor(*model, settings);
    if (!pruned.ok()) return pruned.error();
    auto report = [&] {
        StageProgress stage(progress, 0.1, 0.97);
        return edge::compile::compile(*pruned ? (*pruned)->model : model->model, co, stage.get());
    }();
    if (!report.ok()) return report.error();
    if (edge::is_cancelled(progress)) {
        QFile::remove(outPath);
        return error(ValidationText::tr("Compile cancelled"));
    }
    auto digest = edge::client::sha256_of_file(co.out_path);
    if (!digest.ok()) return digest.error();
    EngineArtifact a;
    a.target = target;
    a.path = QFileInfo(outPath).absoluteFilePath();
    a.sha256 = QString::fromStdString(edge::client::digest_hex(digest.value()));
    a.bytes = report->file_bytes;
    a.when = QDateTime::currentDateTimeUtc();
    return a;
}

QStringList validationFailures(const edge::validate::ValidationReport& r, const edge::validate::Thresholds& t) {
    QStringList f;
    if (r.consistency.kl_mean >= t.kl_mean_max)
        f << ValidationText::tr("mean KL %1 ≥ %2").arg(r.consistency.kl_mean, 0, 'f', 4).arg(t.kl_mean_max, 0, 'f', 4);
    for (const auto& h : r.health)
        if (h.nan + h.inf > 0)
            f << ValidationText::tr("%1: %2 NaN and %3 Inf activations")
                     .arg(QString::fromStdString(h.layer))
                     .arg(h.nan)
                     .arg(h.inf);
    if (r.bitflip_ran && r.bitflip_conf_drop > t.bitflip_conf_drop_max)
        f << ValidationText::tr("bit flips drop top-1 confidence by %1 %").arg(100 * r.bitflip_conf_drop, 0, 'f', 1);
    if (r.jitter.p99_ms - r.jitter.p50_ms >= t.jitter_ms_max)
        f << ValidationText::tr("decode jitter p99−p50 %1 ms ≥ %2 ms")
                 .arg(r.jitter.p99_ms - r.jitter.p50_ms, 0, 'f', 2)
                 .arg(t.jitter_ms_max, 0, 'f', 2);
    return f;
}

}  // namespace edge::views

#include <QDir>
#include <QSettings>

namespace edge::views {

QString defaultEvaluationText() {
    QString saved = QSettings().value(QStringLiteral("evaluation/text")).toString();
    if (!saved.isEmpty() && QFileInfo::exists(saved)) return saved;
    const QString rel = QStringLiteral("shared/data/tinystories_sample.txt");
    for (const QString& start : {QCoreApplication::applicationDirPath(), QDir::currentPath()}) {
        QDir d(start);
        for (int up = 0; up < 6; ++up) {
            const QString candidate = d.absoluteFilePath(QStringLiteral("../") + rel);
            if (QFileInfo::exists(candidate)) return QFileInfo(candidate).canonicalFilePath();
            if (!d.cdUp()) break;
        }
    }
    return QString();
}

void rememberEvaluationText(const QString& path) { QSettings().setValue(QStringLiteral("evaluation/text"), path); }

}  // namespace edge::views
