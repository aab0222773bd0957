#include "codec_table.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

namespace edge::kv {

Result<std::vector<float>> capture_to_blocks(const KvCapture& c) {
    EDGE_TRY(validate_shape(c.shape));
    const size_t kvd = size_t(c.shape.kv_dim()), L = size_t(c.shape.n_layers), T = size_t(c.n_tokens);
    if (c.n_tokens <= 0 || c.k.size() != L * T * kvd || c.v.size() != c.k.size())
        return err("KV capture: ", c.k.size(), " K and ", c.v.size(), " V floats do not match ", L, " layers x ", T,
                   " tokens x ", kvd);
    const size_t B = size_t(c.shape.block_tokens), nb = T / B;
    std::vector<float> out(nb * c.shape.block_floats());
    for (size_t b = 0; b < nb; ++b)
        for (size_t l = 0; l < L; ++l)
            for (int kv = 0; kv < 2; ++kv) {
                const float* src = (kv ? c.v : c.k).data() + (l * T + b * B) * kvd;
                std::memcpy(out.data() + b * c.shape.block_floats() + c.shape.slab_offset(int(l), kv), src,
                            B * kvd * sizeof(float));
            }
    return out;
}

Result<std::vector<CodecRow>> measure_codecs(const std::vector<float>& blocks, const KvShape& s, int repeats) {
    EDGE_TRY(validate_shape(s));
    const size_t bf = s.block_floats();
    if (blocks.empty() || blocks.size() % bf != 0)
        return err("KV codec table: ", blocks.size(), " floats are not whole blocks");
    if (repeats < 1) repeats = 1;
    const size_t nb = blocks.size() / bf;
    const SlabShape ss{2 * s.n_layers, s.block_tokens, s.n_kv_heads, s.head_dim};
    const size_t slab = size_t(s.block_tokens) * size_t(s.kv_dim());
    std::vector<CodecRow> rows;
    std::vector<float> back(bf);
    using Clock = std::chrono::steady_clock;
    for (Codec c : {Codec::Lz4, Codec::Int8Lz4, Codec::Int8DeltaLz4}) {
        CodecRow r{c};
        std::vector<std::vector<uint8_t>> enc(nb);
        double t_enc = 0, t_dec = 0;
        size_t comp = 0;
        for (int rep = 0; rep < repeats; ++rep) {
            auto t0 = Clock::now();
            for (size_t b = 0; b < nb; ++b) {
                auto e = compress(blocks.data() + b * bf, ss, c);
                if (!e) return e.error();
                enc[b] = std::move(e.value());
            }
            t_enc += std::chrono::duration<double>(Clock::now() - t0).count();
        }
        for (auto& e : enc) comp += e.size();
        for (int rep = 0; rep < repeats; ++rep) {
            auto t0 = Clock::now();
            for (size_t b = 0; b < nb; ++b) EDGE_TRY(decompress(enc[b], ss, back.data()));
            t_dec += std::chrono::duration<double>(Clock::now() - t0).count();
            if (rep > 0) continue;
            for (size_t b = 0; b < nb; ++b) {  // errors (decode each block again: `back` holds the last)
                EDGE_TRY(decompress(enc[b], ss, back.data()));
                const float* x = blocks.data() + b * bf;
                for (size_t sl = 0; sl < size_t(ss.slabs); ++sl)
                    for (int h = 0; h < s.n_kv_heads; ++h) {
                        double m = 0, e = 0;
                        for (int t = 0; t < s.block_tokens; ++t)
                            for (int i = 0; i < s.head_dim; ++i) {
                                const size_t j = sl * slab +
                                                 (size_t(t) * size_t(s.n_kv_heads) + size_t(h)) * size_t(s.head_dim) +
                                                 size_t(i);
                                m = std::max(m, double(std::fabs(x[j])));
                                e = std::max(e, double(std::fabs(x[j] - back[j])));
                            }
                        r.max_abs_error = std::max(r.max_abs_error, e);
                        if (m > 0) r.max_rel_error = std::max(r.max_rel_error, e / m);
                    }
            }
        }
        if (c == Codec::Lz4 && r.max_abs_error != 0)
            return err("KV codec table: the lossless codec did not round-trip exactly");
        const double bytes = double(blocks.size() * sizeof(float)) * repeats;
        r.ratio = double(blocks.size() * sizeof(float)) / double(comp);
        r.encode_gbps = t_enc > 0 ? bytes / t_enc / 1e9 : 0;
        r.decode_gbps = t_dec > 0 ? bytes / t_dec / 1e9 : 0;
        rows.push_back(r);
    }
    return rows;
}

std::string format_codec_table(const std::vector<CodecRow>& rows) {
    std::string out =
        "| codec | ratio | encode GB/s | decode GB/s | max abs error | max error / max abs (slab, head) |\n"
        "|---|---:|---:|---:|---:|---:|\n";
    char buf[256];
    for (const CodecRow& r : rows) {
        std::snprintf(buf, sizeof buf, "| %s | %.2f | %.2f | %.2f | %.3g | %.3g |\n", codec_name(r.codec).c_str(),
                      r.ratio, r.encode_gbps, r.decode_gbps, r.max_abs_error, r.max_rel_error);
        out += buf;
    }
    return out;
}

Status write_kv_dump(const std::string& path, const KvCapture& c) {
    KvDumpHeader h{{'E', 'D', 'G', 'E', 'K', 'V', 'D', '1'},
                   uint32_t(c.shape.n_layers),
                   uint32_t(c.shape.n_kv_heads),
                   uint32_t(c.shape.head_dim),
                   uint32_t(c.n_tokens)};
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return err(path, ": cannot write the KV dump");
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.write(reinterpret_cast<const char*>(c.k.data()), std::streamsize(c.k.size() * sizeof(float)));
    f.write(reinterpret_cast<const char*>(c.v.data()), std::streamsize(c.v.size() * sizeof(float)));
    if (!f) return err(path, ": write failed");
    return {};
}

Result<KvCapture> read_kv_dump(const std::string& path, int block_tokens) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return err(path, ": cannot open the KV dump");
    KvDumpHeader h;
    if (!f.read(reinterpret_cast<char*>(&h), sizeof h)) return err(path, ": truncated KV dump header");
    if (std::memcmp(h.magic, "EDGEKVD1", 8) != 0) return err(path, ": not a KV dump (bad magic)");
    KvCapture c;
    c.shape = KvShape{int(h.n_layers), int(h.n_kv_heads), int(h.head_dim), block_tokens};
    EDGE_TRY(validate_shape(c.shape));
    if (h.n_tokens == 0 || h.n_tokens > (1u << 24)) return err(path, ": token count ", h.n_tokens, " is absurd");
    const size_t n = size_t(h.n_layers) * h.n_tokens * size_t(c.shape.kv_dim());
    if (n * 2 * sizeof(float) > (size_t(1) << 34)) return err(path, ": KV dump of ", n * 8, " bytes is absurd");
    c.n_tokens = int(h.n_tokens);
    c.k.resize(n);
    c.v.resize(n);
    if (!f.read(reinterpret_cast<char*>(c.k.data()), std::streamsize(n * sizeof(float))) ||
        !f.read(reinterpret_cast<char*>(c.v.data()), std::streamsize(n * sizeof(float))))
        return err(path, ": truncated KV dump (", n, " K and V floats expected)");
    return c;
}

