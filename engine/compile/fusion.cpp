// Fusion passes over the Llama graph. Each pass rewrites the node list in place and keeps the
// covered IR op indices, so the plan records every fusion group.
#include <algorithm>
#include <cctype>

#include "engine/compile/passes.h"

using edge::model::Graph;
using edge::model::Op;
using edge::model::op_type_name;

namespace edge::compile {

namespace {

bool is_matmul(const FusedNode& n) {
    return n.kind == "linear" || n.kind == "qkv_matmul" || n.kind == "concat_matmul" || n.kind == "gate_up_swiglu";
}

// How many nodes (other than `self`) read `value`, plus whether the graph outputs it.
int consumers(const std::vector<FusedNode>& nodes, const Graph& g, const std::string& value, size_t self) {
    int n = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (i == self) continue;
        for (const auto& in : nodes[i].inputs) n += in == value;
        n += nodes[i].epilogue_input == value;
    }
    for (const auto& o : g.outputs) n += o == value;
    return n;
}

void absorb(FusedNode& into, const FusedNode& from) {
    into.ops.insert(into.ops.end(), from.ops.begin(), from.ops.end());
    std::sort(into.ops.begin(), into.ops.end());
}

bool ends_with(const std::string& s, const std::string& suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

}  // namespace

std::vector<FusedNode> unfused_nodes(const Graph& g) {
    std::vector<FusedNode> v;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        std::string kind = op_type_name(op.type);
        for (char& c : kind) c = char(std::tolower(static_cast<unsigned char>(c)));
        v.push_back(FusedNode{kind, op.name, {int(i)}, op.inputs, op.outputs, op.weights, {}, {}, {}, {}});
    }
    return v;
}

void fuse_parallel_matmuls(std::vector<FusedNode>& nodes) {
    std::vector<FusedNode> out;
    for (size_t i = 0; i < nodes.size();) {
        size_t j = i + 1;
        if (nodes[i].kind == "linear" && nodes[i].inputs.size() == 1)
            while (j < nodes.size() && nodes[j].kind == "linear" && nodes[j].inputs == nodes[i].inputs) ++j;
        if (j - i < 2) {
            out.push_back(nodes[i++]);
            continue;
        }
        FusedNode f = nodes[i];
        const bool qkv = j - i == 3 && ends_with(nodes[i].name, "attn_q") && ends_with(nodes[i + 1].name, "attn_k") &&
                         ends_with(nodes[i + 2].name, "attn_v");
        f.kind = qkv ? "qkv_matmul" : "concat_matmul";
        if (qkv) f.name = nodes[i].name.substr(0, nodes[i].name.size() - 6) + "attn_qkv";
        for (size_t k = i + 1; k < j; ++k) {
            absorb(f, nodes[k]);
            f.outputs.insert(f.outputs.end(), nodes[k].outputs.begin(), nodes[k].outputs.end());
            f.weights.insert(f.weights.end(), nodes[k].weights.begin(), nodes[k].weights.end());
        }
        out.push_back(std::move(f));
        i = j;
    }
    nodes = std::move(out);
}

void fuse_gate_up_swiglu(std::vector<FusedNode>& nodes) {
    std::vector<FusedNode> out;
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (i + 1 < nodes.size() && nodes[i].kind == "concat_matmul" && nodes[i].outputs.size() == 2 &&
            nodes[i + 1].kind == "swiglu" && nodes[i + 1].inputs == nodes[i].outputs) {
            FusedNode f = nodes[i];
            f.kind = "gate_up_swiglu";
            if (ends_with(f.name, "ffn_gate")) f.name = f.name.substr(0, f.name.size() - 4) + "gate_up";
            absorb(f, nodes[i + 1]);
            f.outputs = nodes[i + 1].outputs;  // gate and up never reach memory
            out.push_back(std::move(f));
            ++i;
            continue;
        }
        out.push_back(nodes[i]);
    }
    nodes = std::move(out);
}

void fuse_residual_epilogues(std::vector<FusedNode>& nodes, const Graph& g) {
    std::vector<FusedNode> out;
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (i + 1 < nodes.size() && nodes[i].kind == "linear" && nodes[i].epilogue.empty() &&
            nodes[i].outputs.size() == 1 && nodes[i + 1].kind == "add" && nodes[i + 1].inputs.size() == 2) {
            const std::string& y = nodes[i].outputs[0];
            const auto& in = nodes[i + 1].inputs;
            const int which = in[0] == y ? 0 : in[1] == y ? 1 : -1;
            if (which >= 0 && in[0] != in[1] && consumers(nodes, g, y, i) == 1) {
                FusedNode f = nodes[i];
                absorb(f, nodes[i + 1]);
                f.epilogue = "residual_add";
                f.epilogue_input = in[1 - which];
                f.outputs = nodes[i + 1].outputs;
                out.push_back(std::move(f));
                ++i;
                continue;
            }
        }
        out.push_back(nodes[i]);
    }
    nodes = std::move(out);
}

void fuse_rmsnorm_prologues(std::vector<FusedNode>& nodes, const Graph& g) {
    std::vector<FusedNode> out;
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (i + 1 < nodes.size() && nodes[i].kind == "rmsnorm" && nodes[i].outputs.size() == 1 &&
            nodes[i].weights.size() == 1 && is_matmul(nodes[i + 1]) && nodes[i + 1].prologue.empty() &&
            nodes[i + 1].inputs.size() == 1 && nodes[i + 1].inputs[0] == nodes[i].outputs[0] &&
            consumers(nodes, g, nodes[i].outputs[0], i) == 1) {
            FusedNode f = nodes[i + 1];
            absorb(f, nodes[i]);
            f.prologue = "rmsnorm";
            f.prologue_weight = nodes[i].weights[0];
            f.inputs = nodes[i].inputs;  // the normalised vector never reaches memory
            out.push_back(std::move(f));
            ++i;
            continue;
        }
        out.push_back(nodes[i]);
    }
    nodes = std::move(out);
}

std::vector<FusedNode> fuse(const Graph& g) {
    std::vector<FusedNode> n = unfused_nodes(g);
    fuse_parallel_matmuls(n);
    fuse_gate_up_swiglu(n);
    fuse_residual_epilogues(n, g);
    fuse_rmsnorm_prologues(n, g);
    return n;
}

}  // namespace edge::compile
