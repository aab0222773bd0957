// gtest main of edge_view_jobs_tests on a QCoreApplication: the job mechanism and the engine work
// it runs need the UI thread's event loop, not Qt Widgets (so the ThreadSanitizer leg,
// scripts/sanitize.sh tsan-jobs, runs them with QtCore alone).
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QStandardPaths>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("EdgeStudio"));
    QCoreApplication::setApplicationName(QStringLiteral("edgestudio-tests"));
    QCoreApplication app(argc, argv);
    return RUN_ALL_TESTS();
}
