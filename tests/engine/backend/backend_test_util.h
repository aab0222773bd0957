// Shared by the backend tests: one prompt, prefill + greedy decode, normalised error.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/runtime/backend.h"
#include "engine/runtime/cpu/llama_cpu.h"

namespace edge::test {

inline const std::vector<int32_t>& backend_prompt() {
    static const std::vector<int32_t> p{1, 403, 407, 261, 378};
    return p;
}

// max |a-b| / max |b|
inline double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return 1e30;
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num = std::max(num, double(std::fabs(a[i] - b[i])));
        den = std::max(den, double(std::fabs(b[i])));
    }
    return den > 0 ? num / den : num;
}

// Logits of every prompt position (one prefill) then `steps` greedy decode steps, concatenated.
inline std::vector<float> run_backend(runtime::Backend& be, int steps = 8) {
    const auto& pr = backend_prompt();
    const int V = be.config().vocab_size;
    std::vector<float> all(pr.size() * size_t(V));
    auto l = be.run(pr.data(), int(pr.size()), 0, all.data());
    if (!l.ok()) return {};
    const float* last = *l;
    for (int i = 0; i < steps; ++i) {
        const int32_t t = runtime::argmax(last, V);
        auto r = be.run(&t, 1, int(pr.size()) + i);
        if (!r.ok()) return {};
        last = *r;
        all.insert(all.end(), last, last + V);
    }
    return all;
}

inline std::vector<float> run_reference(runtime::LlamaCpu& rt, int steps = 8) {
    const auto& pr = backend_prompt();
    const int V = rt.config().vocab_size;
    std::vector<float> all(pr.size() * size_t(V));
    const float* l = rt.prefill(pr.data(), int(pr.size()), 0, all.data());
    for (int i = 0; i < steps; ++i) {
        const int32_t t = runtime::argmax(l, V);
        l = rt.forward(t, int(pr.size()) + i);
        all.insert(all.end(), l, l + V);
    }
    return all;
}

}  // namespace edge::test
