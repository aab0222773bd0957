#include "ir.h"

#include <cstdlib>
#include <map>
#include <set>

#include "engine/model/rope.h"
#include "engine/model/weights.h"

namespace edge::model {

const char* op_type_name(OpType t) {
    switch (t) {
        case OpType::Embedding: return "Embedding";
        case OpType::RMSNorm: return "RMSNorm";
        case OpType::Linear: return "Linear";
        case OpType::RoPE: return "RoPE";
        case OpType::Attention: return "Attention";
        case OpType::SwiGLU: return "SwiGLU";
        case OpType::Add: return "Add";
        case OpType::Conv2d: return "Conv2d";
        case OpType::BatchNorm: return "BatchNorm";
        case OpType::Relu: return "Relu";
        case OpType::MaxPool: return "MaxPool";
        case OpType::AvgPool: return "AvgPool";
        case OpType::GlobalAvgPool: return "GlobalAvgPool";
        case OpType::Reshape: return "Reshape";
        case OpType::Pad: return "Pad";
        case OpType::MatMul: return "MatMul";
        case OpType::Softmax: return "Softmax";
    }
    return "?";
}

namespace {
std::string blk(int l, const char* part) { return "blk." + std::to_string(l) + "." + part; }
}  // namespace

Graph build_llama_graph(const LlamaConfig& cfg) {
    Graph g;
    g.inputs = {"tokens"};
    auto op = [&](OpType t, std::string name, std::vector<std::string> in, std::vector<std::string> out,
                  std::vector<std::string> w = {}) {
        g.ops.push_back(Op{t, std::move(name), std::move(in), std::move(out), std::move(w), {}});
    };
    op(OpType::Embedding, "token_embd", {"tokens"}, {"x0"}, {"token_embd.weight"});
    std::string x = "x0";
    for (int l = 0; l < cfg.n_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        op(OpType::RMSNorm, blk(l, "attn_norm"), {x}, {p + "xn"}, {blk(l, "attn_norm.weight")});
        op(OpType::Linear, blk(l, "attn_q"), {p + "xn"}, {p + "q"}, {blk(l, "attn_q.weight")});
        op(OpType::Linear, blk(l, "attn_k"), {p + "xn"}, {p + "k"}, {blk(l, "attn_k.weight")});
        op(OpType::Linear, blk(l, "attn_v"), {p + "xn"}, {p + "v"}, {blk(l, "attn_v.weight")});
        op(OpType::RoPE, blk(l, "rope"), {p + "q", p + "k"}, {p + "qr", p + "kr"});
        op(OpType::Attention, blk(l, "attn"), {p + "qr", p + "kr", p + "v"}, {p + "att"});
        op(OpType::Linear, blk(l, "attn_output"), {p + "att"}, {p + "ao"}, {blk(l, "attn_output.weight")});
        op(OpType::Add, blk(l, "attn_residual"), {x, p + "ao"}, {p + "h"});
        op(OpType::RMSNorm, blk(l, "ffn_norm"), {p + "h"}, {p + "hn"}, {blk(l, "ffn_norm.weight")});
        op(OpType::Linear, blk(l, "ffn_gate"), {p + "hn"}, {p + "g"}, {blk(l, "ffn_gate.weight")});
        op(OpType::Linear, blk(l, "ffn_up"), {p + "hn"}, {p + "u"}, {blk(l, "ffn_up.weight")});
        op(OpType::SwiGLU, blk(l, "ffn_act"), {p + "g", p + "u"}, {p + "a"});
        op(OpType::Linear, blk(l, "ffn_down"), {p + "a"}, {p + "d"}, {blk(l, "ffn_down.weight")});
        op(OpType::Add, blk(l, "ffn_residual"), {p + "h", p + "d"}, {p + "out"});
        x = p + "out";
    }
    op(OpType::RMSNorm, "output_norm", {x}, {"xf"}, {"output_norm.weight"});
    op(OpType::Linear, "output", {"xf"}, {"logits"}, {cfg.tied_embeddings ? "token_embd.weight" : "output.weight"});
    g.outputs = {"logits"};
    return g;
}

const Tensor* Model::find(std::string_view n) const {
    for (const auto& t : tensors)
        if (t.name == n) return &t;
    return nullptr;
}

Tensor* Model::find_mut(std::string_view n) {
    for (auto& t : tensors)
        if (t.name == n) return &t;
    return nullptr;
}

const Tensor* Model::output_head() const {
    if (const Tensor* t = find("output.weight")) return t;
    return find("token_embd.weight");
}

int64_t Model::parameter_count() const {
    int64_t n = 0;
    for (const auto& t : tensors) n += t.numel();
    return n;
}

size_t Model::weight_bytes() const {
    size_t n = 0;
    for (const auto& t : tensors)
        if (t.data) n += t.nbytes;
    return n;
}

Status check_llama_config(const LlamaConfig& c, const std::string& src) {
    if (c.dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.vocab_size <= 0 ||
        c.hidden_dim <= 0 || c.head_dim <= 0)
        return err(src, ": incomplete llama configuration (dim ", c.dim, ", layers ", c.n_layers, ", heads ", c.n_heads,
                   ", kv heads ", c.n_kv_heads, ", ffn ", c.hidden_dim, ", vocab ", c.vocab_size, ")");
    if (c.n_heads % c.n_kv_heads != 0)
        return err(src, ": ", c.n_heads, " attention heads are not a multiple of ", c.n_kv_heads, " KV heads");
    if (c.rope_dim <= 0 || c.rope_dim > c.head_dim || c.rope_dim % 2)
        return err(src, ": rotary dimension ", c.rope_dim, " is invalid for head size ", c.head_dim);
    if (const std::string bad = model::rope_factors_problem(c); !bad.empty()) return err(src, ": ", bad);
    if (c.dim > (1 << 20) || c.hidden_dim > (1 << 22) || c.n_layers > 4096 || c.vocab_size > (1 << 24))
        return err(src, ": configuration sizes are implausible (dim ", c.dim, ", ffn ", c.hidden_dim, ", layers ",
                   c.n_layers, ", vocab ", c.vocab_size, ")");
    // (q_dim() and kv_dim() are int products: bounded here before anything computes them.)
    if (c.head_dim > (1 << 16) || int64_t(c.n_heads) * c.head_dim > (1 << 22))
        return err(src, ": attention sizes are implausible (", c.n_heads, " heads of ", c.head_dim, ", ", c.n_kv_heads,
                   " KV heads)");
    return {};
}

Status validate_llama(const Model& m) {
    const LlamaConfig& c = m.config;
    const std::string& src = m.source_path;
    EDGE_TRY(check_llama_config(c, src));
    auto need = [&](const std::string& name, const std::vector<int64_t>& shape) -> Status {
        const Tensor* t = m.find(name);
        if (!t) return err(src, ": tensor '", name, "' is missing");
        if (t->shape != shape) {
            Tensor expect;
            expect.shape = shape;
            return err(src, ": tensor '", name, "' has shape ", t->shape_str(), " but the configuration implies ",
                       expect.shape_str());
        }
        return {};
    };
    const int64_t D = c.dim, F = c.hidden_dim, V = c.vocab_size;
    EDGE_TRY(need("token_embd.weight", {V, D}));
    EDGE_TRY(need("output_norm.weight", {D}));
    if (!c.tied_embeddings) EDGE_TRY(need("output.weight", {V, D}));
    for (int l = 0; l < c.n_layers; ++l) {
        EDGE_TRY(need(blk(l, "attn_norm.weight"), {D}));
        EDGE_TRY(need(blk(l, "attn_q.weight"), {int64_t(c.q_dim()), D}));
        EDGE_TRY(need(blk(l, "attn_k.weight"), {int64_t(c.kv_dim()), D}));
        EDGE_TRY(need(blk(l, "attn_v.weight"), {int64_t(c.kv_dim()), D}));
        if (c.attn_qkv_bias) {
            EDGE_TRY(need(blk(l, "attn_q.bias"), {int64_t(c.q_dim())}));
            EDGE_TRY(need(blk(l, "attn_k.bias"), {int64_t(c.kv_dim())}));
            EDGE_TRY(need(blk(l, "attn_v.bias"), {int64_t(c.kv_dim())}));
        } else if (const char* b = m.find(blk(l, "attn_q.bias"))   ? "attn_q.bias"
                                   : m.find(blk(l, "attn_k.bias")) ? "attn_k.bias"
                                   : m.find(blk(l, "attn_v.bias")) ? "attn_v.bias"
                                                                   : nullptr) {
            return err(src, ": tensor '", blk(l, b), "' is a bias, but the configuration says the Q/K/V projections ",
                       "have none (attn_qkv_bias)");
        }
        EDGE_TRY(need(blk(l, "attn_output.weight"), {D, int64_t(c.q_dim())}));
        EDGE_TRY(need(blk(l, "ffn_norm.weight"), {D}));
        EDGE_TRY(need(blk(l, "ffn_gate.weight"), {F, D}));
        EDGE_TRY(need(blk(l, "ffn_up.weight"), {F, D}));
        EDGE_TRY(need(blk(l, "ffn_down.weight"), {D, F}));
    }
    for (const auto& t : m.tensors) {
        // Weight matrices may be held as stored (F16, BF16, EdgeStudio's QI8/QI4 with their layout,
        // ggml blocks as a GGUF keeps them: model::runs_as_stored); norms and the rest are F32.
        const bool matrix = t.shape.size() == 2;
        const bool blocks =
            dtype_block_elems(t.type) > 1 && model::runs_as_stored(t.type) && t.cols() % dtype_block_elems(t.type) == 0;
        const bool stored_ok = t.type == DType::F32 ||
                               (matrix && (t.type == DType::F16 || t.type == DType::BF16 || blocks)) ||
                               (matrix && (t.type == DType::QI8 || t.type == DType::QI4) && t.quant);
        if (!stored_ok)
            return err(src, ": tensor '", t.name, "' is held as ", dtype_name(t.type),
                       "; the CPU executor needs F32 (F16, BF16, QI8, QI4 or ggml blocks for weight matrices)");
        if (!t.data && !m.weights) return err(src, ": tensor '", t.name, "' has no data");
    }
    return {};
}

void finalize_llama(Model& m) { m.graph = build_llama_graph(m.config); }

Status validate_and_finalize_llama(Model& m) {
    EDGE_TRY(validate_llama(m));
    finalize_llama(m);
    return {};
}

int block_of(const std::string& name) {
    if (name.rfind("blk.", 0) != 0) return -1;
    char* end = nullptr;
    const long l = std::strtol(name.c_str() + 4, &end, 10);
    return end && *end == '.' ? int(l) : -1;
}

uint64_t largest_block_f32_bytes(const Model& m) {
    std::map<int, uint64_t> per_block;
    for (const Tensor& t : m.tensors)
        if (const int b = block_of(t.name); b >= 0) per_block[b] += uint64_t(t.numel()) * sizeof(float);
    uint64_t most = 0;
    for (const auto& [b, bytes] : per_block) most = std::max(most, bytes);
    return most;
}

std::vector<LayerInfo> list_layers(const Model& m) {
    std::vector<LayerInfo> out;
    std::set<std::string> seen;
    for (const Op& op : m.graph.ops) {
        if (op.type != OpType::Linear && op.type != OpType::Conv2d && op.type != OpType::MatMul) continue;
        if (op.weights.empty()) continue;
        const Tensor* t = m.find(op.weights[0]);
        if (!t) continue;
        LayerInfo li;
        li.name = op.name;
        li.tensor = t->name;
        const auto dot = op.name.rfind('.');
        li.kind = dot == std::string::npos ? op.name : op.name.substr(dot + 1);
        if (op.name.rfind("blk.", 0) == 0) li.block = std::stoi(op.name.substr(4));
        li.shape = t->shape;
        li.params = t->numel();
        li.bytes = t->nbytes;
        li.type = t->type;
        li.source_type = t->source_type;
        out.push_back(std::move(li));
    }
    return out;
}

}  // namespace edge::model
