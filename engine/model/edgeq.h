// The quantized model file (.edgeq): any IR Model — F32, F16, QI8 and QI4 tensors — with its
// config, tokenizer and metadata, written by `quantize` and read by load_model (tensors alias the
// memory mapping: nothing is dequantized or copied at load). Layout (little-endian), see
// docs/quant-formats.md:
//   EdgeqHeader (64 bytes, static_assert)
//   EdgeqChecksums (32 bytes, version 2): XXH64 of meta, strings, data and of the header itself
//   meta      JSON (UTF-8): config, metadata, tokenizer scalars, tensor table
//   strings   tokenizer tokens then merges: u32 length + bytes each (may be any bytes)
//   data      every tensor at a 64-byte aligned offset from data_offset
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

struct EdgeqHeader {
    char magic[8];          // "EDGEQM\0\1"
    uint32_t version;       // 1
    uint32_t header_bytes;  // 64
    uint64_t meta_offset, meta_bytes;
    uint64_t strings_offset, strings_bytes;
    uint64_t data_offset, data_bytes;
};
static_assert(sizeof(EdgeqHeader) == 64, "the .edgeq header is 64 bytes");
// Version 2 follows the header with the checksums of every section (XXH64, seed 0; data includes
// the alignment padding between tensors) and of the 88 bytes before header_checksum. Version 1
// files (no checksums) are still read, unchecked; nothing writes them any more.
struct EdgeqChecksums {
    uint64_t meta, strings, data;
    uint64_t header;
};
static_assert(sizeof(EdgeqChecksums) == 32, "the .edgeq checksum block is 32 bytes");
inline constexpr char kEdgeqMagic[8] = {'E', 'D', 'G', 'E', 'Q', 'M', '\0', '\1'};
inline constexpr uint32_t kEdgeqVersion = 2;

bool is_edgeq(const uint8_t* head, size_t n);

// Writes an .edgeq tensor by tensor: the data section first (from offset 128), then the metadata
// (which lists what add() wrote, in that order) and the strings; the header and checksums are
// rewritten at the end. The file appears at `path` only when finish() succeeds.
class EdgeqWriter {
public:
    static Result<std::unique_ptr<EdgeqWriter>> create(const std::string& path);
    ~EdgeqWriter();
    EdgeqWriter(const EdgeqWriter&) = delete;
    EdgeqWriter& operator=(const EdgeqWriter&) = delete;
    Status add(const Tensor& t);  // its data must be present
    // Configuration, tokenizer and metadata of `m` (its tensors' data is not used).
    Status finish(const Model& m);

private:
    struct State;
    explicit EdgeqWriter(std::unique_ptr<State> s);
    std::unique_ptr<State> s_;
};

// Every tensor of `m` through an EdgeqWriter (tensors not read yet are read one at a time).
Status save_edgeq(const Model& m, const std::string& path, Progress* progress = nullptr);
Result<Model> load_edgeq_model(const std::string& path, Progress* progress = nullptr);

}  // namespace edge::model
