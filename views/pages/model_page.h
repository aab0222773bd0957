// The Model page: what was loaded and how it is built. Header (name, path), load progress with
// Cancel, the architecture summary, the layer tree and the per-layer size chart; selecting a
// layer in the tree or clicking its bar selects it in both.
#pragma once
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTableView;
class QTreeView;

namespace edge::views {

class LayerChart;
class LayerTreeModel;
class ModelDocument;
class SummaryModel;

class ModelPage : public QWidget {
    Q_OBJECT
public:
    explicit ModelPage(ModelDocument* document, QWidget* parent = nullptr);

    QTreeView* layerTree() const { return tree_; }
    LayerTreeModel* layerModel() const { return layers_; }
    SummaryModel* summaryModel() const { return summary_; }
    LayerChart* chart() const { return chart_; }
    // The canonical name of the layer selected in the tree; empty when none.
    QString selectedLayer() const;
    void selectLayer(const QString& layer);

signals:
    void openRequested();
    void openFolderRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    QWidget* buildEmptyState();
    QWidget* buildContent();
    QWidget* buildLoadBar();
    void retranslate();
    void showModel();
    void setLoading(bool loading);

    ModelDocument* document_;
    SummaryModel* summary_;
    LayerTreeModel* layers_;
    QStackedWidget* stack_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* subtitle_ = nullptr;
    QWidget* loadBar_ = nullptr;
    QLabel* loadLabel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* emptyTitle_ = nullptr;
    QLabel* emptyHint_ = nullptr;
    QPushButton* emptyOpen_ = nullptr;
    QPushButton* emptyFolder_ = nullptr;
    QLabel* summaryTitle_ = nullptr;
    QLabel* layersTitle_ = nullptr;
    QTableView* summaryView_ = nullptr;
    QTreeView* tree_ = nullptr;
    LayerChart* chart_ = nullptr;
    QString loadingStage_;
};

}  // namespace edge::views
