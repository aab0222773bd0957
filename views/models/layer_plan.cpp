#include "views/models/layer_plan.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include <algorithm>
#include <map>

#include "engine/core/quant_format.h"

namespace edge::views {

namespace {

using edge::quant::Precision;

class LayerPlanText {
    Q_DECLARE_TR_FUNCTIONS(LayerPlan)
};

QString layerName(const edge::model::LayerInfo& l) { return QString::fromStdString(l.name); }

}  // namespace

QString precisionKey(Precision p) { return QString::fromLatin1(edge::quant::precision_name(p)); }

std::optional<Precision> precisionFromKey(const QString& key) {
    const QString k = key.trimmed().toLower();
    for (Precision p : {Precision::FP32, Precision::FP16, Precision::INT8, Precision::INT4})
        if (k == precisionKey(p)) return p;
    return std::nullopt;
}

QString methodKey(PlanMethod m) {
    switch (m) {
        case PlanMethod::None: return QStringLiteral("none");
        case PlanMethod::RTN: return QStringLiteral("rtn");
        case PlanMethod::AWQ: return QStringLiteral("awq");
        case PlanMethod::GPTQ: return QStringLiteral("gptq");
    }
    return QString();
}

std::optional<PlanMethod> methodFromKey(const QString& key) {
    const QString k = key.trimmed().toLower();
    for (PlanMethod m : {PlanMethod::None, PlanMethod::RTN, PlanMethod::AWQ, PlanMethod::GPTQ})
        if (k == methodKey(m)) return m;
    return std::nullopt;
}

int64_t rowLength(const edge::model::LayerInfo& layer) { return layer.shape.empty() ? 0 : layer.shape.back(); }

bool isTiedOutput(const edge::model::Model& model, const edge::model::LayerInfo& layer) {
    return layer.kind == "output" && model.config.tied_embeddings;
}

LayerSetting patched(LayerSetting s, const SettingPatch& patch, const edge::model::LayerInfo& layer, bool tiedOutput,
                     bool repairTied) {
    const bool wasQuantized = s.quantized();
    if (patch.precision) s.precision = *patch.precision;
    if (patch.method) s.method = *patch.method;
    if (patch.group) s.group = *patch.group;
    if (patch.symmetric) s.symmetric = *patch.symmetric;
    if (patch.pruning) s.pruning = *patch.pruning;
    if (!s.quantized()) {
        s.method = PlanMethod::None;
        s.symmetric = true;
        s.group = 32;
        return s;
    }
    if (s.method == PlanMethod::None) s.method = PlanMethod::RTN;
    // A layer newly quantized without a group size: rows shorter than the default get one scale each.
    if (!wasQuantized && !patch.group && s.group > rowLength(layer)) s.group = 0;
    if (repairTied && tiedOutput && s.method != PlanMethod::RTN) s.method = PlanMethod::RTN;
    return s;
}

QString pruneGroupOf(const edge::model::LayerInfo& layer) {
    if (layer.block < 0) return QString();
    const QString block = QStringLiteral("blk.%1.").arg(layer.block);
    if (layer.kind.rfind("attn", 0) == 0) return block + QStringLiteral("attn");
    if (layer.kind.rfind("ffn", 0) == 0) return block + QStringLiteral("ffn");
    return QString();
}

edge::prune::PruneSpec settingsToPruneSpec(const std::vector<edge::model::LayerInfo>& layers,
                                           const std::vector<LayerSetting>& s) {
    std::map<QString, double> ratio;
    for (size_t i = 0; i < layers.size() && i < s.size(); ++i)
        if (s[i].pruning > 0.0) {
            const QString g = pruneGroupOf(layers[i]);
            if (!g.isEmpty()) ratio[g] = std::max(ratio[g], s[i].pruning);
        }
    edge::prune::PruneSpec spec;
    for (const auto& [g, r] : ratio) spec.rules.emplace_back(g.toStdString(), r);
    return spec;
}

QString settingProblem(const LayerSetting& s, const edge::model::LayerInfo& layer, bool tiedOutput) {
    const QString name = layerName(layer);
    if (!(s.pruning >= 0.0 && s.pruning <= kMaxPruning))
        return LayerPlanText::tr("%1: a pruning ratio must be between 0 and %2 %")
            .arg(name)
            .arg(kMaxPruning * 100.0, 0, 'f', 0);
    if (s.pruning > 0.0 && pruneGroupOf(layer).isEmpty())
        return LayerPlanText::tr("%1: only attention and MLP layers are pruned (whole heads or channels)").arg(name);
    if (!s.quantized()) {
        if (s.method != PlanMethod::None)
            return LayerPlanText::tr("%1: %2 takes no quantization method")
                .arg(name, precisionKey(s.precision).toUpper());
        return QString();
    }
    if (s.method == PlanMethod::None)
        return LayerPlanText::tr("%1: %2 needs a method (RTN, AWQ or GPTQ)")
            .arg(name, precisionKey(s.precision).toUpper());
    if (s.group < 0) return LayerPlanText::tr("%1: the group size must be positive").arg(name);
    const int64_t cols = rowLength(layer);
    if (s.group > cols)
        return LayerPlanText::tr("%1: group size %2 is larger than a row (%3 elements)")
            .arg(name)
            .arg(s.group)
            .arg(cols);
    if (tiedOutput && s.method != PlanMethod::RTN)
        return LayerPlanText::tr("%1: the output head shares the token embedding; only RTN can quantize it").arg(name);
    return QString();
}

uint64_t estimatedBytes(const LayerSetting& s, const edge::model::LayerInfo& layer) {
    switch (s.precision) {
        case Precision::FP32: return layer.bytes;
        case Precision::FP16: return uint64_t(layer.params) * 2u;
        case Precision::INT8:
        case Precision::INT4: break;
    }
    edge::QuantInfo q;
    q.bits = s.precision == Precision::INT8 ? 8 : 4;
    q.symmetric = s.symmetric;
    q.grouping = s.group == 0 ? edge::QGrouping::PerChannel : edge::QGrouping::Group;
    q.group_size = s.group == 0 ? rowLength(layer) : s.group;
    // The plan's default scale storage (half for INT4, float32 for INT8: rtn.h QuantSpec::scales).
    edge::quant::QuantSpec spec;
    spec.bits = q.bits;
    q.scale_type = edge::quant::wants_f16_scales(spec) ? edge::QScale::F16 : edge::QScale::F32;
    const int64_t cols = rowLength(layer);
    const int64_t rows = cols > 0 ? layer.params / cols : 0;
    if (edge::quant_layout(q, rows, cols) != nullptr) return layer.bytes;
    return q.total_bytes;
}

std::vector<LayerSetting> settingsByName(const std::vector<edge::model::LayerInfo>& layers,
                                         const std::vector<QString>& names, const std::vector<LayerSetting>& settings,
                                         int* matched) {
    std::vector<LayerSetting> out(layers.size());
    int n = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
        const QString name = QString::fromStdString(layers[i].name);
        for (size_t j = 0; j < names.size() && j < settings.size(); ++j)
            if (names[j] == name) {
                out[i] = settings[j];
                ++n;
            }
    }
    if (matched) *matched = n;
    return out;
}

