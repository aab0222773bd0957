#include "views/models/workload_list_model.h"

namespace edge::views {

WorkloadListModel::WorkloadListModel(QObject* parent) : QAbstractListModel(parent) {}

int WorkloadListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(list_.size()); }

QVariant WorkloadListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const ProfileWorkload& w = list_[size_t(index.row())];
    switch (role) {
        case Qt::DisplayRole:
        case Qt::EditRole: return w.name;
        case Qt::ToolTipRole:
            return w.isServe() ? tr("Serving workload %1 at concurrency %2").arg(w.serveSource).arg(w.concurrency)
                               : tr("%n prompt(s), %1 tokens each", nullptr, int(w.prompts.size())).arg(w.maxTokens);
        case ServeRole: return w.isServe();
        default: return {};
    }
}

Result WorkloadListModel::save(const ProfileWorkload& w) {
    if (auto r = checkNamedWorkload(w); !r) return r;
    const int existing = rowOfName(w.name);
    if (existing >= 0) {
        list_[size_t(existing)] = w;
        emit dataChanged(index(existing), index(existing));
        emit workloadsChanged();
        return {};
    }
    const int row = rowCount();
    beginInsertRows(QModelIndex(), row, row);
    list_.push_back(w);
    endInsertRows();
    emit workloadsChanged();
    return {};
}

bool WorkloadListModel::remove(int row) {
    if (row < 0 || row >= rowCount()) return false;
    beginRemoveRows(QModelIndex(), row, row);
    list_.erase(list_.begin() + row);
    endRemoveRows();
    emit workloadsChanged();
    return true;
}

int WorkloadListModel::rowOfName(const QString& name) const {
    for (size_t i = 0; i < list_.size(); ++i)
        if (list_[i].name == name) return int(i);
    return -1;
}

void WorkloadListModel::setWorkloads(std::vector<ProfileWorkload> list) {
    beginResetModel();
    list_ = std::move(list);
    endResetModel();
    emit workloadsChanged();
}

}  // namespace edge::views
