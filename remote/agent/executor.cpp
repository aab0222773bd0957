// The file half of the executor seam (executor.h): tells a compiled engine from other model files,
// reads it, and builds the executor (backend_executor.cpp for .edge, LlamaCpu for the rest).
#include "remote/agent/executor.h"

#include <fstream>

#include "engine/model/edge_file.h"
#include "engine/model/loader.h"
#include "engine/runtime/exec_program.h"
#include "engine/runtime/llama_cpu.h"

namespace edge::agent {
namespace {

// Any model format but .edge: the FP32 reference executor.
class LlamaCpuExecutor final : public Executor {
public:
    static Result<std::unique_ptr<Executor>> open(const std::string& path, const ExecutorOptions& o) {
        LoadOptions lo;
        lo.tokenizer_path = o.tokenizer_path;
        auto m = load_model(path, lo);
        if (!m.ok()) return m.error();
        auto e = std::unique_ptr<LlamaCpuExecutor>(new LlamaCpuExecutor);
        e->model_ = std::make_shared<const Model>(std::move(m).value());
        auto exe = LlamaCpu::create(e->model_, RuntimeOptions{o.threads, o.max_seq});
        if (!exe.ok()) return err(path, ": ", exe.message());
        e->exe_ = std::move(exe).value();
        return std::unique_ptr<Executor>(std::move(e));
    }
    Result<const float*> run(const int32_t* tokens, int n, int pos) override {
        if (n <= 0) return err("llama-cpu: nothing to run (", n, " tokens)");
        if (pos < 0 || pos + n > exe_->max_seq())
            return err("llama-cpu: positions ", pos, "..", pos + n - 1, " run past the KV cache (", exe_->max_seq(),
                       " positions)");
        return n == 1 ? exe_->forward(tokens[0], pos) : exe_->prefill(tokens, n, pos);
    }
    const LlamaConfig& config() const override { return exe_->config(); }
    int max_seq() const override { return exe_->max_seq(); }
    std::string backend() const override {
        return "llama-cpu (FP32 reference executor, " + thread_count(exe_->threads()) + ")";
    }
    std::string memory_summary() const override {
        return "weights " + format_bytes(model_->weight_bytes()) + ", KV " + format_bytes(exe_->kv_cache_bytes());
    }
    runtime::Executor* batch() override { return exe_.get(); }

private:
    LlamaCpuExecutor() = default;
    std::unique_ptr<LlamaCpu> exe_;
};

}  // namespace

bool is_compiled_engine(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    uint8_t head[sizeof kEdgeMagic] = {};
    in.read(reinterpret_cast<char*>(head), sizeof head);
    return is_edge_file(head, size_t(in.gcount()));
}

Result<std::unique_ptr<Executor>> open_executor(const std::string& path, const ExecutorOptions& opts) {
    if (!is_compiled_engine(path)) return LlamaCpuExecutor::open(path, opts);
    auto f = read_edge_file(path);
    if (!f.ok()) return f.error();
    auto plan = runtime::exec_program_from_json(f->program_json, path);
    if (!plan.ok()) return plan.error();
    return make_backend_executor(std::make_shared<const Model>(std::move(f->model)), plan.value(), opts, path);
}

}  // namespace edge::agent
