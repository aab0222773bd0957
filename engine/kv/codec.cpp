#include "codec.h"

#include <lz4.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace edge::kv {

std::string codec_name(Codec c) {
    switch (c) {
        case Codec::Lz4: return "LZ4 (lossless)";
        case Codec::Int8Lz4: return "INT8 + LZ4";
        case Codec::Int8DeltaLz4: return "INT8 + delta + LZ4";
    }
    return "unknown";
}

Status validate_slab_shape(const SlabShape& s) {
    if (s.slabs <= 0 || s.tokens <= 0 || s.heads <= 0 || s.head_dim <= 0)
        return err("KV codec: shape ", s.slabs, "x", s.tokens, "x", s.heads, "x", s.head_dim,
                   " has a zero or negative extent");
    if (s.floats() * sizeof(float) > size_t(1) << 30)
        return err("KV codec: a block of ", s.floats(), " floats is absurd (limit 1 GiB)");
    return {};
}

namespace {

size_t raw_bytes(const SlabShape& s, Codec c) {
    if (c == Codec::Lz4) return s.floats() * sizeof(float);
    return size_t(s.slabs) * size_t(s.heads) * sizeof(float) + s.floats();
}

// scales [slab][head] then int8 [slab][token][head][dim]; delta: along the token axis, mod 256
void quantize(const float* x, const SlabShape& s, bool delta, uint8_t* out) {
    const size_t hd = size_t(s.head_dim), H = size_t(s.heads), T = size_t(s.tokens);
    float* scales = reinterpret_cast<float*>(out);  // out comes from a vector<uint8_t>: suitably aligned
    int8_t* q = reinterpret_cast<int8_t*>(out + size_t(s.slabs) * H * sizeof(float));
    for (size_t sl = 0; sl < size_t(s.slabs); ++sl) {
        const float* xs = x + sl * T * H * hd;
        int8_t* qs = q + sl * T * H * hd;
        for (size_t h = 0; h < H; ++h) {
            float m = 0;
            for (size_t t = 0; t < T; ++t)
                for (size_t i = 0; i < hd; ++i) m = std::max(m, std::fabs(xs[(t * H + h) * hd + i]));
            const float scale = m / 127.0f;
            const float inv = scale > 0 ? 1.0f / scale : 0.0f;
            std::memcpy(&scales[sl * H + h], &scale, sizeof scale);
            for (size_t t = 0; t < T; ++t)
                for (size_t i = 0; i < hd; ++i) {
                    const float v = std::nearbyint(xs[(t * H + h) * hd + i] * inv);
                    qs[(t * H + h) * hd + i] = int8_t(std::clamp(v, -127.0f, 127.0f));
                }
        }
        if (delta)
            for (size_t t = T; t-- > 1;)
                for (size_t j = 0; j < H * hd; ++j)
                    qs[t * H * hd + j] =
                        int8_t(uint8_t(uint8_t(qs[t * H * hd + j]) - uint8_t(qs[(t - 1) * H * hd + j])));
    }
}

void dequantize(const uint8_t* in, const SlabShape& s, bool delta, float* x) {
    const size_t hd = size_t(s.head_dim), H = size_t(s.heads), T = size_t(s.tokens);
    const uint8_t* q = in + size_t(s.slabs) * H * sizeof(float);
    std::vector<uint8_t> prev(H * hd);
    for (size_t sl = 0; sl < size_t(s.slabs); ++sl) {
        const uint8_t* qs = q + sl * T * H * hd;
        float* xs = x + sl * T * H * hd;
        float scale[1];
        std::fill(prev.begin(), prev.end(), uint8_t(0));
        for (size_t t = 0; t < T; ++t)
            for (size_t h = 0; h < H; ++h) {
                std::memcpy(scale, in + (sl * H + h) * sizeof(float), sizeof(float));
                for (size_t i = 0; i < hd; ++i) {
                    const size_t j = h * hd + i;
                    uint8_t u = qs[t * H * hd + j];
                    if (delta) u = prev[j] = uint8_t(prev[j] + u);
                    xs[t * H * hd + j] = float(int8_t(u)) * scale[0];
                }
            }
    }
}

}  // namespace

