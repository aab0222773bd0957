#include "views/models/format.h"

#include <QStringList>

namespace edge::views {

QString groupedCount(int64_t n) {
    const bool negative = n < 0;
    QString digits = QString::number(negative ? -n : n);
    QString out;
    const int len = int(digits.size());
    for (int i = 0; i < len; ++i) {
        if (i > 0 && (len - i) % 3 == 0) out += QChar(0x2009);  // thin space
        out += digits.at(i);
    }
    if (negative) out.prepend(QLatin1Char('-'));
    return out;
}

QString compactCount(int64_t n) {
    const double v = double(n);
    if (n >= 1'000'000'000) return QString::number(v / 1e9, 'f', 2) + QLatin1String(" B");
    if (n >= 1'000'000) return QString::number(v / 1e6, 'f', 2) + QLatin1String(" M");
    if (n >= 10'000) return QString::number(v / 1e3, 'f', 1) + QLatin1String(" K");
    return QString::number(n);
}

QString humanBytes(uint64_t bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    if (u == 0) return QString::number(bytes) + QLatin1String(" B");
    return QString::number(v, 'f', 2) + QLatin1Char(' ') + QLatin1String(units[u]);
}

QString shapeText(const std::vector<int64_t>& shape) {
    QStringList dims;
    for (int64_t d : shape) dims << QString::number(d);
    return dims.join(QStringLiteral(" × "));
}

}  // namespace edge::views
