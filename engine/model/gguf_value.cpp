// GGUF metadata values and the ggml tensor-type table (see gguf.h).
#include <cstring>

#include "gguf.h"

namespace edge::model::gguf {

const char* value_type_name(ValueType t) {
    switch (t) {
        case ValueType::U8: return "u8";
        case ValueType::I8: return "i8";
        case ValueType::U16: return "u16";
        case ValueType::I16: return "i16";
        case ValueType::U32: return "u32";
        case ValueType::I32: return "i32";
        case ValueType::F32: return "f32";
        case ValueType::Bool: return "bool";
        case ValueType::String: return "string";
        case ValueType::Array: return "array";
        case ValueType::U64: return "u64";
        case ValueType::I64: return "i64";
        case ValueType::F64: return "f64";
    }
    return "?";
}

size_t value_type_size(ValueType t) {
    switch (t) {
        case ValueType::U8:
        case ValueType::I8:
        case ValueType::Bool: return 1;
        case ValueType::U16:
        case ValueType::I16: return 2;
        case ValueType::U32:
        case ValueType::I32:
        case ValueType::F32: return 4;
        case ValueType::U64:
        case ValueType::I64:
        case ValueType::F64: return 8;
        case ValueType::String:
        case ValueType::Array: return 0;
    }
    return 0;
}

bool Value::is_integer() const {
    switch (type) {
        case ValueType::U8:
        case ValueType::I8:
        case ValueType::U16:
        case ValueType::I16:
        case ValueType::U32:
        case ValueType::I32:
        case ValueType::U64:
        case ValueType::I64: return true;
        default: return false;
    }
}

uint64_t Value::count() const {
    if (type != ValueType::Array) return 0;
    if (elem == ValueType::String) return strings.size();
    if (elem == ValueType::Array) return items.size();
    const size_t sz = value_type_size(elem);
    return sz ? raw.size() / sz : 0;
}

namespace {
template <class T>
T load(const std::vector<uint8_t>& raw, uint64_t idx) {
    T v;
    std::memcpy(&v, raw.data() + idx * sizeof(T), sizeof(T));
    return v;
}
}  // namespace

int64_t Value::int_at(uint64_t idx) const {
    if (type != ValueType::Array || idx >= count()) return 0;
    switch (elem) {
        case ValueType::U8:
        case ValueType::Bool: return load<uint8_t>(raw, idx);
        case ValueType::I8: return load<int8_t>(raw, idx);
        case ValueType::U16: return load<uint16_t>(raw, idx);
        case ValueType::I16: return load<int16_t>(raw, idx);
        case ValueType::U32: return load<uint32_t>(raw, idx);
        case ValueType::I32: return load<int32_t>(raw, idx);
        case ValueType::U64: return int64_t(load<uint64_t>(raw, idx));
        case ValueType::I64: return load<int64_t>(raw, idx);
        case ValueType::F32: return int64_t(load<float>(raw, idx));
        case ValueType::F64: return int64_t(load<double>(raw, idx));
        default: return 0;
    }
}

double Value::float_at(uint64_t idx) const {
    if (type != ValueType::Array || idx >= count()) return 0;
    if (elem == ValueType::F32) return load<float>(raw, idx);
    if (elem == ValueType::F64) return load<double>(raw, idx);
    if (elem == ValueType::U64) return double(load<uint64_t>(raw, idx));
    return double(int_at(idx));
}

std::string Value::to_string(size_t max_items) const {
    switch (type) {
        case ValueType::String: return s;
        case ValueType::Bool: return i ? "true" : "false";
        case ValueType::F32:
        case ValueType::F64: return to_piece(f);
        case ValueType::U64: return std::to_string(u());
        case ValueType::Array: break;
        default: return std::to_string(i);
    }
    const uint64_t n = count();
    std::string out = "[" + std::to_string(n) + " x " + value_type_name(elem) + ":";
    for (uint64_t k = 0; k < n && k < max_items; ++k) {
        out += k ? ", " : " ";
        if (elem == ValueType::String) {
            std::string piece = strings[k].size() > 24 ? strings[k].substr(0, 24) + "..." : strings[k];
            out += "'" + piece + "'";
        } else if (elem == ValueType::Array) {
            out += items[k].to_string(2);
        } else if (elem == ValueType::F32 || elem == ValueType::F64) {
            out += to_piece(float_at(k));
        } else if (elem == ValueType::U64) {
            out += std::to_string(uint64_t(int_at(k)));
        } else if (elem == ValueType::Bool) {
            out += int_at(k) ? "true" : "false";
        } else {
            out += std::to_string(int_at(k));
        }
    }
    if (n > max_items) out += ", ...";
    return out + "]";
}

namespace {
uint64_t bits_of(double x) {
    static_assert(sizeof x == sizeof(uint64_t));
    uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}
}  // namespace

bool Value::operator==(const Value& o) const {
    if (type != o.type) return false;
    switch (type) {
        case ValueType::String: return s == o.s;
        case ValueType::F32:
        case ValueType::F64: return bits_of(f) == bits_of(o.f);  // bit patterns: NaN == NaN, -0 != +0
        case ValueType::Array: return elem == o.elem && raw == o.raw && strings == o.strings && items == o.items;
        default: return i == o.i;
    }
}

namespace {
Value scalar_int(ValueType t, int64_t v) {
    Value x;
    x.type = t;
    x.i = v;
    return x;
}
template <class T>
std::vector<uint8_t> pack(const std::vector<T>& v) {
    std::vector<uint8_t> out(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}
}  // namespace

Value Value::of_u8(uint8_t v) { return scalar_int(ValueType::U8, v); }
Value Value::of_i8(int8_t v) { return scalar_int(ValueType::I8, v); }
Value Value::of_u16(uint16_t v) { return scalar_int(ValueType::U16, v); }
Value Value::of_i16(int16_t v) { return scalar_int(ValueType::I16, v); }
Value Value::of_u32(uint32_t v) { return scalar_int(ValueType::U32, v); }
Value Value::of_i32(int32_t v) { return scalar_int(ValueType::I32, v); }
Value Value::of_u64(uint64_t v) { return scalar_int(ValueType::U64, int64_t(v)); }
Value Value::of_i64(int64_t v) { return scalar_int(ValueType::I64, v); }
Value Value::of_bool(bool v) { return scalar_int(ValueType::Bool, v ? 1 : 0); }
Value Value::of_f32(float v) {
    Value x;
    x.type = ValueType::F32;
    x.f = double(v);
    return x;
}
Value Value::of_f64(double v) {
    Value x;
    x.type = ValueType::F64;
    x.f = v;
    return x;
}
Value Value::of_string(std::string v) {
    Value x;
    x.type = ValueType::String;
    x.s = std::move(v);
    return x;
}
Value Value::array_of_strings(std::vector<std::string> v) {
    Value x;
    x.type = ValueType::Array;
    x.elem = ValueType::String;
    x.strings = std::move(v);
    return x;
}
Value Value::array_raw(ValueType elem, std::vector<uint8_t> packed) {
    Value x;
    x.type = ValueType::Array;
    x.elem = elem;
    x.raw = std::move(packed);
    return x;
}
Value Value::array_of_f32(const std::vector<float>& v) { return array_raw(ValueType::F32, pack(v)); }
Value Value::array_of_i32(const std::vector<int32_t>& v) { return array_raw(ValueType::I32, pack(v)); }
Value Value::array_of_arrays(std::vector<Value> v) {
    Value x;
    x.type = ValueType::Array;
    x.elem = ValueType::Array;
    x.items = std::move(v);
    return x;
}

// ggml type ids (ggml.h's enum ggml_type) with their block geometry. Ids 4 and 5 were removed
// from ggml long ago (31-33 too). Types without a DType are known by name only: this reader
// rejects them with a clear message instead of guessing their layout. The IQ and TQ types are
// read (their block sizes are known) but not converted: loading such a tensor names it.
namespace {
const GgmlType kTypes[] = {
    {0, "F32", 1, 4, DType::F32},
    {1, "F16", 1, 2, DType::F16},
    {2, "Q4_0", 32, 18, DType::Q4_0},
    {3, "Q4_1", 32, 20, DType::Q4_1},
    {6, "Q5_0", 32, 22, DType::Q5_0},
    {7, "Q5_1", 32, 24, DType::Q5_1},
    {8, "Q8_0", 32, 34, DType::Q8_0},
    {9, "Q8_1", 32, 36, std::nullopt},
    {10, "Q2_K", 256, 84, DType::Q2_K},
    {11, "Q3_K", 256, 110, DType::Q3_K},
    {12, "Q4_K", 256, 144, DType::Q4_K},
    {13, "Q5_K", 256, 176, DType::Q5_K},
    {14, "Q6_K", 256, 210, DType::Q6_K},
    {15, "Q8_K", 256, 292, DType::Q8_K},
    {16, "IQ2_XXS", 256, 66, DType::IQ2_XXS},
    {17, "IQ2_XS", 256, 74, DType::IQ2_XS},
    {18, "IQ3_XXS", 256, 98, DType::IQ3_XXS},
    {19, "IQ1_S", 256, 50, DType::IQ1_S},
    {20, "IQ4_NL", 32, 18, DType::IQ4_NL},
    {21, "IQ3_S", 256, 110, DType::IQ3_S},
    {22, "IQ2_S", 256, 82, DType::IQ2_S},
    {23, "IQ4_XS", 256, 136, DType::IQ4_XS},
    {24, "I8", 1, 1, DType::I8},
    {25, "I16", 1, 2, std::nullopt},
    {26, "I32", 1, 4, DType::I32},
    {27, "I64", 1, 8, std::nullopt},
    {28, "F64", 1, 8, std::nullopt},
    {29, "IQ1_M", 256, 56, DType::IQ1_M},
    {30, "BF16", 1, 2, DType::BF16},
    {34, "TQ1_0", 256, 54, DType::TQ1_0},
    {35, "TQ2_0", 256, 66, DType::TQ2_0},
};
}  // namespace

const GgmlType* ggml_type(uint32_t id) {
    for (const GgmlType& t : kTypes)
        if (t.id == id) return &t;
    return nullptr;
}

std::optional<uint32_t> ggml_type_id(DType d) {
    for (const GgmlType& t : kTypes)
        if (t.dtype && *t.dtype == d) return t.id;
    return std::nullopt;
}

}  // namespace edge::model::gguf
