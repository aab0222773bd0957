#include "test_support.h"

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

}  // namespace edge::test
