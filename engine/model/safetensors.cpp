#include "safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/json_util.h"

#include "engine/core/half.h"

namespace edge::model {

namespace {

using json = nlohmann::json;

struct DtypeInfo {
    const char* name;
    int64_t bytes;
    std::optional<DType> dtype;
};

// Every dtype the format defines (sub-byte float formats are not listed: unknown -> error).
constexpr DtypeInfo kDtypes[] = {
    {"F32", 4, DType::F32},    {"F16", 2, DType::F16},       {"BF16", 2, DType::BF16},     {"F64", 8, std::nullopt},
    {"I64", 8, std::nullopt},  {"I32", 4, std::nullopt},     {"I16", 2, std::nullopt},     {"I8", 1, std::nullopt},
    {"U64", 8, std::nullopt},  {"U32", 4, std::nullopt},     {"U16", 2, std::nullopt},     {"U8", 1, std::nullopt},
    {"BOOL", 1, std::nullopt}, {"F8_E4M3", 1, std::nullopt}, {"F8_E5M2", 1, std::nullopt}, {"F8_E8M0", 1, std::nullopt},
};

const DtypeInfo* find_dtype(const std::string& s) {
    for (const auto& d : kDtypes)
        if (s == d.name) return &d;
    return nullptr;
}

const char* storage_name(DType t) {
    switch (t) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        default: return nullptr;
    }
}

uint64_t read_u64le(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// Deepest nesting of arrays/objects outside strings; guards the JSON parser against hostile input.
int max_nesting(const char* s, size_t n) {
    int depth = 0, best = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; ++i) {
        const char c = s[i];
        if (in_str) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            best = std::max(best, ++depth);
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    return best;
}

Status parse_entry(const std::string& origin, const std::string& name, const json& v, uint64_t data_size,
                   SafetensorsEntry& e) {
    e.name = name;
    if (!v.is_object()) return err(origin, ": tensor '", name, "': header entry is not an object");
    auto dt = v.find("dtype");
    if (dt == v.end() || !dt->is_string()) return err(origin, ": tensor '", name, "': missing or non-string dtype");
    e.dtype_name = dt->get<std::string>();
    const DtypeInfo* info = find_dtype(e.dtype_name);
    if (!info) return err(origin, ": tensor '", name, "': unknown dtype '", e.dtype_name, "'");
    e.dtype = info->dtype;
    e.elem_bytes = info->bytes;

    auto sh = v.find("shape");
    if (sh == v.end() || !sh->is_array()) return err(origin, ": tensor '", name, "': missing or non-array shape");
    if (sh->size() > 16) return err(origin, ": tensor '", name, "': ", sh->size(), " dimensions are too many");
    uint64_t numel = 1;
    for (const json& d : *sh) {
        if (!d.is_number_unsigned())
            return err(origin, ": tensor '", name, "': shape entries must be non-negative integers");
        const uint64_t n = d.get<uint64_t>();
        if (n > (uint64_t(1) << 48) || __builtin_mul_overflow(numel, n, &numel) || numel > (uint64_t(1) << 56))
            return err(origin, ": tensor '", name, "': shape ", json_excerpt(*sh), " has an absurd element count");
        e.shape.push_back(int64_t(n));
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(numel, uint64_t(e.elem_bytes), &bytes))
        return err(origin, ": tensor '", name, "': shape ", json_excerpt(*sh), " has an absurd byte size");

    auto off = v.find("data_offsets");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
        return err(origin, ": tensor '", name, "': data_offsets must be two non-negative integers");
    e.begin = (*off)[0].get<uint64_t>();
    e.end = (*off)[1].get<uint64_t>();
    if (e.begin > e.end)
        return err(origin, ": tensor '", name, "': data_offsets [", e.begin, ", ", e.end, "] are reversed");
    if (e.end > data_size)
        return err(origin, ": tensor '", name, "': data_offsets [", e.begin, ", ", e.end,
                   "] run past the end of the data (", data_size, " bytes; file truncated?)");
    if (e.end - e.begin != bytes)
        return err(origin, ": tensor '", name, "': data_offsets span ", e.end - e.begin, " bytes but ", e.dtype_name,
                   " shape ", json_excerpt(*sh), " needs ", bytes);
    return {};
}

}  // namespace

int64_t SafetensorsEntry::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
    for (const auto& e : entries)
        if (e.name == name) return &e;
    return nullptr;
}

