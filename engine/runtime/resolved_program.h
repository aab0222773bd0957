// An execution plan resolved for a backend: every fused node of a .edge plan turned into a step
// with its weights (Tensor pointers into the model), arena offsets of its inputs and outputs in
// both memory plans (decode, prefill) and the widths of the rows it reads and writes. Resolving
// once at load keeps names and lookups out of the token loop; CPU and CUDA share it.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/runtime/exec_program.h"

namespace edge::runtime {

enum class StepKind { Embedding, RMSNorm, MatMul, GateUpSwiglu, Rope, Attention, Swiglu, Add };

// One value in the arena: its offset under the decode plan [0] and the prefill plan [1] and the
// floats per token (row width).
struct ValueRef {
    std::array<size_t, 2> off{};
    int width = 0;
};

struct Step {
    StepKind kind = StepKind::Add;
    std::string name;
    int layer = -1;  // attention: which layer's KV cache
    std::vector<ValueRef> in, out;
    std::vector<const Tensor*> weights;  // MatMul: one per output; GateUpSwiglu: gate, up
    std::vector<const Tensor*> biases;   // MatMul: one per output, null where the weight has none
                                         // (F32 [rows]: the model's <name>.bias beside <name>.weight)
    const Tensor* norm = nullptr;        // RMSNorm weight, or the matmul's RMSNorm prologue weight
    bool prologue_rmsnorm = false;
    bool epilogue_residual = false;
    ValueRef residual;           // epilogue input
    ValueRef scores;             // attention score scratch (width = n_heads x the plan's max_seq;
                                 // wide_rows rows)
    bool writes_logits = false;  // the output head: one weight, no epilogue, its output (the
                                 // logits) holds wide_rows rows; the backends run it on the rows
                                 // whose logits are wanted, wide_rows at a time
};

struct ResolvedProgram {
    std::vector<Step> steps;
    std::array<int, 2> batch{1, 1};      // rows each memory plan was sized for
    std::array<int, 2> wide_rows{1, 1};  // rows of its logits and score scratch (<= batch)
    std::array<size_t, 2> arena{};       // arena bytes of each plan
    size_t arena_bytes = 0;              // max of the two: the one arena
    int max_in_width = 0;                // widest matmul input (prologue scratch)
    int max_ffn = 0;                     // widest gate/up output (up scratch)
    int logits_width = 0;
};

// Errors name the node and the value or tensor that is missing or inconsistent.
Result<ResolvedProgram> resolve_program(const model::Model& m, const runtime::ExecProgram& plan, int max_seq);

// What every backend's load() starts from: the model checked (validate_llama), the longest
// sequence (requested_max_seq when > 0, else the model's context capped at 4096 and by the plan's
// attention scratch) and the program resolved against the model's tensors. Errors name the file.
struct BackendProgram {
    int max_seq = 0;
    ResolvedProgram program;
};
Result<BackendProgram> resolve_for_backend(const model::Model& m, const runtime::ExecProgram& plan,
                                           int requested_max_seq);

}  // namespace edge::runtime
