// A minimal protobuf wire-format reader for the ONNX importer. It never trusts the input: every
// length is checked against the enclosing message, varints are at most 10 bytes, and group wire
// types (3, 4) are an error.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace edge::model::pb {

struct Field {
    uint32_t number = 0;
    uint32_t wire = 0;              // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
    uint64_t value = 0;             // varint / fixed payload
    const uint8_t* data = nullptr;  // length-delimited payload
    size_t size = 0;
    std::string_view str() const { return {reinterpret_cast<const char*>(data), size}; }
};

class Reader {
public:
    Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
    bool done() const { return p_ >= end_; }
    bool failed() const { return failed_; }
    const std::string& why() const { return why_; }

    // Reads the next field; false at the end of the message or on malformed input (failed()).
    bool next(Field& f) {
        if (p_ >= end_ || failed_) return false;
        uint64_t key = 0;
        if (!varint(key)) return fail("truncated field key");
        f = Field{};
        f.number = uint32_t(key >> 3);
        f.wire = uint32_t(key & 7);
        if (f.number == 0) return fail("field number 0");
        switch (f.wire) {
            case 0:
                if (!varint(f.value)) return fail("truncated varint");
                return true;
            case 1:
                if (end_ - p_ < 8) return fail("truncated fixed64");
                std::memcpy(&f.value, p_, 8);
                p_ += 8;
                return true;
            case 5: {
                if (end_ - p_ < 4) return fail("truncated fixed32");
                uint32_t v;
                std::memcpy(&v, p_, 4);
                f.value = v;
                p_ += 4;
                return true;
            }
            case 2: {
                uint64_t len = 0;
                if (!varint(len)) return fail("truncated length");
                if (len > uint64_t(end_ - p_)) return fail("a length-delimited field runs past its message");
                f.data = p_;
                f.size = size_t(len);
                p_ += len;
                return true;
            }
            default: return fail("unsupported wire type " + std::to_string(f.wire));
        }
    }

    bool varint(uint64_t& out) {
        out = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p_ >= end_) return false;
            const uint8_t b = *p_++;
            out |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    }

private:
    bool fail(std::string why) {
        failed_ = true;
        why_ = std::move(why);
        return false;
    }
    const uint8_t* p_;
    const uint8_t* end_;
    bool failed_ = false;
    std::string why_;
};

// Appends the values of a repeated int64/int32 field (packed or not) to out; false when malformed.
inline bool append_varints(const Field& f, std::vector<int64_t>& out) {
    if (f.wire == 0) {
        out.push_back(int64_t(f.value));
        return true;
    }
    if (f.wire != 2) return false;
    Reader r(f.data, f.size);
    while (!r.done()) {
        uint64_t v = 0;
        if (!r.varint(v)) return false;
        out.push_back(int64_t(v));
    }
    return true;
}

// Appends the values of a repeated float field (packed or not).
inline bool append_floats(const Field& f, std::vector<float>& out) {
    auto as_float = [](uint32_t bits) {
        float x;
        std::memcpy(&x, &bits, 4);
        return x;
    };
    if (f.wire == 5) {
        out.push_back(as_float(uint32_t(f.value)));
        return true;
    }
    if (f.wire != 2 || f.size % 4) return false;
    for (size_t i = 0; i < f.size; i += 4) {
        uint32_t bits;
        std::memcpy(&bits, f.data + i, 4);
        out.push_back(as_float(bits));
    }
    return true;
}

// Appends the values of a repeated double field (packed or not).
inline bool append_doubles(const Field& f, std::vector<float>& out) {
    auto as_double = [](uint64_t bits) {
        double x;
        std::memcpy(&x, &bits, 8);
        return x;
    };
    if (f.wire == 1) {
        out.push_back(float(as_double(f.value)));
        return true;
    }
    if (f.wire != 2 || f.size % 8) return false;
    for (size_t i = 0; i < f.size; i += 8) {
        uint64_t bits;
        std::memcpy(&bits, f.data + i, 8);
        out.push_back(float(as_double(bits)));
    }
    return true;
}

}  // namespace edge::model::pb
