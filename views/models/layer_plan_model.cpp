#include "views/models/layer_plan_model.h"

#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QSaveFile>
#include <QSet>
#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>
#include <functional>
#include <set>

#include "views/models/format.h"

namespace edge::views {

using edge::quant::Precision;

namespace {
// Names left, counts and sizes right, the short setting columns centred between them.
QVariant alignment(int column) {
    switch (column) {
        case LayerPlanModel::ParamsColumn:
        case LayerPlanModel::PruningColumn:
        case LayerPlanModel::BytesColumn: return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case LayerPlanModel::PrecisionColumn:
        case LayerPlanModel::MethodColumn:
        case LayerPlanModel::GroupColumn:
        case LayerPlanModel::SymmetricColumn: return QVariant(Qt::AlignCenter);
        default: return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
}
}  // namespace

// One edit of any number of rows: the settings before and after. Never merged, so each
// setData / bulk edit / plan load is exactly one undo step.
class LayerPlanModel::SetSettingsCommand : public QUndoCommand {
public:
    SetSettingsCommand(LayerPlanModel* model, std::vector<int> rows, std::vector<LayerSetting> before,
                       std::vector<LayerSetting> after, const QString& text)
        : QUndoCommand(text),
          model_(model),
          rows_(std::move(rows)),
          before_(std::move(before)),
          after_(std::move(after)) {}
    void redo() override { model_->assign(rows_, after_); }
    void undo() override { model_->assign(rows_, before_); }

private:
    LayerPlanModel* model_;
    std::vector<int> rows_;
    std::vector<LayerSetting> before_, after_;
};

LayerPlanModel::LayerPlanModel(QObject* parent) : QAbstractTableModel(parent), undo_(new QUndoStack(this)) {}
LayerPlanModel::~LayerPlanModel() {
    // The stack's commands point back here; drop them before the rows go.
    undo_->clear();
}

void LayerPlanModel::setModel(std::shared_ptr<const LoadedModel> model) {
    beginResetModel();
    undo_->clear();
    model_ = std::move(model);
    settings_.assign(model_ ? model_->layers.size() : 0, LayerSetting{});
    recomputeTotals();
    endResetModel();
    emit totalsChanged();
}

int LayerPlanModel::rowOfLayer(const QString& name) const {
    if (!model_) return -1;
    const std::string wanted = name.toStdString();
    for (size_t i = 0; i < model_->layers.size(); ++i)
        if (model_->layers[i].name == wanted) return int(i);
    return -1;
}

bool LayerPlanModel::tied(int row) const { return isTiedOutput(model_->model, model_->layers[size_t(row)]); }

uint64_t LayerPlanModel::rowBytes(int row) const {
    return edge::views::estimatedBytes(settings_[size_t(row)], model_->layers[size_t(row)]);
}

void LayerPlanModel::recomputeTotals() {
    estimated_ = 0;
    params_ = 0;
    for (int i = 0; i < int(settings_.size()); ++i) {
        estimated_ += rowBytes(i);
        params_ += model_->layers[size_t(i)].params;
    }
}

bool LayerPlanModel::refuse(const QString& reason) {
    lastError_ = reason;
    emit editRefused(reason);
    return false;
}

bool LayerPlanModel::applyToRows(const QList<int>& rows, const SettingPatch& patch, const QString& description) {
    if (!model_) return refuse(tr("No model is loaded"));
    std::vector<int> sorted(rows.begin(), rows.end());
    // A pruning ratio is a group's (a block's heads or channels): every layer of the edited
    // layers' groups takes it.
    if (patch.pruning) {
        std::set<QString> groups;
        for (int r : rows)
            if (r >= 0 && r < rowCount()) groups.insert(pruneGroupOf(model_->layers[size_t(r)]));
        groups.erase(QString());
        for (int r = 0; r < rowCount(); ++r)
            if (groups.count(pruneGroupOf(model_->layers[size_t(r)]))) sorted.push_back(r);
    }
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (int r : sorted)
        if (r < 0 || r >= rowCount()) return refuse(tr("Row %1 is not a layer").arg(r));
    return pushEdits(
        sorted, [&](int) { return patch; }, true, description);
}

bool LayerPlanModel::pushEdits(const std::vector<int>& rows, const std::function<SettingPatch(int)>& patchOf,
                               bool repairTied, const QString& description) {
    std::vector<int> changed;
    std::vector<LayerSetting> before, after;
    for (int r : rows) {
        const LayerSetting old = settings_[size_t(r)];
        const LayerSetting now = patched(old, patchOf(r), model_->layers[size_t(r)], tied(r), repairTied);
        const QString problem = settingProblem(now, model_->layers[size_t(r)], tied(r));
        if (!problem.isEmpty()) return refuse(problem);
        if (now == old) continue;
        changed.push_back(r);
        before.push_back(old);
        after.push_back(now);
    }
    lastError_.clear();
    if (changed.empty()) return true;
    const QString text = description.isEmpty() ? tr("Edit %n layer(s)", nullptr, int(changed.size())) : description;
    undo_->push(new SetSettingsCommand(this, std::move(changed), std::move(before), std::move(after), text));
    return true;
}

bool LayerPlanModel::setGroupPruning(const QMap<QString, double>& ratios) {
    if (!model_) return refuse(tr("No model is loaded"));
    std::vector<int> rows;
    QSet<QString> known;
    for (int r = 0; r < rowCount(); ++r) {
        const QString group = pruneGroupOf(model_->layers[size_t(r)]);
        if (group.isEmpty()) continue;
        known.insert(group);
        rows.push_back(r);
    }
    for (auto it = ratios.begin(); it != ratios.end(); ++it)
        if (!known.contains(it.key())) return refuse(tr("The model has no pruning group %1").arg(it.key()));
    return pushEdits(
        rows,
        [&](int r) {
            SettingPatch p;
            p.pruning = ratios.value(pruneGroupOf(model_->layers[size_t(r)]), 0.0);
            return p;
        },
        false, tr("Pruning from the Pruning page"));
}

void LayerPlanModel::assign(const std::vector<int>& rows, const std::vector<LayerSetting>& values) {
    if (rows.empty()) return;
    for (size_t i = 0; i < rows.size(); ++i) settings_[size_t(rows[i])] = values[i];
    // Rows are sorted: announce each contiguous run once.
    size_t start = 0;
    for (size_t i = 1; i <= rows.size(); ++i) {
        if (i == rows.size() || rows[i] != rows[i - 1] + 1) {
            emit dataChanged(index(rows[start], PrecisionColumn), index(rows[i - 1], BytesColumn));
            start = i;
        }
    }
    recomputeTotals();
    emit totalsChanged();
}

bool LayerPlanModel::savePlan(const QString& path) {
    if (!model_) return refuse(tr("No model is loaded"));
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(settingsToPlanJson(model_->layers, settings_)) < 0 || !f.commit())
        return refuse(tr("Could not save the plan %1: %2").arg(QFileInfo(path).fileName(), f.errorString()));
    lastError_.clear();
    return true;
}

bool LayerPlanModel::loadPlan(const QString& path) {
    if (!model_) return refuse(tr("No model is loaded"));
    std::vector<LayerSetting> loaded;
    if (const auto r = loadPlanFile(path, model_->model, model_->layers, &loaded); !r) return refuse(r.message());
    std::vector<int> rows;
    for (int i = 0; i < rowCount(); ++i) rows.push_back(i);
    lastError_.clear();
    if (loaded == settings_) return true;
    undo_->push(new SetSettingsCommand(this, std::move(rows), settings_, std::move(loaded),
                                       tr("Open plan %1").arg(QFileInfo(path).fileName())));
    return true;
}

bool LayerPlanModel::setSettings(const std::vector<LayerSetting>& settings, const QString& description) {
    if (!model_) return refuse(tr("No model is loaded"));
    if (settings.size() != settings_.size())
        return refuse(tr("The plan has %1 layers; the open model %2").arg(settings.size()).arg(settings_.size()));
    lastError_.clear();
    if (settings == settings_) return true;
    std::vector<int> rows;
    for (int i = 0; i < rowCount(); ++i) rows.push_back(i);
    undo_->push(new SetSettingsCommand(this, std::move(rows), settings_, settings, description));
    return true;
}

void LayerPlanModel::retranslate() {
    if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

int LayerPlanModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(settings_.size()); }

int LayerPlanModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LayerPlanModel::displayText(int row, int column) const {
    const edge::model::LayerInfo& l = model_->layers[size_t(row)];
    const LayerSetting& s = settings_[size_t(row)];
    const QString dash = QStringLiteral("—");
    switch (column) {
        case NameColumn: return QString::fromStdString(l.name);
        case KindColumn: return QString::fromStdString(l.kind);
        case ShapeColumn: return shapeText(l.shape);
        case ParamsColumn: return groupedCount(l.params);
        case PrecisionColumn: return precisionKey(s.precision).toUpper();
        case MethodColumn: return s.method == PlanMethod::None ? dash : methodKey(s.method).toUpper();
        case GroupColumn:
            if (!s.quantized()) return dash;
            return s.group == 0 ? tr("channel") : QString::number(s.group);
        case SymmetricColumn:
            if (!s.quantized()) return dash;
            return s.symmetric ? tr("sym") : tr("asym");
        case PruningColumn:
            return s.pruning > 0.0 ? QString::number(s.pruning * 100.0, 'f', 0) + QStringLiteral(" %") : dash;
        case BytesColumn: return humanBytes(rowBytes(row));
    }
    return {};
}

QVariant LayerPlanModel::editValue(int row, int column) const {
    const LayerSetting& s = settings_[size_t(row)];
    switch (column) {
        case PrecisionColumn: return precisionKey(s.precision);
        case MethodColumn: return methodKey(s.method);
        case GroupColumn: return qlonglong(s.group);
        case SymmetricColumn: return s.symmetric;
        case PruningColumn: return s.pruning;
        default: return displayText(row, column);
    }
}

QVariant LayerPlanModel::sortValue(int row, int column) const {
    const edge::model::LayerInfo& l = model_->layers[size_t(row)];
    const LayerSetting& s = settings_[size_t(row)];
    switch (column) {
        case NameColumn: return qlonglong(row);  // model order: blk.2 before blk.10
        case ParamsColumn:
        case ShapeColumn: return qlonglong(l.params);  // a shape sorts by its size
        case PrecisionColumn: return int(s.precision);
        case GroupColumn: return s.quantized() ? qlonglong(s.group) : qlonglong(-1);
        case PruningColumn: return s.pruning;
        case BytesColumn: return qulonglong(rowBytes(row));
        default: return displayText(row, column);
    }
}

QVariantList LayerPlanModel::choiceValues(int row, int column) const {
    const LayerSetting& s = settings_[size_t(row)];
    QVariantList out;
    switch (column) {
        case PrecisionColumn:
            for (Precision p : {Precision::FP32, Precision::FP16, Precision::INT8, Precision::INT4})
                out << precisionKey(p);
            break;
        case MethodColumn:
            if (!s.quantized())
                out << methodKey(PlanMethod::None);
            else if (tied(row))
                out << methodKey(PlanMethod::RTN);
            else
                out << methodKey(PlanMethod::RTN) << methodKey(PlanMethod::AWQ) << methodKey(PlanMethod::GPTQ);
            break;
        case GroupColumn: {
            const int64_t cols = rowLength(model_->layers[size_t(row)]);
            for (int64_t g : {32, 64, 128, 256})
                if (g <= cols) out << qlonglong(g);
            if (s.group > 0 && !out.contains(qlonglong(s.group))) out << qlonglong(s.group);
            out << qlonglong(0);
            break;
        }
        case SymmetricColumn: out << true << false; break;
        default: break;
    }
    return out;
}

QVariant LayerPlanModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !model_) return {};
    const int row = index.row(), column = index.column();
    const edge::model::LayerInfo& l = model_->layers[size_t(row)];
    switch (role) {
        case Qt::DisplayRole: return displayText(row, column);
        case Qt::EditRole: return editValue(row, column);
        case Qt::ToolTipRole:
            if (column == BytesColumn)
                return tr("%1 bytes (FP32: %2 bytes)")
                    .arg(groupedCount(int64_t(rowBytes(row))), groupedCount(l.params * 4));
            return {};
        case Qt::TextAlignmentRole: return alignment(column);
        case Qt::FontRole:
            if (column != KindColumn && column != MethodColumn && column != SymmetricColumn)
                return QFontDatabase::systemFont(QFontDatabase::FixedFont);
            return {};
        case LayerNameRole: return QString::fromStdString(l.name);
        case SortRole: return sortValue(row, column);
        case KindRole: return QString::fromStdString(l.kind);
        case BlockRole: return l.block;
        case ChoiceValuesRole: return choiceValues(row, column);
        case ChoiceLabelsRole: {
            QStringList labels;
            for (const QVariant& v : choiceValues(row, column)) {
                switch (column) {
                    case PrecisionColumn:
                    case MethodColumn:
                        labels << (v.toString() == QStringLiteral("none") ? QStringLiteral("—")
                                                                          : v.toString().toUpper());
                        break;
                    case GroupColumn:
                        labels << (v.toLongLong() == 0 ? tr("channel") : QString::number(v.toLongLong()));
                        break;
                    case SymmetricColumn: labels << (v.toBool() ? tr("sym") : tr("asym")); break;
                    default: break;
                }
            }
            return labels;
        }
        default: return {};
    }
}

