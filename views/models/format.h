// Number formatting shared by the item models and the pages: counts, bytes, shapes. Locale-free
// digits grouped with thin spaces so columns of numbers line up in a monospace font.
#pragma once
#include <QString>

#include <cstdint>
#include <vector>

namespace edge::views {

// 6738415616 -> "6 738 415 616"
QString groupedCount(int64_t n);
// 6738415616 -> "6.74 B", 260000 -> "260 K"
QString compactCount(int64_t n);
// 1073741824 -> "1.00 GiB"
QString humanBytes(uint64_t bytes);
// {512, 64} -> "512 × 64"
QString shapeText(const std::vector<int64_t>& shape);

}  // namespace edge::views
