// GGUF reader (versions 2 and 3), hardened against hostile input.
//
// File layout (all integers little-endian):
//   u32 magic "GGUF" | u32 version | u64 tensor_count | u64 kv_count
//   kv_count x { string key | u32 value_type | value }
//   tensor_count x { string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type | u64 offset }
//   padding to general.alignment (default 32)
//   data section: each tensor at data_start + offset (offset a multiple of the alignment)
// A string is u64 length + bytes (no terminator). An array value is u32 element type + u64 count
// + elements (arrays may nest). ne[] is ggml order: ne[0] is the innermost (row) length.
//
// Every count, length, offset and size is checked against the bytes actually present before
// anything is allocated or read, with overflow-safe arithmetic; errors name the file and the
// problem. Nothing here throws.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/mapped_file.h"
#include "engine/core/result.h"
#include "engine/core/tensor.h"

namespace edge::model::gguf {

enum class ValueType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};
const char* value_type_name(ValueType t);
// Bytes of one scalar element (0 for String and Array).
size_t value_type_size(ValueType t);

// One metadata value. Scalars: integers in `i` (unsigned ones as their bit pattern, so u64 values
// above INT64_MAX come back exactly through `u()`), floats in `f`, bool in `i` (0/1), strings in
// `s`. Arrays: `elem` is the element type; scalar elements are kept packed as in the file
// (`raw`, little-endian, value_type_size(elem) bytes each), strings in `strings`, nested arrays in
// `items`.
struct Value {
    ValueType type = ValueType::U8;
    int64_t i = 0;
    double f = 0;
    std::string s;
    ValueType elem = ValueType::U8;
    std::vector<uint8_t> raw;
    std::vector<std::string> strings;
    std::vector<Value> items;

    uint64_t u() const { return uint64_t(i); }
    bool is_integer() const;
    bool is_float() const { return type == ValueType::F32 || type == ValueType::F64; }
    // Number of elements of an array (0 for scalars).
    uint64_t count() const;
    // Scalar array element i as a number (any integer/bool/float element type).
    int64_t int_at(uint64_t idx) const;
    double float_at(uint64_t idx) const;
    // Printable form; arrays are summarised (type, length, first few elements).
    std::string to_string(size_t max_items = 4) const;

    bool operator==(const Value& o) const;

    // Builders (used by the writer and the tests).
    static Value of_u8(uint8_t v);
    static Value of_i8(int8_t v);
    static Value of_u16(uint16_t v);
    static Value of_i16(int16_t v);
    static Value of_u32(uint32_t v);
    static Value of_i32(int32_t v);
    static Value of_u64(uint64_t v);
    static Value of_i64(int64_t v);
    static Value of_f32(float v);
    static Value of_f64(double v);
    static Value of_bool(bool v);
    static Value of_string(std::string v);
    static Value array_of_strings(std::vector<std::string> v);
    static Value array_of_f32(const std::vector<float>& v);
    static Value array_of_i32(const std::vector<int32_t>& v);
    // Scalar array of `elem` from packed little-endian bytes.
    static Value array_raw(ValueType elem, std::vector<uint8_t> packed);
    static Value array_of_arrays(std::vector<Value> v);
};

// A ggml tensor type id as it appears in the file, with its block geometry.
struct GgmlType {
    uint32_t id = 0;
    const char* name = "?";
    int64_t block_elems = 1;
    int64_t block_bytes = 0;
    std::optional<DType> dtype;  // the engine's DType, when it has one
};
// nullptr for ids this reader does not know the layout of.
const GgmlType* ggml_type(uint32_t id);
// The ggml id of an engine DType (F32 -> 0, F16 -> 1, Q4_0 -> 2, ...).
std::optional<uint32_t> ggml_type_id(DType t);

struct TensorInfo {
    std::string name;
    std::vector<uint64_t> ne;  // ggml order: ne[0] innermost
    uint32_t type_id = 0;
    DType type = DType::F32;
    uint64_t offset = 0;  // relative to the data section
    uint64_t n_elements = 0;
    uint64_t nbytes = 0;
    const uint8_t* data = nullptr;  // points into the file's bytes

    // Shape outermost first (the IR's convention): ne reversed.
    std::vector<int64_t> shape() const;
};

struct File {
    std::string path;  // or the name given to parse()
    uint32_t version = 0;
    uint64_t alignment = 32;
    uint64_t data_offset = 0;                       // start of the data section in the file
    std::vector<std::pair<std::string, Value>> kv;  // file order
    std::vector<TensorInfo> tensors;                // file order
    const uint8_t* bytes = nullptr;
    size_t size = 0;
    std::shared_ptr<MappedFile> mapping;  // keeps `bytes` alive when opened from a path

    const Value* find(std::string_view key) const;
    const TensorInfo* find_tensor(std::string_view name) const;
    // Typed look-ups: nullopt when absent; an error when present with an unusable type/value.
    Result<std::optional<int64_t>> get_int(std::string_view key) const;
    Result<std::optional<double>> get_float(std::string_view key) const;
    Result<std::optional<std::string>> get_string(std::string_view key) const;
    Result<std::optional<bool>> get_bool(std::string_view key) const;
};

// Parses GGUF from bytes that the caller keeps alive for the lifetime of the result.
// `name` is used in error messages (a path or "<memory>").
Result<File> parse(const uint8_t* data, size_t size, const std::string& name);
// Maps and parses a file; the result keeps the mapping alive.
Result<File> open(const std::string& path);

// Hard limits the parser enforces on top of the file-size checks.
inline constexpr uint32_t kMaxDims = 4;
inline constexpr int kMaxArrayDepth = 16;

}  // namespace edge::model::gguf

#include "engine/core/progress.h"
#include "engine/model/ir.h"

namespace edge::model {
// Builds a llama Model from a parsed GGUF (load_gguf_model = gguf::open + this). Also the entry
// point the fuzzer drives on in-memory bytes. Tensors of an opened file may alias its mapping
// (kept alive by the tensors); tensors of parse()d caller memory are always copied.
// lazy_weights: tensors left unread, read later through the model's WeightSource (weights.h).
Result<Model> import_gguf(const gguf::File& f, Progress* progress = nullptr, bool lazy_weights = false);
}  // namespace edge::model
