// Helpers shared by the test binaries: where ../shared is, and temporary folders.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace edge::test {

// Absolute path of a file under the shared assets folder (../shared beside the checkout).
std::string shared(const std::string& rel);
// A fresh, empty temporary folder removed at process exit.
std::filesystem::path temp_dir(const std::string& tag);
// Folder of the build tree's generated files (the demo model lives there).
std::string build_dir();

}  // namespace edge::test

// A test that needs a shared asset fails (never skips) with the path when it is absent.
#define EDGE_REQUIRE_SHARED(path)                                                                                      \
    do {                                                                                                               \
        if (!std::filesystem::exists(path)) FAIL() << "missing test asset " << (path) << " (see ../shared/ASSETS.md)"; \
    } while (0)
