// The runtime's one executor interface for language models: run a batch step.
//
// A step is a set of sequences, each with its new tokens (a prefill chunk, or one decode token)
// and a block table into the KV memory the caller gives it (engine/kv PagedKv: blocks of every
// layer, prefix sharing, the caller's eviction). The executor appends each sequence's tokens,
// writes their K/V rows through the block table, attends each token to its own sequence only and
// returns the logits of each sequence's last new token, or of every new token of a sequence that
// asks for them (PagedStep::all_logits: perplexity, validation, calibration). Nothing else about
// the KV memory is mutated, and an error leaves it as it was.
//
// The scheduler (engine/sched), serve-bench and the tests run every implementation through this
// interface; tests/engine/runtime/test_executor_table.cpp cross-checks each one against the CPU
// reference on one table of steps (ggml's test-backend-ops is the model). What an
// implementation can run is in its capabilities, not in the caller's knowledge of its type.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::kv {
class PagedKv;
}

namespace edge::runtime {

// One sequence's share of a batch step: its next tokens. Positions continue from the sequence's
// current length in the KV memory (0 for a sequence the memory has not seen).
struct PagedStep {
    int32_t seq = 0;
    std::span<const int32_t> tokens;
    bool all_logits = false;  // every new token's logits in the result, not only the last's
};

struct ExecutorCaps {
    std::string name;                 // "cpu (FP32 reference arithmetic, avx512-vnni kernels, 2 threads)"
    std::vector<DType> stored_types;  // weight types it runs as stored (others are refused at create)
    int max_seq = 0;                  // longest sequence (positions) a step may reach
    int max_batch_tokens = 0;         // most new tokens in one step (0: no limit but memory)
    size_t device_memory_bytes = 0;   // memory of the device it runs on (0: host memory)
    bool batch_invariant = true;      // a row's logits do not depend on what else is in the batch
    // The K/V rows live in the executor's device memory (CUDA), indexed by the PagedKv's block
    // ids: the PagedKv given to step() keeps the books (tables, sharing, eviction) and need not
    // store data; nothing outside the executor can read or restore rows (no host swap tier).
    bool kv_on_device = false;
};

// Memory an executor holds besides the caller's KV memory, for load reports and telemetry.
struct ExecutorMemory {
    size_t weight_bytes = 0;                   // weights it holds (CUDA: uploaded to the device)
    size_t mapped_weight_bytes = 0;            // weights read in place from the host mapping of the file
    size_t scratch_bytes = 0;                  // arena of intermediates, tables, logits
    size_t kv_bytes = 0;                       // K/V it holds itself (CUDA: the device pool behind the block ids)
    size_t device_total = 0, device_free = 0;  // CUDA only (cudaMemGetInfo)
};

class Executor {
public:
    virtual ~Executor() = default;
    // Runs one batch step (see the top of this file). Returns the logits, valid until the next
    // call: per sequence in batch order, tokens.size() rows when it asked for all_logits, else
    // one row (BatchLayout::out_first says where each sequence's rows start). Errors (a sequence twice, a position past max_seq, a KV memory of the
    // wrong shape or out of blocks) name the sequence and leave `kv` unchanged.
    virtual Result<const float*> step(kv::PagedKv& kv, std::span<const PagedStep> batch) = 0;
    virtual const model::LlamaConfig& config() const = 0;
    virtual ExecutorCaps capabilities() const = 0;
    virtual ExecutorMemory held_memory() const = 0;
};

// "weights 1.2 MiB mapped in place, scratch 300.0 KiB, KV 0.0 KiB, device 1.1 GiB used of 140.0 GiB".
std::string describe_memory(const ExecutorMemory& m);
// What the CPU implementations' capabilities name: "avx512-vnni kernels, 2 threads".
std::string cpu_kernels_and_threads(int threads);

// The rows of a batch step, flattened in batch order, and the checks every implementation makes
// before it changes anything: the KV memory's shape matches the model, no sequence is empty or
// twice in the batch, no position passes max_seq, and the free blocks cover the step's demand.
// Errors start with `who` ("cpu", "cuda") and name the sequence.
struct BatchLayout {
    std::vector<int> start;      // per sequence: its length before the step (first new position)
    std::vector<int> first;      // per sequence: index of its first row
    std::vector<int> row_item;   // per row: which sequence of the batch
    std::vector<int> row_pos;    // per row: its position in its sequence
    std::vector<int> out_first;  // per sequence: its first row of logits in the step's result
    int rows = 0;
    int out_rows = 0;  // rows of logits the step returns
    int64_t blocks_needed = 0;
};
// For each row of logits the step returns, in order, the row of the batch it belongs to.
std::vector<int> logit_rows(std::span<const PagedStep> batch, const BatchLayout& L);
Result<BatchLayout> plan_batch(const kv::PagedKv& kv, std::span<const PagedStep> batch, const model::LlamaConfig& c,
                               int max_seq, const char* who);

}  // namespace edge::runtime
