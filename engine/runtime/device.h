// Which compute backend can run here, and why not the others. At run time a missing or
// unusable CUDA device means the CPU backend with the reason reported — never a crash.
#pragma once
#include <string>

namespace edge::runtime {

struct DeviceReport {
    bool cuda_built = false;   // the CUDA backend was compiled in
    bool cuda_usable = false;  // a device answered
    int cuda_devices = 0;
    std::string cuda_name;  // first device, e.g. "NVIDIA H200"
    int cuda_cc = 0;        // compute capability, e.g. 87 or 90
    std::string reason;     // why CUDA is not used, when it is not
    std::string backend() const { return cuda_usable ? "cuda" : "cpu"; }
};

DeviceReport probe_devices();

}  // namespace edge::runtime
