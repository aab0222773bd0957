// safetensors: reader (from memory or from a memory-mapped file) and writer.
//
// Layout: u64 little-endian header length N, N bytes of JSON, then the data buffer. The JSON maps
// tensor names to {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} (offsets relative
// to the data buffer) plus an optional "__metadata__" object of string -> string.
//
// The parser never trusts the file: the header length is bounded (<= 100 MB and <= the file),
// every field is type-checked, offsets must satisfy begin <= end <= data size and
// end - begin == numel * element size (overflow-checked). Every dtype of the format is parsed
// (so that offsets can be checked), but only F32, F16 and BF16 convert to tensors; the others get
// an error naming the tensor and the dtype. Errors name the file (the `origin` string) and the
// tensor. No exception escapes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/mapped_file.h"
#include "engine/core/result.h"
#include "engine/core/tensor.h"

namespace edge::model {

constexpr uint64_t kSafetensorsMaxHeader = 100ull * 1000 * 1000;

struct SafetensorsEntry {
    std::string name;
    std::string dtype_name;      // as written in the file ("F32", "I64", ...)
    std::optional<DType> dtype;  // set for F32, F16, BF16 (the types the engine converts)
    int64_t elem_bytes = 0;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;  // relative to the data buffer
    int64_t numel() const;
};

// A parsed safetensors image. `base` points at the whole image (header length included); when
// the image comes from a file, `file` keeps the mapping alive.
struct SafetensorsFile {
    std::string origin;                     // file path (or a label for in-memory images), used in messages
    std::vector<SafetensorsEntry> entries;  // in data-offset order
    std::map<std::string, std::string> metadata;
    const uint8_t* base = nullptr;
    size_t size = 0;
    size_t data_start = 0;  // 8 + header length
    std::shared_ptr<MappedFile> file;

    const SafetensorsEntry* find(const std::string& name) const;
    const uint8_t* bytes(const SafetensorsEntry& e) const { return base + data_start + e.begin; }
    // The tensor converted to F32 (source_type keeps the stored dtype). F32 data that is 4-byte
    // aligned inside a mapped file is aliased (the mapping is private copy-on-write); everything
    // else is copied into owned storage. `new_name` renames the tensor (the canonical name).
    Result<Tensor> to_f32(const SafetensorsEntry& e, const std::string& new_name) const;
};

// Parses an image in memory. The caller keeps the bytes alive as long as the result is used.
Result<SafetensorsFile> parse_safetensors(const uint8_t* data, size_t size, const std::string& origin);
// Maps and parses a file.
Result<SafetensorsFile> open_safetensors(const std::string& path);

// ---- writer --------------------------------------------------------------------------------
struct SafetensorsWriteItem {
    std::string name;
    DType dtype = DType::F32;  // F32, F16 or BF16
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;  // numel * element size, little-endian
};

// n stored F32, F16 or BF16 values (little-endian bytes at src) as floats.
void stored_to_f32(const uint8_t* src, DType dtype, int64_t n, float* dst);

// F32 values converted to `dtype` storage bytes (round to nearest even for F16/BF16).
std::vector<uint8_t> encode_f32_as(const float* values, int64_t n, DType dtype);

// Serialises items in the given order, contiguous in the data buffer (no holes, as the format's
// reference implementation requires); the JSON header is padded with spaces to a multiple of 8.
Result<std::vector<uint8_t>> serialize_safetensors(const std::vector<SafetensorsWriteItem>& items,
                                                   const std::map<std::string, std::string>& metadata = {});
Status write_safetensors(const std::string& path, const std::vector<SafetensorsWriteItem>& items,
                         const std::map<std::string, std::string>& metadata = {});

// Writes one safetensors file a piece at a time, for tensors larger than memory: declare every
// tensor first (add), then open() writes the header and write() takes the data bytes in
// declaration order, in pieces of any size; finish() checks every declared byte came.
class SafetensorsStreamWriter {
public:
    SafetensorsStreamWriter() = default;
    SafetensorsStreamWriter(const SafetensorsStreamWriter&) = delete;
    SafetensorsStreamWriter& operator=(const SafetensorsStreamWriter&) = delete;

    Status add(const std::string& name, DType dtype, std::vector<int64_t> shape);
    Status open(const std::string& path, const std::map<std::string, std::string>& metadata = {});
    Status write(const void* data, size_t bytes);
    Status finish();
    // Data bytes declared so far (the file is 8 + header + this).
    uint64_t data_bytes() const { return declared_; }
    const std::vector<SafetensorsWriteItem>& tensors() const { return decls_; }

private:
    std::vector<SafetensorsWriteItem> decls_;  // bytes stay empty: only name, dtype, shape
    uint64_t declared_ = 0, written_ = 0;
    std::string path_;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
};

}  // namespace edge::model
