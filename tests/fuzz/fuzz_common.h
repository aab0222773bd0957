// Helpers of the fuzz targets: readers that take a path get the input through a file in /dev/shm
// (or TMPDIR), one per process, rewritten for every input.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace edge::fuzz {

inline const std::string& input_path(const char* ext) {
    static const std::string p = [&] {
        const char* dir = std::getenv("TMPDIR");
        std::string d = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (dir ? dir : "/tmp");
        return d + "/edge-fuzz-" + std::to_string(getpid()) + ext;
    }();
    return p;
}

inline const std::string& write_input(const uint8_t* data, size_t size, const char* ext) {
    const std::string& p = input_path(ext);
    FILE* f = std::fopen(p.c_str(), "wb");
    if (f) {
        if (size) std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
    return p;
}

}  // namespace edge::fuzz
