// Synthetic Llama-shaped models (see synth.h).
#include "synth.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/core/thread_pool.h"
#include "engine/model/ggml_kquant.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/hf_export.h"
#include "engine/model/safetensors.h"
#include "engine/tokenizer/gguf_translate.h"
#include "engine/tokenizer/text_util.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model {
namespace {

LlamaConfig shape(int dim, int ffn, int layers, int heads, int kv, int vocab, int ctx) {
    LlamaConfig c;
    c.dim = dim;
    c.hidden_dim = ffn;
    c.n_layers = layers;
    c.n_heads = heads;
    c.n_kv_heads = kv;
    c.head_dim = dim / heads;
    c.rope_dim = c.head_dim;
    c.vocab_size = vocab;
    c.context_length = ctx;
    c.rope_theta = 10000.0f;
    c.norm_eps = 1e-5f;
    return c;
}

// Qwen2's differences from a Llama shape: Q/K/V biases and RoPE base 1,000,000.
LlamaConfig qwen2(LlamaConfig c) {
    c.attn_qkv_bias = true;
    c.rope_theta = 1000000.0f;
    return c;
}

// A tensor to generate: name, shape (outermost first), and whether it is a norm (all ones).
struct Spec {
    std::string name;
    std::vector<int64_t> shape;
    bool ones = false;
};

std::vector<Spec> tensor_specs(const LlamaConfig& c, bool tied) {
    const int64_t D = c.dim, F = c.hidden_dim, V = c.vocab_size, Q = c.q_dim(), KV = c.kv_dim();
    std::vector<Spec> s;
    s.push_back({"token_embd.weight", {V, D}});
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        s.push_back({p + "attn_norm.weight", {D}, true});
        s.push_back({p + "attn_q.weight", {Q, D}});
        s.push_back({p + "attn_k.weight", {KV, D}});
        s.push_back({p + "attn_v.weight", {KV, D}});
        if (c.attn_qkv_bias) {
            s.push_back({p + "attn_q.bias", {Q}});
            s.push_back({p + "attn_k.bias", {KV}});
            s.push_back({p + "attn_v.bias", {KV}});
        }
        s.push_back({p + "attn_output.weight", {D, Q}});
        s.push_back({p + "ffn_norm.weight", {D}, true});
        s.push_back({p + "ffn_gate.weight", {F, D}});
        s.push_back({p + "ffn_up.weight", {F, D}});
        s.push_back({p + "ffn_down.weight", {D, F}});
    }
    s.push_back({"output_norm.weight", {D}, true});
    if (!tied) s.push_back({"output.weight", {V, D}});
    return s;
}

uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Fills rows [r0, r1) of a [rows, cols] tensor. Each row has its own stream; normals come from
// Box-Muller on 53-bit uniforms. With `from`, output row r holds the values of row from[r] (a file
// that orders the rows differently, HF's rotate-half Q/K, still holds the same tensor).
void fill_rows(const Spec& sp, size_t tensor_index, uint64_t seed, float stddev, int64_t cols, int64_t r0, int64_t r1,
               float* out, const int64_t* from = nullptr) {
    if (sp.ones) {
        std::fill(out, out + (r1 - r0) * cols, 1.0f);
        return;
    }
    constexpr double kTwoPi = 6.283185307179586;
    for (int64_t r = r0; r < r1; ++r) {
        const uint64_t src = from ? uint64_t(from[r]) : uint64_t(r);
        uint64_t state = seed ^ (uint64_t(tensor_index + 1) * 0xd1b54a32d192ed03ull) ^ (src << 20);
        splitmix(state);
        float* y = out + (r - r0) * cols;
        for (int64_t j = 0; j < cols; j += 2) {
            const double u1 = (double(splitmix(state) >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
            const double u2 = double(splitmix(state) >> 11) * 0x1.0p-53;
            const double rad = std::sqrt(-2.0 * std::log(u1)) * stddev;
            y[j] = float(rad * std::cos(kTwoPi * u2));
            if (j + 1 < cols) y[j + 1] = float(rad * std::sin(kTwoPi * u2));
        }
    }
}

Result<LlamaConfig> resolve(const SynthOptions& o) {
    LlamaConfig c;
    if (o.config) {
        c = *o.config;
    } else {
        auto s = find_synth_shape(o.shape);
        if (!s) {
            std::string names;
            for (const auto& x : synth_shapes()) names += (names.empty() ? "" : ", ") + x.name;
            return err("synth: unknown shape '", o.shape, "' (known: ", names, ")");
        }
        c = s->config;
    }
    c.tied_embeddings = o.tied_embeddings;
    if (c.dim <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.n_layers <= 0 || c.hidden_dim <= 0 ||
        c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0)
        return err("synth: inconsistent shape (dim ", c.dim, ", heads ", c.n_heads, ", kv heads ", c.n_kv_heads, ")");
    if (o.tokenizer == SynthTokenizer::SentencePiece && c.vocab_size < 259 + 64)
        return err("synth: vocabulary ", c.vocab_size,
                   " is too small for the SentencePiece-style tokenizer (at least 323)");
    if (o.tokenizer == SynthTokenizer::ByteLevelBpe && c.vocab_size < 256 + 16 + 32)
        return err(
            "synth: vocabulary ", c.vocab_size,
            " is too small for the byte-level BPE tokenizer (at least 304: 256 bytes, 16 special tokens, 32 pieces)");
    return c;
}

// The folder: the tensors in the GGUF order with HF names, Q/K rows (and their biases) in HF's
// rotate-half order, generated row by row from the same streams as the GGUF, so both formats of
// one seed hold the same values; shards of at most max_shard_bytes (a tensor larger than that
// gets a shard of its own), the index when there is more than one; then the JSON files.
Status write_hf_folder(const SynthOptions& o, const LlamaConfig& c, const TokenizerSpec& tok, Progress* progress) {
    namespace fs = std::filesystem;
    if (o.q4_k_m)
        return err("synth: --type q4_k_m is a GGUF type; a Hugging Face folder holds F32, F16 or BF16 weights");
    if (o.type != DType::F32 && o.type != DType::F16 && o.type != DType::BF16)
        return err("synth: a Hugging Face folder holds F32, F16 or BF16 weights, not ", dtype_name(o.type));
    const fs::path dir(o.path);
    std::error_code ec;
    if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec))
        return err(o.path,
                   ": the folder exists and is not empty; synth writes a new folder (remove it or choose another)");
    fs::create_directories(dir, ec);
    if (!fs::is_directory(dir, ec))
        return err(o.path, ": cannot create the folder", ec ? " (" + ec.message() + ")" : std::string());
    auto json = tokenizer::tokenizer_json_from_gguf(tok);
    if (!json) return json.error();

    const std::vector<Spec> specs = tensor_specs(c, c.tied_embeddings);
    std::vector<int> shard_of(specs.size());
    std::vector<uint64_t> shard_bytes{0};
    for (size_t k = 0; k < specs.size(); ++k) {
        int64_t n = 1;
        for (int64_t d : specs[k].shape) n *= d;
        const uint64_t bytes = uint64_t(n) * uint64_t(dtype_block_bytes(o.type));
        if (shard_bytes.back() > 0 && shard_bytes.back() + bytes > o.max_shard_bytes) shard_bytes.push_back(0);
        shard_bytes.back() += bytes;
        shard_of[k] = int(shard_bytes.size()) - 1;
    }
    const int n_shards = int(shard_bytes.size());
    auto shard_name = [&](int i) {
        if (n_shards == 1) return std::string("model.safetensors");
        char buf[64];
        std::snprintf(buf, sizeof buf, "model-%05d-of-%05d.safetensors", i + 1, n_shards);
        return std::string(buf);
    };

    ThreadPool pool(o.threads);
    std::vector<float> buf;
    std::vector<std::pair<std::string, std::string>> weight_map;
    size_t k = 0;
    for (int sh = 0; sh < n_shards; ++sh) {
        SafetensorsStreamWriter w;
        for (size_t j = k; j < specs.size() && shard_of[j] == sh; ++j)
            EDGE_TRY(w.add(hf_tensor_name(specs[j].name), o.type, specs[j].shape));
        const std::string file = (dir / shard_name(sh)).string();
        EDGE_TRY(w.open(file, {{"format", "pt"}}));
        for (; k < specs.size() && shard_of[k] == sh; ++k) {
            if (is_cancelled(progress)) return err(o.path, ": synth cancelled");
            const Spec& s = specs[k];
            weight_map.emplace_back(hf_tensor_name(s.name), shard_name(sh));
            const int64_t cols = s.shape.back();
            const int64_t rows = s.shape.size() == 1 ? 1 : s.shape[0];
            // Q/K rows come from their IR rows; a bias is one row whose elements move instead.
            const std::vector<int64_t> from = hf_rows_from_ir(s.name, c);
            if (s.shape.size() == 1 && !from.empty()) {
                std::vector<float> ir(static_cast<size_t>(cols)), out(static_cast<size_t>(cols));
                fill_rows(s, k, o.seed, o.stddev, cols, 0, 1, ir.data());
                for (int64_t e = 0; e < cols; ++e) out[size_t(e)] = ir[size_t(from[size_t(e)])];
                const auto bytes = encode_f32_as(out.data(), cols, o.type);
                EDGE_TRY(w.write(bytes.data(), bytes.size()));
                continue;
            }
            const int64_t chunk_rows = std::max<int64_t>(1, (int64_t(1) << 22) / cols);
            for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
                const int64_t r1 = std::min(rows, r0 + chunk_rows);
                buf.resize(size_t((r1 - r0) * cols));
                pool.parallel_for(
                    r1 - r0,
                    [&](int64_t a, int64_t b) {
                        fill_rows(s, k, o.seed, o.stddev, cols, r0 + a, r0 + b, buf.data() + a * cols,
                                  from.empty() ? nullptr : from.data());
                    },
                    8);
                const auto bytes = encode_f32_as(buf.data(), int64_t(buf.size()), o.type);
                EDGE_TRY(w.write(bytes.data(), bytes.size()));
            }
            report(progress, double(k + 1) / double(specs.size()), "writing " + s.name);
        }
        EDGE_TRY(w.finish());
    }
    if (n_shards > 1) {
        uint64_t total = 0;
        for (uint64_t b : shard_bytes) total += b;
        nlohmann::ordered_json map = nlohmann::ordered_json::object();
        for (const auto& [tensor, file] : weight_map) map[tensor] = file;
        const nlohmann::ordered_json index = {{"metadata", {{"total_size", total}}}, {"weight_map", map}};
        EDGE_TRY(write_text_file((dir / "model.safetensors.index.json").string(), index.dump(2) + "\n"));
    }
    EDGE_TRY(write_text_file((dir / "config.json").string(), hf_config_json(c, tok, o.type)));
    EDGE_TRY(write_text_file((dir / "generation_config.json").string(), hf_generation_config_json(tok)));
    EDGE_TRY(write_text_file((dir / "tokenizer.json").string(), *json));
    EDGE_TRY(write_text_file((dir / "tokenizer_config.json").string(), hf_tokenizer_config_json(tok)));
    return {};
}

}  // namespace

