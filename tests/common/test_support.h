// Helpers shared by the test binaries: where ../shared is, and temporary folders.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace edge::test {

// Absolute path of a file under the shared assets folder (../shared beside the checkout).
std::string shared(const std::string& rel);
// A fresh, empty temporary folder removed at process exit.
std::filesystem::path temp_dir(const std::string& tag);
// Folder of the build tree's generated files (the demo model lives there).
std::string build_dir();

// n pseudo-random token ids in [1, vocab) from a seed (a linear congruential stream): prompts for
// executor and KV tests that must not depend on a tokenizer.
inline std::vector<int32_t> random_tokens(int n, uint32_t seed, int vocab) {
    std::vector<int32_t> t;
    uint32_t x = seed * 2654435761u + 1;
    for (int i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        t.push_back(int32_t(1 + (x >> 8) % uint32_t(vocab - 1)));
    }
    return t;
}

// Page-cache residency of a file (mincore over a read-only mapping of it): the fraction of the
// whole pages from byte `from` to the end that are in memory. drop_from_page_cache() writes the
// file back and asks the kernel to forget it (posix_fadvise DONTNEED); false when it cannot.
double resident_fraction(const std::string& path, uint64_t from = 0);
bool drop_from_page_cache(const std::string& path);

// An error test in one line: the result failed, and its message names every part given (the
// file or element, and the problem). EXPECT_TRUE(edge::test::fails_with(r, {"a.onnx", "strides"})).
template <class R>
::testing::AssertionResult fails_with(const R& r, std::initializer_list<std::string_view> parts) {
    if (r.ok()) return ::testing::AssertionFailure() << "succeeded; expected an error naming the given parts";
    const std::string& msg = r.message();
    for (std::string_view p : parts)
        if (msg.find(p) == std::string::npos)
            return ::testing::AssertionFailure() << "error does not mention '" << p << "': " << msg;
    return ::testing::AssertionSuccess() << msg;
}

}  // namespace edge::test

// A test that needs a shared asset fails (never skips) with the path when it is absent.
#define EDGE_REQUIRE_SHARED(path)                                                                                      \
    do {                                                                                                               \
        if (!std::filesystem::exists(path)) FAIL() << "missing test asset " << (path) << " (see ../shared/ASSETS.md)"; \
    } while (0)
