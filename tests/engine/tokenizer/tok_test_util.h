// Shared helpers for the tokenizer tests: the TinyStories files split into stories/paragraphs.
#pragma once
#include <string>
#include <vector>

#include "engine/core/mapped_file.h"
#include "test_support.h"

namespace edge::test {

inline std::string strip(const std::string& s) {
    const char* ws = " \t\r\n";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// Splits on `sep`, strips each part, drops empty ones (the ASSETS.md protocols).
inline std::vector<std::string> split_parts(const std::string& text, const std::string& sep) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t e = text.find(sep, pos);
        if (e == std::string::npos) e = text.size();
        std::string p = strip(text.substr(pos, e - pos));
        if (!p.empty()) out.push_back(std::move(p));
        pos = e + sep.size();
    }
    return out;
}

inline std::string read_shared(const std::string& rel) {
    auto r = read_text_file(shared(rel));
    return r ? std::move(r.value()) : std::string();
}

}  // namespace edge::test
