// Labelled image sets for evaluating CNNs: the IDX format of MNIST (optionally gzip-compressed,
// read through zlib). Big-endian header: magic 0x00000803 (u8 images: count, rows, cols) or
// 0x00000801 (u8 labels: count). Errors name the file and what is wrong.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace edge {

struct IdxImages {
    int64_t count = 0, rows = 0, cols = 0;
    std::vector<uint8_t> pixels;  // count * rows * cols, row-major
};

Result<IdxImages> read_idx_images(const std::string& path);
Result<std::vector<uint8_t>> read_idx_labels(const std::string& path);

// Pixels as floats: value * scale (MNIST for mnist-8: scale 1/255).
std::vector<float> scale_pixels(const IdxImages& images, float scale);

}  // namespace edge
