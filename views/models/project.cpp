#include "views/models/project.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>

namespace edge::views {

ProjectAutosave::ProjectAutosave(Snapshot snapshot, const QString& path, int delayMs, QObject* parent)
    : QObject(parent),
      snapshot_(std::move(snapshot)),
      path_(path.isEmpty() ? defaultPath() : path),
      timer_(new QTimer(this)) {
    timer_->setSingleShot(true);
    timer_->setInterval(delayMs);
    connect(timer_, &QTimer::timeout, this, &ProjectAutosave::saveNow);
}

QString ProjectAutosave::defaultPath() {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave.edgeproj");
}

void ProjectAutosave::markDirty() { timer_->start(); }
bool ProjectAutosave::isDirty() const { return timer_->isActive(); }

bool ProjectAutosave::saveNow() {
    timer_->stop();
    QDir().mkpath(QFileInfo(path_).absolutePath());
    const ProjectData p = snapshot_();
    if (p.modelPath.isEmpty()) return false;            // nothing worth recovering
    if (!saveProjectFile(path_, p).ok()) return false;  // the next change tries again
    emit saved(path_);
    return true;
}

void ProjectAutosave::discard() {
    timer_->stop();
    QFile::remove(path_);
}

bool ProjectAutosave::recoverable() const { return QFileInfo::exists(path_); }

}  // namespace edge::views
