#include "views/style.h"

#include <QApplication>
#include <QFontDatabase>
#include <QPalette>
#include <QStyleFactory>

namespace edge::views {

QColor accentColor() { return QColor(0x1f, 0x6f, 0xd1); }
QColor mutedTextColor() { return QColor(0x5b, 0x65, 0x70); }

QFont monoFont() {
    QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    f.setFamilies({QStringLiteral("DejaVu Sans Mono"), QStringLiteral("Noto Sans Mono CJK SC")});
    f.setStyleHint(QFont::Monospace);
    return f;
}

QFont titleFont() {
    QFont f = QApplication::font();
    f.setPointSizeF(f.pointSizeF() * 1.5);
    f.setWeight(QFont::DemiBold);
    return f;
}

void applyStudioStyle(QApplication& app) {
    app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));

    QFont font = app.font();
    // Latin text in a UI sans; Han characters from the Simplified Chinese CJK face (not JP/KR).
    font.setFamilies({QStringLiteral("Noto Sans"), QStringLiteral("DejaVu Sans"), QStringLiteral("Noto Sans CJK SC")});
    font.setPointSize(10);
    app.setFont(font);

    QPalette p;
    const QColor window(0xf4, 0xf5, 0xf7), base(0xff, 0xff, 0xff), text(0x1f, 0x23, 0x28);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0xf6, 0xf8, 0xfa));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0xf0, 0xf1, 0xf3));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::Highlight, accentColor());
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(0xff, 0xfd, 0xe8));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, mutedTextColor());
    p.setColor(QPalette::Mid, QColor(0xd0, 0xd7, 0xde));
    p.setColor(QPalette::Link, accentColor());
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x8c, 0x95, 0x9f));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x8c, 0x95, 0x9f));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x8c, 0x95, 0x9f));
    app.setPalette(p);

    app.setStyleSheet(
        QStringLiteral("QListWidget#pageList { background: #e9ecf0; border: none; border-right: 1px solid #d0d7de;"
                       "  padding-top: 8px; outline: 0; }"
                       "QListWidget#pageList::item { padding: 10px 16px; border-radius: 6px; margin: 2px 8px;"
                       "  color: #1f2328; }"
                       "QListWidget#pageList::item:selected { background: #ffffff; color: #1f6fd1;"
                       "  border: 1px solid #d0d7de; }"
                       "QTreeView, QTableView, QListView { border: 1px solid #d0d7de; border-radius: 4px; }"
                       "QTreeView::item, QTableView::item { padding: 0px 6px; }"
                       "QListView#recentList { border: none; }"
                       "QListView#recentList::item { padding: 7px 4px; border-bottom: 1px solid #eef0f2; }"
                       "QHeaderView::section { background: #f0f2f4; border: none; border-bottom: 1px solid #d0d7de;"
                       "  border-right: 1px solid #e1e4e8; padding: 4px 8px; font-weight: 600; }"
                       "QFrame#card { background: #ffffff; border: 1px solid #d0d7de; border-radius: 6px; }"
                       "QLabel#hint { color: #5b6570; }"
                       "QLabel#sectionTitle { font-weight: 600; }"
                       "QPushButton { padding: 5px 14px; }"
                       "QPushButton#primary { background: #1f6fd1; color: white; border: 1px solid #1a5fb4;"
                       "  border-radius: 4px; padding: 6px 16px; }"
                       "QPushButton#primary:hover { background: #2a7ae0; }"
                       "QStatusBar { border-top: 1px solid #d0d7de; }"));
}

}  // namespace edge::views
