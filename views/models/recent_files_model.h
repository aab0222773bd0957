// Recently opened models, most recent first, kept in QSettings (QtCore only). A list model so the
// home page and the File menu show the same list.
#pragma once
#include <QAbstractListModel>
#include <QStringList>

namespace edge::views {

class RecentFilesModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role { PathRole = Qt::UserRole + 1, ExistsRole };
    static constexpr int kMaxEntries = 10;

    explicit RecentFilesModel(QObject* parent = nullptr);

    // Moves `path` to the front (adding it when new) and saves the list.
    void add(const QString& path);
    void remove(const QString& path);
    void clear();
    QStringList paths() const { return paths_; }

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    void save() const;
    QStringList paths_;
};

}  // namespace edge::views
