// Live board telemetry as the Boards page charts it (QtCore only). Samples from the agent arrive
// in batches (about 20 per second); each becomes one row of a fixed-capacity ring, so memory stays
// bounded however long the stream runs (one hour at 20 Hz fits the default capacity; older rows
// are overwritten). Charts read a time window of the ring through min/max decimation, so a
// replot costs the same whether the window holds a hundred rows or seventy thousand.
#pragma once
#include <QObject>
#include <QString>
#include <QVector>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "views/models/result.h"

namespace edge::protocol {
struct TelemetryBatch;
}

namespace edge::views {

// What a chart can plot; each is one column of a row (NaN: the sample did not carry it).
enum class TelemetryColumn {
    TokenLatency,  // ms, the token this sample closes
    LatencyP50,    // ms, over the last kPercentileWindow token latencies
    LatencyP99,
    TokensPerS,  // generated tokens / generation time of the running prompt
    RssMiB,      // the agent process's resident set
    DeviceMiB,   // device (GPU) memory in use
    KvHitPct,    // KV cache hit rate, %
    KvUsedPct,   // KV blocks in use / blocks in all, %
    Count
};
constexpr int kTelemetryColumns = int(TelemetryColumn::Count);

struct TelemetryRow {
    double t = 0;  // seconds since the first sample of the run (board clock)
    std::array<double, kTelemetryColumns> v{};
    double operator[](TelemetryColumn c) const { return v[size_t(c)]; }
};

// A ring of rows with a fixed capacity: push() overwrites the oldest row once full.
class TelemetryRing {
public:
    explicit TelemetryRing(int capacity);
    void push(const TelemetryRow& row);
    void clear();
    int size() const { return size_; }
    int capacity() const { return int(rows_.size()); }
    // i = 0 is the oldest row kept.
    const TelemetryRow& at(int i) const { return rows_[size_t((head_ + i) % int(rows_.size()))]; }
    // Index of the first row with t >= time (size() when none); rows are in time order.
    int lowerBound(double time) const;

private:
    std::vector<TelemetryRow> rows_;
    int head_ = 0, size_ = 0;
};

// Keys and values of column `c` for rows with t in [t0, t1], at most ~2 * buckets points: each
// bucket of equal time width keeps its minimum and maximum in time order, so spikes survive.
void decimate(const TelemetryRing& ring, TelemetryColumn c, double t0, double t1, int buckets, QVector<double>& keys,
              QVector<double>& values);

class TelemetryStore : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultCapacity = 20 * 3600;  // an hour of 20 Hz batches of one sample
    static constexpr int kPercentileWindow = 64;

    explicit TelemetryStore(QObject* parent = nullptr, int capacity = kDefaultCapacity);

    // On the UI thread. A sample older than the previous one is placed at the previous time (the
    // board clock may step); NaN columns are what the agent did not report.
    void addBatch(const edge::protocol::TelemetryBatch& batch);
    void clear();

    const TelemetryRing& rows() const { return ring_; }
    double latestTime() const { return ring_.size() ? ring_.at(ring_.size() - 1).t : 0.0; }
    quint64 received() const { return received_; }  // samples since clear(), including overwritten ones
    quint64 dropped() const { return dropped_; }    // samples the agent dropped (its buffer was full)
    // Whether any sample since clear() carried column c.
    bool has(TelemetryColumn c) const { return seen_[size_t(c)]; }
    // The newest value of column c (NaN when none).
    double latest(TelemetryColumn c) const;

    // Every row kept, one line each, with a header; empty cells for what was not reported.
    Result writeCsv(const QString& path) const;

signals:
    void appended();
    void cleared();

private:
    TelemetryRing ring_;
    std::array<bool, kTelemetryColumns> seen_{};
    std::array<double, kTelemetryColumns> latest_{};
    std::vector<double> window_;  // last token latencies, for p50 / p99
    int windowNext_ = 0;
    quint64 received_ = 0, dropped_ = 0;
    uint64_t firstNs_ = 0;
    double lastT_ = 0;
};

// The column's name in CSV headers and tests ("latency_p50_ms", ...).
QString telemetryColumnKey(TelemetryColumn c);

}  // namespace edge::views
