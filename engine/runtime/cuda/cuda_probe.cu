#include <cuda_runtime.h>

#include <string>

#include "cuda_probe.h"

namespace edge::runtime::cuda {

ProbeResult probe() {
    ProbeResult r;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        r.error = std::string("no usable CUDA device: cudaGetDeviceCount returned ") + std::to_string(int(e)) + " (" +
                  cudaGetErrorString(e) + ")";
        cudaGetLastError();  // clear the sticky error
        return r;
    }
    if (n == 0) {
        r.error = "no CUDA device present";
        return r;
    }
    cudaDeviceProp prop{};
    const cudaError_t pe = cudaGetDeviceProperties(&prop, 0);
    if (pe != cudaSuccess) {
        r.error = std::string("cudaGetDeviceProperties failed: ") + cudaGetErrorString(pe);
        return r;
    }
    r.devices = n;
    r.name = prop.name;
    r.compute_capability = prop.major * 10 + prop.minor;
    return r;
}

}  // namespace edge::runtime::cuda
