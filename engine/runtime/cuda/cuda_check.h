// Every CUDA call is checked: on failure the enclosing function returns an edge::Result error
// naming the call, the CUDA error, the file and the line. Needs cuda_runtime.h and result.h.
#pragma once
#include <cuda_runtime.h>

#include "engine/core/result.h"

#define EDGE_CUDA_CHECK(call)                                                                              \
    do {                                                                                                   \
        const cudaError_t edge_cuda_e_ = (call);                                                           \
        if (edge_cuda_e_ != cudaSuccess)                                                                   \
            return ::edge::err("CUDA: ", #call, " failed: ", cudaGetErrorString(edge_cuda_e_), " (error ", \
                               int(edge_cuda_e_), ") at ", __FILE__, ":", __LINE__);                       \
    } while (0)

// For the launchers of cuda_kernels.h, which return the launch's cudaError_t as an int.
#define EDGE_CUDA_CHECK_LAUNCH(call) EDGE_CUDA_CHECK(static_cast<cudaError_t>(call))
