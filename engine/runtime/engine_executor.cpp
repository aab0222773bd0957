// The compiled-engine half of open_executor.h: a model and its plan, already in memory, on the
// backend asked for. Needs only the runtime (no file readers), so tests/gpu builds it too.
#include <algorithm>
#include <thread>

#include "engine/runtime/backend.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/device.h"
#include "engine/runtime/exec_program.h"
#include "engine/runtime/open_executor.h"

using edge::model::Model;

namespace edge::runtime {
namespace {

// make_backend's note when auto fell back starts with this; the label says it as "CUDA not used: ...".
std::string fallback_reason(const std::string& why) {
    const std::string p = "using the CPU backend: ";
    return why.rfind(p, 0) == 0 ? why.substr(p.size()) : why;
}

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

Result<OpenedExecutor> make_engine_executor(std::shared_ptr<const Model> model, const ExecProgram& plan,
                                            const OpenOptions& o, const std::string& where) {
    std::string why;
    auto be = make_backend(backend_choice_name(o.backend), &why);
    if (!be.ok())
        return err(where, ": ", be.message(), " (--backend ", backend_choice_name(o.backend),
                   "; --backend auto or cpu runs it on the CPU)");
    std::unique_ptr<Backend> b = std::move(be).value();
    if (auto st = b->load(model, plan, BackendOptions{o.threads, o.max_seq}); !st.ok())
        return err(where, ": ", b->name(), " backend: ", st.message());
    OpenedExecutor r;
    r.label = b->capabilities().name;
    if (b->name() == "cpu" && o.backend == BackendChoice::Cpu) r.label += "; forced by --backend cpu";
    if (b->name() == "cpu" && o.backend == BackendChoice::Auto) r.label += "; CUDA not used: " + fallback_reason(why);
    r.model = std::move(model);
    r.exe = std::move(b);
    return r;
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
    return s + "; cpu (FP32 arithmetic over the weights as imported) for other formats";
}

}  // namespace edge::runtime
