// GGUF parser: header, metadata, tensor infos, data section (see gguf.h for the layout).
// The Value helpers and the type tables live in gguf_value.cpp.
#include "gguf.h"

#include <cstring>
#include <set>

namespace edge::model::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747u;  // "GGUF" read as a little-endian u32

// Minimum bytes an element of each kind occupies in the file: used to reject counts that cannot
// possibly fit in what is left, before anything is allocated.
constexpr uint64_t kMinStringBytes = 8;                  // u64 length, empty string
constexpr uint64_t kMinArrayBytes = 12;                  // u32 element type + u64 count
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;              // empty key, type, smallest value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // empty name, n_dims 0, type, offset

class Cursor {
public:
    Cursor(const uint8_t* p, size_t n, const std::string& name) : p_(p), n_(n), name_(name) {}

    size_t pos() const { return pos_; }
    size_t left() const { return n_ - pos_; }

    Error truncated(const std::string& what) const {
        return err(name_, ": truncated file: ", what, " at offset ", pos_, " runs past the end of the file (size ", n_,
                   ")");
    }

    template <class T>
    Result<T> scalar(const std::string& what) {
        T v;
        if (sizeof(T) > left()) return truncated(what);
        std::memcpy(&v, p_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    Result<std::string> string(const std::string& what) {
        auto len = scalar<uint64_t>(what + " length");
        if (!len.ok()) return len.error();
        if (*len > left())
            return err(name_, ": ", what, " at offset ", pos_ - 8, " claims ", *len, " bytes but only ", left(),
                       " remain in the file (size ", n_, ")");
        std::string s(reinterpret_cast<const char*>(p_ + pos_), size_t(*len));
        pos_ += size_t(*len);
        return s;
    }

    Result<std::vector<uint8_t>> bytes(uint64_t n, const std::string& what) {
        if (n > left()) return truncated(what);
        std::vector<uint8_t> v(p_ + pos_, p_ + pos_ + n);
        pos_ += size_t(n);
        return v;
    }

private:
    const uint8_t* p_;
    size_t n_;
    size_t pos_ = 0;
    const std::string& name_;
};

bool valid_type(uint32_t t) { return t <= uint32_t(ValueType::F64); }

Result<Value> read_value(Cursor& c, ValueType type, int depth, const std::string& what, const std::string& name);

Result<Value> read_array(Cursor& c, int depth, const std::string& what, const std::string& name) {
    if (depth >= kMaxArrayDepth) return err(name, ": ", what, " nests arrays more than ", kMaxArrayDepth, " deep");
    const size_t at = c.pos();
    auto et = c.scalar<uint32_t>(what + " element type");
    if (!et.ok()) return et.error();
    if (!valid_type(*et)) return err(name, ": ", what, " has unknown element type ", *et, " (offset ", at, ")");
    auto count = c.scalar<uint64_t>(what + " element count");
    if (!count.ok()) return count.error();
    Value v;
    v.type = ValueType::Array;
    v.elem = ValueType(*et);
    const size_t esz = value_type_size(v.elem);
    const uint64_t min_each = esz ? esz : (v.elem == ValueType::String ? kMinStringBytes : kMinArrayBytes);
    if (*count > c.left() / min_each)
        return err(name, ": ", what, " claims ", *count, " ", value_type_name(v.elem), " elements (offset ", at,
                   ") but only ", c.left(), " bytes remain in the file");
    if (esz) {
        auto b = c.bytes(*count * esz, what);
        if (!b.ok()) return b.error();
        v.raw = std::move(b).value();
        if (v.elem == ValueType::Bool)
            for (uint8_t x : v.raw)
                if (x > 1) return err(name, ": ", what, " holds a bool that is neither 0 nor 1");
        return v;
    }
    if (v.elem == ValueType::String) {
        v.strings.reserve(size_t(*count));
        for (uint64_t k = 0; k < *count; ++k) {
            auto s = c.string(what + " element " + std::to_string(k));
            if (!s.ok()) return s.error();
            v.strings.push_back(std::move(s).value());
        }
        return v;
    }
    v.items.reserve(size_t(*count));
    for (uint64_t k = 0; k < *count; ++k) {
        auto sub = read_array(c, depth + 1, what + "[" + std::to_string(k) + "]", name);
        if (!sub.ok()) return sub.error();
        v.items.push_back(std::move(sub).value());
    }
    return v;
}

Result<Value> read_value(Cursor& c, ValueType type, int depth, const std::string& what, const std::string& name) {
    Value v;
    v.type = type;
    auto num = [&](auto tag) -> Status {
        using T = decltype(tag);
        auto r = c.scalar<T>(what);
        if (!r.ok()) return r.error();
        if constexpr (std::is_floating_point_v<T>)
            v.f = double(*r);
        else
            v.i = int64_t(*r);  // NOLINT(bugprone-signed-char-misuse): GGUF's INT8 is signed, sign extension intended
        return {};
    };
    switch (type) {
        case ValueType::U8: EDGE_TRY(num(uint8_t{})); break;
        case ValueType::I8: EDGE_TRY(num(int8_t{})); break;
        case ValueType::U16: EDGE_TRY(num(uint16_t{})); break;
        case ValueType::I16: EDGE_TRY(num(int16_t{})); break;
        case ValueType::U32: EDGE_TRY(num(uint32_t{})); break;
        case ValueType::I32: EDGE_TRY(num(int32_t{})); break;
        case ValueType::U64: EDGE_TRY(num(uint64_t{})); break;
        case ValueType::I64: EDGE_TRY(num(int64_t{})); break;
        case ValueType::F32: EDGE_TRY(num(float{})); break;
        case ValueType::F64: EDGE_TRY(num(double{})); break;
        case ValueType::Bool: {
            EDGE_TRY(num(uint8_t{}));
            if (v.i > 1) return err(name, ": ", what, " is a bool with value ", v.i, " (expected 0 or 1)");
            break;
        }
        case ValueType::String: {
            auto s = c.string(what);
            if (!s.ok()) return s.error();
            v.s = std::move(s).value();
            break;
        }
        case ValueType::Array: return read_array(c, depth, what, name);
    }
    return v;
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

std::string dims_str(const std::vector<uint64_t>& ne) {
    std::string s = "[";
    for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

Result<TensorInfo> read_tensor_info(Cursor& c, uint64_t index, const std::string& name) {
    TensorInfo t;
    const std::string what = "tensor info #" + std::to_string(index);
    auto nm = c.string(what + " name");
    if (!nm.ok()) return nm.error();
    t.name = std::move(nm).value();
    const std::string tn = "tensor '" + t.name + "'";
    auto nd = c.scalar<uint32_t>(tn + " dimension count");
    if (!nd.ok()) return nd.error();
    if (*nd > kMaxDims) return err(name, ": ", tn, " has ", *nd, " dimensions (at most ", kMaxDims, " are allowed)");
    // The product of the non-zero dimensions must fit an int64 (Tensor::numel multiplies in any
    // order); a zero dimension makes the tensor empty.
    uint64_t nonzero = 1;
    bool overflow = false, empty = false;
    for (uint32_t d = 0; d < *nd; ++d) {
        auto e = c.scalar<uint64_t>(tn + " dimension " + std::to_string(d));
        if (!e.ok()) return e.error();
        t.ne.push_back(*e);
        if (*e == 0)
            empty = true;
        else if (mul_overflows(nonzero, *e, &nonzero) || nonzero > uint64_t(INT64_MAX))
            overflow = true;
    }
    if (overflow) return err(name, ": ", tn, " dimensions ", dims_str(t.ne), " overflow a 64-bit element count");
    const uint64_t n = empty ? 0 : nonzero;
    auto ty = c.scalar<uint32_t>(tn + " type");
    if (!ty.ok()) return ty.error();
    const GgmlType* gt = ggml_type(*ty);
    if (!gt) return err(name, ": ", tn, " has unknown tensor type id ", *ty);
    if (gt->block_bytes == 0 || !gt->dtype)
        return err(name, ": ", tn, " has tensor type ", gt->name, " (id ", *ty, "), which is not supported");
    t.type_id = *ty;
    t.type = *gt->dtype;
    const uint64_t ne0 = t.ne.empty() ? 1 : t.ne[0];
    if (ne0 % uint64_t(gt->block_elems) != 0)
        return err(name, ": ", tn, " of type ", gt->name, " has rows of ", ne0, " elements, not a multiple of its ",
                   gt->block_elems, "-element blocks");
    t.n_elements = n;
    if (mul_overflows(n / uint64_t(gt->block_elems), uint64_t(gt->block_bytes), &t.nbytes))
        return err(name, ": ", tn, " dimensions ", dims_str(t.ne), " need more bytes than a 64-bit size can hold");
    auto off = c.scalar<uint64_t>(tn + " offset");
    if (!off.ok()) return off.error();
    t.offset = *off;
    return t;
}

}  // namespace

std::vector<int64_t> TensorInfo::shape() const {
    std::vector<int64_t> s;
    for (auto it = ne.rbegin(); it != ne.rend(); ++it) s.push_back(int64_t(*it));
    return s;
}

Result<File> parse(const uint8_t* data, size_t size, const std::string& name) {
    File f;
    f.path = name;
    f.bytes = data;
    f.size = size;
    Cursor c(data, size, name);

    if (size < 4) return err(name, ": not a GGUF file (", size, " bytes, too short for the magic)");
    uint32_t magic;
    std::memcpy(&magic, data, 4);
    if (magic != kMagic) {
        std::string got;
        for (int k = 0; k < 4; ++k) {
            const char ch = char(data[k]);
            got += (ch >= 32 && ch < 127) ? std::string(1, ch) : "\\x" + std::to_string(int(data[k]));
        }
        return err(name, ": not a GGUF file (bad magic '", got, "', expected 'GGUF')");
    }
    (void)c.scalar<uint32_t>("magic");
    auto ver = c.scalar<uint32_t>("version");
    if (!ver.ok()) return ver.error();
    if (*ver != 2 && *ver != 3)
        return err(name, ": GGUF version ", *ver, " is not supported (this reader handles versions 2 and 3)");
    f.version = *ver;
    auto nt = c.scalar<uint64_t>("tensor count");
    if (!nt.ok()) return nt.error();
    auto nkv = c.scalar<uint64_t>("metadata count");
    if (!nkv.ok()) return nkv.error();
    if (*nkv > c.left() / kMinKvBytes)
        return err(name, ": metadata count ", *nkv, " is absurd for a file of ", size, " bytes");
    if (*nt > c.left() / kMinTensorInfoBytes)
        return err(name, ": tensor count ", *nt, " is absurd for a file of ", size, " bytes");

    std::set<std::string> keys;
    f.kv.reserve(size_t(*nkv));
    for (uint64_t k = 0; k < *nkv; ++k) {
        auto key = c.string("metadata key #" + std::to_string(k));
        if (!key.ok()) return key.error();
        const std::string what = "metadata '" + *key + "'";
        if (!keys.insert(*key).second) return err(name, ": ", what, " appears twice");
        auto ty = c.scalar<uint32_t>(what + " type");
        if (!ty.ok()) return ty.error();
        if (!valid_type(*ty)) return err(name, ": ", what, " has unknown value type ", *ty);
        auto v = read_value(c, ValueType(*ty), 0, what, name);
        if (!v.ok()) return v.error();
        f.kv.emplace_back(std::move(key).value(), std::move(v).value());
    }

    if (const Value* a = f.find("general.alignment")) {
        if (!a->is_integer() || a->i <= 0 || (a->i & (a->i - 1)) != 0 || a->i > (int64_t(1) << 24))
            return err(name, ": general.alignment ", a->to_string(), " is not a usable power of two");
        f.alignment = uint64_t(a->i);
    }

    std::set<std::string> names;
    f.tensors.reserve(size_t(*nt));
    for (uint64_t k = 0; k < *nt; ++k) {
        auto t = read_tensor_info(c, k, name);
        if (!t.ok()) return t.error();
        if (!names.insert(t->name).second) return err(name, ": tensor '", t->name, "' appears twice");
        f.tensors.push_back(std::move(t).value());
    }

    // The data section starts at the next multiple of the alignment.
    const uint64_t end = c.pos();
    f.data_offset = (end + f.alignment - 1) / f.alignment * f.alignment;
    for (TensorInfo& t : f.tensors) {
        if (t.offset % f.alignment != 0)
            return err(name, ": tensor '", t.name, "' data offset ", t.offset, " is not a multiple of the alignment ",
                       f.alignment);
        uint64_t start, stop;
        if (add_overflows(f.data_offset, t.offset, &start) || add_overflows(start, t.nbytes, &stop) || stop > size)
            return err(name, ": tensor '", t.name, "' data [offset ", t.offset, " in the data section at ",
                       f.data_offset, ", ", t.nbytes, " bytes] runs past the end of the file (size ", size, ")");
        t.data = data + start;
    }
    return f;
}

Result<File> open(const std::string& path) {
    auto m = MappedFile::open(path);
    if (!m.ok()) return m.error();
    (*m)->advise_random();  // the header alone is read now; tensors ask for their range when read
    auto f = parse((*m)->data(), (*m)->size(), path);
    if (!f.ok()) return f.error();
    f->mapping = std::move(m).value();
    return f;
}

const Value* File::find(std::string_view key) const {
    for (const auto& [k, v] : kv)
        if (k == key) return &v;
    return nullptr;
}

const TensorInfo* File::find_tensor(std::string_view n) const {
    for (const auto& t : tensors)
        if (t.name == n) return &t;
    return nullptr;
}

Result<std::optional<int64_t>> File::get_int(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::optional<int64_t>{};
    if (!v->is_integer())
        return err(path, ": metadata '", key, "' is a ", value_type_name(v->type), ", expected an integer");
    if (v->type == ValueType::U64 && v->i < 0)
        return err(path, ": metadata '", key, "' value ", v->u(), " is out of range");
    return std::optional<int64_t>(v->i);
}

Result<std::optional<double>> File::get_float(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::optional<double>{};
    if (v->is_float()) return std::optional<double>(v->f);
    if (v->is_integer()) return std::optional<double>(double(v->i));
    return err(path, ": metadata '", key, "' is a ", value_type_name(v->type), ", expected a number");
}

Result<std::optional<std::string>> File::get_string(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::optional<std::string>{};
    if (v->type != ValueType::String)
        return err(path, ": metadata '", key, "' is a ", value_type_name(v->type), ", expected a string");
    return std::optional<std::string>(v->s);
}

Result<std::optional<bool>> File::get_bool(std::string_view key) const {
    const Value* v = find(key);
    if (!v) return std::optional<bool>{};
    if (v->type != ValueType::Bool && !v->is_integer())
        return err(path, ": metadata '", key, "' is a ", value_type_name(v->type), ", expected a bool");
    return std::optional<bool>(v->i != 0);
}

}  // namespace edge::model::gguf
