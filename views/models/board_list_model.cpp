#include "views/models/board_list_model.h"

#include <QSettings>

namespace edge::views {
namespace {
const QString kUserKey = QStringLiteral("boards/user");

QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

BoardListModel::BoardListModel(QObject* parent) : QAbstractTableModel(parent) {}

int BoardListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int BoardListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

void BoardListModel::reload(const QString& sshConfigPath) {
    sshConfig_ = sshConfigPath;
    QVector<Row> rows;
    for (auto& b : edge::client::ssh_config_boards(sshConfigPath.toStdString()))
        rows.append(Row{std::move(b), false, {}});
    QSettings settings;
    const int n = settings.beginReadArray(kUserKey);
    for (int i = 0; i < n; ++i) {
        settings.setArrayIndex(i);
        auto b =
            edge::client::parse_destination(settings.value(QStringLiteral("destination")).toString().toStdString());
        if (!b.ok()) continue;  // edited by hand into something unusable: skipped, not fatal
        edge::client::Board board = b.value();
        board.name = settings.value(QStringLiteral("name")).toString().toStdString();
        board.root = settings.value(QStringLiteral("folder")).toString().toStdString();
        board.identity = settings.value(QStringLiteral("identity")).toString().toStdString();
        board.launcher = settings.value(QStringLiteral("launcher")).toString().toStdString();
        board.source = "user";
        if (board.name.empty()) continue;
        rows.append(Row{std::move(board), true, {}});
    }
    settings.endArray();
    // Keep statuses across a reload.
    for (Row& r : rows)
        for (const Row& old : rows_)
            if (old.board.name == r.board.name && old.user == r.user) r.status = old.status;
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

void BoardListModel::saveUserBoards() const {
    QSettings settings;
    settings.remove(kUserKey);
    settings.beginWriteArray(kUserKey);
    int i = 0;
    for (const Row& r : rows_) {
        if (!r.user) continue;
        settings.setArrayIndex(i++);
        std::string dest = (r.board.user.empty() ? "" : r.board.user + "@") +
                           (r.board.host.find(':') != std::string::npos ? "[" + r.board.host + "]" : r.board.host);
        if (r.board.port) dest += ":" + std::to_string(r.board.port);
        settings.setValue(QStringLiteral("name"), q(r.board.name));
        settings.setValue(QStringLiteral("destination"), q(dest));
        settings.setValue(QStringLiteral("folder"), q(r.board.root));
        settings.setValue(QStringLiteral("identity"), q(r.board.identity));
        settings.setValue(QStringLiteral("launcher"), q(r.board.launcher));
    }
    settings.endArray();
}

Result BoardListModel::addUserBoard(const QString& name, const QString& destination, const QString& folder,
                                    const QString& identity, const QString& launcher) {
    const QString n = name.trimmed();
    if (n.isEmpty() || n.contains(QLatin1Char(' '))) {
        return Result::failure(tr("A board needs a name without spaces (got '%1').").arg(name));
    }
    if (rowOfName(n) >= 0) {
        return Result::failure(tr("There is already a board named '%1'.").arg(n));
    }
    auto b = edge::client::parse_destination(destination.trimmed().toStdString());
    if (!b.ok()) {
        return Result::failure(tr("Board '%1': %2").arg(n, q(b.message())));
    }
    const QString f = folder.trimmed();
    if (!f.isEmpty() && !f.startsWith(QLatin1Char('/'))) {
        return Result::failure(
            tr("Board '%1': the folder on the board must be an absolute path (got '%2').").arg(n, f));
    }
    edge::client::Board board = b.value();
    board.name = n.toStdString();
    board.root = f.toStdString();
    board.identity = identity.trimmed().toStdString();
    board.launcher = launcher.trimmed().toStdString();
    board.source = "user";
    beginInsertRows({}, int(rows_.size()), int(rows_.size()));
    rows_.append(Row{std::move(board), true, {}});
    endInsertRows();
    saveUserBoards();
    return {};
}

bool BoardListModel::removeUserBoard(int row) {
    if (row < 0 || row >= rows_.size() || !rows_[row].user) return false;
    beginRemoveRows({}, row, row);
    rows_.removeAt(row);
    endRemoveRows();
    saveUserBoards();
    return true;
}

bool BoardListModel::isUserBoard(int row) const { return row >= 0 && row < rows_.size() && rows_[row].user; }

int BoardListModel::rowOfName(const QString& name) const {
    for (int i = 0; i < rows_.size(); ++i)
        if (q(rows_[i].board.name) == name) return i;
    return -1;
}

QString BoardListModel::folder(int row) const {
    const std::string& r = rows_[row].board.root;
    return r.empty() ? QString::fromLatin1(kDefaultRoot) : q(r);
}

QString BoardListModel::destination(int row) const {
    const edge::client::Board& b = rows_[row].board;
    QString d = (b.user.empty() ? QString() : q(b.user) + QLatin1Char('@')) + q(b.host);
    if (b.port) d += QLatin1Char(':') + QString::number(b.port);
    return d;
}

void BoardListModel::setStatus(int row, const QString& status) {
    if (row < 0 || row >= rows_.size() || rows_[row].status == status) return;
    rows_[row].status = status;
    emit dataChanged(index(row, StatusColumn), index(row, StatusColumn), {Qt::DisplayRole, Qt::ToolTipRole});
}

void BoardListModel::retranslate() { emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1); }

QVariant BoardListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[index.row()];
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
            case NameColumn: return q(r.board.name);
            case DestinationColumn: return destination(index.row());
            case FolderColumn: return folder(index.row());
            case SourceColumn:
                if (r.user) return tr("added by you");
                return role == Qt::ToolTipRole ? q(r.board.source) : tr("ssh config");
            case StatusColumn: return r.status;
            default: return {};
        }
    }
    return {};
}

QVariant BoardListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case NameColumn: return tr("Board");
        case DestinationColumn: return tr("Destination");
        case FolderColumn: return tr("Folder on board");
        case SourceColumn: return tr("From");
        case StatusColumn: return tr("Status");
        default: return {};
    }
}

}  // namespace edge::views
