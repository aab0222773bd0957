// Projects (*.edgeproj, QtCore only): the model path, the Layers plan, the evaluation text and
// thresholds, every validated configuration, the sensitivity results and the boards, as one JSON
// document written atomically (QSaveFile). ProjectAutosave writes a snapshot shortly after each
// change to a recovery file that a clean exit removes, so a file left behind means the previous
// session crashed and can be recovered.
//
//   {"format": "edgeproj", "version": 1, "model": "/m/stories260K.gguf", "tokenizer": "",
//    "plan": {"layers": [{"layer": "blk.0.attn_q", "precision": "int4", "method": "awq",
//                         "group": 32, "symmetric": true, "pruning": 0}, ...]},
//    "evaluation": {"text": "...", "thresholds": {"kl_mean_max": 0.08, ...}},
//    "configurations": [{"name": "C1", "ppl": 3.6, ..., "plan": {...}}],
//    "sensitivity": [...engine/quant sensitivity_to_json...], "boards": [], "page": "pareto"}
#pragma once
#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <map>
#include <vector>

#include "engine/quant/sensitivity.h"
#include "engine/runtime/cost_model.h"
#include "engine/validate/consistency.h"
#include "views/models/configuration_model.h"
#include "views/models/result.h"
#include "views/models/workload.h"

class QTimer;

namespace edge::views {

struct ProjectData {
    QString modelPath, tokenizer;
    std::vector<QString> layers;
    std::vector<LayerSetting> plan;
    QString evaluationText;
    edge::validate::Thresholds thresholds;
    std::vector<Configuration> configurations;
    std::vector<edge::quant::LayerSensitivity> sensitivity;
    QStringList boards;
    std::vector<ProfileWorkload> workloads;                       // the Boards page's named profile workloads
    std::map<QString, edge::runtime::BoardCostModel> costModels;  // per board, measured on deploy
    QString page;
};

QByteArray projectToJson(const ProjectData& p);
// false and `error` (naming `source` and the problem) on a malformed document; `out` untouched.
Result projectFromJson(const QByteArray& json, const QString& source, ProjectData* out);
Result saveProjectFile(const QString& path, const ProjectData& p);
Result loadProjectFile(const QString& path, ProjectData* out);

class ProjectAutosave : public QObject {
    Q_OBJECT
public:
    using Snapshot = std::function<ProjectData()>;
    // `path`: the recovery file; empty = <AppDataLocation>/autosave.edgeproj.
    ProjectAutosave(Snapshot snapshot, const QString& path = QString(), int delayMs = 2000, QObject* parent = nullptr);

    QString path() const { return path_; }
    // A change happened: a snapshot is written after the delay (changes in between coalesce).
    void markDirty();
    bool isDirty() const;
    bool saveNow();
    // Clean exit: the recovery file goes away.
    void discard();
    // True when a recovery file exists (the previous session did not exit cleanly).
    bool recoverable() const;
    static QString defaultPath();

signals:
    void saved(const QString& path);

private:
    Snapshot snapshot_;
    QString path_;
    QTimer* timer_;
};

}  // namespace edge::views
