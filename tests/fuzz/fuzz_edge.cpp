// libFuzzer target: .edge engine bytes -> read_edge_file (header, section table, checksums, every
// section's JSON, tensors). Seeds are real engines compiled from stories260K; most mutations die at
// a checksum, so the dictionary-free mutator mostly exercises the header and table checks.
#include <cstddef>
#include <cstdint>

#include "engine/model/edge_file.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto f = edge::model::read_edge_file(edge::fuzz::write_input(data, size, ".edge"));
    (void)f;
    return 0;
}