const std::vector<SynthShape>& synth_shapes() {
    static const std::vector<SynthShape> shapes = {
        {"test-tiny", "dim 32, 2 layers, 4 heads / 2 KV heads, FFN 96, vocab 384", shape(32, 96, 2, 4, 2, 384, 128)},
        {"stories260k", "stories260K shape: dim 64, 5 layers, 8/4 heads, FFN 172, vocab 512",
         shape(64, 172, 5, 8, 4, 512, 512)},
        {"stories15m", "stories15M shape: dim 288, 6 layers, 6 heads, FFN 768, vocab 32000",
         shape(288, 768, 6, 6, 6, 32000, 256)},
        {"llama-110m", "stories110M shape: dim 768, 12 layers, 12 heads, FFN 2048, vocab 32000",
         shape(768, 2048, 12, 12, 12, 32000, 1024)},
        {"tinyllama-1.1b", "TinyLlama 1.1B shape: dim 2048, 22 layers, 32/4 heads, FFN 5632, vocab 32000",
         shape(2048, 5632, 22, 32, 4, 32000, 2048)},
        {"llama-3.2-1b", "Llama-3.2-1B shape: dim 2048, 16 layers, 32/8 heads, FFN 8192, vocab 128256",
         shape(2048, 8192, 16, 32, 8, 128256, 4096)},
        {"llama-3.2-3b", "Llama-3.2-3B shape: dim 3072, 28 layers, 24/8 heads, FFN 8192, vocab 128256",
         shape(3072, 8192, 28, 24, 8, 128256, 4096)},
        {"qwen2.5-0.5b", "Qwen2.5-0.5B shape: dim 896, 24 layers, 14/2 heads, FFN 4864, vocab 151936, Q/K/V biases",
         qwen2(shape(896, 4864, 24, 14, 2, 151936, 32768))},
        {"qwen2.5-1.5b", "Qwen2.5-1.5B shape: dim 1536, 28 layers, 12/2 heads, FFN 8960, vocab 151936, Q/K/V biases",
         qwen2(shape(1536, 8960, 28, 12, 2, 151936, 32768))},
        {"llama-3-8b", "Llama-3-8B shape: dim 4096, 32 layers, 32/8 heads, FFN 14336, vocab 128256",
         shape(4096, 14336, 32, 32, 8, 128256, 4096)},
    };
    return shapes;
}

