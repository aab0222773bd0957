// Plain C++ face of the CUDA device query (no CUDA header here, so host code includes it freely).
#pragma once
#include <string>

namespace edge::runtime::cuda {

struct ProbeResult {
    int devices = 0;
    std::string name;
    int compute_capability = 0;
    std::string error;  // empty when a device answered
};

ProbeResult probe();

}  // namespace edge::runtime::cuda
