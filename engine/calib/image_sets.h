// Labelled image sets for evaluating CNNs: the IDX format of MNIST (optionally gzip-compressed,
// read through zlib). Big-endian header: magic 0x00000803 (u8 images: count, rows, cols) or
// 0x00000801 (u8 labels: count). Errors name the file and what is wrong.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace edge::calib {

struct IdxImages {
    int64_t count = 0, rows = 0, cols = 0;
    std::vector<uint8_t> pixels;  // count * rows * cols, row-major
};

Result<IdxImages> read_idx_images(const std::string& path);
Result<std::vector<uint8_t>> read_idx_labels(const std::string& path);

// Pixels as floats: value * scale (MNIST for mnist-8: scale 1/255).
std::vector<float> scale_pixels(const IdxImages& images, float scale);

// A labelled image set held as floats, NCHW per image: count images of channels*rows*cols.
struct LabelledImages {
    int64_t count = 0, channels = 1, rows = 0, cols = 0;
    std::vector<float> pixels;
    std::vector<uint8_t> labels;
    int64_t image_size() const { return channels * rows * cols; }
};

// UCI optical digits as a CSV (optionally gzip-compressed): every line is 64 integer pixels in
// 0..16 (an 8x8 image, row-major) then the label 0..9. Pixels are scaled by 1/16 into [0, 1].
// Errors name the file, the line and what is wrong.
Result<LabelledImages> read_digits_csv(const std::string& path);

// The fixed train/test split used for the digits CNN: image i goes to the test set when
// i % 5 == 0 (360 of 1,797), otherwise to the training set, order kept.
struct ImageSplit {
    LabelledImages train, test;
};
ImageSplit split_every_fifth(const LabelledImages& all);

}  // namespace edge::calib
