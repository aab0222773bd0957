// The Pruning page's mask view: one strip per prune group, one cell per unit (KV head, MLP or
// conv channel), kept units in the accent colour, removed ones light red, pinned groups grey; the
// selected group is outlined. Each strip is drawn from a one-pixel-per-unit image scaled to the
// width, so thousands of channels per group cost one image draw.
#pragma once
#include <QWidget>

#include <vector>

namespace edge::prune {
struct LayerMask;
}

namespace edge::views {

class PruningMaskView : public QWidget {
    Q_OBJECT
public:
    explicit PruningMaskView(QWidget* parent = nullptr);
    void setMasks(const std::vector<edge::prune::LayerMask>* masks);
    void setSelected(int row);
    int selected() const { return selected_; }
    int rowAt(int y) const;
    QSize sizeHint() const override;

signals:
    void rowClicked(int row);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    const std::vector<edge::prune::LayerMask>* masks_ = nullptr;
    int selected_ = -1;
    static constexpr int kRow = 26, kLabel = 150, kTop = 4;
};

}  // namespace edge::views
