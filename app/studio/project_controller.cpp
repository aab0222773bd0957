#include "app/studio/project_controller.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QUndoStack>

#include "views/models/board_costs.h"
#include "views/models/configuration_model.h"
#include "views/models/layer_plan_model.h"
#include "views/models/model_document.h"
#include "views/models/validation_report_model.h"
#include "views/models/workload_list_model.h"
#include "views/pages/sensitivity_page.h"
#include "views/pages/validation_page.h"

namespace edge::studio {

ProjectController::ProjectController(ProjectParts parts, const QString& autosavePath, QObject* parent)
    : QObject(parent), parts_(std::move(parts)) {
    autosave_ = new views::ProjectAutosave([this] { return snapshot(); }, autosavePath, 2000, this);
    auto dirty = [this] {
        if (pending_ || quiet_) return;
        autosave_->markDirty();
        setModified(true);
    };
    connect(parts_.document, &views::ModelDocument::modelChanged, this, dirty);
    connect(parts_.plan->undoStack(), &QUndoStack::indexChanged, this, dirty);
    connect(parts_.configurations, &QAbstractItemModel::rowsInserted, this, dirty);
    connect(parts_.configurations, &views::ConfigurationModel::artifactsChanged, this, dirty);
    connect(parts_.configurations, &QAbstractItemModel::modelReset, this, dirty);
    connect(parts_.validation->reportModel(), &views::ValidationReportModel::thresholdsChanged, this, dirty);
    connect(parts_.sensitivity->model(), &views::SensitivityModel::metricsChanged, this, dirty);
    connect(parts_.workloads, &views::WorkloadListModel::workloadsChanged, this, dirty);
    connect(parts_.costModels, &views::BoardCostModels::changed, this, dirty);
    connect(parts_.document, &views::ModelDocument::modelChanged, this, [this] {
        if (!pending_) return;
        const views::ProjectData p = std::move(*pending_);
        pending_.reset();
        applyRest(p);
    });
    // The document's own error (shown by the window) names the model; the project is dropped whole.
    connect(parts_.document, &views::ModelDocument::loadFailed, this, [this] { pending_.reset(); });
    connect(parts_.document, &views::ModelDocument::loadCancelled, this, [this] { pending_.reset(); });
}

views::ProjectData ProjectController::snapshot() const {
    views::ProjectData p;
    p.modelPath = parts_.document->path();
    if (auto m = parts_.document->current()) {
        for (const auto& l : m->layers) p.layers.push_back(QString::fromStdString(l.name));
        p.plan = parts_.plan->settings();
    }
    p.evaluationText = parts_.validation->settings().textPath;
    p.thresholds = parts_.validation->reportModel()->thresholds();
    p.configurations = parts_.configurations->configurations();
    p.sensitivity = parts_.sensitivity->model()->empirical();
    p.workloads = parts_.workloads->workloads();
    p.costModels = parts_.costModels->all();
    p.page = parts_.currentPage ? parts_.currentPage() : QString();
    return p;
}

views::Result ProjectController::save(const QString& path) {
    if (auto r = views::saveProjectFile(path, snapshot()); !r) return r;
    setPath(path);
    // Saved: the recovery file has nothing the project lacks.
    autosave_->discard();
    setModified(false);
    return {};
}

views::Result ProjectController::open(const QString& path) {
    views::ProjectData p;
    if (auto r = views::loadProjectFile(path, &p); !r) return r;
    setPath(path);
    modifiedAfterApply_ = false;
    apply(p);
    return {};
}

views::Result ProjectController::recover() {
    views::ProjectData p;
    if (auto r = views::loadProjectFile(autosave_->path(), &p); !r) return r;
    // Recovered work is in no project file yet: it stays modified (and the recovery file stays)
    // until it is saved or discarded.
    modifiedAfterApply_ = true;
    apply(p);
    return {};
}

void ProjectController::discardChanges() {
    autosave_->discard();
    setModified(false);
}

void ProjectController::setModified(bool modified) {
    if (modified == modified_) return;
    modified_ = modified;
    emit modifiedChanged(modified);
}

void ProjectController::setPath(const QString& path) {
    if (path == path_) return;
    path_ = path;
    emit pathChanged(path);
}

void ProjectController::apply(const views::ProjectData& p) {
    const bool same = parts_.document->current() && QFileInfo(parts_.document->path()).canonicalFilePath() ==
                                                        QFileInfo(p.modelPath).canonicalFilePath();
    if (same) {
        applyRest(p);
        return;
    }
    pending_ = p;
    parts_.document->open(p.modelPath, p.tokenizer);
}

void ProjectController::applyRest(const views::ProjectData& p) {
    quiet_ = true;
    applyPlan(p);
    if (!p.evaluationText.isEmpty()) parts_.validation->setTextPath(p.evaluationText);
    parts_.validation->reportModel()->setThresholds(p.thresholds);
    parts_.configurations->setConfigurations(p.configurations);
    if (!p.sensitivity.empty()) parts_.sensitivity->model()->setEmpirical(p.sensitivity);
    parts_.workloads->setWorkloads(p.workloads);
    parts_.costModels->setAll(p.costModels);
    if (!p.page.isEmpty() && parts_.showPage) parts_.showPage(p.page);
    quiet_ = false;
    setModified(modifiedAfterApply_);
    if (modifiedAfterApply_) autosave_->markDirty();
    modifiedAfterApply_ = false;
    emit applied();
}

void ProjectController::applyPlan(const views::ProjectData& p) {
    auto model = parts_.document->current();
    if (model && !p.plan.empty()) {
        // The plan goes in as one undoable step, through the Layers page's own plan-file reader.
        const std::vector<views::LayerSetting> settings = views::settingsByName(model->layers, p.layers, p.plan);
        if (settings != parts_.plan->settings()) {
            QTemporaryDir dir;
            const QString file = dir.filePath(QStringLiteral("project.plan.json"));
            QFile f(file);
            if (f.open(QIODevice::WriteOnly)) {
                f.write(views::settingsToPlanJson(model->layers, settings));
                f.close();
                if (!parts_.plan->loadPlan(file)) emit failed(parts_.plan->lastError());
            }
        }
    }
}

}  // namespace edge::studio
