// gtest main on a QApplication. Test cases run offscreen (ctest sets QT_QPA_PLATFORM); the
// screenshot cases use the X display when there is one and fall back to offscreen otherwise.
#include <gtest/gtest.h>

#include <QApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    // ... of this process alone: ctest runs test cases as parallel processes, and two that added
    // a board of the same name to one shared settings file saw each other's entry.
    QTemporaryDir settings;
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
    QApplication::setOrganizationName(QStringLiteral("EdgeStudio"));
    QApplication::setApplicationName(QStringLiteral("edgestudio-tests"));
    QApplication app(argc, argv);
    return RUN_ALL_TESTS();
}
