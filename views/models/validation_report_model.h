// The Validation page's report table (QtCore/QtGui only): one row per check of the engine's
// validation suite — perplexity, mean KL, KL p99, top-1 agreement, numeric health, scale range,
// bit flips, decode jitter — with the measured value, the threshold and a verdict. The thresholds
// of the gated checks (mean KL, bit-flip confidence drop, jitter, scale range) are editable in
// place (EditRole: a number); an edit re-judges the stored report without running it again.
#pragma once
#include <QAbstractTableModel>
#include <QStringList>

#include <optional>
#include <vector>

#include "engine/validate/consistency.h"

namespace edge::views {

class ValidationReportModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { CheckColumn, ValueColumn, ThresholdColumn, VerdictColumn, ColumnCount };
    enum Check { Perplexity, KlMean, KlP99, Top1, Health, Scales, BitFlip, Jitter, CheckCount };
    enum Verdict { NotJudged, Pass, Fail, Warn };
    enum Role { VerdictRole = Qt::UserRole };  // Verdict of the row (any column)

    explicit ValidationReportModel(QObject* parent = nullptr);

    void setReport(const edge::validate::ValidationReport& report);
    void clear();
    bool hasReport() const { return report_.has_value(); }
    const std::optional<edge::validate::ValidationReport>& report() const { return report_; }
    edge::validate::Thresholds thresholds() const { return thresholds_; }
    void setThresholds(const edge::validate::Thresholds& t);
    Verdict verdict(int check) const;
    // True when a report is held and no check fails under the current thresholds.
    bool passed() const;
    QStringList failures() const;
    void retranslate();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    void thresholdsChanged();
    void verdictChanged();

private:
    QString checkName(int check) const;
    QString valueText(int check) const;
    QString thresholdText(int check) const;
    std::optional<double> threshold(int check) const;

    std::optional<edge::validate::ValidationReport> report_;
    edge::validate::Thresholds thresholds_;
};

}  // namespace edge::views

namespace edge::views {

// Per layer of a validation report: the numeric-health counts of its input activations and the
// dynamic range of its quantized scales (joined by layer name; "—" where a layer has none).
class ValidationLayerModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        LayerColumn,
        ValuesColumn,
        NanColumn,
        InfColumn,
        ScaleMinColumn,
        ScaleMaxColumn,
        RatioColumn,
        ColumnCount
    };
    enum Role { SortRole = Qt::UserRole };

    explicit ValidationLayerModel(QObject* parent = nullptr);
    void setReport(const edge::validate::ValidationReport* report);  // null clears
    void retranslate();

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString layer;
        int64_t values = -1, nan = 0, inf = 0;
        double scaleMin = -1, scaleMax = -1, ratio = -1;
    };
    std::vector<Row> rows_;
};

}  // namespace edge::views
