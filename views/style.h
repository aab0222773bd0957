// The studio's look: Fusion with a light, low-contrast-chrome palette, one accent colour, CJK-aware
// font fallbacks, and a monospace face for numbers.
#pragma once
#include <QColor>
#include <QFont>

class QApplication;

namespace edge::views {

void applyStudioStyle(QApplication& app);
QFont monoFont();
QFont titleFont();
QColor accentColor();
// Secondary text (paths, hints).
QColor mutedTextColor();

}  // namespace edge::views
