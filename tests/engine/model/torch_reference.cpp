#include "torch_reference.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/kv/paged_kv.h"
#include "engine/runtime/open_executor.h"

using edge::model::LlamaConfig;

namespace edge::test {

std::vector<float> executor_logits(const std::string& path, std::span<const int32_t> tokens, int max_seq) {
    auto opened = runtime::open_executor(path, {1, max_seq});
    if (!opened.ok()) {
        ADD_FAILURE() << opened.message();
        return {};
    }
    const LlamaConfig& c = opened->exe->config();
    auto kv = kv::PagedKv::create(kv::KvConfig{kv::KvShape{c.n_layers, c.n_kv_heads, c.head_dim, 16}, 64});
    if (!kv.ok()) {
        ADD_FAILURE() << kv.message();
        return {};
    }
    const runtime::PagedStep step{0, tokens, true};
    auto out = opened->exe->step(*kv, std::span<const runtime::PagedStep>(&step, 1));
    if (!out.ok()) {
        ADD_FAILURE() << out.message();
        return {};
    }
    return std::vector<float>(*out, *out + tokens.size() * size_t(c.vocab_size));
}

std::vector<double> torch_reference_logits(const std::filesystem::path& dir, std::span<const int32_t> tokens,
                                           int vocab) {
    std::string ids;
    for (int32_t t : tokens) ids += (ids.empty() ? "" : ",") + std::to_string(t);
    const std::filesystem::path out = dir / "reference.f64", log = dir / "reference.log";
    const std::string cmd = "/usr/bin/python3 " + std::string(EDGE_SOURCE_DIR) +
                            "/tests/engine/model/reference/llama_forward.py '" + dir.string() + "' " + ids + " '" +
                            out.string() + "' > '" + log.string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        std::ifstream in(log);
        std::stringstream ss;
        ss << in.rdbuf();
        ADD_FAILURE() << "the torch reference failed (Debian's python3 with python3-torch, which "
                         "scripts/install-deps.sh installs): "
                      << ss.str();
        return {};
    }
    std::ifstream in(out, std::ios::binary);
    std::vector<double> v(tokens.size() * size_t(vocab));
    in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(double)));
    if (!in) ADD_FAILURE() << out << " is short";
    return v;
}

}  // namespace edge::test
