// What the .edge and .edgeq writers and readers share about a file of tensors written one at a
// time: the writer half (a file written beside its target and renamed when finished, a data
// section of tensors at aligned offsets hashed as they go out, and the tensor table that
// describes them), the readers' check of a tensor entry's shape, the length-prefixed string list
// both formats store the tokenizer in, and the check of a section's hash over a mapping in pieces
// that leave the resident set once hashed.
#pragma once
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/mapped_file.h"
#include "engine/core/partial_file.h"
#include "engine/core/result.h"
#include "engine/core/tensor.h"
#include "engine/model/xxh64.h"

namespace edge::model {

struct TensorStreamWriter {
    std::string path;
    PartialFile file;  // removed unless commit() moved it into place
    std::ofstream& f = file.stream();
    Xxh64Stream data;  // the tensors and the padding between them
    uint64_t pos = 0;  // bytes in the data section so far
    nlohmann::json tensors = nlohmann::json::array();

    // Opens `path`.partial and writes `lead` zero bytes (the header and tables, rewritten once
    // the rest is known; not part of the data hash).
    Status open(const std::string& path, uint64_t lead);
    // Appends tensor `x` (its data must be present) and zeros up to the next multiple of `align`
    // to the data section, and its entry (offset in the section) to the table.
    Status add(const Tensor& x, uint64_t align);
    void put(const void* p, uint64_t n, Xxh64Stream* h);
    void pad(uint64_t n, Xxh64Stream* h);  // n zero bytes
    Status commit() { return file.commit(); }
};

// Each string as a little-endian uint32 length and its bytes, appended to `out`.
void append_strings(std::string& out, const std::vector<std::string>& v);

// Why a tensor entry's shape cannot describe data in a section of `section_bytes` bytes, or
// nullptr: a dimension under 1 or over 2^32, or more elements than the section could hold at two
// per byte (INT4) - which also keeps the element and byte counts far from overflowing.
const char* shape_problem(const std::vector<int64_t>& shape, uint64_t section_bytes);

// XXH64 of [offset, offset + len) of `map`, read in 16 MiB pieces, each released from this
// process after it is hashed: verifying a large model's file must not make all of it resident.
uint64_t hash_released(const MappedFile& map, uint64_t offset, uint64_t len);

}  // namespace edge::model
