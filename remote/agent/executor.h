// The worker's one seam over the two ways the agent runs a model, so that its token loop
// (Worker::run) is written once:
//   - a compiled engine (.edge) runs through the Backend interface (engine/runtime/backend.h):
//     CUDA when a device answered, else the CPU backend, or the one forced with --backend;
//   - any other model file (GGUF, llama2.c .bin, Hugging Face folder, ...) runs on the FP32
//     reference executor (LlamaCpu).
// Both take tokens at a start position, so a prompt prefix already in the KV cache is reused by
// running only the rest at pos > 0.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::runtime {
struct ExecProgram;
class Executor;
}  // namespace edge::runtime

namespace edge::agent {

// --backend: which backend runs compiled engines (.edge).
enum class BackendChoice { Auto, Cpu, Cuda };
Result<BackendChoice> parse_backend_choice(const std::string& s);  // auto | cpu | cuda
const char* backend_choice_name(BackendChoice c);

struct ExecutorOptions {
    int threads = 0;  // CPU threads (<= 0: all)
    int max_seq = 0;  // KV length (<= 0: the model's context, capped by the runtime or the plan)
    BackendChoice backend = BackendChoice::Auto;
    std::string tokenizer_path;  // for formats that do not embed one (llama2.c .bin)
};

// Device memory of a CUDA backend (cudaMemGetInfo); absent on the CPU.
struct DeviceMemory {
    uint64_t used_bytes = 0, total_bytes = 0;
};

class Executor {
public:
    virtual ~Executor() = default;
    // Runs n >= 1 tokens at positions pos..pos+n-1 and returns the logits [vocab] of the last one,
    // valid until the next call. Positions before pos must hold the K/V of earlier calls.
    virtual Result<const float*> run(const int32_t* tokens, int n, int pos) = 0;
    virtual const LlamaConfig& config() const = 0;
    virtual int max_seq() const = 0;
    // What runs the model, as the load ack, the log and the metrics say it: e.g.
    // "llama-cpu (FP32 reference executor, 2 threads)", "cpu (avx512-vnni kernels, 2 threads);
    // CUDA not used: cudaGetDeviceCount returned 100" or "cuda (NVIDIA H200)".
    virtual std::string backend() const = 0;
    // Memory the executor holds, for the load ack ("weights 1.2 MiB mapped, arena ..., KV ...").
    virtual std::string memory_summary() const = 0;
    virtual std::optional<DeviceMemory> device_memory() const { return std::nullopt; }
    // The runtime executor behind this one when it runs batch steps through a paged KV memory
    // (serve-workload); null when it cannot (the CUDA backend, for now).
    virtual runtime::Executor* batch() { return nullptr; }
    const Model& model() const { return *model_; }

protected:
    std::shared_ptr<const Model> model_;
};

// True when `path` is a compiled engine (.edge, told by its magic).
bool is_compiled_engine(const std::string& path);

// Loads `path` and builds its executor: .edge through make_backend_executor, anything else
// through load_model and LlamaCpu (executor.cpp).
Result<std::unique_ptr<Executor>> open_executor(const std::string& path, const ExecutorOptions& opts);

// A compiled model and its execution plan, already in memory, on the backend opts.backend asks
// for (make_backend): auto falls back to the CPU and backend() says why; cuda without a device is
// an error naming `where` and the probe's reason (backend_executor.cpp: runtime only, so the
// standalone GPU check in tests/gpu builds it too).
Result<std::unique_ptr<Executor>> make_backend_executor(std::shared_ptr<const Model> model,
                                                        const runtime::ExecProgram& plan, const ExecutorOptions& opts,
                                                        const std::string& where);

// What the hello says before anything is loaded: the backend .edge engines will run on (and
// why not CUDA), and the executor of other formats.
std::string describe_backends(BackendChoice choice);

// "36.0 KiB", "1.1 MiB"; "1 thread", "2 threads".
std::string format_bytes(size_t bytes);
std::string thread_count(int n);

}  // namespace edge::agent