std::optional<SettingPatch> LayerPlanModel::patchFor(int row, int column, const QVariant& value) {
    const QString name = QString::fromStdString(model_->layers[size_t(row)].name);
    auto no = [this](const QString& reason) -> std::optional<SettingPatch> {
        refuse(reason);
        return std::nullopt;
    };
    SettingPatch p;
    switch (column) {
        case PrecisionColumn:
            if (auto v = precisionFromKey(value.toString()))
                p.precision = *v;
            else
                return no(tr("%1: unknown precision \"%2\"").arg(name, value.toString()));
            return p;
        case MethodColumn:
            if (auto v = methodFromKey(value.toString()))
                p.method = *v;
            else
                return no(tr("%1: unknown method \"%2\"").arg(name, value.toString()));
            return p;
        case GroupColumn: {
            bool ok = false;
            const qlonglong g = value.toLongLong(&ok);
            if (!ok || g < 0) return no(tr("%1: the group size must be a positive number").arg(name));
            p.group = g;
            return p;
        }
        case SymmetricColumn:
            if (!value.canConvert<bool>()) return no(tr("%1: symmetric must be true or false").arg(name));
            p.symmetric = value.toBool();
            return p;
        case PruningColumn: {
            bool ok = false;
            const double r = value.toDouble(&ok);
            if (!ok) return no(tr("%1: the pruning ratio must be a number").arg(name));
            p.pruning = r;
            return p;
        }
        default: return no(tr("This column cannot be edited"));
    }
}

