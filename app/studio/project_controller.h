// Projects in the studio: gathers the window's state into an edgeproj snapshot (model path, the
// Layers plan, the evaluation settings, validated configurations, sensitivity) and applies one
// back (opening the model first when it differs; a failed open leaves everything as it was).
// Owns the autosave: every change schedules a recovery snapshot; it is removed only when the
// project is saved or the user discards the changes (never by quitting with unsaved work).
// Tracks whether the window holds changes no project file has (isModified()).
#pragma once
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

#include "views/models/project.h"
#include "views/models/result.h"

namespace edge::views {
class LayerPlanModel;
class ModelDocument;
class ConfigurationModel;
class SensitivityPage;
class ValidationPage;
class WorkloadListModel;
class BoardCostModels;
}  // namespace edge::views

namespace edge::studio {

struct ProjectParts {
    views::ModelDocument* document;
    views::LayerPlanModel* plan;
    views::ConfigurationModel* configurations;
    views::ValidationPage* validation;
    views::SensitivityPage* sensitivity;
    views::WorkloadListModel* workloads;  // the Boards page's named profile workloads
    views::BoardCostModels* costModels;   // the boards' cost models
    std::function<QString()> currentPage;
    std::function<void(const QString&)> showPage;
};

class ProjectController : public QObject {
    Q_OBJECT
public:
    ProjectController(ProjectParts parts, const QString& autosavePath, QObject* parent = nullptr);

    views::ProjectData snapshot() const;
    QString path() const { return path_; }
    views::ProjectAutosave* autosave() const { return autosave_; }

    views::Result save(const QString& path);
    // Reads `path` and applies it; false and `error` when the file is unreadable or malformed
    // (nothing changes then). The model loads asynchronously: applied() follows.
    views::Result open(const QString& path);
    views::Result recover();
    void apply(const views::ProjectData& p);
    bool isApplying() const { return pending_.has_value() || quiet_; }
    // True when something changed since the project was last saved, opened or started.
    bool isModified() const { return modified_; }
    // The changes are given up: not modified any more, the recovery file removed.
    void discardChanges();
    // Puts p's plan into the Layers page as one undoable step (layers matched by name).
    void applyPlan(const views::ProjectData& p);

signals:
    void applied();
    void modifiedChanged(bool modified);
    void pathChanged(const QString& path);
    void failed(const QString& message);

private:
    void applyRest(const views::ProjectData& p);
    void setModified(bool modified);
    void setPath(const QString& path);

    ProjectParts parts_;
    views::ProjectAutosave* autosave_;
    QString path_;
    std::optional<views::ProjectData> pending_;
    bool quiet_ = false;     // applying a project: its own changes do not count as edits
    bool modified_ = false;  // edits no project file holds
    bool modifiedAfterApply_ = false;
};

}  // namespace edge::studio
