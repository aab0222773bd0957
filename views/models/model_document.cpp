#include "views/models/model_document.h"

#include <QDir>
#include <QFileInfo>

#include "engine/model/weights.h"

namespace edge::views {

edge::Result<std::shared_ptr<const edge::model::Model>> LoadedModel::withWeights(edge::Progress* progress) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (full_) return full_;
    // Not owned: the document keeps `model` alive as long as the pages and jobs that ask.
    auto full = edge::model::with_weights(
        std::shared_ptr<const edge::model::Model>(std::shared_ptr<const edge::model::Model>{}, &model), progress);
    if (!full.ok()) return full.error();
    full_ = std::move(full).value();
    return full_;
}

edge::Result<std::shared_ptr<const edge::model::Model>> LoadedModel::asStored(edge::Progress* progress) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stored_) return stored_;
    if (full_) return full_;  // already read as F32: no second copy
    auto copy = std::make_shared<edge::model::Model>(model);
    if (!edge::model::weights_resident(*copy)) EDGE_TRY(edge::model::load_weights_as_stored(*copy, progress));
    stored_ = std::move(copy);
    return stored_;
}

ModelDocument::ModelDocument(QObject* parent, Loader loader)
    : QObject(parent), loader_(std::move(loader)), job_(new JobSlot(this)) {
    if (!loader_) {
        loader_ = [](const std::string& path, const edge::model::LoadOptions& options, edge::Progress* progress) {
            return edge::model::load_model(path, options, progress);
        };
    }
    connect(job_, &JobSlot::progress, this, &ModelDocument::loadProgress);
    connect(job_, &JobSlot::runningChanged, this, &ModelDocument::loadingChanged);
    connect(job_, &JobSlot::cancelled, this, [this](quint64) {
        const QString p = loadingPath_;
        loadingPath_.clear();
        emit loadCancelled(p);
    });
}

void ModelDocument::open(const QString& path, const QString& tokenizer) {
    loadingPath_ = path;
    edge::model::LoadOptions options;
    options.lazy_weights = true;  // the pages need the header and tensor table only
    options.tokenizer_path = QDir::toNativeSeparators(tokenizer).toStdString();
    const std::string file = QDir::toNativeSeparators(path).toStdString();
    emit loadStarted(path);
    job_->start<std::shared_ptr<const LoadedModel>>(
        [loader = loader_, file,
         options](edge::Progress* progress) -> edge::Result<std::shared_ptr<const LoadedModel>> {
            auto r = loader(file, options, progress);
            if (!r.ok()) return r.error();
            if (progress && progress->cancelled()) return edge::err("cancelled");
            auto loaded = std::make_shared<LoadedModel>();
            loaded->model = std::move(r).value();
            loaded->layers = edge::model::list_layers(loaded->model);
            return std::shared_ptr<const LoadedModel>(std::move(loaded));
        },
        [this, path](edge::Result<std::shared_ptr<const LoadedModel>> r) {
            loadingPath_.clear();
            if (!r.ok()) {
                const QString name = QFileInfo(path).fileName();
                emit loadFailed(path, userErrorText(tr("Could not open “%1”.").arg(name), r.error()));
                return;
            }
            current_ = std::move(r).value();
            path_ = path;
            emit modelChanged();
        });
}

void ModelDocument::cancel() { job_->cancel(); }

void ModelDocument::setModel(edge::model::Model model, const QString& path) {
    job_->cancel();
    auto loaded = std::make_shared<LoadedModel>();
    loaded->model = std::move(model);
    loaded->layers = edge::model::list_layers(loaded->model);
    current_ = std::move(loaded);
    path_ = path;
    emit modelChanged();
}

}  // namespace edge::views
