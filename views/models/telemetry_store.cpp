#include "views/models/telemetry_store.h"

#include <QFile>
#include <QTextStream>

#include <algorithm>

#include "remote/client/profile.h"
#include "remote/protocol/messages.h"

namespace edge::views {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

QString telemetryColumnKey(TelemetryColumn c) {
    switch (c) {
        case TelemetryColumn::TokenLatency: return QStringLiteral("token_latency_ms");
        case TelemetryColumn::LatencyP50: return QStringLiteral("latency_p50_ms");
        case TelemetryColumn::LatencyP99: return QStringLiteral("latency_p99_ms");
        case TelemetryColumn::TokensPerS: return QStringLiteral("tokens_per_s");
        case TelemetryColumn::RssMiB: return QStringLiteral("rss_mib");
        case TelemetryColumn::DeviceMiB: return QStringLiteral("device_mem_mib");
        case TelemetryColumn::KvHitPct: return QStringLiteral("kv_hit_pct");
        case TelemetryColumn::KvUsedPct: return QStringLiteral("kv_used_pct");
        case TelemetryColumn::Count: break;
    }
    return QString();
}

// ---- TelemetryRing ------------------------------------------------------------------------------

TelemetryRing::TelemetryRing(int capacity) : rows_(size_t(std::max(1, capacity))) {}

void TelemetryRing::push(const TelemetryRow& row) {
    const int cap = capacity();
    if (size_ < cap) {
        rows_[size_t((head_ + size_) % cap)] = row;
        ++size_;
    } else {
        rows_[size_t(head_)] = row;
        head_ = (head_ + 1) % cap;
    }
}

void TelemetryRing::clear() { head_ = size_ = 0; }

int TelemetryRing::lowerBound(double time) const {
    int lo = 0, hi = size_;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (at(mid).t < time)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void decimate(const TelemetryRing& ring, TelemetryColumn c, double t0, double t1, int buckets, QVector<double>& keys,
              QVector<double>& values) {
    keys.clear();
    values.clear();
    const int begin = ring.lowerBound(t0), end = ring.lowerBound(std::nextafter(t1, t1 + 1.0));
    if (begin >= end) return;
    buckets = std::max(1, buckets);
    if (end - begin <= 2 * buckets) {  // few enough: every point
        for (int i = begin; i < end; ++i) {
            const TelemetryRow& r = ring.at(i);
            if (std::isnan(r[c])) continue;
            keys.append(r.t);
            values.append(r[c]);
        }
        return;
    }
    const double width = std::max(t1 - t0, 1e-9) / buckets;
    int i = begin;
    while (i < end) {
        const double bucketEnd = t0 + width * (std::floor((ring.at(i).t - t0) / width) + 1.0);
        int lo = -1, hi = -1;
        // The row that opened the bucket always belongs to it: a bucket end rounded onto that
        // row's time must not stop the walk.
        do {
            const double v = ring.at(i)[c];
            if (!std::isnan(v)) {
                if (lo < 0 || v < ring.at(lo)[c]) lo = i;
                if (hi < 0 || v > ring.at(hi)[c]) hi = i;
            }
            ++i;
        } while (i < end && ring.at(i).t < bucketEnd);
        if (lo < 0) continue;
        const int first = std::min(lo, hi), second = std::max(lo, hi);
        keys.append(ring.at(first).t);
        values.append(ring.at(first)[c]);
        if (second != first) {
            keys.append(ring.at(second).t);
            values.append(ring.at(second)[c]);
        }
    }
}

// ---- TelemetryStore -----------------------------------------------------------------------------

TelemetryStore::TelemetryStore(QObject* parent, int capacity) : QObject(parent), ring_(capacity) {
    latest_.fill(kNaN);
    window_.reserve(kPercentileWindow);
}

void TelemetryStore::clear() {
    ring_.clear();
    seen_.fill(false);
    latest_.fill(kNaN);
    window_.clear();
    windowNext_ = 0;
    received_ = dropped_ = 0;
    firstNs_ = 0;
    lastT_ = 0;
    emit cleared();
}

double TelemetryStore::latest(TelemetryColumn c) const { return latest_[size_t(c)]; }

void TelemetryStore::addBatch(const edge::protocol::TelemetryBatch& batch) {
    dropped_ += batch.dropped;
    for (const auto& s : batch.samples) {
        if (received_ == 0) firstNs_ = s.timestamp_ns;
        ++received_;
        TelemetryRow row;
        row.v.fill(kNaN);
        const double t = s.timestamp_ns >= firstNs_ ? double(s.timestamp_ns - firstNs_) * 1e-9 : 0.0;
        row.t = std::max(t, lastT_);
        lastT_ = row.t;
        auto set = [&](TelemetryColumn c, double v) { row.v[size_t(c)] = v; };
        if (s.token_latency_ms) {
            set(TelemetryColumn::TokenLatency, *s.token_latency_ms);
            if (int(window_.size()) < kPercentileWindow)
                window_.push_back(*s.token_latency_ms);
            else
                window_[size_t(windowNext_)] = *s.token_latency_ms;
            windowNext_ = (windowNext_ + 1) % kPercentileWindow;
            set(TelemetryColumn::LatencyP50, edge::client::percentile(window_, 0.50));
            set(TelemetryColumn::LatencyP99, edge::client::percentile(window_, 0.99));
        }
        if (s.tokens_per_s) set(TelemetryColumn::TokensPerS, *s.tokens_per_s);
        if (s.rss_bytes) set(TelemetryColumn::RssMiB, double(*s.rss_bytes) / kMiB);
        if (s.device_mem_used_bytes) set(TelemetryColumn::DeviceMiB, double(*s.device_mem_used_bytes) / kMiB);
        if (s.kv_hit_rate) set(TelemetryColumn::KvHitPct, *s.kv_hit_rate * 100.0);
        if (s.kv_blocks_used && s.kv_blocks_free && *s.kv_blocks_used + *s.kv_blocks_free > 0)
            set(TelemetryColumn::KvUsedPct, 100.0 * *s.kv_blocks_used / double(*s.kv_blocks_used + *s.kv_blocks_free));
        for (int c = 0; c < kTelemetryColumns; ++c)
            if (!std::isnan(row.v[size_t(c)])) {
                seen_[size_t(c)] = true;
                latest_[size_t(c)] = row.v[size_t(c)];
            }
        ring_.push(row);
    }
    if (!batch.samples.empty()) emit appended();
}

Result TelemetryStore::writeCsv(const QString& path) const {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
        return Result::failure(tr("Cannot write %1: %2").arg(path, f.errorString()));
    }
    QTextStream out(&f);
    out << "t_s";
    for (int c = 0; c < kTelemetryColumns; ++c) out << ',' << telemetryColumnKey(TelemetryColumn(c));
    out << '\n';
    for (int i = 0; i < ring_.size(); ++i) {
        const TelemetryRow& r = ring_.at(i);
        out << QString::number(r.t, 'f', 3);
        for (double v : r.v) {
            out << ',';
            if (!std::isnan(v)) out << QString::number(v, 'g', 8);
        }
        out << '\n';
    }
    out.flush();
    if (f.error() != QFileDevice::NoError) {
        return Result::failure(tr("Cannot write %1: %2").arg(path, f.errorString()));
    }
    return {};
}

}  // namespace edge::views