edge::quant::QuantPlan settingsToPlan(const std::vector<edge::model::LayerInfo>& layers,
                                      const std::vector<LayerSetting>& s) {
    edge::quant::QuantPlan plan;
    for (size_t i = 0; i < layers.size() && i < s.size(); ++i) {
        edge::quant::LayerRule r;
        r.pattern = layers[i].name;
        r.precision = s[i].precision;
        if (s[i].quantized()) {
            r.method = s[i].method == PlanMethod::AWQ    ? edge::QMethod::AWQ
                       : s[i].method == PlanMethod::GPTQ ? edge::QMethod::GPTQ
                                                         : edge::QMethod::RTN;
            if (s[i].group == 0)
                r.grouping = edge::QGrouping::PerChannel;
            else
                r.group_size = s[i].group;
            r.symmetric = s[i].symmetric;
        }
        plan.rules.push_back(std::move(r));
    }
    return plan;
}

QByteArray settingsToPlanJson(const std::vector<edge::model::LayerInfo>& layers, const std::vector<LayerSetting>& s) {
    QByteArray text = QByteArray::fromStdString(edge::quant::plan_to_json(settingsToPlan(layers, s)));
    QJsonObject prune;
    for (const auto& [group, ratio] : settingsToPruneSpec(layers, s).rules)
        prune.insert(QString::fromStdString(group), ratio);
    const qsizetype close = text.lastIndexOf('}');
    if (!prune.isEmpty() && close > 0) {
        const QJsonObject wrapper{{QStringLiteral("layers"), prune}};
        const QByteArray extra = QByteArrayLiteral(",\n  \"prune\": ") +
                                 QJsonDocument(wrapper).toJson(QJsonDocument::Compact) + QByteArrayLiteral("\n");
        text.insert(close, extra);
        // plan_to_json ends its last member with a newline before '}': drop it so the comma follows.
        if (close > 0 && text.at(close - 1) == '\n') text.remove(close - 1, 1);
    }
    if (!text.endsWith('\n')) text.append('\n');
    return text;
}

