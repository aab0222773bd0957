// The compression table: ratio, encode/decode GB/s and maximum reconstruction error of each codec
// on a set of KV blocks; plus the capture hook: K/V caches as the executor lays them out
// ([layer][pos][kv_dim]) are cut into blocks, and can be saved to / read from a small dump file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/kv/codec.h"
#include "engine/kv/kv_shape.h"

namespace edge::kv {

struct CodecRow {
    Codec codec;
    double ratio = 0;        // uncompressed bytes / compressed bytes
    double encode_gbps = 0;  // uncompressed GB (1e9 bytes) per second, one thread
    double decode_gbps = 0;
    double max_abs_error = 0;
    double max_rel_error = 0;  // max |error| / max |x| of the same (slab, head)
};

// K/V captured from an executor: k and v are [n_layers][n_tokens][kv_dim].
struct KvCapture {
    KvShape shape;  // block_tokens = the block size to cut into
    int n_tokens = 0;
    std::vector<float> k, v;
};

// Cuts a capture into full blocks in the PagedKv layout ([layer][K|V][token][kv_dim]); the
// trailing partial block is left out.
Result<std::vector<float>> capture_to_blocks(const KvCapture& c);

// Compresses each block of `blocks` (n_blocks blocks of shape s) with every codec, `repeats` times
// for timing, and checks the round trip (the lossless codec must be exact).
Result<std::vector<CodecRow>> measure_codecs(const std::vector<float>& blocks, const KvShape& s, int repeats);
std::string format_codec_table(const std::vector<CodecRow>& rows);

// Dump file: KvDumpHeader then K then V (float32, [layer][token][kv_dim]), little-endian.
#pragma pack(push, 1)
struct KvDumpHeader {
    char magic[8];  // "EDGEKVD1"
    uint32_t n_layers, n_kv_heads, head_dim, n_tokens;
};
#pragma pack(pop)
static_assert(sizeof(KvDumpHeader) == 24, "the KV dump header is pinned at 24 bytes");

Status write_kv_dump(const std::string& path, const KvCapture& c);
Result<KvCapture> read_kv_dump(const std::string& path, int block_tokens);

// Synthetic K/V with the structure real caches show (per-channel offsets, rotary phase drift
// along positions for K, smooth V): for tests and for the bench when no capture is given.
KvCapture synthetic_capture(const KvShape& s, int n_tokens, uint64_t seed);

}  // namespace edge::kv