bool LayerPlanModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !model_ ||
        !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return false;
    const int row = index.row();
    if (!(flags(index) & Qt::ItemIsEditable))
        return refuse(tr("%1: %2 takes no method, group size or symmetry")
                          .arg(QString::fromStdString(model_->layers[size_t(row)].name),
                               precisionKey(settings_[size_t(row)].precision).toUpper()));
    const std::optional<SettingPatch> patch = patchFor(row, index.column(), value);
    if (!patch) return false;
    // A pruning ratio is its group's (a block's heads or channels): the group's layers take it.
    if (patch->pruning && !pruneGroupOf(model_->layers[size_t(row)]).isEmpty())
        return applyToRows(
            {row}, *patch,
            tr("Set %1 of %2")
                .arg(headerData(index.column(), Qt::Horizontal).toString(), pruneGroupOf(model_->layers[size_t(row)])));
    const LayerSetting old = settings_[size_t(row)];
    const LayerSetting now = patched(old, *patch, model_->layers[size_t(row)], tied(row), false);
    const QString problem = settingProblem(now, model_->layers[size_t(row)], tied(row));
    if (!problem.isEmpty()) return refuse(problem);
    lastError_.clear();
    if (now == old) return true;
    const QString text = tr("Set %1 of %2")
                             .arg(headerData(index.column(), Qt::Horizontal).toString(),
                                  QString::fromStdString(model_->layers[size_t(row)].name));
    undo_->push(new SetSettingsCommand(this, {row}, {old}, {now}, text));
    return true;
}

Qt::ItemFlags LayerPlanModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemNeverHasChildren;
    const int c = index.column();
    const bool quantized = index.row() < int(settings_.size()) && settings_[size_t(index.row())].quantized();
    if (c == PrecisionColumn || c == PruningColumn ||
        (quantized && (c == MethodColumn || c == GroupColumn || c == SymmetricColumn)))
        f |= Qt::ItemIsEditable;
    return f;
}

QVariant LayerPlanModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::TextAlignmentRole) return alignment(section);
    if (role != Qt::DisplayRole) return {};
    switch (section) {
        case NameColumn: return tr("Layer");
        case KindColumn: return tr("Kind");
        case ShapeColumn: return tr("Shape");
        case ParamsColumn: return tr("Parameters");
        case PrecisionColumn: return tr("Precision");
        case MethodColumn: return tr("Method");
        case GroupColumn: return tr("Group");
        case SymmetricColumn: return tr("Symmetry");
        case PruningColumn: return tr("Pruning");
        case BytesColumn: return tr("Est. size");
    }
    return {};
}

}  // namespace edge::views
