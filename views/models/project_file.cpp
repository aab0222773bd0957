// The project file format (views/models/project.h): JSON text to ProjectData and back, and the
// atomic file write. QtCore only, no QObject: what the studio, `edgestudio-cli configs` and the
// project fuzzer (tests/fuzz/fuzz_project.cpp) share.
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QSaveFile>

#include "views/models/project.h"

namespace edge::views {
namespace {
class ProjectText {
    Q_DECLARE_TR_FUNCTIONS(Project)
};
}  // namespace

QByteArray projectToJson(const ProjectData& p) {
    QJsonObject o{{QStringLiteral("format"), QStringLiteral("edgeproj")},
                  {QStringLiteral("version"), 1},
                  {QStringLiteral("model"), p.modelPath},
                  {QStringLiteral("tokenizer"), p.tokenizer},
                  {QStringLiteral("page"), p.page}};
    o.insert(QStringLiteral("plan"), settingsToJson(p.layers, p.plan));
    const edge::validate::Thresholds& t = p.thresholds;
    o.insert(QStringLiteral("evaluation"),
             QJsonObject{{QStringLiteral("text"), p.evaluationText},
                         {QStringLiteral("thresholds"),
                          QJsonObject{{QStringLiteral("kl_mean_max"), t.kl_mean_max},
                                      {QStringLiteral("jitter_ms_max"), t.jitter_ms_max},
                                      {QStringLiteral("bitflip_conf_drop_max"), t.bitflip_conf_drop_max},
                                      {QStringLiteral("scale_ratio_warn"), t.scale_ratio_warn}}}});
    QJsonArray configs;
    for (const auto& c : p.configurations) configs.append(configurationToJson(c));
    o.insert(QStringLiteral("configurations"), configs);
    const QByteArray sens = QByteArray::fromStdString(edge::quant::sensitivity_to_json(p.sensitivity));
    o.insert(QStringLiteral("sensitivity"), QJsonDocument::fromJson(sens).array());
    o.insert(QStringLiteral("boards"), QJsonArray::fromStringList(p.boards));
    QJsonArray workloads;
    for (const auto& w : p.workloads) workloads.append(workloadToJson(w));
    if (!workloads.isEmpty()) o.insert(QStringLiteral("workloads"), workloads);
    // The boards' cost models, as the cost-models file of `deploy --cost-models` holds them.
    std::string costs;
    for (const auto& [board, cm] : p.costModels) {
        auto next = edge::runtime::with_board_cost_model(costs, "the project", board.toStdString(), cm);
        if (next.ok()) costs = std::move(next).value();
    }
    if (!costs.empty())
        o.insert(QStringLiteral("cost_models"), QJsonDocument::fromJson(QByteArray::fromStdString(costs)).object());
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

Result projectFromJson(const QByteArray& json, const QString& source, ProjectData* out) {
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (doc.isNull() || !doc.isObject()) {
        return Result::failure(
            ProjectText::tr("%1: not a project file (%2 at byte %3)").arg(source, pe.errorString()).arg(pe.offset));
    }
    const QJsonObject o = doc.object();
    if (o.value(QStringLiteral("format")).toString() != QStringLiteral("edgeproj")) {
        return Result::failure(ProjectText::tr("%1: not a project file (no \"format\": \"edgeproj\")").arg(source));
    }
    if (o.value(QStringLiteral("version")).toInt() != 1) {
        return Result::failure(ProjectText::tr("%1: project version %2 is not supported")
                                   .arg(source)
                                   .arg(o.value(QStringLiteral("version")).toInt()));
    }
    ProjectData p;
    p.modelPath = o.value(QStringLiteral("model")).toString();
    if (p.modelPath.isEmpty()) {
        return Result::failure(ProjectText::tr("%1: the project names no model").arg(source));
    }
    p.tokenizer = o.value(QStringLiteral("tokenizer")).toString();
    p.page = o.value(QStringLiteral("page")).toString();
    if (o.contains(QStringLiteral("plan"))) {
        if (const auto r = settingsFromJson(o.value(QStringLiteral("plan")).toObject(), &p.layers, &p.plan); !r)
            return Result::failure(QStringLiteral("%1: %2").arg(source, r.message()));
    }
    const QJsonObject ev = o.value(QStringLiteral("evaluation")).toObject();
    p.evaluationText = ev.value(QStringLiteral("text")).toString();
    const QJsonObject th = ev.value(QStringLiteral("thresholds")).toObject();
    p.thresholds.kl_mean_max = th.value(QStringLiteral("kl_mean_max")).toDouble(p.thresholds.kl_mean_max);
    p.thresholds.jitter_ms_max = th.value(QStringLiteral("jitter_ms_max")).toDouble(p.thresholds.jitter_ms_max);
    p.thresholds.bitflip_conf_drop_max =
        th.value(QStringLiteral("bitflip_conf_drop_max")).toDouble(p.thresholds.bitflip_conf_drop_max);
    p.thresholds.scale_ratio_warn =
        th.value(QStringLiteral("scale_ratio_warn")).toDouble(p.thresholds.scale_ratio_warn);
    for (const auto& v : o.value(QStringLiteral("configurations")).toArray()) {
        Configuration c;
        if (const auto r = configurationFromJson(v.toObject(), &c); !r)
            return Result::failure(QStringLiteral("%1: %2").arg(source, r.message()));
        p.configurations.push_back(std::move(c));
    }
    const QJsonArray sens = o.value(QStringLiteral("sensitivity")).toArray();
    if (!sens.isEmpty()) {
        auto s = edge::quant::sensitivity_from_json(QJsonDocument(sens).toJson(QJsonDocument::Compact).toStdString());
        if (!s.ok()) {
            return Result::failure(QStringLiteral("%1: %2").arg(source, QString::fromStdString(s.message())));
        }
        p.sensitivity = std::move(s).value();
    }
    for (const auto& v : o.value(QStringLiteral("boards")).toArray()) p.boards << v.toString();
    for (const auto& v : o.value(QStringLiteral("workloads")).toArray()) {
        ProfileWorkload w;
        if (const auto r = workloadFromJson(v.toObject(), &w); !r)
            return Result::failure(QStringLiteral("%1: %2").arg(source, r.message()));
        p.workloads.push_back(std::move(w));
    }
    const QJsonObject costs = o.value(QStringLiteral("cost_models")).toObject();
    if (!costs.isEmpty()) {
        const std::string text = QJsonDocument(costs).toJson(QJsonDocument::Compact).toStdString();
        for (const QString& board : costs.value(QStringLiteral("boards")).toObject().keys()) {
            auto cm = edge::runtime::board_cost_model(text, source.toStdString(), board.toStdString());
            if (!cm.ok()) return Result::failure(QString::fromStdString(cm.message()));
            p.costModels[board] = std::move(cm).value();
        }
    }
    *out = std::move(p);
    return {};
}

Result saveProjectFile(const QString& path, const ProjectData& p) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        return Result::failure(ProjectText::tr("%1: cannot write (%2)").arg(path, f.errorString()));
    }
    f.write(projectToJson(p));
    if (!f.commit()) {
        return Result::failure(ProjectText::tr("%1: cannot write (%2)").arg(path, f.errorString()));
    }
    return {};
}

Result loadProjectFile(const QString& path, ProjectData* out) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return Result::failure(ProjectText::tr("%1: cannot read (%2)").arg(path, f.errorString()));
    }
    return projectFromJson(f.readAll(), QFileInfo(path).fileName(), out);
}

}  // namespace edge::views
