// Helpers of the fuzz targets: readers that take a path get the input through a file in /dev/shm
// (or TMPDIR), one per process, rewritten for every input. Readers that look for companion files
// beside their input (a llama2.c checkpoint's tokenizer.bin) get it in a folder of the process's own.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace edge::fuzz {

inline std::string scratch_dir() {
    const char* dir = std::getenv("TMPDIR");
    return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (dir ? dir : "/tmp");
}

inline const std::string& input_path(const char* ext) {
    static const std::string p = scratch_dir() + "/edge-fuzz-" + std::to_string(getpid()) + ext;
    return p;
}

inline void write_file(const std::string& p, const uint8_t* data, size_t size) {
    FILE* f = std::fopen(p.c_str(), "wb");
    if (f) {
        if (size) std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
}

inline const std::string& write_input(const uint8_t* data, size_t size, const char* ext) {
    const std::string& p = input_path(ext);
    write_file(p, data, size);
    return p;
}

// <scratch>/edge-fuzz-<pid>.d/<name>: nothing else is in that folder.
inline const std::string& write_input_alone(const uint8_t* data, size_t size, const char* name) {
    static const std::string p = [&] {
        const std::string d = scratch_dir() + "/edge-fuzz-" + std::to_string(getpid()) + ".d";
        mkdir(d.c_str(), 0700);
        return d + "/" + name;
    }();
    write_file(p, data, size);
    return p;
}

}  // namespace edge::fuzz
