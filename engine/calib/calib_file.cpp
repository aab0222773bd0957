#include "engine/calib/calib_file.h"

#include <cstdio>
#include <memory>

namespace edge::calib {

namespace {

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(uint8_t(v >> s));
}

}  // namespace

Status write_idx_images(const std::string& path, const calib::IdxImages& images, const std::vector<int64_t>& indices) {
    const int64_t per = images.rows * images.cols;
    std::vector<uint8_t> out;
    out.reserve(16 + indices.size() * size_t(per));
    put_be32(out, 0x00000803);
    put_be32(out, uint32_t(indices.size()));
    put_be32(out, uint32_t(images.rows));
    put_be32(out, uint32_t(images.cols));
    for (int64_t i : indices) {
        if (i < 0 || i >= images.count) return err(path, ": image index ", i, " is outside the pool of ", images.count);
        out.insert(out.end(), images.pixels.begin() + i * per, images.pixels.begin() + (i + 1) * per);
    }
    return write_bytes_file(path, out.data(), out.size());
}

Status write_idx_labels(const std::string& path, const std::vector<uint8_t>& labels) {
    std::vector<uint8_t> out;
    put_be32(out, 0x00000801);
    put_be32(out, uint32_t(labels.size()));
    out.insert(out.end(), labels.begin(), labels.end());
    return write_bytes_file(path, out.data(), out.size());
}

}  // namespace edge::calib