Result loadPlanFile(const QString& path, const edge::model::Model& model,
                    const std::vector<edge::model::LayerInfo>& layers, std::vector<LayerSetting>* out) {
    const QString file = QFileInfo(path).fileName();
    auto fail = [&](const QString& why) {
        return Result::failure(LayerPlanText::tr("Could not open the plan %1: %2").arg(file, why));
    };
    auto plan = edge::quant::load_plan(path.toStdString());
    if (!plan.ok()) return fail(QString::fromStdString(plan.message()));
    auto choices = edge::quant::resolve_plan(model, *plan);
    if (!choices.ok()) return fail(QString::fromStdString(choices.message()));
    if (choices->size() != layers.size()) return fail(LayerPlanText::tr("the plan does not match the model's layers"));

    std::vector<LayerSetting> settings(layers.size());
    for (size_t i = 0; i < layers.size(); ++i) {
        const edge::quant::LayerChoice& c = (*choices)[i];
        LayerSetting& s = settings[i];
        s.precision = c.precision;
        if (s.quantized()) {
            if (c.spec.grouping == edge::QGrouping::Flat)
                return fail(LayerPlanText::tr("%1 uses flat groups, which the Layers page cannot edit")
                                .arg(layerName(layers[i])));
            s.method = c.spec.method == edge::QMethod::AWQ    ? PlanMethod::AWQ
                       : c.spec.method == edge::QMethod::GPTQ ? PlanMethod::GPTQ
                                                              : PlanMethod::RTN;
            s.group = c.spec.grouping == edge::QGrouping::PerChannel ? 0 : c.spec.group_size;
            s.symmetric = c.spec.symmetric;
        }
    }

    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return fail(f.errorString());
    const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    // Pruning: every layer of each group a key names (a group, a pattern over groups, or - as
    // plans saved before groups - one of the group's layers) takes the key's ratio; "ratio" sets
    // every group's.
    const QJsonObject pruneObject = root.value(QStringLiteral("prune")).toObject();
    if (pruneObject.contains(QStringLiteral("ratio"))) {
        const double r = pruneObject.value(QStringLiteral("ratio")).toDouble(-1.0);
        for (size_t i = 0; i < layers.size(); ++i)
            if (!pruneGroupOf(layers[i]).isEmpty()) settings[i].pruning = r;
    }
    const QJsonObject prune = pruneObject.value(QStringLiteral("layers")).toObject();
    for (auto it = prune.begin(); it != prune.end(); ++it) {
        const std::string key = it.key().toStdString();
        QString keyGroup;  // the group of the layer the key names (older plans), if it names one
        for (const auto& l : layers)
            if (layerName(l) == it.key()) keyGroup = pruneGroupOf(l);
        bool named = false;
        for (size_t i = 0; i < layers.size(); ++i) {
            const QString group = pruneGroupOf(layers[i]);
            if (group.isEmpty()) continue;
            if (group != keyGroup && !edge::prune::glob_match(key, group.toStdString())) continue;
            settings[i].pruning = it.value().toDouble(-1.0);
            named = true;
        }
        if (!named) return fail(LayerPlanText::tr("pruning names the unknown layer %1").arg(it.key()));
    }
    for (size_t i = 0; i < layers.size(); ++i) {
        const QString problem = settingProblem(settings[i], layers[i], isTiedOutput(model, layers[i]));
        if (!problem.isEmpty()) return fail(problem);
    }
    *out = std::move(settings);
    return {};
}

}  // namespace edge::views
