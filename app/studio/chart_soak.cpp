// edgestudio-chart-soak: feeds the Boards page's live charts a telemetry stream like the agent's
// (batches at 20 Hz, a few per-token samples each, latency / tokens/s / RSS / KV values varying)
// for a given time, and prints the process's resident memory, the rows the charts keep and the
// longest event-loop stall over time, to show that memory stays flat (bounded ring buffers,
// decimated drawing) and the UI stays responsive. Not a ctest: see docs/studio.md.
//
//   edgestudio-chart-soak --duration 3600 --interval 60      # the hour the studio is built for
//   edgestudio-chart-soak --duration 300 --interval 30       # a five-minute check
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>

#include <cmath>
#include <cstdio>
#include <random>

#include "remote/protocol/messages.h"
#include "views/models/telemetry_store.h"
#include "views/pages/boards_page.h"
#include "views/style.h"
#include "views/telemetry_chart.h"

namespace {

double rssMiB() {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').front().toDouble() / 1024.0;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("edgestudio-chart-soak"));
    QCommandLineParser cli;
    cli.setApplicationDescription(
        QStringLiteral("Feed the Boards charts a 20 Hz telemetry stream and print memory over time."));
    cli.addHelpOption();
    const QCommandLineOption duration(QStringLiteral("duration"), QStringLiteral("seconds to run (default 3600)"),
                                      QStringLiteral("s"), QStringLiteral("3600"));
    const QCommandLineOption interval(QStringLiteral("interval"),
                                      QStringLiteral("seconds between report lines (default 60)"), QStringLiteral("s"),
                                      QStringLiteral("60"));
    const QCommandLineOption rate(QStringLiteral("rate"), QStringLiteral("telemetry batches per second (default 20)"),
                                  QStringLiteral("hz"), QStringLiteral("20"));
    const QCommandLineOption perBatch(QStringLiteral("samples-per-batch"),
                                      QStringLiteral("per-token samples in each batch (default 4: 80 tokens/s)"),
                                      QStringLiteral("n"), QStringLiteral("4"));
    cli.addOptions({duration, interval, rate, perBatch});
    cli.process(app);
    const double seconds = cli.value(duration).toDouble(), every = cli.value(interval).toDouble();
    const int hz = cli.value(rate).toInt(), n = cli.value(perBatch).toInt();
    if (seconds <= 0 || every <= 0 || hz <= 0 || hz > 1000 || n <= 0 || n > 1000) {
        std::fprintf(
            stderr, "edgestudio-chart-soak: --duration, --interval > 0; --rate 1..1000; --samples-per-batch 1..1000\n");
        return 2;
    }

    edge::views::applyStudioStyle(app);
    edge::views::BoardsPage page(nullptr);
    page.resize(1400, 900);
    page.setWindowSeconds(3600);
    page.show();
    edge::views::TelemetryStore* store = page.store();

    std::mt19937_64 rng(7);
    std::normal_distribution<double> jitter(0.0, 0.6);
    std::uniform_real_distribution<double> spike(0.0, 1.0);
    uint64_t ns = 1'750'000'000'000'000'000ull;
    uint32_t token = 0;
    const uint64_t step = uint64_t(1e9 / (double(hz) * n));
    auto feedOne = [&] {
        edge::protocol::TelemetryBatch batch;
        for (int i = 0; i < n; ++i, ++token) {
            edge::protocol::TelemetrySample s;
            s.timestamp_ns = ns += step;
            s.tokens_generated = token % 256 + 1;
            const double lat =
                std::max(0.2, 12.0 + 2.0 * std::sin(token / 400.0) + jitter(rng) + (spike(rng) < 0.01 ? 25.0 : 0.0));
            s.token_latency_ms = lat;
            s.tokens_per_s = 1000.0 / lat;
            s.rss_bytes = uint64_t((180.0 + 20.0 * std::sin(token / 5000.0)) * 1048576.0);
            s.device_mem_used_bytes = uint64_t((900.0 + (token % 256) * 0.5) * 1048576.0);
            s.kv_blocks_used = token % 256 / 16 + 1;
            s.kv_blocks_free = 16 - s.kv_blocks_used.value_or(0) + 1;
            s.kv_hit_rate = 0.85 + 0.1 * std::sin(token / 900.0);
            batch.samples.push_back(s);  // trivially copyable
        }
        store->addBatch(batch);
    };

    // One timer drives everything (feeding, reporting, the end), so a starved process - this
    // bench runs at nice 19 beside builds - still reports on time; when ticks come late, the
    // batches that were due are all sent, so the stream keeps its rate in board time.
    QElapsedTimer clock;
    qint64 lastTick = 0, worstStall = 0, nextReport = 0;
    quint64 batches = 0;
    const qint64 periodMs = 1000 / hz, endMs = qint64(seconds * 1000), everyMs = qint64(every * 1000);
    std::printf("%10s %10s %12s %10s %14s %12s\n", "elapsed_s", "rows_kept", "samples_in", "rss_mib", "points_drawn",
                "worst_stall_ms");
    auto report = [&](qint64 now) {
        int points = 0;
        for (int c = 0; c < edge::views::BoardsPage::ChartCount; ++c) points += page.chart(c)->totalPoints();
        std::printf("%10.0f %10d %12llu %10.1f %14d %12lld\n", double(now) / 1000.0, store->rows().size(),
                    (unsigned long long)store->received(), rssMiB(), points, (long long)worstStall);
        std::fflush(stdout);
        worstStall = 0;
    };
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        worstStall = std::max(worstStall, now - lastTick - periodMs);
        lastTick = now;
        for (const quint64 due = quint64(std::min(now, endMs) / periodMs); batches < due; ++batches) feedOne();
        if (now >= nextReport) {
            report(now);
            nextReport += everyMs;
        }
        if (now >= endMs) app.quit();
    });
    clock.start();
    tick.start(int(periodMs));
    return app.exec();
}