Result<SafetensorsFile> parse_safetensors(const uint8_t* data, size_t size, const std::string& origin) {
    if (!data || size < 8)
        return err(origin, ": not a safetensors file (", size, " bytes; the header length alone takes 8)");
    const uint64_t n = read_u64le(data);
    if (n > kSafetensorsMaxHeader)
        return err(origin, ": safetensors header length ", n, " is absurd (limit ", kSafetensorsMaxHeader, " bytes)");
    if (n > size - 8)
        return err(origin, ": safetensors header length ", n, " exceeds the file (", size, " bytes; file truncated?)");
    if (n < 2) return err(origin, ": safetensors header length ", n, " is too short for a JSON object");
    const char* hdr = reinterpret_cast<const char*>(data + 8);
    if (hdr[0] != '{') return err(origin, ": safetensors header does not start with '{'");
    if (max_nesting(hdr, size_t(n)) > 8) return err(origin, ": safetensors header JSON is nested too deeply");

    json j;
    try {
        j = json::parse(hdr, hdr + n);
    } catch (const std::exception& ex) {
        return err(origin, ": safetensors header is not valid JSON: ", ex.what());
    }
    if (!j.is_object()) return err(origin, ": safetensors header is not a JSON object");

    SafetensorsFile f;
    f.origin = origin;
    f.base = data;
    f.size = size;
    f.data_start = size_t(8 + n);
    const uint64_t data_size = size - f.data_start;
    try {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.key() == "__metadata__") {
                if (!it->is_object()) return err(origin, ": safetensors __metadata__ is not an object");
                for (auto m = it->begin(); m != it->end(); ++m) {
                    if (!m->is_string())
                        return err(origin, ": safetensors __metadata__ value '", m.key(), "' is not a string");
                    f.metadata[m.key()] = m->get<std::string>();
                }
                continue;
            }
            SafetensorsEntry e;
            EDGE_TRY(parse_entry(origin, it.key(), *it, data_size, e));
            f.entries.push_back(std::move(e));
        }
    } catch (const std::exception& ex) {
        return err(origin, ": safetensors header could not be read: ", ex.what());
    }
    std::stable_sort(f.entries.begin(), f.entries.end(),
                     [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.begin < b.begin; });
    return f;
}

Result<SafetensorsFile> open_safetensors(const std::string& path) {
    auto mf = MappedFile::open(path);
    if (!mf) return mf.error();
    auto file = std::move(mf).value();
    file->advise_random();  // the header alone is read now; tensors ask for their range when read
    auto r = parse_safetensors(file->data(), file->size(), path);
    if (!r) return r.error();
    SafetensorsFile f = std::move(r).value();
    f.file = std::move(file);
    return f;
}

Result<Tensor> SafetensorsFile::to_f32(const SafetensorsEntry& e, const std::string& new_name) const {
    if (!e.dtype)
        return err(origin, ": tensor '", e.name, "' has dtype ", e.dtype_name,
                   "; supported dtypes are F32, F16 and BF16");
    const uint8_t* src = bytes(e);
    const int64_t n = e.numel();
    Tensor t;
    if (*e.dtype == DType::F32 && file && reinterpret_cast<uintptr_t>(src) % alignof(float) == 0) {
        t.name = new_name;
        t.type = DType::F32;
        t.shape = e.shape;
        t.data = file->share(size_t(src - file->data()));
        t.nbytes = size_t(n) * 4;
    } else {
        t = Tensor::alloc(new_name, DType::F32, e.shape);
        stored_to_f32(src, *e.dtype, n, t.f32_mut());
    }
    t.source_type = *e.dtype;
    return t;
}

void stored_to_f32(const uint8_t* src, DType dtype, int64_t n, float* dst) {
    if (dtype == DType::F32) {
        std::memcpy(dst, src, size_t(n) * 4);
        return;
    }
    const bool half = dtype == DType::F16;
    for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = half ? f16_to_f32(h) : bf16_to_f32(h);
    }
}

std::vector<uint8_t> encode_f32_as(const float* values, int64_t n, DType dtype) {
    std::vector<uint8_t> out;
    if (dtype == DType::F32) {
        out.resize(size_t(n) * 4);
        if (n) std::memcpy(out.data(), values, out.size());
        return out;
    }
    out.resize(size_t(n) * 2);
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = dtype == DType::F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
    }
    return out;
}

