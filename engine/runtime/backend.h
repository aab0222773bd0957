// One backend interface for running a compiled engine (.edge): allocate, upload, run a plan,
// synchronise, report memory. Implemented by the CPU backend (cpu_backend.h, plan interpreter
// over one arena) and the CUDA backend (cuda/cuda_backend.h, built when nvcc is present).
// docs/backends.md describes both, the arena and the KV block-table layout.
//
// The plan types come from engine/runtime/exec_program.h (plain structs, header only): the runtime
// never links the compiler; load_engine() (engine/compile) parses the plan section and hands it
// here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/runtime/exec_program.h"
#include "engine/runtime/executor.h"

namespace edge::runtime {

// KV cache layout shared by every backend (and by engine/kv when it plugs in): per layer, a pool
// of blocks of kKvBlock positions; one block holds K as [kKvBlock][kv_dim] floats, V likewise in
// a second pool with the same block numbering. A sequence's block table is int32 [max_seq / 16
// rounded up]: position p lives in block table[p / 16], row p % 16. The backends own one sequence
// today and fill the table with the identity (block i = i).
inline constexpr int kKvBlock = 16;

struct BackendOptions {
    int threads = 0;  // CPU: worker threads (<= 0: all hardware threads)
    int max_seq = 0;  // KV length; <= 0: the model's context (capped at 4096 and at what the plan was sized for)
};

struct BackendMemory {
    size_t weight_bytes = 0;                   // weights held by the backend (CUDA: uploaded to the device)
    size_t mapped_weight_bytes = 0;            // weights read in place from the host mapping (CPU)
    size_t arena_bytes = 0;                    // the one arena of intermediates (max of decode and prefill plans)
    size_t kv_bytes = 0;                       // K and V block pools
    size_t scratch_bytes = 0;                  // outside the arena: RoPE tables, normalised prologue rows, logits
    size_t device_total = 0, device_free = 0;  // CUDA only (cudaMemGetInfo)
    size_t total() const { return weight_bytes + arena_bytes + kv_bytes + scratch_bytes; }
};

// A backend is a runtime::Executor (step() over a caller's PagedKv, capabilities, held memory)
// that runs a compiled engine's program, plus what loading that program takes.
class Backend : public runtime::Executor {
public:
    virtual std::string name() const = 0;  // "cpu" or "cuda (<device>)"

    // Raw memory of the backend (host memory for the CPU, device memory for CUDA), 256-byte
    // aligned; release() frees what allocate() returned.
    virtual Result<void*> allocate(size_t bytes) = 0;
    virtual void release(void* p) = 0;
    virtual Status upload(void* dst, const void* host_src, size_t bytes) = 0;
    virtual Status download(void* host_dst, const void* src, size_t bytes) = 0;

    // Binds a model and its execution plan: weights (uploaded, or read in place), the arena sized
    // by the plan's memory planner, the KV cache. The model must outlive the backend.
    virtual Status load(std::shared_ptr<const model::Model> model, const runtime::ExecProgram& plan,
                        const BackendOptions& opts) = 0;
    // Runs n tokens at positions pos..pos+n-1 (prefill in chunks of the prefill plan's batch,
    // decode with the batch-1 plan). Returns host logits of the last token, valid until the next
    // call; all_logits (host, n*vocab) receives every token's logits when not null.
    virtual Result<const float*> run(const int32_t* tokens, int n, int pos, float* all_logits = nullptr) = 0;
    virtual Status synchronize() = 0;
    virtual BackendMemory memory() const = 0;
    virtual int max_seq() const = 0;
};

std::unique_ptr<Backend> make_cpu_backend();

// kind: "cpu", "cuda" or "auto" (CUDA when a device answered, else the CPU). When auto falls back
// to the CPU, *why (if given) says why; asking for "cuda" without a usable device is an error
// carrying the probe's reason.
Result<std::unique_ptr<Backend>> make_backend(const std::string& kind, std::string* why = nullptr);

// Largest KV length a plan was sized for (its attention score scratch), 0 when it has none.
int plan_max_seq(const runtime::ExecProgram& plan, const model::LlamaConfig& cfg);

// The run() loop every backend shares: checks n and the positions against max_seq (errors start
// with `who`, e.g. "cpu backend"), then calls chunk(tokens, m, pos, logits) on consecutive pieces
// of at most max(1, chunk_tokens) tokens; logits points into all_logits (or is null).
using ChunkRunner = std::function<Status(const int32_t* tokens, int n, int pos, float* all_logits)>;
Status run_in_chunks(const char* who, const int32_t* tokens, int n, int pos, int max_seq, int chunk_tokens, int vocab,
                     float* all_logits, const ChunkRunner& chunk);

}  // namespace edge::runtime
