#include "remote/agent/executor.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include "engine/compile/exec_plan.h"
#include "engine/model/edge_file.h"
#include "engine/model/loader.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/device.h"
#include "engine/runtime/llama_cpu.h"
#include "engine/runtime/qkernels.h"

namespace edge::agent {
namespace {

std::string mib(size_t bytes) {
    char buf[32];
    if (bytes < (1u << 20))
        std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
    else
        std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return buf;
}

int resolved_threads(int threads) {
    return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}

std::string cpu_backend_label(int threads) {
    return std::string("cpu (") + qkernels::kernel_name() + " kernels, " + std::to_string(threads) + " threads)";
}

// make_backend's note when auto fell back starts with this; the ack says it as "CUDA not used: ...".
constexpr const char* kFallbackPrefix = "using the CPU backend: ";

std::string fallback_reason(const std::string& why) {
    const std::string p = kFallbackPrefix;
    return why.rfind(p, 0) == 0 ? why.substr(p.size()) : why;
}

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
            return err("llama-cpu: positions ", pos, "..", pos + n - 1, " run past the KV cache (", exe_->max_seq(), " positions)");
        return n == 1 ? exe_->forward(tokens[0], pos) : exe_->prefill(tokens, n, pos);
    }
    const LlamaConfig& config() const override { return exe_->config(); }
    int max_seq() const override { return exe_->max_seq(); }
    std::string backend() const override {
        return "llama-cpu (FP32 reference executor, " + std::to_string(exe_->threads()) + " threads)";
    }
    std::string memory_summary() const override {
        return "weights " + mib(model_->weight_bytes()) + ", KV " + mib(exe_->kv_cache_bytes());
    }

private:
    LlamaCpuExecutor() = default;
    std::unique_ptr<LlamaCpu> exe_;
};

// A compiled engine through the Backend interface.
class BackendExecutor final : public Executor {
public:
    static Result<std::unique_ptr<Executor>> open(const std::string& path, const ExecutorOptions& o) {
        auto f = read_edge_file(path);
        if (!f.ok()) return f.error();
        auto plan = compile::exec_plan_from_json(f->plan_json, path);
        if (!plan.ok()) return plan.error();
        std::string why;
        auto be = make_backend(backend_choice_name(o.backend), &why);
        if (!be.ok())
            return err(path, ": ", be.message(), " (--backend ", backend_choice_name(o.backend),
                       "; start the agent with --backend auto or cpu to run on the CPU)");
        auto e = std::unique_ptr<BackendExecutor>(new BackendExecutor);
        e->model_ = std::make_shared<const Model>(std::move(f->model));
        e->be_ = std::move(be).value();
        if (auto st = e->be_->load(e->model_, *plan, BackendOptions{o.threads, o.max_seq}); !st.ok())
            return err(path, ": ", e->be_->name(), " backend: ", st.message());
        const bool cpu = e->be_->name() == "cpu";
        e->label_ = cpu ? cpu_backend_label(resolved_threads(o.threads)) : e->be_->name();
        if (cpu && o.backend == BackendChoice::Cpu) e->label_ += "; forced by --backend cpu";
        if (cpu && o.backend == BackendChoice::Auto) e->label_ += "; CUDA not used: " + fallback_reason(why);
        return std::unique_ptr<Executor>(std::move(e));
    }
    Result<const float*> run(const int32_t* tokens, int n, int pos) override { return be_->run(tokens, n, pos); }
    const LlamaConfig& config() const override { return be_->config(); }
    int max_seq() const override { return be_->max_seq(); }
    std::string backend() const override { return label_; }
    std::string memory_summary() const override {
        const BackendMemory m = be_->memory();
        std::string s = "weights " + mib(m.weight_bytes ? m.weight_bytes : m.mapped_weight_bytes) +
                        (m.weight_bytes ? " on the device" : " mapped in place") + ", arena " + mib(m.arena_bytes) +
                        ", KV " + mib(m.kv_bytes) + ", scratch " + mib(m.scratch_bytes);
        if (m.device_total) s += ", device " + mib(m.device_total - m.device_free) + " used of " + mib(m.device_total);
        return s;
    }
    std::optional<DeviceMemory> device_memory() const override {
        const BackendMemory m = be_->memory();
        if (m.device_total == 0) return std::nullopt;
        return DeviceMemory{m.device_total - m.device_free, m.device_total};
    }

private:
    BackendExecutor() = default;
    std::unique_ptr<Backend> be_;
    std::string label_;
};

}  // namespace

Result<BackendChoice> parse_backend_choice(const std::string& s) {
    if (s == "auto") return BackendChoice::Auto;
    if (s == "cpu") return BackendChoice::Cpu;
    if (s == "cuda") return BackendChoice::Cuda;
    return err("unknown backend '", s, "' (expected auto, cpu or cuda)");
}

const char* backend_choice_name(BackendChoice c) {
    switch (c) {
        case BackendChoice::Cpu: return "cpu";
        case BackendChoice::Cuda: return "cuda";
        case BackendChoice::Auto: break;
    }
    return "auto";
}

bool is_compiled_engine(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    uint8_t head[sizeof kEdgeMagic] = {};
    in.read(reinterpret_cast<char*>(head), sizeof head);
    return is_edge_file(head, size_t(in.gcount()));
}

Result<std::unique_ptr<Executor>> open_executor(const std::string& path, const ExecutorOptions& opts) {
    if (is_compiled_engine(path)) return BackendExecutor::open(path, opts);
    return LlamaCpuExecutor::open(path, opts);
}

std::string describe_backends(BackendChoice choice) {
    const DeviceReport d = probe_devices();
    const std::string cpu = std::string("cpu (") + qkernels::kernel_name() + " kernels)";
    const std::string reason = d.reason.empty() ? std::string("no usable CUDA device") : d.reason;
    std::string s;
    if (choice == BackendChoice::Cpu)
        s = cpu + " for .edge engines (forced by --backend cpu" + (d.cuda_usable ? "; CUDA " + d.cuda_name + " present" : "") + ")";
    else if (d.cuda_usable && d.cuda_built)
        s = "cuda (" + d.cuda_name + ") for .edge engines";
    else if (choice == BackendChoice::Cuda)
        s = "none for .edge engines: --backend cuda, but " + reason + " (loads of .edge files fail)";
    else
        s = cpu + " for .edge engines; CUDA not used: " + reason;
    return s + "; llama-cpu (FP32 reference executor) for other formats";
}

}  // namespace edge::agent
