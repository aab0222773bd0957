// IDX reader (MNIST), gzip or plain, through zlib's gzread (which reads both).
#include "engine/calib/image_sets.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <string_view>

namespace edge::calib {

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

Result<LabelledImages> read_digits_csv(const std::string& path) {
    auto bytes = read_all(path);
    if (!bytes) return bytes.error();
    const std::string text(bytes->begin(), bytes->end());
    LabelledImages out;
    out.channels = 1;
    out.rows = out.cols = 8;
    size_t pos = 0;
    int64_t line_no = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) eol = text.size();
        std::string_view line(text.data() + pos, eol - pos);
        pos = eol + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        int values[65];
        int n = 0;
        const char* p = line.data();
        const char* end = line.data() + line.size();
        while (p <= end) {
            if (n == 65) return err(path, ":", line_no, ": more than 65 values (64 pixels and a label)");
            const char* comma = std::find(p, end, ',');
            int v = 0;
            auto [ptr, ec] = std::from_chars(p, comma, v);
            if (ec != std::errc() || ptr != comma)
                return err(path, ":", line_no, ": value ", n + 1, " ('", std::string(p, comma), "') is not an integer");
            values[n++] = v;
            p = comma + 1;
        }
        if (n != 65) return err(path, ":", line_no, ": ", n, " values; expected 64 pixels and a label");
        for (int i = 0; i < 64; ++i) {
            if (values[i] < 0 || values[i] > 16)
                return err(path, ":", line_no, ": pixel ", i, " is ", values[i], ", outside 0..16");
            out.pixels.push_back(float(values[i]) / 16.0f);
        }
        if (values[64] < 0 || values[64] > 9) return err(path, ":", line_no, ": label ", values[64], " is not a digit");
        out.labels.push_back(uint8_t(values[64]));
        ++out.count;
    }
    if (out.count == 0) return err(path, ": no images");
    return out;
}

ImageSplit split_every_fifth(const LabelledImages& all) {
    ImageSplit s;
    for (LabelledImages* d : {&s.train, &s.test}) {
        d->channels = all.channels;
        d->rows = all.rows;
        d->cols = all.cols;
    }
    const int64_t per = all.image_size();
    for (int64_t i = 0; i < all.count; ++i) {
        LabelledImages& d = i % 5 == 0 ? s.test : s.train;
        d.pixels.insert(d.pixels.end(), all.pixels.begin() + i * per, all.pixels.begin() + (i + 1) * per);
        d.labels.push_back(all.labels[size_t(i)]);
        ++d.count;
    }
    return s;
}

}  // namespace edge::calib
