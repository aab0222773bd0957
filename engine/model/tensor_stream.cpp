#include "engine/model/tensor_stream.h"

#include <algorithm>

#include "engine/model/config_json.h"

namespace edge::model {

Status TensorStreamWriter::open(const std::string& p, uint64_t lead) {
    path = p;
    EDGE_TRY(file.open(p));
    pad(lead, nullptr);
    return {};
}

void TensorStreamWriter::put(const void* p, uint64_t n, Xxh64Stream* h) {
    f.write(static_cast<const char*>(p), std::streamsize(n));
    if (h) h->update(p, size_t(n));
}

void TensorStreamWriter::pad(uint64_t n, Xxh64Stream* h) {
    static const char zeros[4096] = {};
    while (n) {
        const uint64_t k = std::min<uint64_t>(n, sizeof zeros);
        put(zeros, k, h);
        n -= k;
    }
}

Status TensorStreamWriter::add(const Tensor& x, uint64_t align) {
    if (!x.data) return err(path, ": tensor '", x.name, "' has no data to write");
    tensors.push_back(tensor_entry_to_json(x, pos));
    put(x.data.get(), x.nbytes, &data);
    const uint64_t next = (pos + x.nbytes + align - 1) / align * align;
    pad(next - pos - x.nbytes, &data);
    pos = next;
    if (!f) return err(path, ": write failed (disk full?)");
    return {};
}

void append_strings(std::string& out, const std::vector<std::string>& v) {
    for (const std::string& s : v) {
        const uint32_t n = uint32_t(s.size());
        out.append(reinterpret_cast<const char*>(&n), 4);
        out += s;
    }
}

const char* shape_problem(const std::vector<int64_t>& shape, uint64_t section_bytes) {
    const uint64_t most = section_bytes * 2;  // a section is at most the file's size: no overflow
    uint64_t elems = 1;
    for (int64_t d : shape) {
        if (d <= 0 || d > (int64_t(1) << 32)) return "has a bad shape";
        if (uint64_t(d) > most / elems) return "has more elements than its section can hold";
        elems *= uint64_t(d);
    }
    return nullptr;
}

uint64_t hash_released(const MappedFile& map, uint64_t offset, uint64_t len) {
    constexpr uint64_t kPiece = 16ull << 20;
    Xxh64Stream h;
    for (uint64_t at = 0; at < len; at += kPiece) {
        const uint64_t n = std::min(kPiece, len - at);
        h.update(map.data() + offset + at, size_t(n));
        map.release(size_t(offset + at), size_t(n));
    }
    return h.digest();
}

}  // namespace edge::model