std::optional<SynthShape> find_synth_shape(std::string_view name) {
    for (const auto& s : synth_shapes())
        if (s.name == name) return s;
    return std::nullopt;
}

TokenizerSpec synth_tokenizer(int vocab_size) {
    TokenizerSpec t;
    t.model = "llama";
    t.source = "synth";
    t.bos_id = 1;
    t.eos_id = 2;
    t.unk_id = 0;
    auto add = [&](std::string piece, float score, int type) {
        t.tokens.push_back(std::move(piece));
        t.scores.push_back(score);
        t.token_types.push_back(type);
    };
    add("<unk>", 0.0f, 2);
    add("<s>", 0.0f, 3);
    add("</s>", 0.0f, 3);
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        add(buf, 0.0f, 6);
    }
    // Normal pieces: single characters first, then common words grown one character at a time
    // (so each piece = an earlier piece + a single character), then every extension of earlier
    // pieces by a lowercase letter, breadth first, until the vocabulary is full.
    const std::string sp = "\xe2\x96\x81";  // U+2581, SentencePiece's space marker
    std::vector<std::string> pieces;
    std::set<std::string> seen;
    auto piece = [&](const std::string& p) {
        if (int(t.tokens.size() + pieces.size()) < vocab_size && seen.insert(p).second) pieces.push_back(p);
    };
    piece(sp);
    for (char c = 'a'; c <= 'z'; ++c) piece(std::string(1, c));
    for (char c = 'A'; c <= 'Z'; ++c) piece(std::string(1, c));
    for (char c : std::string("0123456789.,!?'\"-:;()")) piece(std::string(1, c));
    static const char* kWords[] = {"the",  "and",  "was", "to",   "a",    "he",    "she",    "they", "it",   "of",
                                   "in",   "day",  "one", "upon", "time", "there", "little", "girl", "boy",  "named",
                                   "play", "with", "her", "his",  "said", "happy", "saw",    "big",  "went", "park"};
    for (const char* w : kWords) {
        std::string acc = sp;
        for (const char* c = w; *c; ++c) piece(acc += *c);
        std::string bare;
        for (const char* c = w; *c; ++c) {
            bare += *c;
            if (bare.size() > 1) piece(bare);
        }
    }
    for (size_t i = 0; i < pieces.size() && int(t.tokens.size() + pieces.size()) < vocab_size; ++i)
        for (char c = 'a'; c <= 'z'; ++c) piece(pieces[i] + c);
    for (size_t i = 0; i < pieces.size(); ++i) add(pieces[i], -float(i), 1);
    return t;
}

