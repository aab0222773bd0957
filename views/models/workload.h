// The profile workloads of a project (QtCore only): named, saved with the project, chosen on the
// Boards page, and named in every board measurement they produced, so two measurements are
// compared only under the same workload. A workload is either prompts run one at a time (the
// agent's RunWorkload: max tokens, chat template or not) or a serving workload (edge-workload text,
// engine/sched/workload.h) replayed through the board's scheduler at a concurrency, as
// `edgestudio-cli profile --workload FILE --concurrency N` does. The text of a serving workload is
// kept in the project, so the project alone reproduces the run.
#pragma once
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include "views/models/result.h"

namespace edge::views {

struct ProfileWorkload {
    QString name;
    QStringList prompts;  // prompt workloads
    int maxTokens = 64;
    bool chat = false;
    QString serveText;    // serving workloads: the edge-workload file's text ("" = a prompt workload)
    QString serveSource;  // the file it came from (shown; not read again)
    int concurrency = 8;
    bool isServe() const { return !serveText.isEmpty(); }
    bool operator==(const ProfileWorkload&) const = default;
};

// Checks a workload before it is run: prompts, or a serving workload that parses (its error names
// the workload and the line). Saving one (the list, the project file) also needs a name.
Result checkWorkload(const ProfileWorkload& w);
Result checkNamedWorkload(const ProfileWorkload& w);
QJsonObject workloadToJson(const ProfileWorkload& w);
Result workloadFromJson(const QJsonObject& o, ProfileWorkload* w);

}  // namespace edge::views