namespace {

// The header of a file holding `items` (their bytes not read) contiguous in the given order:
// the 8-byte length, then the JSON padded with spaces to a multiple of 8. `data_bytes` gets the
// size of the data buffer.
Result<std::vector<uint8_t>> safetensors_header(const std::vector<SafetensorsWriteItem>& items,
                                                const std::map<std::string, std::string>& metadata,
                                                uint64_t* data_bytes) {
    nlohmann::ordered_json h = nlohmann::ordered_json::object();
    if (!metadata.empty()) {
        nlohmann::ordered_json m = nlohmann::ordered_json::object();
        for (const auto& [k, v] : metadata) m[k] = v;
        h["__metadata__"] = m;
    }
    uint64_t offset = 0;
    for (const auto& it : items) {
        int64_t numel = 1;
        for (int64_t d : it.shape) numel *= d;
        const uint64_t need = uint64_t(numel) * uint64_t(dtype_block_bytes(it.dtype));
        h[it.name] = {
            {"dtype", storage_name(it.dtype)}, {"shape", it.shape}, {"data_offsets", {offset, offset + need}}};
        offset += need;
    }
    std::string header;
    try {
        header = h.dump();
    } catch (const std::exception& ex) {
        return err("safetensors writer: cannot encode the header: ", ex.what());
    }
    while ((8 + header.size()) % 8) header.push_back(' ');
    std::vector<uint8_t> out(8 + header.size());
    uint64_t len = header.size();
    for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(len >> (8 * i));
    std::memcpy(out.data() + 8, header.data(), header.size());
    *data_bytes = offset;
    return out;
}

// Checks one declaration against those before it; returns its element count.
Result<int64_t> check_declaration(const std::vector<SafetensorsWriteItem>& before, const std::string& name, DType dtype,
                                  const std::vector<int64_t>& shape) {
    if (!storage_name(dtype))
        return err("safetensors writer: tensor '", name, "': dtype ", dtype_name(dtype),
                   " is not supported (F32, F16, BF16)");
    if (name == "__metadata__") return err("safetensors writer: tensor name '", name, "' is reserved");
    for (const auto& b : before)
        if (b.name == name) return err("safetensors writer: tensor name '", name, "' is repeated");
    int64_t numel = 1;
    for (int64_t d : shape) {
        if (d < 0) return err("safetensors writer: tensor '", name, "' has a negative dimension");
        numel *= d;
    }
    return numel;
}

}  // namespace

Result<std::vector<uint8_t>> serialize_safetensors(const std::vector<SafetensorsWriteItem>& items,
                                                   const std::map<std::string, std::string>& metadata) {
    std::vector<SafetensorsWriteItem> decls;
    for (const auto& it : items) {
        auto numel = check_declaration(decls, it.name, it.dtype, it.shape);
        if (!numel) return numel.error();
        const uint64_t need = uint64_t(*numel) * uint64_t(dtype_block_bytes(it.dtype));
        if (need != it.bytes.size())
            return err("safetensors writer: tensor '", it.name, "' has ", it.bytes.size(), " bytes, shape needs ",
                       need);
        decls.push_back({it.name, it.dtype, it.shape, {}});
    }
    uint64_t data_bytes = 0;
    auto out = safetensors_header(decls, metadata, &data_bytes);
    if (!out) return out.error();
    out->reserve(out->size() + data_bytes);
    for (const auto& it : items) out->insert(out->end(), it.bytes.begin(), it.bytes.end());
    return out;
}

Status SafetensorsStreamWriter::add(const std::string& name, DType dtype, std::vector<int64_t> shape) {
    if (file_) return err("safetensors writer: tensor '", name, "' declared after the header was written");
    auto numel = check_declaration(decls_, name, dtype, shape);
    if (!numel) return numel.error();
    declared_ += uint64_t(*numel) * uint64_t(dtype_block_bytes(dtype));
    decls_.push_back({name, dtype, std::move(shape), {}});
    return {};
}

Status SafetensorsStreamWriter::open(const std::string& path, const std::map<std::string, std::string>& metadata) {
    uint64_t data_bytes = 0;
    auto header = safetensors_header(decls_, metadata, &data_bytes);
    if (!header) return err(path, ": ", header.message());
    path_ = path;
    file_.reset(std::fopen(path.c_str(), "wb"));
    if (!file_) return err(path, ": cannot create the file");
    if (std::fwrite(header->data(), 1, header->size(), file_.get()) != header->size())
        return err(path, ": write failed (disk full?)");
    return {};
}

Status SafetensorsStreamWriter::write(const void* data, size_t bytes) {
    if (!file_) return err("safetensors writer: write before open");
    if (written_ + bytes > declared_)
        return err(path_, ": ", written_ + bytes, " data bytes written, the declared tensors hold ", declared_);
    if (std::fwrite(data, 1, bytes, file_.get()) != bytes) return err(path_, ": write failed (disk full?)");
    written_ += bytes;
    return {};
}

Status SafetensorsStreamWriter::finish() {
    if (!file_) return err("safetensors writer: finish before open");
    if (written_ != declared_)
        return err(path_, ": ", written_, " data bytes written, the declared tensors hold ", declared_);
    if (std::fclose(file_.release()) != 0) return err(path_, ": write failed (disk full?)");
    return {};
}

Status write_safetensors(const std::string& path, const std::vector<SafetensorsWriteItem>& items,
                         const std::map<std::string, std::string>& metadata) {
    auto bytes = serialize_safetensors(items, metadata);
    if (!bytes) return err(path, ": ", bytes.message());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return err(path, ": cannot create the file");
    out.write(reinterpret_cast<const char*>(bytes->data()), std::streamsize(bytes->size()));
    out.flush();
    if (!out) return err(path, ": write failed (disk full?)");
    return {};
}

}  // namespace edge::model