TokenizerSpec synth_bpe_tokenizer(int vocab_size) {
    TokenizerSpec t;
    t.model = "gpt2";
    t.pre = "llama-bpe";
    t.source = "synth";
    t.add_space_prefix = false;
    const int n_special = vocab_size >= 100000 ? 256 : 16;
    const size_t n_pieces = size_t(std::max(0, vocab_size - n_special));
    std::set<std::string> seen;
    for (int b = 0; b < 256; ++b) {
        t.tokens.push_back(tokenizer::byte_to_unicode(uint8_t(b)));
        seen.insert(t.tokens.back());
    }
    // One merge makes `prefix` + `ch` (both tokens); false when the vocabulary is full.
    // NOLINTNEXTLINE(performance-unnecessary-value-param): a copy: a caller passes t.tokens[i], which push_back may move
    auto grow = [&](const std::string prefix, const std::string& ch) {
        const std::string p = prefix + ch;
        if (seen.count(p)) return true;
        if (t.tokens.size() >= n_pieces) return false;
        seen.insert(p);
        t.tokens.push_back(p);
        t.merges.push_back(prefix + " " + ch);
        return true;
    };
    const std::string sp = tokenizer::byte_to_unicode(uint8_t(' '));  // U+0120
    static const char* kWords[] = {"the", "and",   "was",  "to",   "a",    "he",   "she",   "they",   "it",
                                   "of",  "in",    "day",  "one",  "upon", "time", "there", "little", "girl",
                                   "boy", "named", "play", "with", "her",  "his",  "said",  "happy",  "saw",
                                   "big", "went",  "park", "Once", "Lily", "Tom",  "then",  "very",   "friend"};
    for (char ch = 'a'; ch <= 'z'; ++ch) grow(sp, std::string(1, ch));
    for (const char* w : kWords) {
        for (const std::string& start : {sp, std::string()}) {
            std::string acc = start.empty() ? std::string(1, w[0]) : start;
            for (const char* c = start.empty() ? w + 1 : w; *c; ++c) {
                if (!grow(acc, std::string(1, *c))) break;
                acc += *c;
            }
        }
    }
    for (size_t i = 256; i < t.tokens.size() && t.tokens.size() < n_pieces; ++i)
        for (char ch = 'a'; ch <= 'z' && t.tokens.size() < n_pieces; ++ch) grow(t.tokens[i], std::string(1, ch));
    t.token_types.assign(t.tokens.size(), 1);
    // Llama 3.1's special tokens, then reserved ones up to the vocabulary size.
    static const char* kSpecial[] = {"<|begin_of_text|>",
                                     "<|end_of_text|>",
                                     "<|reserved_special_token_0|>",
                                     "<|reserved_special_token_1|>",
                                     "<|finetune_right_pad_id|>",
                                     "<|reserved_special_token_2|>",
                                     "<|start_header_id|>",
                                     "<|end_header_id|>",
                                     "<|eom_id|>",
                                     "<|eot_id|>",
                                     "<|python_tag|>"};
    const int first = int(t.tokens.size());
    for (int k = 0; int(t.tokens.size()) < vocab_size; ++k) {
        t.tokens.push_back(k < 11 ? kSpecial[k] : "<|reserved_special_token_" + std::to_string(k - 8) + "|>");
        t.token_types.push_back(3);
    }
    t.bos_id = first;
    t.add_eos(first + 1);
    if (vocab_size - first > 9) t.add_eos(first + 9);
    return t;
}

TokenizerSpec synth_vocabulary(SynthTokenizer kind, int vocab_size) {
    return kind == SynthTokenizer::ByteLevelBpe ? synth_bpe_tokenizer(vocab_size) : synth_tokenizer(vocab_size);
}

DType synth_matrix_type(const SynthOptions& o, const std::string& tensor, int n_layers) {
    if (!o.q4_k_m) return o.type;
    if (tensor == "output.weight") return DType::Q6_K;
    int layer = -1;
    if (std::sscanf(tensor.c_str(), "blk.%d.", &layer) == 1 &&
        (tensor.find(".attn_v.") != std::string::npos || tensor.find(".ffn_down.") != std::string::npos)) {
        const int n = n_layers;
        const bool more_bits = layer < n / 8 || layer >= 7 * n / 8 || (layer - n / 8) % 3 == 2;
        if (more_bits) return DType::Q6_K;
    }
    return DType::Q4_K;
}

