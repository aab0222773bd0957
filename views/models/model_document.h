// The model the studio works on (QtCore only): opens a file or folder through the engine loader on
// a JobSlot, keeps the loaded edge::Model and its layer list, and keeps the previous model when a
// load fails or is cancelled.
#pragma once
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/model/ir.h"
#include "engine/model/loader.h"
#include "views/models/job.h"

namespace edge::views {

// What the pages show of a loaded model; immutable once built, shared between models and pages.
// The model is opened with lazy weights (the pages show its header, configuration and tensor
// table without reading the tensors); a job that computes over the weights asks for them with
// withWeights(), which reads them once, on the first job's thread, and shares them afterwards.
struct LoadedModel {
    edge::model::Model model;
    std::vector<edge::model::LayerInfo> layers;

    edge::Result<std::shared_ptr<const edge::model::Model>> withWeights(edge::Progress* progress = nullptr) const;
    // The weights as stored (F16/BF16 aliasing the file, Q8_0/Q4_0 repacked: model::
    // load_weights_as_stored), for jobs that only run the model (validation's reference): read
    // once, shared afterwards, no FP32 copy.
    edge::Result<std::shared_ptr<const edge::model::Model>> asStored(edge::Progress* progress = nullptr) const;

private:
    mutable std::mutex mutex_;
    mutable std::shared_ptr<const edge::model::Model> full_, stored_;
};

class ModelDocument : public QObject {
    Q_OBJECT
public:
    using Loader = std::function<edge::Result<edge::model::Model>(
        const std::string& path, const edge::model::LoadOptions& options, edge::Progress* progress)>;

    // `loader` defaults to edge::load_model; tests inject their own.
    explicit ModelDocument(QObject* parent = nullptr, Loader loader = {});

    // Starts loading `path` (a file or a Hugging Face folder); `tokenizer` is for formats that
    // do not embed one (llama2.c .bin). Supersedes a load in progress.
    void open(const QString& path, const QString& tokenizer = QString());
    void cancel();

    std::shared_ptr<const LoadedModel> current() const { return current_; }
    QString path() const { return path_; }
    QString loadingPath() const { return loadingPath_; }
    bool isLoading() const { return job_->isRunning(); }
    JobSlot* job() const { return job_; }

    // Replaces the current model directly (tests, and models produced inside the studio).
    void setModel(edge::model::Model model, const QString& path);

signals:
    void loadStarted(const QString& path);
    void loadProgress(double fraction, const QString& stage);
    void modelChanged();
    // `message` is ready to show: what failed and the engine's reason.
    void loadFailed(const QString& path, const QString& message);
    void loadCancelled(const QString& path);
    void loadingChanged(bool loading);

private:
    Loader loader_;
    JobSlot* job_;
    std::shared_ptr<const LoadedModel> current_;
    QString path_;
    QString loadingPath_;
};

}  // namespace edge::views
