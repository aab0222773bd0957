// The compiled engine file (.edge): what `compile` writes (engine/compile) and what the runtime
// and the board agent load. The reader lives here, beside the other model readers, so that
// load_model opens .edge files and the agent needs no compiler. docs/edge-format.md documents the
// layout byte for byte. Little-endian throughout.
//
//   EdgeFileHeader   128 bytes at offset 0; header_checksum = xxh64 of bytes [0, 120)
//   section table    section_count x EdgeSectionEntry (64 bytes) at table_offset (= 128), zero
//                    padded up to the first section; table_checksum = xxh64 of that whole span
//   sections         contiguous, each starting at a multiple of `alignment` (4096), each
//                    zero padded up to the next; the last ends at the end of the file.
//                    checksum = xxh64 of the section's whole span, padding included.
// Every byte of the file is therefore under exactly one checksum.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/mapped_file.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

inline constexpr char kEdgeMagic[8] = {'E', 'D', 'G', 'E', 'E', 'N', 'G', '\0'};
inline constexpr uint32_t kEdgeVersion = 1;
inline constexpr uint32_t kEdgeAlignment = 4096;  // sections start on page boundaries (mmap)
inline constexpr uint32_t kEdgeTensorAlign = 64;  // tensors inside the weights section

// Frozen forever, whatever the version: magic, version, header_bytes at offsets 0, 8, 12, and
// the header checksum in the last 8 bytes of the header_bytes-long header.
struct EdgeFileHeader {
    char magic[8];             // 0   "EDGEENG\0"
    uint32_t version;          // 8   kEdgeVersion
    uint32_t header_bytes;     // 12  128
    uint64_t file_bytes;       // 16  total size of the file
    uint64_t table_offset;     // 24  128
    uint32_t section_count;    // 32
    uint32_t alignment;        // 36  4096
    uint64_t table_span;       // 40  bytes from table_offset to the first section
    uint64_t table_checksum;   // 48  xxh64 of [table_offset, table_offset + table_span)
    uint8_t reserved[64];      // 56  zero
    uint64_t header_checksum;  // 120 xxh64 of bytes [0, 120)
};
static_assert(sizeof(EdgeFileHeader) == 128, "the .edge header is 128 bytes");
static_assert(offsetof(EdgeFileHeader, header_checksum) == 120, "header checksum sits at 120");

struct EdgeSectionEntry {
    char name[16];      // 0  zero-padded ASCII: meta, tokenizer, tok_strings, plan, weights
    uint64_t offset;    // 16 from the start of the file, a multiple of the alignment
    uint64_t bytes;     // 24 payload bytes
    uint64_t span;      // 32 payload + zero padding (to the next section or the end of file)
    uint64_t checksum;  // 40 xxh64 of [offset, offset + span)
    uint32_t kind;      // 48 EdgeSectionKind
    uint32_t flags;     // 52 0
    uint64_t reserved;  // 56 0
};
static_assert(sizeof(EdgeSectionEntry) == 64, "a .edge section entry is 64 bytes");

enum class EdgeSectionKind : uint32_t { Meta = 1, Tokenizer = 2, TokStrings = 3, Program = 4, Weights = 5 };
const char* edge_section_name(EdgeSectionKind k);

struct EdgeSectionInfo {
    std::string name;
    uint64_t offset = 0, bytes = 0, span = 0;
};

// A loaded engine file: the model (tensors alias the mapping), the target it was compiled for and
// the execution plan (JSON text, parsed by engine/compile).
struct EdgeFile {
    Model model;
    uint32_t version = 0;
    std::string target;
    std::string program_json;
    std::vector<EdgeSectionInfo> sections;
};

bool is_edge_file(const uint8_t* head, size_t n);
// Validates the whole mapping (header, table, every checksum, bounds, overlaps) before trusting
// any of it; errors name the file and the section.
Result<EdgeFile> read_edge_file(const std::shared_ptr<MappedFile>& map, Progress* progress = nullptr);
Result<EdgeFile> read_edge_file(const std::string& path, Progress* progress = nullptr);
Result<Model> load_edge_model(const std::string& path, Progress* progress = nullptr);

}  // namespace edge::model