Result<std::vector<uint8_t>> compress(const float* x, const SlabShape& s, Codec c) {
    EDGE_TRY(validate_slab_shape(s));
    if (c != Codec::Lz4 && c != Codec::Int8Lz4 && c != Codec::Int8DeltaLz4)
        return err("KV codec: unknown codec ", int(c));
    const size_t raw = raw_bytes(s, c);
    std::vector<uint8_t> staged;
    const char* src = reinterpret_cast<const char*>(x);
    if (c != Codec::Lz4) {
        staged.resize(raw);
        quantize(x, s, c == Codec::Int8DeltaLz4, staged.data());
        src = reinterpret_cast<const char*>(staged.data());
    }
    const int bound = LZ4_compressBound(int(raw));
    std::vector<uint8_t> out(sizeof(CodecHeader) + size_t(bound));
    const int n = LZ4_compress_default(src, reinterpret_cast<char*>(out.data() + sizeof(CodecHeader)), int(raw), bound);
    if (n <= 0) return err("KV codec: LZ4 compression failed");
    CodecHeader h{kCodecMagic,       kCodecVersion,      uint8_t(c),        0,
                  uint32_t(s.slabs), uint32_t(s.tokens), uint32_t(s.heads), uint32_t(s.head_dim),
                  uint32_t(raw),     uint32_t(n)};
    std::memcpy(out.data(), &h, sizeof h);
    out.resize(sizeof(CodecHeader) + size_t(n));
    return out;
}

Status decompress(std::span<const uint8_t> in, const SlabShape& s, float* out) {
    EDGE_TRY(validate_slab_shape(s));
    if (in.size() < sizeof(CodecHeader))
        return err("KV codec: stream of ", in.size(), " bytes is shorter than its header");
    CodecHeader h;
    std::memcpy(&h, in.data(), sizeof h);
    if (h.magic != kCodecMagic) return err("KV codec: bad magic (not a compressed KV block)");
    if (h.version != kCodecVersion)
        return err("KV codec: stream version ", h.version, " is not supported (this build reads 1)");
    const Codec c = Codec(h.codec);
    if (c != Codec::Lz4 && c != Codec::Int8Lz4 && c != Codec::Int8DeltaLz4)
        return err("KV codec: unknown codec ", int(h.codec));
    if (h.slabs != uint32_t(s.slabs) || h.tokens != uint32_t(s.tokens) || h.heads != uint32_t(s.heads) ||
        h.head_dim != uint32_t(s.head_dim))
        return err("KV codec: stream holds a ", h.slabs, "x", h.tokens, "x", h.heads, "x", h.head_dim,
                   " block, expected ", s.slabs, "x", s.tokens, "x", s.heads, "x", s.head_dim);
    const size_t raw = raw_bytes(s, c);
    if (h.raw_bytes != raw || h.payload_bytes != in.size() - sizeof(CodecHeader))
        return err("KV codec: stream sizes disagree with the header (truncated or corrupt)");
    const char* src = reinterpret_cast<const char*>(in.data() + sizeof(CodecHeader));
    if (c == Codec::Lz4) {
        const int n = LZ4_decompress_safe(src, reinterpret_cast<char*>(out), int(h.payload_bytes), int(raw));
        if (n != int(raw)) return err("KV codec: corrupt LZ4 payload");
        return {};
    }
    std::vector<uint8_t> staged(raw);
    const int n = LZ4_decompress_safe(src, reinterpret_cast<char*>(staged.data()), int(h.payload_bytes), int(raw));
    if (n != int(raw)) return err("KV codec: corrupt LZ4 payload");
    dequantize(staged.data(), s, c == Codec::Int8DeltaLz4, out);
    return {};
}

}  // namespace edge::kv
