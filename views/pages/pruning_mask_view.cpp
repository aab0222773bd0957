#include "views/pages/pruning_mask_view.h"

#include <QImage>
#include <QMouseEvent>
#include <QPainter>

#include "engine/prune/structured.h"
#include "views/style.h"

namespace edge::views {

PruningMaskView::PruningMaskView(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(120);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void PruningMaskView::setMasks(const std::vector<edge::prune::LayerMask>* masks) {
    masks_ = masks;
    updateGeometry();
    update();
}

void PruningMaskView::setSelected(int row) {
    selected_ = row;
    update();
}

int PruningMaskView::rowAt(int y) const {
    if (!masks_ || y < kTop) return -1;
    const int row = (y - kTop) / kRow;
    return row < int(masks_->size()) ? row : -1;
}

QSize PruningMaskView::sizeHint() const { return {600, kTop * 2 + kRow * int(masks_ ? masks_->size() : 6)}; }

void PruningMaskView::mousePressEvent(QMouseEvent* event) {
    const int row = rowAt(int(event->position().y()));
    if (row >= 0) {
        setSelected(row);
        emit rowClicked(row);
    }
}

void PruningMaskView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (!masks_) return;
    p.setFont(monoFont());
    const QColor kept = accentColor(), removed(0xf2, 0xb8, 0xab), pinned(0xd5, 0xd9, 0xde);
    const int width = std::max(10, this->width() - kLabel - 8);
    for (size_t i = 0; i < masks_->size(); ++i) {
        const edge::prune::LayerMask& m = (*masks_)[i];
        const int y = kTop + int(i) * kRow;
        p.setPen(mutedTextColor().darker(160));
        p.drawText(QRect(4, y, kLabel - 8, kRow), Qt::AlignVCenter | Qt::AlignLeft,
                   p.fontMetrics().elidedText(QString::fromStdString(m.layer), Qt::ElideMiddle, kLabel - 8));
        if (m.units <= 0) continue;
        QImage strip(int(m.units), 1, QImage::Format_RGB32);
        for (int64_t u = 0; u < m.units; ++u) {
            const bool keep = size_t(u) < m.keep.size() ? m.keep[size_t(u)] != 0 : true;
            strip.setPixel(int(u), 0, (!m.prunable ? pinned : keep ? kept : removed).rgb());
        }
        const QRect cells(kLabel, y + 3, width, kRow - 6);
        p.drawImage(cells, strip);
        // Separators between units when they are wide enough to tell apart.
        if (width / m.units >= 6) {
            p.setPen(QPen(Qt::white, 1));
            for (int64_t u = 1; u < m.units; ++u) {
                const int x = kLabel + int(double(u) * width / double(m.units));
                p.drawLine(x, cells.top(), x, cells.bottom());
            }
        }
        if (int(i) == selected_) {
            p.setPen(QPen(QColor(0x20, 0x24, 0x2a), 1.5));
            p.setBrush(Qt::NoBrush);
            p.drawRect(cells.adjusted(-2, -2, 1, 1));
        }
    }
}

}  // namespace edge::views
