// The project's named profile workloads as a list (views/models/workload.h): what the Boards
// page's workload box shows and the project saves.
#pragma once
#include <QAbstractListModel>

#include <vector>

#include "views/models/workload.h"

namespace edge::views {

class WorkloadListModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role { ServeRole = Qt::UserRole };
    explicit WorkloadListModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

    // Adds `w`, or replaces the workload of the same name (rowOfName finds it); checkNamedWorkload's
    // error when it is refused.
    Result save(const ProfileWorkload& w);
    bool remove(int row);
    int rowOfName(const QString& name) const;
    const ProfileWorkload& at(int row) const { return list_.at(size_t(row)); }
    const std::vector<ProfileWorkload>& workloads() const { return list_; }
    void setWorkloads(std::vector<ProfileWorkload> list);

signals:
    void workloadsChanged();

private:
    std::vector<ProfileWorkload> list_;
};

}  // namespace edge::views
