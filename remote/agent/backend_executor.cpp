// The Backend half of the executor seam (executor.h): a compiled model and its plan, already in
// memory, on the backend --backend asks for. Needs only the runtime (no file readers, no JSON), so
// tests/gpu builds it into its standalone GPU check as well.
#include <algorithm>
#include <cstdio>
#include <thread>

#include "engine/runtime/backend.h"
#include "engine/runtime/device.h"
#include "engine/runtime/exec_program.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/qkernels.h"
#include "remote/agent/executor.h"

namespace edge::agent {
namespace {

int resolved_threads(int threads) {
    return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}

// make_backend's note when auto fell back starts with this; the ack says it as "CUDA not used: ...".
std::string fallback_reason(const std::string& why) {
    const std::string p = "using the CPU backend: ";
    return why.rfind(p, 0) == 0 ? why.substr(p.size()) : why;
}

class BackendExecutor final : public Executor {
public:
    // `be` has loaded `model`; `label` is what backend() says.
    BackendExecutor(std::shared_ptr<const Model> model, std::unique_ptr<Backend> be, std::string label)
        : be_(std::move(be)), label_(std::move(label)) {
        model_ = std::move(model);
    }
    Result<const float*> run(const int32_t* tokens, int n, int pos) override { return be_->run(tokens, n, pos); }
    const LlamaConfig& config() const override { return be_->config(); }
    int max_seq() const override { return be_->max_seq(); }
    std::string backend() const override { return label_; }
    std::string memory_summary() const override {
        const BackendMemory m = be_->memory();
        std::string s = "weights " + format_bytes(m.weight_bytes ? m.weight_bytes : m.mapped_weight_bytes) +
                        (m.weight_bytes ? " on the device" : " mapped in place") + ", arena " +
                        format_bytes(m.arena_bytes) + ", KV " + format_bytes(m.kv_bytes) + ", scratch " +
                        format_bytes(m.scratch_bytes);
        if (m.device_total)
            s +=
                ", device " + format_bytes(m.device_total - m.device_free) + " used of " + format_bytes(m.device_total);
        return s;
    }
    std::optional<DeviceMemory> device_memory() const override {
        const BackendMemory m = be_->memory();
        if (m.device_total == 0) return std::nullopt;
        return DeviceMemory{m.device_total - m.device_free, m.device_total};
    }
    runtime::Executor* batch() override { return dynamic_cast<runtime::Executor*>(be_.get()); }

private:
    std::unique_ptr<Backend> be_;
    std::string label_;
};

}  // namespace

std::string thread_count(int n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }

std::string format_bytes(size_t bytes) {
    char buf[32];
    if (bytes < (1u << 20))
        std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
    else
        std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
    return buf;
}

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

Result<std::unique_ptr<Executor>> make_backend_executor(std::shared_ptr<const Model> model,
                                                        const runtime::ExecProgram& plan, const ExecutorOptions& o,
                                                        const std::string& where) {
    std::string why;
    auto be = make_backend(backend_choice_name(o.backend), &why);
    if (!be.ok())
        return err(where, ": ", be.message(), " (--backend ", backend_choice_name(o.backend),
                   "; start the agent with --backend auto or cpu to run on the CPU)");
    std::unique_ptr<Backend> b = std::move(be).value();
    if (auto st = b->load(model, plan, BackendOptions{o.threads, o.max_seq}); !st.ok())
        return err(where, ": ", b->name(), " backend: ", st.message());
    const bool cpu = b->name() == "cpu";
    std::string label = cpu ? std::string("cpu (") + qkernels::kernel_name() + " kernels, " +
                                  thread_count(resolved_threads(o.threads)) + ")"
                            : b->name();
    if (cpu && o.backend == BackendChoice::Cpu) label += "; forced by --backend cpu";
    if (cpu && o.backend == BackendChoice::Auto) label += "; CUDA not used: " + fallback_reason(why);
    return std::unique_ptr<Executor>(
        std::make_unique<BackendExecutor>(std::move(model), std::move(b), std::move(label)));
}

std::string describe_backends(BackendChoice choice) {
    const DeviceReport d = probe_devices();
    const std::string cpu = std::string("cpu (") + qkernels::kernel_name() + " kernels)";
    const std::string reason = d.reason.empty() ? std::string("no usable CUDA device") : d.reason;
    std::string s;
    if (choice == BackendChoice::Cpu)
        s = cpu + " for .edge engines (forced by --backend cpu" +
            (d.cuda_usable ? "; CUDA " + d.cuda_name + " present" : "") + ")";
    else if (d.cuda_usable)
        s = "cuda (" + d.cuda_name + ") for .edge engines";
    else if (choice == BackendChoice::Cuda)
        s = "none for .edge engines: --backend cuda, but " + reason + " (loads of .edge files fail)";
    else
        s = cpu + " for .edge engines; CUDA not used: " + reason;
    return s + "; llama-cpu (FP32 reference executor) for other formats";
}

}  // namespace edge::agent
