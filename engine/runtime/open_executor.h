// Opening a model as a runtime::Executor the way the board agent runs it: a compiled engine
// (.edge) on the backend --backend asks for (CUDA when a device answered, else the CPU backend),
// any other model file (GGUF, llama2.c .bin, Hugging Face folder, ...) on the CPU executor over
// the weights as imported (LlamaCpu). Either way the caller gets the one interface (executor.h)
// and runs batch steps through a PagedKv it owns.
#pragma once
#include <memory>
#include <string>

#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/runtime/executor.h"

namespace edge::runtime {

struct ExecProgram;

// --backend: which backend runs compiled engines (.edge).
enum class BackendChoice { Auto, Cpu, Cuda };
Result<BackendChoice> parse_backend_choice(const std::string& s);  // auto | cpu | cuda
const char* backend_choice_name(BackendChoice c);

struct OpenOptions {
    int threads = 0;  // CPU threads (<= 0: all)
    int max_seq = 0;  // longest sequence (<= 0: the model's context, capped by the runtime or the plan)
    BackendChoice backend = BackendChoice::Auto;
    std::string tokenizer_path;  // for formats that do not embed one (llama2.c .bin)
};

struct OpenedExecutor {
    std::shared_ptr<const model::Model> model;  // what exe runs (it must not outlive this)
    std::unique_ptr<Executor> exe;
    // What runs the model, as the load ack, the log and the metrics say it: the executor's
    // capabilities name, plus why it is not CUDA when auto fell back or --backend cpu forced it:
    // "cpu (compiled program, avx512-vnni kernels, 2 threads); CUDA not used: cudaGetDeviceCount
    // returned 100", "cuda (NVIDIA H200)".
    std::string label;
};

// True when `path` is a compiled engine (.edge, told by its magic).
bool is_compiled_engine(const std::string& path);

// Loads `path` and builds its executor (open_executor.cpp).
Result<OpenedExecutor> open_executor(const std::string& path, const OpenOptions& opts);

// A compiled model and its execution plan, already in memory, on the backend opts.backend asks
// for: auto falls back to the CPU and the label says why; cuda without a device is an error
// naming `where` and the probe's reason (engine_executor.cpp: runtime only, no file readers, so
// the standalone GPU check in tests/gpu builds it too).
Result<OpenedExecutor> make_engine_executor(std::shared_ptr<const model::Model> model, const ExecProgram& plan,
                                            const OpenOptions& opts, const std::string& where);

// What an agent's hello says before anything is loaded: the backend .edge engines will run on
// (and why not CUDA), and the executor of other formats.
std::string describe_backends(BackendChoice choice);

}  // namespace edge::runtime
