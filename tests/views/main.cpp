// gtest main on a QApplication. Test cases run offscreen (ctest sets QT_QPA_PLATFORM); the
// screenshot cases use the X display when there is one and fall back to offscreen otherwise.
#include <gtest/gtest.h>

#include <QApplication>
#include <QStandardPaths>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QApplication::setOrganizationName(QStringLiteral("EdgeStudio"));
    QApplication::setApplicationName(QStringLiteral("edgestudio-tests"));
    QApplication app(argc, argv);
    return RUN_ALL_TESTS();
}
