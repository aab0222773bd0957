#include "test_support.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace edge::test {

std::string shared(const std::string& rel) { return std::string(EDGE_SHARED_DIR) + "/" + rel; }

std::string build_dir() { return EDGE_BUILD_DIR; }

namespace {
struct TempRegistry {
    std::vector<std::filesystem::path> dirs;
    ~TempRegistry() {
        std::error_code ec;
        for (auto& d : dirs) std::filesystem::remove_all(d, ec);
    }
};
TempRegistry& registry() {
    static TempRegistry r;
    return r;
}
}  // namespace

std::filesystem::path temp_dir(const std::string& tag) {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("edge-" + tag + "-XXXXXX")).string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char* d = mkdtemp(buf.data());
    std::filesystem::path p = d ? d : tmpl;
    registry().dirs.push_back(p);
    return p;
}

double resident_fraction(const std::string& path, uint64_t from) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st {};
    fstat(fd, &st);
    const size_t size = size_t(st.st_size), page = size_t(sysconf(_SC_PAGESIZE));
    double fraction = -1;
    void* p = size ? mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (p != MAP_FAILED) {
        std::vector<unsigned char> vec((size + page - 1) / page);
        if (mincore(p, size, vec.data()) == 0) {
            const size_t first = size_t((from + page - 1) / page), last = size / page;
            size_t in = 0;
            for (size_t i = first; i < last; ++i) in += vec[i] & 1;
            fraction = last > first ? double(in) / double(last - first) : 0.0;
        }
        munmap(p, size);
    }
    ::close(fd);
    return fraction;
}

bool drop_from_page_cache(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    ::close(fd);
    return ok;
}

}  // namespace edge::test
