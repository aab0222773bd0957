// The Layers page's table (QtCore/QtGui only): one row per layer of the loaded model
// (edge::list_layers) with its quantization settings. Precision, method, group size, symmetry and
// pruning ratio are editable through setData (EditRole values: precision "int4", method "rtn",
// group size as a number with 0 = per channel, symmetric as a bool, pruning as a ratio 0..0.95);
// impossible settings are refused and the reason kept in lastError(). Every accepted edit is a
// command on undoStack() — one per setData or bulk edit, never merged — and totals are re-summed
// and announced by totalsChanged().
#pragma once
#include <QAbstractTableModel>
#include <QMap>

#include <functional>
#include <memory>
#include <vector>

#include "views/models/layer_plan.h"
#include "views/models/model_document.h"

class QUndoStack;

namespace edge::views {

class LayerPlanModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        KindColumn,
        ShapeColumn,
        ParamsColumn,
        PrecisionColumn,
        MethodColumn,
        GroupColumn,
        SymmetricColumn,
        PruningColumn,
        BytesColumn,
        ColumnCount
    };
    enum Role {
        LayerNameRole = Qt::UserRole,  // canonical layer name (blk.3.attn_q)
        SortRole,                      // raw number for numeric columns, text otherwise
        KindRole,                      // attn_q, ffn_down, output, ...
        BlockRole,                     // decoder block, -1 outside blocks
        ChoiceValuesRole,              // editable columns: the EditRole values offered (QVariantList)
        ChoiceLabelsRole,              // ... and their labels (QStringList)
    };

    explicit LayerPlanModel(QObject* parent = nullptr);
    ~LayerPlanModel() override;

    // Resets every layer to FP32 (as loaded) and clears the undo history.
    void setModel(std::shared_ptr<const LoadedModel> model);
    std::shared_ptr<const LoadedModel> loadedModel() const { return model_; }
    QUndoStack* undoStack() const { return undo_; }

    const std::vector<LayerSetting>& settings() const { return settings_; }
    LayerSetting setting(int row) const { return settings_.at(size_t(row)); }
    int rowOfLayer(const QString& name) const;

    // One undoable step over `rows`; all-or-nothing: refused (false, lastError()) when any row
    // would end impossible. AWQ/GPTQ on a tied output head quietly becomes RTN.
    bool applyToRows(const QList<int>& rows, const SettingPatch& patch, const QString& description = QString());
    QString lastError() const { return lastError_; }
    // The plan's pruning set to `ratios` by group ("blk.3.ffn" -> 0.25; groups not named: 0), as
    // one undoable step; refused (false, lastError()) for a group the model lacks or a bad ratio.
    bool setGroupPruning(const QMap<QString, double>& ratios);

    // Plan files (see layer_plan.h). Loading is one undoable step; a failed load changes nothing.
    bool savePlan(const QString& path);
    bool loadPlan(const QString& path);
    // Every layer's setting at once (one per row, in order: what autoplan chose), as one undoable
    // step named `description`; refused (false, lastError()) when the count does not match.
    bool setSettings(const std::vector<LayerSetting>& settings, const QString& description);

    uint64_t estimatedBytes() const { return estimated_; }
    uint64_t fp32Bytes() const { return uint64_t(params_) * 4u; }
    int64_t parameterCount() const { return params_; }
    double averageBits() const { return params_ > 0 ? 8.0 * double(estimated_) / double(params_) : 0.0; }
    uint64_t rowBytes(int row) const;

    // Re-reads every translated string (after a language switch).
    void retranslate();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    void totalsChanged();
    void editRefused(const QString& reason);

private:
    // One undoable step: each row's setting with patchOf(row) applied (`rows` valid and sorted);
    // all-or-nothing, refused when a row's result is impossible. No step when nothing changes.
    bool pushEdits(const std::vector<int>& rows, const std::function<SettingPatch(int)>& patchOf, bool repairTied,
                   const QString& description);
    class SetSettingsCommand;
    friend class SetSettingsCommand;
    // Used by the undo commands: writes the settings and announces the rows.
    void assign(const std::vector<int>& rows, const std::vector<LayerSetting>& values);
    bool refuse(const QString& reason);
    bool tied(int row) const;
    void recomputeTotals();
    QVariant displayText(int row, int column) const;
    QVariant editValue(int row, int column) const;
    QVariant sortValue(int row, int column) const;
    QVariantList choiceValues(int row, int column) const;
    std::optional<SettingPatch> patchFor(int row, int column, const QVariant& value);

    std::shared_ptr<const LoadedModel> model_;
    std::vector<LayerSetting> settings_;
    QUndoStack* undo_;
    QString lastError_;
    uint64_t estimated_ = 0;
    int64_t params_ = 0;
};

}  // namespace edge::views