KvCapture synthetic_capture(const KvShape& s, int n_tokens, uint64_t seed) {
    KvCapture c;
    c.shape = s;
    c.n_tokens = n_tokens;
    const size_t kvd = size_t(s.kv_dim());
    c.k.resize(size_t(s.n_layers) * size_t(n_tokens) * kvd);
    c.v.resize(c.k.size());
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (int l = 0; l < s.n_layers; ++l) {
        std::vector<float> off(kvd), amp(kvd), vs(kvd, 0.0f);
        for (size_t j = 0; j < kvd; ++j) {
            off[j] = 0.5f * g(rng);
            amp[j] = std::fabs(g(rng)) * (j % 16 == 0 ? 4.0f : 1.0f);  // a few outlier channels
        }
        for (int t = 0; t < n_tokens; ++t) {
            float* k = c.k.data() + (size_t(l) * size_t(n_tokens) + size_t(t)) * kvd;
            float* v = c.v.data() + (size_t(l) * size_t(n_tokens) + size_t(t)) * kvd;
            for (size_t j = 0; j < kvd; ++j) {
                const size_t i = j % size_t(s.head_dim);
                const size_t pair = i / 2;  // dimensions 2p and 2p + 1 share a frequency
                const double freq = std::pow(10000.0, -2.0 * double(pair) / double(s.head_dim));
                const double ph = double(t) * freq;
                k[j] = off[j] + amp[j] * float((i % 2) ? std::sin(ph) : std::cos(ph)) + 0.1f * g(rng);
                vs[j] = 0.8f * vs[j] + 0.2f * g(rng);
                v[j] = vs[j];
            }
        }
    }
    return c;
}

}  // namespace edge::kv
