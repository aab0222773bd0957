// The JSON of configurations and Layers plans (views/models/configuration_model.h): what projects
// save. QtCore only, no QObject: the studio, `edgestudio-cli configs` and the project fuzzer share it.
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>

#include <cmath>

#include "views/models/configuration_model.h"

namespace edge::views {

namespace {
// The messages keep the item model's translation context.
class ConfigurationText {
    Q_DECLARE_TR_FUNCTIONS(edge::views::ConfigurationModel)
};
}  // namespace

QJsonObject settingsToJson(const std::vector<QString>& layers, const std::vector<LayerSetting>& settings) {
    QJsonArray arr;
    for (size_t i = 0; i < layers.size() && i < settings.size(); ++i) {
        const LayerSetting& s = settings[i];
        arr.append(QJsonObject{{QStringLiteral("layer"), layers[i]},
                               {QStringLiteral("precision"), precisionKey(s.precision)},
                               {QStringLiteral("method"), methodKey(s.method)},
                               {QStringLiteral("group"), double(s.group)},
                               {QStringLiteral("symmetric"), s.symmetric},
                               {QStringLiteral("pruning"), s.pruning}});
    }
    return QJsonObject{{QStringLiteral("layers"), arr}};
}

Result settingsFromJson(const QJsonObject& o, std::vector<QString>* layers, std::vector<LayerSetting>* settings) {
    const QJsonValue v = o.value(QStringLiteral("layers"));
    if (!v.isArray()) {
        return Result::failure(ConfigurationText::tr("a plan has no \"layers\" array"));
    }
    std::vector<QString> names;
    std::vector<LayerSetting> out;
    for (const auto& e : v.toArray()) {
        const QJsonObject l = e.toObject();
        const QString name = l.value(QStringLiteral("layer")).toString();
        const auto p = precisionFromKey(l.value(QStringLiteral("precision")).toString());
        const auto m = methodFromKey(l.value(QStringLiteral("method")).toString());
        if (name.isEmpty() || !p || !m) {
            return Result::failure(ConfigurationText::tr("plan entry %1 is malformed").arg(names.size()));
        }
        LayerSetting s;
        s.precision = *p;
        s.method = *m;
        // A group size is a whole number of elements (0: per channel); a pruning ratio a share.
        const double group = l.value(QStringLiteral("group")).toDouble(32);
        if (!(group >= 0.0 && group <= double(INT32_MAX)) || group != std::floor(group))
            return Result::failure(ConfigurationText::tr("plan entry %1 (%2): group %3 is not a group size")
                                       .arg(names.size())
                                       .arg(name)
                                       .arg(group));
        s.group = int64_t(group);
        s.symmetric = l.value(QStringLiteral("symmetric")).toBool(true);
        s.pruning = l.value(QStringLiteral("pruning")).toDouble(0);
        if (!(s.pruning >= 0.0 && s.pruning < 1.0))
            return Result::failure(ConfigurationText::tr("plan entry %1 (%2): pruning %3 is not a ratio in [0, 1)")
                                       .arg(names.size())
                                       .arg(name)
                                       .arg(s.pruning));
        names.push_back(name);
        out.push_back(s);
    }
    *layers = std::move(names);
    *settings = std::move(out);
    return {};
}

const EngineArtifact* Configuration::engine(const QString& target) const {
    for (auto it = engines.rbegin(); it != engines.rend(); ++it)
        if (it->target == target) return &*it;
    return nullptr;
}

const BoardMeasurement* Configuration::measurement(const QString& board) const {
    for (auto it = measurements.rbegin(); it != measurements.rend(); ++it)
        if (board.isEmpty() || it->board == board) return &*it;
    return nullptr;
}

namespace {

QJsonObject engineToJson(const EngineArtifact& e) {
    return {{QStringLiteral("target"), e.target},
            {QStringLiteral("path"), e.path},
            {QStringLiteral("sha256"), e.sha256},
            {QStringLiteral("bytes"), double(e.bytes)},
            {QStringLiteral("when"), e.when.toString(Qt::ISODate)}};
}

// A byte count: absent is 0; otherwise a whole number from 0 to 2^53 (what a double holds exactly).
bool readBytes(const QJsonObject& o, const QString& key, quint64* out) {
    const QJsonValue v = o.value(key);
    if (v.isUndefined()) {
        *out = 0;
        return true;
    }
    const double d = v.toDouble(-1.0);
    if (!v.isDouble() || !(d >= 0.0 && d <= 9007199254740992.0) || d != std::floor(d)) return false;
    *out = quint64(d);
    return true;
}

bool engineFromJson(const QJsonObject& o, EngineArtifact* e) {
    e->target = o.value(QStringLiteral("target")).toString();
    e->path = o.value(QStringLiteral("path")).toString();
    e->sha256 = o.value(QStringLiteral("sha256")).toString();
    e->when = QDateTime::fromString(o.value(QStringLiteral("when")).toString(), Qt::ISODate);
    return readBytes(o, QStringLiteral("bytes"), &e->bytes);
}

QJsonObject measurementToJson(const BoardMeasurement& m) {
    return {{QStringLiteral("board"), m.board},
            {QStringLiteral("machine"), m.machine},
            {QStringLiteral("engine_sha256"), m.engineSha256},
            {QStringLiteral("prompts"), m.prompts},
            {QStringLiteral("tokens"), m.tokens},
            {QStringLiteral("tpot_p50_ms"), m.tpotP50Ms},
            {QStringLiteral("tpot_p99_ms"), m.tpotP99Ms},
            {QStringLiteral("ttft_ms"), m.ttftMs},
            {QStringLiteral("tokens_per_s"), m.tokensPerS},
            {QStringLiteral("peak_rss_mib"), m.peakRssMiB},
            {QStringLiteral("kv_hit_rate"), m.kvHitRate},
            {QStringLiteral("workload"), m.workload},
            {QStringLiteral("when"), m.when.toString(Qt::ISODate)}};
}

BoardMeasurement measurementFromJson(const QJsonObject& o) {
    BoardMeasurement m;
    m.board = o.value(QStringLiteral("board")).toString();
    m.machine = o.value(QStringLiteral("machine")).toString();
    m.engineSha256 = o.value(QStringLiteral("engine_sha256")).toString();
    m.prompts = o.value(QStringLiteral("prompts")).toInt();
    m.tokens = o.value(QStringLiteral("tokens")).toInt();
    m.tpotP50Ms = o.value(QStringLiteral("tpot_p50_ms")).toDouble();
    m.tpotP99Ms = o.value(QStringLiteral("tpot_p99_ms")).toDouble();
    m.ttftMs = o.value(QStringLiteral("ttft_ms")).toDouble();
    m.tokensPerS = o.value(QStringLiteral("tokens_per_s")).toDouble();
    m.peakRssMiB = o.value(QStringLiteral("peak_rss_mib")).toDouble();
    m.kvHitRate = o.value(QStringLiteral("kv_hit_rate")).toDouble(-1);
    m.workload = o.value(QStringLiteral("workload")).toString();
    m.when = QDateTime::fromString(o.value(QStringLiteral("when")).toString(), Qt::ISODate);
    return m;
}

}  // namespace

QJsonObject configurationToJson(const Configuration& c) {
    QJsonObject o{{QStringLiteral("name"), c.name},
                  {QStringLiteral("ppl_ref"), c.pplRef},
                  {QStringLiteral("ppl"), c.ppl},
                  {QStringLiteral("kl_mean"), c.klMean},
                  {QStringLiteral("top1"), c.top1},
                  {QStringLiteral("decode_ms"), c.decodeMs},
                  {QStringLiteral("tokens_per_s"), c.tokensPerS},
                  {QStringLiteral("bytes"), double(c.bytes)},
                  {QStringLiteral("fp32_bytes"), double(c.fp32Bytes)},
                  {QStringLiteral("passed"), c.passed},
                  {QStringLiteral("failures"), QJsonArray::fromStringList(c.failures)},
                  {QStringLiteral("when"), c.when.toString(Qt::ISODate)}};
    o.insert(QStringLiteral("plan"), settingsToJson(c.layers, c.settings));
    if (!c.evaluationPath.isEmpty() || !c.calibration.isEmpty())
        o.insert(QStringLiteral("calibration"), QJsonObject{{QStringLiteral("file"), c.calibPath},
                                                            {QStringLiteral("note"), c.calibration},
                                                            {QStringLiteral("evaluation"), c.evaluationPath},
                                                            {QStringLiteral("protocol"), c.scoredProtocol},
                                                            {QStringLiteral("parts"), c.scoredParts},
                                                            {QStringLiteral("tokens"), c.scoredTokens},
                                                            {QStringLiteral("sequences"), c.calibSequences},
                                                            {QStringLiteral("length"), c.calibLength},
                                                            {QStringLiteral("select"), c.calibSelect},
                                                            {QStringLiteral("samples"), c.calibSamples},
                                                            {QStringLiteral("seed"), double(c.calibSeed)}});
    QJsonArray engines, measurements;
    for (const auto& e : c.engines) engines.append(engineToJson(e));
    for (const auto& m : c.measurements) measurements.append(measurementToJson(m));
    if (!engines.isEmpty()) o.insert(QStringLiteral("engines"), engines);
    QJsonObject predicted;
    for (const auto& [board, ms] : c.predictedTpotMs) predicted.insert(board, ms);
    if (!predicted.isEmpty()) o.insert(QStringLiteral("predicted_tpot_ms"), predicted);
    if (!measurements.isEmpty()) o.insert(QStringLiteral("measurements"), measurements);
    return o;
}

Result configurationFromJson(const QJsonObject& o, Configuration* c) {
    Configuration r;
    r.name = o.value(QStringLiteral("name")).toString();
    if (r.name.isEmpty() || !o.value(QStringLiteral("ppl")).isDouble()) {
        return Result::failure(ConfigurationText::tr("a configuration has no name or perplexity"));
    }
    r.pplRef = o.value(QStringLiteral("ppl_ref")).toDouble();
    r.ppl = o.value(QStringLiteral("ppl")).toDouble();
    r.klMean = o.value(QStringLiteral("kl_mean")).toDouble();
    r.top1 = o.value(QStringLiteral("top1")).toDouble();
    r.decodeMs = o.value(QStringLiteral("decode_ms")).toDouble();
    r.tokensPerS = o.value(QStringLiteral("tokens_per_s")).toDouble();
    for (const auto& [key, out] :
         {std::pair{QStringLiteral("bytes"), &r.bytes}, std::pair{QStringLiteral("fp32_bytes"), &r.fp32Bytes}})
        if (!readBytes(o, key, out))
            return Result::failure(
                ConfigurationText::tr("configuration %1: \"%2\" is not a byte count").arg(r.name, key));
    r.passed = o.value(QStringLiteral("passed")).toBool();
    for (const auto& f : o.value(QStringLiteral("failures")).toArray()) r.failures << f.toString();
    r.when = QDateTime::fromString(o.value(QStringLiteral("when")).toString(), Qt::ISODate);
    const QJsonObject calib = o.value(QStringLiteral("calibration")).toObject();
    r.calibPath = calib.value(QStringLiteral("file")).toString();
    r.calibration = calib.value(QStringLiteral("note")).toString();
    r.evaluationPath = calib.value(QStringLiteral("evaluation")).toString();
    r.scoredProtocol = calib.value(QStringLiteral("protocol")).toString();
    for (const auto& [key, out] :
         {std::pair{QStringLiteral("parts"), &r.scoredParts}, std::pair{QStringLiteral("tokens"), &r.scoredTokens},
          std::pair{QStringLiteral("sequences"), &r.calibSequences},
          std::pair{QStringLiteral("length"), &r.calibLength}, std::pair{QStringLiteral("samples"), &r.calibSamples}}) {
        const double v = calib.value(key).toDouble(0);
        if (!(v >= 0.0 && v <= double(INT32_MAX)) || v != std::floor(v))
            return Result::failure(
                ConfigurationText::tr("configuration %1: calibration \"%2\" is not a count").arg(r.name, key));
        *out = int(v);
    }
    r.calibSelect = calib.value(QStringLiteral("select")).toString();
    if (!r.calibSelect.isEmpty() && r.calibSelect != QLatin1String("all") && r.calibSelect != QLatin1String("random") &&
        r.calibSelect != QLatin1String("kmeans"))
        return Result::failure(ConfigurationText::tr("configuration %1: calibration selection \"%2\" is not all, "
                                                     "random or kmeans")
                                   .arg(r.name, r.calibSelect.left(32)));
    const double seed = calib.value(QStringLiteral("seed")).toDouble(1);
    if (!(seed >= 0.0 && seed <= 9007199254740992.0) || seed != std::floor(seed))
        return Result::failure(
            ConfigurationText::tr("configuration %1: calibration \"seed\" is not a seed").arg(r.name));
    r.calibSeed = quint64(seed);
    for (const auto& e : o.value(QStringLiteral("engines")).toArray()) {
        EngineArtifact engine;
        if (!engineFromJson(e.toObject(), &engine))
            return Result::failure(ConfigurationText::tr("configuration %1: engine %2: \"bytes\" is not a byte count")
                                       .arg(r.name)
                                       .arg(r.engines.size()));
        r.engines.push_back(std::move(engine));
    }
    for (const auto& m : o.value(QStringLiteral("measurements")).toArray())
        r.measurements.push_back(measurementFromJson(m.toObject()));
    const QJsonObject predicted = o.value(QStringLiteral("predicted_tpot_ms")).toObject();
    for (auto it = predicted.begin(); it != predicted.end(); ++it) {
        const double ms = it.value().toDouble(-1);
        if (!(ms >= 0.0 && ms < 1e12))
            return Result::failure(ConfigurationText::tr("configuration %1: the predicted time on %2 is not a time")
                                       .arg(r.name, it.key().left(64)));
        r.predictedTpotMs[it.key()] = ms;
    }
    if (auto plan = settingsFromJson(o.value(QStringLiteral("plan")).toObject(), &r.layers, &r.settings); !plan)
        return plan;
    *c = std::move(r);
    return {};
}

}  // namespace edge::views
