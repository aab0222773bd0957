// The execution plan stored in a .edge file: the op list of build_llama_graph grouped into fused
// nodes (fusion.cpp), and one arena memory plan per batch shape (memory_plan.cpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::compile {

// One node of the fused graph: a group of IR ops run as one kernel.
//   kind: embedding, rmsnorm, linear, qkv_matmul, concat_matmul, gate_up_swiglu, rope,
//         attention, swiglu, add (and the IR op name, lowercase, for anything else)
//   prologue: "rmsnorm" when the input is normalised while the matmul reads it (weight in
//             prologue_weight); epilogue: "residual_add" when the output is added to
//             epilogue_input before it is stored. Quantized weights are always dequantized
//             inside the matmul (no separate dequantize node ever exists).
struct FusedNode {
    std::string kind;
    std::string name;
    std::vector<int> ops;  // indices into Graph::ops: the fusion group
    std::vector<std::string> inputs, outputs, weights;
    std::string prologue, prologue_weight;
    std::string epilogue, epilogue_input;
};

// One intermediate tensor with its lifetime (node indices, inclusive) and arena offset.
struct Buffer {
    std::string name;
    size_t bytes = 0;  // rounded up to 64
    int first = 0, last = 0;
    size_t offset = 0;
};

struct MemoryPlan {
    int batch = 1;
    std::vector<Buffer> buffers;
    size_t arena_bytes = 0;      // size of the one arena
    size_t naive_bytes = 0;      // every intermediate in its own allocation
    size_t peak_live_bytes = 0;  // largest sum of simultaneously live buffers (a lower bound)
};

struct ExecPlan {
    int ops_before = 0;  // IR ops before fusion
    std::vector<FusedNode> nodes;
    MemoryPlan decode;   // batch 1
    MemoryPlan prefill;  // batch = CompileOptions::prefill_batch
};

// Fusion passes (fusion.cpp), each IR -> fused nodes; fuse() runs all in order: QKV (and any
// run of matmuls reading the same input), gate+up with SwiGLU, residual-add epilogues, RMSNorm
// prologues.
std::vector<FusedNode> unfused_nodes(const Graph& g);
void fuse_parallel_matmuls(std::vector<FusedNode>& nodes);
void fuse_gate_up_swiglu(std::vector<FusedNode>& nodes);
void fuse_residual_epilogues(std::vector<FusedNode>& nodes, const Graph& g);
void fuse_rmsnorm_prologues(std::vector<FusedNode>& nodes, const Graph& g);
std::vector<FusedNode> fuse(const Graph& g);

// Liveness + greedy-by-size offset assignment (memory_plan.cpp). max_seq sizes the attention
// score scratch. Errors name a value whose size the planner does not know.
Result<MemoryPlan> plan_memory(const std::vector<FusedNode>& nodes, const Graph& g, const LlamaConfig& cfg, int batch,
                               int max_seq);
// True when two buffers with overlapping lifetimes share arena bytes (used by tests).
bool plan_has_overlap(const MemoryPlan& p, std::string* why = nullptr);

// JSON text of the plan section and back (exec_plan_json.cpp).
std::string exec_plan_to_json(const ExecPlan& p);
Result<ExecPlan> exec_plan_from_json(const std::string& text, const std::string& where);

}  // namespace edge::compile
