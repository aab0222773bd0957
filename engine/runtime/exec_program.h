// The execution program stored in a .edge file (its "plan" section): the op list of
// build_llama_graph grouped into fused nodes (engine/compile/fusion.cpp), and one arena memory
// layout per batch shape (engine/compile/memory_plan.cpp). The runtime reads it; the compiler
// writes it (engine/compile/passes.h).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::runtime {

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

struct MemoryLayout {
    int batch = 1;
    // Rows of the two buffers that grow with both the batch and a model-wide length: the logits
    // (vocab floats a row) and each attention node's score scratch (n_heads x max_seq floats a
    // row). The backends run the output head and attention in pieces of this many rows, so a
    // 512-token prefill plan does not hold 512 rows of logits. <= batch; files written before it
    // existed read as batch.
    int wide_rows = 1;
    std::vector<Buffer> buffers;
    size_t arena_bytes = 0;      // size of the one arena
    size_t naive_bytes = 0;      // every intermediate in its own allocation
    size_t peak_live_bytes = 0;  // largest sum of simultaneously live buffers (a lower bound)
};

struct ExecProgram {
    int ops_before = 0;  // IR ops before fusion
    std::vector<FusedNode> nodes;
    MemoryLayout decode;   // batch 1
    MemoryLayout prefill;  // batch = CompileOptions::prefill_batch
};

// JSON text of the program section and back (exec_program_json.cpp)
std::string exec_program_to_json(const ExecProgram& p);
Result<ExecProgram> exec_program_from_json(const std::string& text, const std::string& where);

}  // namespace edge::runtime
