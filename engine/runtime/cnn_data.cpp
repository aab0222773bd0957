// IDX reader (MNIST), gzip or plain, through zlib's gzread (which reads both).
#include "engine/runtime/cnn_data.h"

#include <zlib.h>

#include <memory>

namespace edge {

namespace {

struct GzCloser {
    void operator()(gzFile_s* f) const { gzclose(f); }
};

Result<std::vector<uint8_t>> read_all(const std::string& path) {
    std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
    if (!f) return err(path, ": cannot open for reading");
    std::vector<uint8_t> out;
    uint8_t buf[1 << 16];
    for (;;) {
        const int got = gzread(f.get(), buf, sizeof buf);
        if (got < 0) {
            int code = 0;
            const char* msg = gzerror(f.get(), &code);
            return err(path, ": cannot decompress: ", msg ? msg : "zlib error");
        }
        if (got == 0) break;
        out.insert(out.end(), buf, buf + got);
        if (out.size() > (size_t(1) << 31)) return err(path, ": larger than 2 GiB uncompressed");
    }
    return out;
}

uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

}  // namespace

Result<IdxImages> read_idx_images(const std::string& path) {
    auto bytes = read_all(path);
    if (!bytes) return bytes.error();
    const auto& b = bytes.value();
    if (b.size() < 16) return err(path, ": too short for an IDX image header (", b.size(), " bytes)");
    if (be32(b.data()) != 0x00000803)
        return err(path, ": not an IDX image file (magic 0x", std::to_string(be32(b.data())), ", expected 2051)");
    IdxImages im;
    im.count = be32(b.data() + 4);
    im.rows = be32(b.data() + 8);
    im.cols = be32(b.data() + 12);
    if (im.rows == 0 || im.cols == 0 || im.rows > 4096 || im.cols > 4096)
        return err(path, ": bad image size ", im.rows, "x", im.cols);
    const uint64_t need = uint64_t(im.count) * uint64_t(im.rows) * uint64_t(im.cols);
    if (b.size() - 16 != need)
        return err(path, ": header says ", im.count, " images of ", im.rows, "x", im.cols, " (", need,
                   " bytes), the file holds ", b.size() - 16);
    im.pixels.assign(b.begin() + 16, b.end());
    return im;
}

Result<std::vector<uint8_t>> read_idx_labels(const std::string& path) {
    auto bytes = read_all(path);
    if (!bytes) return bytes.error();
    const auto& b = bytes.value();
    if (b.size() < 8) return err(path, ": too short for an IDX label header (", b.size(), " bytes)");
    if (be32(b.data()) != 0x00000801)
        return err(path, ": not an IDX label file (magic ", std::to_string(be32(b.data())), ", expected 2049)");
    const uint64_t count = be32(b.data() + 4);
    if (b.size() - 8 != count) return err(path, ": header says ", count, " labels, the file holds ", b.size() - 8);
    return std::vector<uint8_t>(b.begin() + 8, b.end());
}

std::vector<float> scale_pixels(const IdxImages& images, float scale) {
    std::vector<float> out(images.pixels.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = float(images.pixels[i]) * scale;
    return out;
}

}  // namespace edge
