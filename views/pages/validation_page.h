// The Validation page: runs the engine's validation suite on the open model quantized with the
// Layers page's plan, as a job (progress, cancel, stale results dropped); the report table shows
// every check against its threshold (editable in place) with pass / fail; each finished run
// becomes a configuration on the Pareto page.
#pragma once
#include <QWidget>

#include "views/models/validation_run.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

namespace edge::views {

class ConfigurationModel;
class JobSlot;
class LayerPlanModel;
class ModelDocument;
class ValidationLayerModel;
class ValidationReportModel;

class ValidationPage : public QWidget {
    Q_OBJECT
public:
    ValidationPage(ModelDocument* document, LayerPlanModel* plan, ConfigurationModel* configurations,
                   QWidget* parent = nullptr);

    ValidationReportModel* reportModel() const { return report_; }
    JobSlot* job() const { return job_; }
    QTableView* table() const { return table_; }
    QTableView* layerTable() const { return layerTable_; }
    ValidationLayerModel* layerModel() const { return layers_; }
    QLabel* verdictLabel() const { return verdict_; }
    ValidationSettings settings() const;
    void setTextPath(const QString& path);
    // The calibration text of AWQ/GPTQ layers ("": the evaluation text minus what it scores).
    void setCalibrationPath(const QString& path);
    // How the calibration paragraphs are chosen: "all", "random" or "kmeans" (`samples` of them,
    // seeded), and how much of them calibrates (sequences x tokens).
    void setCalibrationSelection(const QString& method, int samples, quint64 seed = 1);
    void setCalibrationSize(int sequences, int tokens);
    void setParts(int parts);
    // Where the last run's calibration came from and what was removed from it.
    QString calibrationNote() const;

public slots:
    // Starts a run with the current plan (an error is shown when nothing can run).
    void run();
    void cancel();

signals:
    void configurationAdded(int row);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void finished(edge::Result<ValidationOutcome> result);
    void updateVerdict();
    void updateRunState();

    ModelDocument* document_;
    LayerPlanModel* plan_;
    ConfigurationModel* configurations_;
    ValidationReportModel* report_;
    JobSlot* job_;
    QLabel* title_;
    QLabel* subtitle_;
    QLabel* textLabel_;
    QLineEdit* text_;
    QPushButton* browse_;
    QLabel* calibLabel_;
    QLineEdit* calib_;
    QPushButton* calibBrowse_;
    QLabel* calibNote_;
    QLabel* selectLabel_;
    QComboBox* select_;  // all / kmeans / random
    QLabel* samplesLabel_;
    QSpinBox* samples_;
    QLabel* seedLabel_;
    QSpinBox* seed_;
    QLabel* sizeLabel_;
    QSpinBox* sequences_;
    QLabel* timesLabel_;
    QSpinBox* length_;
    QLabel* protocolLabel_;
    QComboBox* protocol_;
    QLabel* partsLabel_;
    QSpinBox* parts_;
    QCheckBox* bitflip_;
    QPushButton* run_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* stage_;
    QTableView* table_;
    ValidationLayerModel* layers_;
    QLabel* layersTitle_;
    QTableView* layerTable_;
    QLabel* verdict_;
    QLabel* message_;
};

}  // namespace edge::views
