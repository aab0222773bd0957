#include "backend.h"

#include "cpu_backend.h"
#include "device.h"

#ifdef EDGE_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace edge {

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

Result<std::unique_ptr<Backend>> make_backend(const std::string& kind, std::string* why) {
    if (kind == "cpu") return make_cpu_backend();
    if (kind != "cuda" && kind != "auto") return err("unknown backend '", kind, "' (expected cpu, cuda or auto)");
    const DeviceReport d = probe_devices();
    if (d.cuda_usable) {
#ifdef EDGE_HAVE_CUDA
        return cuda::make_cuda_backend();
#endif
    }
    const std::string reason = d.reason.empty() ? std::string("no usable CUDA device") : d.reason;
    if (kind == "cuda") return err("cuda backend unavailable: ", reason);
    if (why) *why = "using the CPU backend: " + reason;
    return make_cpu_backend();
}

}  // namespace edge
