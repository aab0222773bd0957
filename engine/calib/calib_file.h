// Writing selected calibration sets: a text file `quantize --calib` reads (chosen paragraphs
// separated by blank lines, in pool order) and IDX image / label files (uncompressed, the format
// engine/calib/image_sets.h reads) for CNN pools.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/calib/image_sets.h"
#include "engine/core/mapped_file.h"
#include "engine/core/result.h"

namespace edge::calib {

// (The text file: edge::write_text_file, engine/core/mapped_file.h.)
// The images at `indices` of `images`, as an IDX image file.
Status write_idx_images(const std::string& path, const calib::IdxImages& images, const std::vector<int64_t>& indices);
Status write_idx_labels(const std::string& path, const std::vector<uint8_t>& labels);

}  // namespace edge::calib
