// The aarch64 edge-agent (cross-built by the aarch64 sub-build, cmake/cross.cmake) run under
// qemu-user as a local child process, speaking the protocol over its stdin/stdout, serving
// stories260K on the CPU backend through the same supervisor the studio uses (run_profile).
#include <gtest/gtest.h>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "remote/client/profile.h"
#include "test_support.h"

using namespace edge;
namespace fs = std::filesystem;

#if defined(EDGE_AARCH64_AGENT) && defined(EDGE_QEMU_AARCH64)

namespace {

// e_machine of an ELF file (0 when it is not one).
uint16_t elf_machine(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    Elf64_Ehdr h{};
    if (!f.read(reinterpret_cast<char*>(&h), sizeof h)) return 0;
    if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return 0;
    return h.e_machine;
}

}  // namespace

TEST(QemuAgent, TheCrossBuiltAgentIsAnAarch64Executable) {
    ASSERT_TRUE(fs::exists(EDGE_AARCH64_AGENT)) << EDGE_AARCH64_AGENT << " was not built (target edge_agent_aarch64)";
    EXPECT_EQ(elf_machine(EDGE_AARCH64_AGENT), EM_AARCH64) << EDGE_AARCH64_AGENT;
}

TEST(QemuAgent, ServesStories260KWithTelemetryUnderQemu) {
    const std::string model = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    const fs::path tmp = test::temp_dir("qemu-agent");
    client::AgentStarter start = client::local_agent_starter(
        {EDGE_QEMU_AARCH64, "-L", "/usr/aarch64-linux-gnu", EDGE_AARCH64_AGENT, "--threads", "2", "--root",
         fs::path(model).parent_path().string(), "--lock", (tmp / "agent.lock").string()});
    client::ProfileRequest req;
    req.engine_path = fs::path(model).filename().string();  // relative: resolved against --root on the "board"
    req.prompts = {"Once upon a time", "Lily wanted", "The sun"};
    req.max_tokens = 48;
    req.telemetry_hz = 50;
    client::SupervisorOptions opts;
    opts.max_restarts = 0;  // a crash under qemu must fail the test, not be papered over
    size_t batches = 0;
    opts.on_telemetry = [&](const protocol::TelemetryBatch&) { ++batches; };
    auto r = client::run_profile(start, req, opts);
    ASSERT_TRUE(r.ok()) << r.message();
    const client::ProfileReport& rep = r.value();
    EXPECT_EQ(rep.agent.role, "agent");
    EXPECT_EQ(rep.restarts, 0);
    ASSERT_EQ(rep.results.size(), req.prompts.size());
    for (const auto& res : rep.results) {
        EXPECT_GT(res.prompt_tokens, 0u);
        EXPECT_GT(res.generated_tokens, 0u) << "prompt " << res.prompt_index;
        EXPECT_FALSE(res.text.empty()) << "prompt " << res.prompt_index;
    }
    // Greedy stories260K continues "Once upon a time" the same way on every backend (ASSETS.md);
    // the aarch64 build must agree with the host's FP32 executor on the first words.
    const auto first = std::find_if(rep.results.begin(), rep.results.end(),
                                    [](const protocol::RunResult& x) { return x.prompt_index == 0; });
    ASSERT_NE(first, rep.results.end());
    EXPECT_NE(first->text.find("there was"), std::string::npos) << first->text;

    EXPECT_GT(batches, 0u);
    ASSERT_FALSE(rep.samples.empty());
    const client::ProfileSummary s = client::summarize(rep);
    ASSERT_TRUE(s.tokens_per_s.has_value());
    EXPECT_GT(*s.tokens_per_s, 0.0);
    ASSERT_TRUE(s.latency_p50_ms.has_value());
    ASSERT_TRUE(s.rss_max_bytes.has_value());
    EXPECT_GT(*s.rss_max_bytes, 0u);
    // A functional check only (qemu is an emulator): printed for docs/cross.md.
    std::printf("qemu-aarch64 agent: %zu prompts, %zu tokens, %.1f tokens/s, p50 %.2f ms, %zu samples, %.1f s\n",
                s.prompts, s.tokens, *s.tokens_per_s, *s.latency_p50_ms, s.samples, rep.seconds);
}

#endif
