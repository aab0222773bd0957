// Compiler passes that build an ExecProgram (engine/runtime/exec_program.h) from the IR graph.
#pragma once
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/runtime/exec_program.h"

namespace edge::compile {

using runtime::Buffer;
using runtime::exec_program_from_json;
using runtime::exec_program_to_json;
using runtime::ExecProgram;
using runtime::FusedNode;
using runtime::MemoryLayout;

// Fusion passes (fusion.cpp), each IR -> fused nodes; fuse() runs all in order: QKV (and any
// run of matmuls reading the same input), gate+up with SwiGLU, residual-add epilogues, RMSNorm
// prologues.
std::vector<FusedNode> unfused_nodes(const model::Graph& g);
void fuse_parallel_matmuls(std::vector<FusedNode>& nodes);
void fuse_gate_up_swiglu(std::vector<FusedNode>& nodes);
void fuse_residual_epilogues(std::vector<FusedNode>& nodes, const model::Graph& g);
void fuse_rmsnorm_prologues(std::vector<FusedNode>& nodes, const model::Graph& g);
std::vector<FusedNode> fuse(const model::Graph& g);

// Rows of the logits and of the attention score scratch in a prefill plan (MemoryLayout::wide_rows):
// the backends run the head and attention in pieces of this many rows.
inline constexpr int kWideRows = 64;

// Liveness + greedy-by-size offset assignment (memory_plan.cpp). max_seq sizes the attention
// score scratch; the logits and that scratch hold min(batch, wide_rows) rows. Errors name a
// value whose size the planner does not know.
Result<MemoryLayout> plan_memory(const std::vector<FusedNode>& nodes, const model::Graph& g,
                                 const model::LlamaConfig& cfg, int batch, int max_seq, int wide_rows = kWideRows);
// True when two buffers with overlapping lifetimes share arena bytes (used by tests).
bool layout_has_overlap(const MemoryLayout& p, std::string* why = nullptr);

}  // namespace edge::compile
