// Synthetic Llama-shaped models: seeded random weights at named shapes, written as a GGUF file
// or a Hugging Face folder (sharded safetensors + config.json + tokenizer.json), with a usable
// tokenizer: SentencePiece-style, or byte-level BPE with Llama 3's special tokens. For tests,
// benchmarks and memory-planning experiments at real sizes without downloading anything. The
// text they generate is noise. Both formats of one seed hold the same weights.
//
// Weights ~ N(0, stddev) (default 0.02), norm weights 1, so activations stay finite. Each row of
// each tensor has its own random stream (seed, tensor index, row), so the result does not depend
// on the number of threads or on how the rows are chunked.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

struct SynthShape {
    std::string name;
    std::string description;
    LlamaConfig config;
};
// "test-tiny", "stories260k", "stories15m", "llama-110m", "tinyllama-1.1b", "llama-3.2-1b",
// "llama-3.2-3b", "llama-3-8b".
const std::vector<SynthShape>& synth_shapes();
std::optional<SynthShape> find_synth_shape(std::string_view name);

enum class SynthFormat : uint8_t {
    Gguf,      // one .gguf file
    HfFolder,  // a Hugging Face folder: model.safetensors or shards + index, config.json,
               // generation_config.json, tokenizer.json, tokenizer_config.json
};
enum class SynthTokenizer : uint8_t {
    SentencePiece,  // GGUF model "llama": <unk> <s> </s>, byte fallback, U+2581 pieces
    ByteLevelBpe,   // GGUF model "gpt2", pre "llama-bpe": Llama 3's byte-level vocabulary shape
};

struct SynthOptions {
    std::string shape = "stories260k";
    std::optional<LlamaConfig> config;  // overrides the named shape when set
    std::string path;                   // output .gguf, or the folder for HfFolder
    SynthFormat format = SynthFormat::Gguf;
    SynthTokenizer tokenizer = SynthTokenizer::SentencePiece;
    // HfFolder: a new shard starts before one would pass this size (HF's save_pretrained uses 5 GB).
    uint64_t max_shard_bytes = 5000ull * 1000 * 1000;
    DType type = DType::F16;  // F32, F16 or BF16 for the matrices (norms stay F32 in GGUF)
    // Q4_K_M-style K-quant file instead (`type` ignored): the matrices quantized to Q4_K, and to
    // Q6_K the output head and the attn_v / ffn_down of the layers llama.cpp's Q4_K_M gives more
    // bits (the first and last eighth, and every third layer between). Rows must be whole
    // 256-element super-blocks. engine/model/ggml_kquant.h holds the quantizers.
    bool q4_k_m = false;
    uint64_t seed = 1234;
    float stddev = 0.02f;
    bool tied_embeddings = false;  // omit output.weight
    int threads = 0;               // 0: hardware concurrency
};

// The type a matrix gets in the file (SynthOptions::q4_k_m's rule, or `type`).
DType synth_matrix_type(const SynthOptions& opts, const std::string& tensor, int n_layers);

// Generates and writes one tensor at a time; peak memory is a few MB whatever the model size.
Status write_synth_model(const SynthOptions& opts, Progress* progress = nullptr);

// The same model built in memory as F32 (small shapes only; the path is ignored).
Result<Model> make_synth_model(const SynthOptions& opts);

// The embedded tokenizer: model "llama"; <unk>=0, <s>=1, </s>=2, byte tokens <0xXX> at id
// byte+3, then single characters and multi-character pieces, each reachable by merging two
// earlier pieces, with descending scores. vocab_size must be at least 259 + 64.
tokenizer::TokenizerSpec synth_tokenizer(int vocab_size);
// The byte-level BPE vocabulary (model "gpt2", pre "llama-bpe"): the 256 byte tokens of GPT-2's
// byte alphabet, then pieces each made by one merge of an earlier piece and one character
// (common words with and without their leading space first), then the special tokens in Llama
// 3.1's order (<|begin_of_text|> = BOS, <|end_of_text|> = EOS, ... <|eot_id|> also ends
// generation): the last 256 ids when vocab_size >= 100000, else the last 16. vocab_size must
// leave at least 32 pieces.
tokenizer::TokenizerSpec synth_bpe_tokenizer(int vocab_size);
// The vocabulary of `kind` (synth_tokenizer or synth_bpe_tokenizer).
tokenizer::TokenizerSpec synth_vocabulary(SynthTokenizer kind, int vocab_size);

}  // namespace edge::model
