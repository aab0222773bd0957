// The CPU backend: interprets a .edge execution plan node by node. Every intermediate lives in ONE
// arena at the offsets of the plan's memory planner (decode plan for one token, prefill plan for
// a batch); weights are read in place (from the memory-mapped .edge file when the model came
// from one); the K/V live in a kv::PagedKv (the caller's for step(), its own for run()). Kernels: the runtime's
// FP32 kernels (kernels.h) and the quantized matmuls (qkernels.h), so the numbers are the
// reference executor's (LlamaCpu) numbers.
//
// It is a runtime::Executor (engine/runtime/executor.h): step() runs a batch of sequences through
// the program, reading and writing K/V through the block tables of the PagedKv it is given;
// Backend::run() is that step on one sequence of its own (runtime::OwnSequence).
#pragma once
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/one_sequence.h"
#include "engine/runtime/resolved_program.h"

namespace edge::runtime {

class CpuBackend final : public Backend {
public:
    CpuBackend() = default;
    std::string name() const override { return "cpu"; }
    Result<void*> allocate(size_t bytes) override;
    void release(void* p) override;
    Status upload(void* dst, const void* host_src, size_t bytes) override;
    Status download(void* host_dst, const void* src, size_t bytes) override;
    Status load(std::shared_ptr<const model::Model> model, const runtime::ExecProgram& plan,
                const BackendOptions& opts) override;
    Result<const float*> run(const int32_t* tokens, int n, int pos, float* all_logits = nullptr) override;
    Status synchronize() override { return {}; }
    BackendMemory memory() const override;
    const model::LlamaConfig& config() const override { return cfg_; }
    int max_seq() const override { return max_seq_; }
    const ResolvedProgram& resolved() const { return plan_; }

    // runtime::Executor
    Result<const float*> step(kv::PagedKv& kv, std::span<const runtime::PagedStep> batch) override;
    runtime::ExecutorCaps capabilities() const override;
    runtime::ExecutorMemory held_memory() const override;

private:
    std::shared_ptr<const model::Model> model_;
    model::LlamaConfig cfg_;
    ResolvedProgram plan_;
    int max_seq_ = 0;
    std::unique_ptr<ThreadPool> pool_;
    std::shared_ptr<uint8_t> arena_;
    runtime::OwnSequence own_;  // run()'s one sequence, through step()
    std::vector<float> rope_cos_, rope_sin_, norm_scratch_, up_scratch_, logits_;

    std::vector<float> step_logits_;  // step(): [batch][vocab]

    // The rows one pass of the program runs: their tokens and positions, and which rows' logits
    // go where.
    struct Rows {
        const int32_t* tokens = nullptr;
        const int* pos = nullptr;
        int n = 0;
        std::span<const std::pair<int, float*>> logits;
    };
    struct PagedAccess;  // a caller's PagedKv, through block tables (step)
    Status run_rows(const Rows& r, PagedAccess& kv);
    void run_head(const Step& s, const float* in, float* logits, int W, std::span<const std::pair<int, float*>> want);
};

}  // namespace edge::runtime
