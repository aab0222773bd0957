// The boards the studio knows, as a table (QtCore only): the Host entries of an OpenSSH client
// config (~/.ssh/config by default) and the user's own entries, which persist in QSettings
// ("boards/user"). Only user entries can be removed; ssh config hosts change in that file.
#pragma once
#include <QAbstractTableModel>
#include <QString>
#include <QVector>

#include "remote/client/boards.h"
#include "views/models/result.h"

namespace edge::views {

class BoardListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, DestinationColumn, FolderColumn, SourceColumn, StatusColumn, ColumnCount };
    static constexpr const char* kDefaultRoot = "/opt/edgestudio";

    explicit BoardListModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Re-reads the ssh config (path "" = ~/.ssh/config) and the user entries.
    void reload(const QString& sshConfigPath = QString());
    QString sshConfigPath() const { return sshConfig_; }

    // A user entry: NAME and [user@]host[:port]; folder "" = the default; launcher: a shell prefix
    // the agent runs under there ("" none; e.g. qemu-user for an emulated board). false with *error
    // when the destination does not parse or the name is taken.
    Result addUserBoard(const QString& name, const QString& destination, const QString& folder, const QString& identity,
                        const QString& launcher = QString());
    bool removeUserBoard(int row);
    bool isUserBoard(int row) const;

    const edge::client::Board& board(int row) const { return rows_[row].board; }
    int rowOfName(const QString& name) const;
    // The absolute folder on the board that deployments go to.
    QString folder(int row) const;
    // "user@host:port" as the user reads it.
    QString destination(int row) const;
    // The last thing that happened to the board ("deployed 20261201-…", "unreachable"), shown in
    // the Status column.
    void setStatus(int row, const QString& status);
    QString status(int row) const { return rows_[row].status; }

    // Headers follow the language (called by the page on LanguageChange).
    void retranslate();

private:
    struct Row {
        edge::client::Board board;
        bool user = false;
        QString status;
    };
    void saveUserBoards() const;
    QVector<Row> rows_;
    QString sshConfig_;
};

}  // namespace edge::views
