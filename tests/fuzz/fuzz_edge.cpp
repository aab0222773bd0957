// libFuzzer target: .edge engine bytes -> read_edge_file (header, section table, checksums, every
// section's JSON, tensors). Seeds are real engines compiled from stories260K.
//
// Each input is read twice. As it is, almost every mutation ends at a checksum, which exercises the
// header and table checks. But xxh64 catches corruption, not tampering: anyone can write an engine
// whose checksums match its bytes. So the input is then resealed (every checksum the header and the
// section table point at recomputed over the mutated bytes, as a hostile writer would) and read
// again, and the mutations reach the section parsers behind the checksums.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/model/edge_file.h"
#include "engine/model/xxh64.h"
#include "fuzz_common.h"

namespace {

using edge::model::EdgeFileHeader;
using edge::model::EdgeSectionEntry;
using edge::model::xxh64;

// The bytes with their checksums made to match: each section's entry (where its range lies in the
// file), then the table's, then the header's; nothing else changes.
std::vector<uint8_t> reseal(const uint8_t* data, size_t size) {
    std::vector<uint8_t> b(data, data + size);
    if (size < sizeof(EdgeFileHeader)) return b;
    EdgeFileHeader h{};
    std::memcpy(&h, b.data(), sizeof h);
    const bool table_fits = h.table_offset >= sizeof h && h.table_offset <= size && h.section_count <= 64 &&
                            h.table_span <= size - h.table_offset &&
                            h.table_span >= uint64_t(h.section_count) * sizeof(EdgeSectionEntry);
    if (table_fits) {
        for (uint32_t i = 0; i < h.section_count; ++i) {
            uint8_t* at = b.data() + h.table_offset + uint64_t(i) * sizeof(EdgeSectionEntry);
            EdgeSectionEntry e{};
            std::memcpy(&e, at, sizeof e);
            if (e.offset > size || e.span > size - e.offset) continue;
            e.checksum = xxh64(b.data() + e.offset, size_t(e.span));
            std::memcpy(at, &e, sizeof e);
        }
        h.table_checksum = xxh64(b.data() + h.table_offset, size_t(h.table_span));
        std::memcpy(b.data(), &h, sizeof h);
    }
    if (h.header_bytes >= 8 && h.header_bytes <= size) {
        const uint64_t sum = xxh64(b.data(), h.header_bytes - 8);
        std::memcpy(b.data() + h.header_bytes - 8, &sum, 8);
    }
    return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)edge::model::read_edge_file(edge::fuzz::write_input(data, size, ".edge"));
    const std::vector<uint8_t> sealed = reseal(data, size);
    if (size >= sizeof(EdgeFileHeader) && std::memcmp(sealed.data(), data, size) != 0)
        (void)edge::model::read_edge_file(edge::fuzz::write_input(sealed.data(), sealed.size(), ".edge"));
    return 0;
}
