// llama2.c checkpoint importer (see llama2c.h for the layouts).
//
// Tokenizer: LoadOptions::tokenizer_path when given; otherwise tokenizer.bin or tok<vocab>.bin
// beside the checkpoint. When none is found the model still loads (for `info`) with an empty
// TokenizerSpec; the CLI's `generate` then tells the user "no tokenizer: pass --tokenizer".
#include "llama2c.h"

#include <cstring>
#include <filesystem>
#include <utility>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/tokenizer/tokenizer.h"

using edge::tokenizer::load_llama2c_tokenizer;

namespace edge::model {

namespace {

struct Header {
    int32_t dim = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, vocab = 0, seq = 0;
    bool shared = true;
    int version = 0;
    int group = 0;          // v2: int8 group size over each flattened tensor
    size_t weights_at = 0;  // byte offset of the first tensor
};

int32_t rd_i32(const uint8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Returns an empty string when the header describes a plausible Llama, else the reason.
std::string implausible(const Header& h) {
    if (h.dim <= 0 || h.hidden <= 0 || h.layers <= 0 || h.heads <= 0 || h.kv_heads <= 0 || h.vocab <= 0 || h.seq <= 0)
        return "a dimension is zero or negative";
    if (h.dim > (1 << 16) || h.hidden > (1 << 20) || h.layers > 1024 || h.vocab > (1 << 22) || h.seq > (1 << 22))
        return "a dimension is implausibly large";
    if (h.heads > h.dim || h.dim % h.heads) return "dim is not a multiple of n_heads";
    if (h.kv_heads > h.heads || h.heads % h.kv_heads) return "n_heads is not a multiple of n_kv_heads";
    if ((h.dim / h.heads) % 2) return "the head size is odd (RoPE needs pairs)";
    return {};
}

Header read_legacy(const uint8_t* p) {
    Header h;
    h.dim = rd_i32(p);
    h.hidden = rd_i32(p + 4);
    h.layers = rd_i32(p + 8);
    h.heads = rd_i32(p + 12);
    h.kv_heads = rd_i32(p + 16);
    const int32_t v = rd_i32(p + 20);
    h.shared = v > 0;
    h.vocab = v == INT32_MIN ? 0 : (v < 0 ? -v : v);
    h.seq = rd_i32(p + 24);
    h.version = 0;
    h.weights_at = 28;
    return h;
}

// One tensor of the file: its canonical name pattern, per-layer shape and layer count.
struct Part {
    std::string name;  // canonical, with "%" for the layer index
    std::vector<int64_t> shape;
    int count;                // layers (1 for global tensors); 0 = skipped (RoPE tables)
    int64_t skip_floats = 0;  // for skipped parts
    bool q8 = false;          // v2: int8 values, then one f32 scale per group
};

std::vector<Part> layout(const Header& h) {
    const int64_t D = h.dim, F = h.hidden, V = h.vocab, L = h.layers, hs = h.dim / h.heads;
    const int64_t Q = int64_t(h.heads) * hs, KV = int64_t(h.kv_heads) * hs;
    const int n = int(L);
    std::vector<Part> p;
    auto add = [&](const char* name, std::vector<int64_t> shape, int count) {
        p.push_back({name, std::move(shape), count});
    };
    if (h.version == 0) {
        add("token_embd.weight", {V, D}, 1);
        add("blk.%.attn_norm.weight", {D}, n);
        add("blk.%.attn_q.weight", {Q, D}, n);
        add("blk.%.attn_k.weight", {KV, D}, n);
        add("blk.%.attn_v.weight", {KV, D}, n);
        add("blk.%.attn_output.weight", {D, Q}, n);
        add("blk.%.ffn_norm.weight", {D}, n);
        add("blk.%.ffn_gate.weight", {F, D}, n);  // w1
        add("blk.%.ffn_down.weight", {D, F}, n);  // w2
        add("blk.%.ffn_up.weight", {F, D}, n);    // w3
        add("output_norm.weight", {D}, 1);
        p.push_back({"freq_cis_real", {}, 0, int64_t(h.seq) * hs / 2});
        p.push_back({"freq_cis_imag", {}, 0, int64_t(h.seq) * hs / 2});
    } else {  // versions 1 and 2: norms first, then the matrices, no RoPE tables
        add("blk.%.attn_norm.weight", {D}, n);
        add("blk.%.ffn_norm.weight", {D}, n);
        add("output_norm.weight", {D}, 1);
        add("token_embd.weight", {V, D}, 1);
        add("blk.%.attn_q.weight", {Q, D}, n);
        add("blk.%.attn_k.weight", {KV, D}, n);
        add("blk.%.attn_v.weight", {KV, D}, n);
        add("blk.%.attn_output.weight", {D, Q}, n);
        add("blk.%.ffn_gate.weight", {F, D}, n);
        add("blk.%.ffn_down.weight", {D, F}, n);
        add("blk.%.ffn_up.weight", {F, D}, n);
    }
    if (!h.shared) add("output.weight", {V, D}, 1);
    if (h.version == 2)
        for (Part& part : p) part.q8 = part.shape.size() == 2;
    return p;
}

int64_t numel(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// Exact file size the header implies (dimensions are bounded by implausible(), so no overflow).
uint64_t expected_size(const Header& h) {
    uint64_t bytes = 0;
    for (const Part& p : layout(h)) {
        const uint64_t n = p.count ? uint64_t(numel(p.shape)) * uint64_t(p.count) : uint64_t(p.skip_floats);
        bytes += p.q8 ? n + 4 * (n / uint64_t(h.group)) : 4 * n;
    }
    return h.weights_at + bytes;
}

std::string layer_name(const std::string& pattern, int l) {
    const auto at = pattern.find('%');
    if (at == std::string::npos) return pattern;
    return pattern.substr(0, at) + std::to_string(l) + pattern.substr(at + 1);
}

std::string find_tokenizer(const std::string& checkpoint, int vocab) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(checkpoint).parent_path();
    std::error_code ec;
    for (const fs::path& cand : {dir / "tokenizer.bin", dir / ("tok" + std::to_string(vocab) + ".bin")})
        if (fs::is_regular_file(cand, ec)) return cand.string();
    return {};
}

}  // namespace

Llama2cKind sniff_llama2c(const uint8_t* head, size_t head_len, uint64_t file_size) {
    if (head_len >= 8 && rd_i32(head) == int32_t(kLlama2cMagic)) return Llama2cKind::Versioned;
    if (head_len < 28) return Llama2cKind::None;
    const Header h = read_legacy(head);
    if (!implausible(h).empty()) return Llama2cKind::None;
    return expected_size(h) == file_size ? Llama2cKind::Legacy : Llama2cKind::None;
}

Result<Model> load_llama2c_model(const std::string& path, const std::string& tokenizer_path, Progress* progress) {
    auto mf = MappedFile::open(path);
    if (!mf) return mf.error();
    std::shared_ptr<MappedFile> file = std::move(mf).value();
    const uint8_t* d = file->data();
    const size_t size = file->size();

    Header h;
    if (size >= 8 && rd_i32(d) == int32_t(kLlama2cMagic)) {
        const int32_t version = rd_i32(d + 4);
        if (version != 1 && version != 2)
            return err(path, ": unknown llama2.c checkpoint version ", version, " (supported: 0, 1, 2)");
        if (size < 256) return err(path, ": truncated llama2.c v1 header (", size, " bytes, expected 256)");
        h = read_legacy(d + 8);
        const int32_t v = rd_i32(d + 28);
        h.vocab = v == INT32_MIN ? 0 : (v < 0 ? -v : v);  // INT32_MIN has no magnitude: refused below
        h.shared = d[36] != 0;
        h.version = version;
        h.weights_at = 256;
        if (version == 2) {
            h.group = rd_i32(d + 37);  // packed right after the shared-classifier byte
            if (h.group <= 0 || h.group > (1 << 20))
                return err(path, ": llama2.c v2 group size ", h.group, " is invalid");
        }
    } else {
        if (size < 28) return err(path, ": too short for a llama2.c checkpoint (", size, " bytes; header is 28)");
        h = read_legacy(d);
    }
    if (const std::string why = implausible(h); !why.empty())
        return err(path, ": not a valid llama2.c checkpoint: ", why, " (dim ", h.dim, ", hidden_dim ", h.hidden,
                   ", n_layers ", h.layers, ", n_heads ", h.heads, ", n_kv_heads ", h.kv_heads, ", vocab_size ",
                   h.vocab, ", seq_len ", h.seq, ")");
    if (h.version == 2)
        for (const Part& p : layout(h))
            if (p.q8 && numel(p.shape) % h.group)
                return err(path, ": llama2.c v2 tensor ", layer_name(p.name, 0), " ", numel(p.shape),
                           " elements is not a multiple of the group size ", h.group);
    const uint64_t want = expected_size(h);
    if (want != size)
        return err(path, ": llama2.c header (dim ", h.dim, ", hidden_dim ", h.hidden, ", n_layers ", h.layers,
                   ", n_heads ", h.heads, ", n_kv_heads ", h.kv_heads, ", vocab_size ", h.vocab, ", seq_len ", h.seq,
                   h.shared ? ", shared classifier" : ", separate classifier", ") implies ", want,
                   " bytes but the file has ", size, size < want ? " (truncated)" : " (trailing data)");

    Model m;
    m.source_path = path;
    m.source_format = "llama2c";
    m.architecture = "llama";
    m.name = std::filesystem::path(path).stem().string();
    LlamaConfig& c = m.config;
    c.dim = h.dim;
    c.hidden_dim = h.hidden;
    c.n_layers = h.layers;
    c.n_heads = h.heads;
    c.n_kv_heads = h.kv_heads;
    c.head_dim = h.dim / h.heads;
    c.vocab_size = h.vocab;
    c.context_length = h.seq;
    c.rope_dim = c.head_dim;
    c.rope_theta = 10000.0f;
    c.norm_eps = 1e-5f;
    c.tied_embeddings = h.shared;

    size_t off = h.weights_at;
    const std::vector<Part> parts = layout(h);
    for (size_t pi = 0; pi < parts.size(); ++pi) {
        const Part& p = parts[pi];
        if (is_cancelled(progress)) return err(path, ": loading cancelled");
        if (p.count == 0) {
            off += size_t(p.skip_floats) * 4;
            continue;
        }
        const size_t bytes = size_t(numel(p.shape)) * 4;
        for (int l = 0; l < p.count && p.q8; ++l) {  // v2: int8 then one scale per group, dequantized
            const int64_t n = numel(p.shape);
            Tensor t = Tensor::alloc(layer_name(p.name, l), DType::F32, p.shape);
            t.source_type = DType::I8;
            const int8_t* q = reinterpret_cast<const int8_t*>(d + off);
            const uint8_t* scales = d + off + size_t(n);
            float* w = t.f32_mut();
            for (int64_t g = 0; g < n / h.group; ++g) {
                float sc;
                std::memcpy(&sc, scales + 4 * g, 4);
                for (int64_t i = g * h.group; i < (g + 1) * h.group; ++i) w[i] = float(q[i]) * sc;
            }
            off += size_t(n) + 4 * size_t(n / h.group);
            m.tensors.push_back(std::move(t));
        }
        for (int l = 0; l < p.count && !p.q8; ++l) {
            Tensor t;
            t.name = layer_name(p.name, l);
            t.type = t.source_type = DType::F32;
            t.shape = p.shape;
            t.nbytes = bytes;
            t.data = file->share(off);  // 4-byte aligned: headers are 28 or 256 bytes
            off += bytes;
            m.tensors.push_back(std::move(t));
        }
        report(progress, double(pi + 1) / double(parts.size()), "reading llama2.c tensors");
    }

    std::string tok = tokenizer_path;
    if (tok.empty()) tok = find_tokenizer(path, h.vocab);
    if (!tok.empty()) {
        auto spec = load_llama2c_tokenizer(tok, h.vocab);
        if (!spec) return spec.error();
        m.tokenizer = std::move(spec).value();
        if (m.tokenizer.source.empty()) m.tokenizer.source = tok;
    }

    m.metadata = {
        {"format", h.version == 0   ? "llama2.c v0 (legacy fp32)"
                   : h.version == 1 ? "llama2.c v1 (fp32)"
                                    : "llama2.c v2 (int8, group " + std::to_string(h.group) + ", dequantized to F32)"},
        {"dim", std::to_string(h.dim)},
        {"hidden_dim", std::to_string(h.hidden)},
        {"n_layers", std::to_string(h.layers)},
        {"n_heads", std::to_string(h.heads)},
        {"n_kv_heads", std::to_string(h.kv_heads)},
        {"vocab_size", std::to_string(h.vocab)},
        {"seq_len", std::to_string(h.seq)},
        {"classifier", h.shared ? "shared with token embedding" : "separate"},
        {"tokenizer", tok.empty() ? "none (pass a llama2.c tokenizer.bin)" : tok},
    };
    EDGE_TRY(validate_and_finalize_llama(m));
    return m;
}

}  // namespace edge::model
