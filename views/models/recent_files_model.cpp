#include "views/models/recent_files_model.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace edge::views {

namespace {
const QString kKey = QStringLiteral("recent/models");
}

RecentFilesModel::RecentFilesModel(QObject* parent) : QAbstractListModel(parent) {
    paths_ = QSettings().value(kKey).toStringList();
    while (paths_.size() > kMaxEntries) paths_.removeLast();
}

void RecentFilesModel::add(const QString& path) {
    const QString clean = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    beginResetModel();
    paths_.removeAll(clean);
    paths_.prepend(clean);
    while (paths_.size() > kMaxEntries) paths_.removeLast();
    endResetModel();
    save();
}

void RecentFilesModel::remove(const QString& path) {
    const int row = int(paths_.indexOf(path));
    if (row < 0) return;
    beginRemoveRows({}, row, row);
    paths_.removeAt(row);
    endRemoveRows();
    save();
}

void RecentFilesModel::clear() {
    beginResetModel();
    paths_.clear();
    endResetModel();
    save();
}

void RecentFilesModel::save() const { QSettings().setValue(kKey, paths_); }

int RecentFilesModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(paths_.size()); }

QVariant RecentFilesModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const QString& p = paths_.at(index.row());
    switch (role) {
        case Qt::DisplayRole: {
            const QFileInfo fi(p);
            return QString(fi.fileName() + QStringLiteral("  —  ") + QDir::toNativeSeparators(fi.absolutePath()));
        }
        case Qt::ToolTipRole:
        case PathRole: return p;
        case ExistsRole: return QFileInfo::exists(p);
        default: return {};
    }
}

}  // namespace edge::views
