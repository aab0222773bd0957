// The JSON of profile workloads (QtCore only, no QObject): the project file's reader and writer
// and the project fuzzer share it.
#include "views/models/workload.h"

#include <QCoreApplication>
#include <QJsonArray>

#include "engine/sched/workload.h"

namespace edge::views {

namespace {
class WorkloadText {
    Q_DECLARE_TR_FUNCTIONS(edge::views::WorkloadListModel)
};
}  // namespace

Result checkNamedWorkload(const ProfileWorkload& w) {
    if (w.name.trimmed().isEmpty()) return Result::failure(WorkloadText::tr("a workload needs a name"));
    return checkWorkload(w);
}

Result checkWorkload(const ProfileWorkload& w) {
    if (w.isServe()) {
        auto parsed = edge::sched::parse_workload(w.serveText.toStdString(), w.name.toStdString());
        if (!parsed.ok()) return Result::failure(QString::fromStdString(parsed.message()));
        if (parsed->requests.empty())
            return Result::failure(WorkloadText::tr("workload %1: the serving workload has no request").arg(w.name));
        if (w.concurrency < 1)
            return Result::failure(WorkloadText::tr("workload %1: concurrency %2 is not a count of requests")
                                       .arg(w.name)
                                       .arg(w.concurrency));
        return {};
    }
    if (w.prompts.isEmpty()) return Result::failure(WorkloadText::tr("workload %1 has no prompt").arg(w.name));
    if (w.maxTokens < 1)
        return Result::failure(
            WorkloadText::tr("workload %1: %2 is not a count of tokens").arg(w.name).arg(w.maxTokens));
    return {};
}

QJsonObject workloadToJson(const ProfileWorkload& w) {
    QJsonObject o{{QStringLiteral("name"), w.name}};
    if (w.isServe()) {
        o.insert(QStringLiteral("serve"), w.serveText);
        o.insert(QStringLiteral("source"), w.serveSource);
        o.insert(QStringLiteral("concurrency"), w.concurrency);
    } else {
        o.insert(QStringLiteral("prompts"), QJsonArray::fromStringList(w.prompts));
        o.insert(QStringLiteral("max_tokens"), w.maxTokens);
        o.insert(QStringLiteral("chat"), w.chat);
    }
    return o;
}

Result workloadFromJson(const QJsonObject& o, ProfileWorkload* out) {
    ProfileWorkload w;
    w.name = o.value(QStringLiteral("name")).toString();
    w.serveText = o.value(QStringLiteral("serve")).toString();
    w.serveSource = o.value(QStringLiteral("source")).toString();
    w.concurrency = o.value(QStringLiteral("concurrency")).toInt(8);
    for (const auto& p : o.value(QStringLiteral("prompts")).toArray()) w.prompts << p.toString();
    w.maxTokens = o.value(QStringLiteral("max_tokens")).toInt(64);
    w.chat = o.value(QStringLiteral("chat")).toBool(false);
    if (auto r = checkNamedWorkload(w); !r) return r;
    *out = std::move(w);
    return {};
}

}  // namespace edge::views
