// Little-endian byte writer and bounds-checked reader: the only way protocol code touches bytes.
// Every multi-byte value is encoded byte by byte, never by copying a struct, so the wire layout
// does not depend on the host's endianness, padding or alignment.
#pragma once
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace edge::protocol {

class WireWriter {
public:
    explicit WireWriter(std::vector<uint8_t>& out) : out_(out) {}
    void u8(uint8_t v) { out_.push_back(v); }
    void u16(uint16_t v) { put(v, 2); }
    void u32(uint32_t v) { put(v, 4); }
    void u64(uint64_t v) { put(v, 8); }
    void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
    void f32(float v) { u32(std::bit_cast<uint32_t>(v)); }
    void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
    void bytes(const uint8_t* p, size_t n) { out_.insert(out_.end(), p, p + n); }
    template <size_t N>
    void bytes(const std::array<uint8_t, N>& a) {
        bytes(a.data(), N);
    }
    // u32 byte count, then the bytes (no terminator).
    void str(const std::string& s) {
        u32(static_cast<uint32_t>(s.size()));
        bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    }

private:
    void put(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    std::vector<uint8_t>& out_;
};

// Reads past the end set a sticky failure and yield zeros; callers check ok() once at the end.
class WireReader {
public:
    explicit WireReader(std::span<const uint8_t> in) : in_(in) {}
    uint8_t u8() { return static_cast<uint8_t>(get(1)); }
    uint16_t u16() { return static_cast<uint16_t>(get(2)); }
    uint32_t u32() { return static_cast<uint32_t>(get(4)); }
    uint64_t u64() { return get(8); }
    int32_t i32() { return static_cast<int32_t>(u32()); }
    float f32() { return std::bit_cast<float>(u32()); }
    double f64() { return std::bit_cast<double>(u64()); }
    template <size_t N>
    std::array<uint8_t, N> bytes() {
        std::array<uint8_t, N> a{};
        if (!need(N)) return a;
        for (size_t i = 0; i < N; ++i) a[i] = in_[pos_ + i];
        pos_ += N;
        return a;
    }
    std::string str() {
        uint32_t n = u32();
        if (!need(n)) return {};
        std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
        pos_ += n;
        return s;
    }
    // A count of elements that each take at least min_bytes: larger than what is left is a
    // failure (so a hostile count never drives a huge allocation).
    uint32_t count(size_t min_bytes) {
        uint32_t n = u32();
        if (ok_ && min_bytes > 0 && n > remaining() / min_bytes) ok_ = false;
        return ok_ ? n : 0;
    }
    void fail() { ok_ = false; }
    bool ok() const { return ok_; }
    size_t remaining() const { return in_.size() - pos_; }
    bool at_end() const { return pos_ == in_.size(); }

private:
    bool need(size_t n) {
        if (!ok_ || n > remaining()) {
            ok_ = false;
            return false;
        }
        return true;
    }
    uint64_t get(int n) {
        if (!need(static_cast<size_t>(n))) return 0;
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(in_[pos_ + i]) << (8 * i);
        pos_ += static_cast<size_t>(n);
        return v;
    }
    std::span<const uint8_t> in_;
    size_t pos_ = 0;
    bool ok_ = true;
};

}  // namespace edge::protocol
