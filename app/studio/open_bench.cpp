// edgestudio-open-bench MODEL [--screenshot FILE]: opens MODEL in the studio's main window the way
// File > Open does and prints how long it took until the Model and Layers pages were populated,
// the process's peak resident memory (VmHWM, file pages included) and how much of the model
// file's pages are in the page cache afterwards (mincore). Not a ctest: the figures for large
// models go in docs/benchmarks.md; a small model's residency is checked by
// tests/views/test_document.cpp.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>
#include <vector>

#include "app/studio/main_window.h"
#include "views/models/language.h"
#include "views/models/model_document.h"
#include "views/style.h"

namespace {

double statusMiB(const char* key) {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith(key)) return line.mid(int(qstrlen(key))).trimmed().split(' ').front().toDouble() / 1024.0;
    return 0;
}

// Fraction of the file's pages in the page cache (a folder: -1, not measured).
// Adds the pages of one file to `total` and those in the page cache to `in`.
void countResidentPages(const QString& path, size_t& in, size_t& total) {
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        const size_t size = size_t(st.st_size), page = size_t(sysconf(_SC_PAGESIZE));
        void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            std::vector<unsigned char> v((size + page - 1) / page);
            if (mincore(p, size, v.data()) == 0) {
                for (unsigned char c : v) in += c & 1;
                total += v.size();
            }
            munmap(p, size);
        }
    }
    ::close(fd);
}

// The share of the model's pages in the page cache: the file, or a folder's safetensors files.
double cachedFraction(const QString& path) {
    size_t in = 0, total = 0;
    if (QFileInfo(path).isDir()) {
        const QDir dir(path);
        for (const QString& f : dir.entryList({QStringLiteral("*.safetensors")}, QDir::Files))
            countResidentPages(dir.filePath(f), in, total);
    } else {
        countResidentPages(path, in, total);
    }
    return total ? double(in) / double(total) : -1;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    edge::views::applyStudioStyle(app);
    QCommandLineParser cli;
    cli.addHelpOption();
    const QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("save the window as PNG"),
                                  QStringLiteral("file"));
    cli.addOption(shot);
    cli.addPositionalArgument(QStringLiteral("model"), QStringLiteral("model file or folder"));
    cli.process(app);
    if (cli.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "edgestudio-open-bench: give a model file or folder\n");
        return 2;
    }
    const QString path = cli.positionalArguments().front();
    edge::views::Language language;
    edge::studio::MainWindow window(&language);
    window.resize(1600, 1000);
    window.show();
    const double before = cachedFraction(path);
    QElapsedTimer t;
    int rc = 1;
    QObject::connect(window.document(), &edge::views::ModelDocument::modelChanged, &app, [&] {
        const double ms = double(t.nsecsElapsed()) / 1e6;
        auto loaded = window.document()->current();
        // Let the pages fill their models from the new document before measuring.
        QTimer::singleShot(0, &app, [&, ms, loaded] {
            std::printf("%s\n  opened in %.0f ms: %zu layers, %zu tensors\n", qPrintable(path), ms,
                        loaded ? loaded->layers.size() : size_t(0), loaded ? loaded->model.tensors.size() : size_t(0));
            std::printf("  peak RSS %.0f MiB (now %.0f MiB)\n", statusMiB("VmHWM:"), statusMiB("VmRSS:"));
            std::printf("  file pages cached: %.2f%% before, %.2f%% after\n", 100 * before, 100 * cachedFraction(path));
            if (cli.isSet(shot)) window.grab().save(cli.value(shot));
            std::fflush(stdout);
            rc = 0;
            // exit(), not quit(): quit() closes the window, which asks to save the new project.
            app.exit(0);
        });
    });
    QObject::connect(window.document(), &edge::views::ModelDocument::loadFailed, &app,
                     [&](const QString&, const QString& message) {
                         std::fprintf(stderr, "edgestudio-open-bench: %s\n", qPrintable(message));
                         app.exit(1);
                     });
    t.start();
    window.openPath(path);
    app.exec();
    return rc;
}