Status write_synth_model(const SynthOptions& o, Progress* progress) {
    auto cfg = resolve(o);
    if (!cfg.ok()) return cfg.error();
    const LlamaConfig& c = *cfg;
    if (o.path.empty()) return err("synth: no output path given");
    const TokenizerSpec tok = synth_vocabulary(o.tokenizer, c.vocab_size);
    if (o.format == SynthFormat::HfFolder) return write_hf_folder(o, c, tok, progress);
    gguf::Writer w;
    const std::string name = o.config ? "synth-custom" : "synth-" + o.shape;
    gguf::set_llama_metadata(w, c, tok, name);
    w.set("general.description", gguf::Value::of_string("EdgeStudio synthetic model, seed " + std::to_string(o.seed)));
    const std::vector<Spec> specs = tensor_specs(c, o.tied_embeddings);
    std::vector<DType> types;
    for (const Spec& s : specs) {
        types.push_back(s.shape.size() == 1 ? DType::F32 : synth_matrix_type(o, s.name, c.n_layers));
        if (dtype_block_elems(types.back()) > 1 && s.shape.back() % dtype_block_elems(types.back()) != 0)
            return err("synth: ", s.name, " has rows of ", s.shape.back(), " elements, not whole ",
                       dtype_name(types.back()), " blocks of ", dtype_block_elems(types.back()));
        EDGE_TRY(w.add_tensor(s.name, types.back(), s.shape));
    }
    EDGE_TRY(w.open(o.path));

    ThreadPool pool(o.threads);
    std::vector<float> buf;
    std::vector<uint8_t> blocks;
    for (size_t k = 0; k < specs.size(); ++k) {
        if (is_cancelled(progress)) return err(o.path, ": synth cancelled");
        const Spec& s = specs[k];
        const int64_t cols = s.shape.back();
        const int64_t rows = s.shape.size() == 1 ? 1 : s.shape[0];
        // Generate and write in chunks of about 4M elements to bound memory.
        const int64_t chunk_rows = std::max<int64_t>(1, (int64_t(1) << 22) / cols);
        for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
            const int64_t r1 = std::min(rows, r0 + chunk_rows);
            buf.resize(size_t((r1 - r0) * cols));
            // K-quant tensors: each thread quantizes the rows it has just generated.
            void (*kquant)(const float*, int64_t, uint8_t*) = types[k] == DType::Q4_K   ? model::quantize_row_q4_k
                                                              : types[k] == DType::Q6_K ? model::quantize_row_q6_k
                                                                                        : nullptr;
            const size_t row_bytes = dtype_bytes(types[k], cols);
            if (kquant) blocks.resize(size_t(r1 - r0) * row_bytes);
            pool.parallel_for(
                r1 - r0,
                [&](int64_t a, int64_t b) {
                    fill_rows(s, k, o.seed, o.stddev, cols, r0 + a, r0 + b, buf.data() + a * cols);
                    if (kquant)
                        for (int64_t r = a; r < b; ++r)
                            kquant(buf.data() + r * cols, cols, blocks.data() + size_t(r) * row_bytes);
                },
                8);
            if (kquant) {
                EDGE_TRY(w.write_raw(blocks.data(), blocks.size()));
            } else {
                EDGE_TRY(w.write_f32(buf.data(), int64_t(buf.size())));
            }
        }
        report(progress, double(k + 1) / double(specs.size()), "writing " + s.name);
    }
    return w.finish();
}

Result<Model> make_synth_model(const SynthOptions& o) {
    auto cfg = resolve(o);
    if (!cfg.ok()) return cfg.error();
    Model m;
    m.config = *cfg;
    m.name = o.config ? "synth-custom" : "synth-" + o.shape;
    m.source_format = "synth";
    m.source_path = m.name;
    m.tokenizer = synth_vocabulary(o.tokenizer, m.config.vocab_size);
    const std::vector<Spec> specs = tensor_specs(m.config, o.tied_embeddings);
    for (size_t k = 0; k < specs.size(); ++k) {
        const Spec& s = specs[k];
        Tensor t = Tensor::alloc(s.name, DType::F32, s.shape);
        const int64_t cols = s.shape.back();
        fill_rows(s, k, o.seed, o.stddev, cols, 0, t.numel() / cols, t.f32_mut());
        m.tensors.push_back(std::move(t));
    }
    EDGE_TRY(validate_and_finalize_llama(m));
    return m;
}

}  // namespace edge::model
