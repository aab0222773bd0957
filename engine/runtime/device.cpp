#include "device.h"

#ifdef EDGE_HAVE_CUDA
#include "cuda/cuda_probe.h"
#endif

namespace edge::runtime {

DeviceReport probe_devices() {
    DeviceReport r;
#ifdef EDGE_HAVE_CUDA
    r.cuda_built = true;
    cuda::ProbeResult p = cuda::probe();
    r.cuda_devices = p.devices;
    r.cuda_usable = p.devices > 0;
    r.cuda_name = p.name;
    r.cuda_cc = p.compute_capability;
    r.reason = p.error;
#else
    r.reason = "built without CUDA (no nvcc found at configure time)";
#endif
    return r;
}

}  // namespace edge::runtime
