// The one IR every importer produces (DESIGN.md): a model = architecture config + named weight
// tensors + a graph of typed ops + the tokenizer description + printable metadata.
//
// Canonical tensor names follow GGUF's llama convention whatever format the model came from:
//   token_embd.weight, output_norm.weight, output.weight (absent when tied to token_embd),
//   blk.N.attn_norm.weight, blk.N.attn_q.weight, blk.N.attn_k.weight, blk.N.attn_v.weight,
//   blk.N.attn_output.weight, blk.N.ffn_norm.weight, blk.N.ffn_gate.weight,
//   blk.N.ffn_up.weight, blk.N.ffn_down.weight; with LlamaConfig::attn_qkv_bias also
//   blk.N.attn_q.bias, blk.N.attn_k.bias, blk.N.attn_v.bias (not layers: never quantized)
// A "layer" (plans, sensitivity, the layer table) is one weight tensor of a linear op, named
// without the ".weight" suffix: blk.3.attn_q.
//
// Conventions inside the IR:
//   - shapes are outermost first; a linear weight is [out_features, in_features] (y = W x);
//     token_embd is [vocab, dim].
//   - Q and K projection rows are in the interleaved-pairs RoPE layout (GGUF/llama2.c/Meta):
//     rotary pair i of a head is rows (2i, 2i+1). Importers of rotate-half checkpoints
//     (Hugging Face) permute rows into this layout.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/core/tensor.h"
#include "engine/tokenizer/spec.h"

namespace edge::model {
class WeightSource;
}  // namespace edge::model

namespace edge::model {

struct LlamaConfig {
    int dim = 0;         // embedding width
    int hidden_dim = 0;  // FFN intermediate width
    int n_layers = 0;
    int n_heads = 0;
    int n_kv_heads = 0;  // GQA: n_heads % n_kv_heads == 0
    int head_dim = 0;    // usually dim / n_heads
    int vocab_size = 0;
    int context_length = 0;  // maximum sequence length the model was trained for
    int rope_dim = 0;        // rotated dimensions per head (<= head_dim); usually head_dim
    float rope_theta = 10000.0f;
    // RoPE scaling (engine/model/rope.h): pair i's frequency is divided by rope_freq_factors[i]
    // (rope_dim / 2 values; empty: not scaled). rope_scaling says where they came from, for people
    // ("llama3: factor 8, low 1, high 4, original context 8192"; "" when not scaled).
    std::vector<float> rope_freq_factors;
    std::string rope_scaling;
    // Phi-3 "longrope" (also called "su"): a second set of divisors used instead of
    // rope_freq_factors when an executor's context exceeds rope_original_context (llama.cpp's
    // rule), and a magnitude rope_attn_factor that multiplies every cos and sin (1: none).
    std::vector<float> rope_long_freq_factors;
    int rope_original_context = 0;
    float rope_attn_factor = 1.0f;
    float norm_eps = 1e-5f;
    bool tied_embeddings = false;  // output head shares token_embd.weight
    // Q, K and V projections add a bias (Qwen2): blk.N.attn_q.bias [q_dim], attn_k.bias and
    // attn_v.bias [kv_dim], F32, rows in the same order as the projection's (Q/K interleaved).
    bool attn_qkv_bias = false;

    int kv_dim() const { return n_kv_heads * head_dim; }
    int q_dim() const { return n_heads * head_dim; }
};

enum class OpType : uint8_t {
    Embedding,
    RMSNorm,
    Linear,
    RoPE,
    Attention,
    SwiGLU,
    Add,
    Conv2d,
    BatchNorm,
    Relu,
    MaxPool,
    AvgPool,
    GlobalAvgPool,
    Reshape,
    Pad,
    MatMul,
    Softmax,
};
const char* op_type_name(OpType t);

struct Op {
    OpType type;
    std::string name;                  // canonical layer name for weighted ops (blk.3.attn_q)
    std::vector<std::string> inputs;   // value names
    std::vector<std::string> outputs;  // value names
    std::vector<std::string> weights;  // tensor names
    std::map<std::string, std::vector<double>> attrs;
};

struct Graph {
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::vector<Op> ops;
};

// The graph of a Llama decoder for `cfg` (the executor follows the same structure).
Graph build_llama_graph(const LlamaConfig& cfg);

struct Model {
    std::string architecture = "llama";
    std::string name;
    std::string source_path;
    std::string source_format;  // "gguf", "llama2c", "hf", "onnx", "torchscript", "synth"
    LlamaConfig config;
    std::vector<Tensor> tensors;
    tokenizer::TokenizerSpec tokenizer;
    std::vector<std::pair<std::string, std::string>> metadata;  // printable, for `info`
    Graph graph;
    // Set when the model was opened with lazy weights (LoadOptions::lazy_weights): tensors
    // without data are read from the file through it, one at a time (engine/model/weights.h).
    std::shared_ptr<const model::WeightSource> weights;

    const Tensor* find(std::string_view name) const;
    Tensor* find_mut(std::string_view name);
    // The output head: output.weight, or token_embd.weight when tied.
    const Tensor* output_head() const;
    int64_t parameter_count() const;  // tied tensors counted once
    size_t weight_bytes() const;      // bytes as held now (tensors not read yet count 0)
};

// Checks a llama configuration alone (src names the file in the error): every size positive,
// heads a multiple of KV heads, the rotary dimension, the rope factors, and every size and product
// (q_dim, kv_dim) within plausible bounds. Readers call it as soon as they have read the
// configuration, before anything computes a shape from it.
Status check_llama_config(const LlamaConfig& c, const std::string& src);

// Checks that a llama model has every tensor the config implies, with the right shapes
// (check_llama_config first); the error names the file, the tensor, the expected and the found
// shape.
Status validate_llama(const Model& m);

// Fills model.graph from model.config (one op list per layer), for a configuration already
// known to be sound.
void finalize_llama(Model& m);

// What a reader calls once the config and tensors are in place: validate_llama, then
// finalize_llama - in that order, so an implausible configuration (say 2^29 layers in a damaged
// header) is refused before its graph is built.
Status validate_and_finalize_llama(Model& m);

// One row per layer (weight tensor of a linear/conv op), in execution order.
struct LayerInfo {
    std::string name;    // blk.3.attn_q
    std::string tensor;  // blk.3.attn_q.weight
    std::string kind;    // attn_q, attn_k, ..., output, conv
    int block = -1;      // decoder block index, -1 for non-block layers
    std::vector<int64_t> shape;
    int64_t params = 0;
    size_t bytes = 0;
    DType type = DType::F32;
    DType source_type = DType::F32;
};
std::vector<LayerInfo> list_layers(const Model& m);

// The decoder block a tensor or op name belongs to ("blk.3.attn_q.weight" -> 3), -1 outside blocks.
int block_of(const std::string& name);
// The F32 bytes of the largest decoder block (every tensor named blk.N.*, counted as F32 whatever
// it is held as): what a block-by-block pass holds of the weights at once, beside the head.
uint64_t largest_block_f32_bytes(const Model& m);

}  // namespace edge::model
