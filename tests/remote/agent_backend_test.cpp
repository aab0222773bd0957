// edge-agent runs compiled engines (.edge) through the Backend interface (remote/agent/executor.h):
// an .edge compiled here from stories260K gives the greedy text of the GGUF and the llama2.c .bin
// of the same weights (those run on LlamaCpu); --backend cuda without a device fails the load
// naming the probe's reason; --backend auto falls back to the CPU and the hello and the ack say
// why; prefix reuse on the .edge path still reports the KV hit rate. Each test asks the device
// probe itself, so on a machine with a usable GPU the same tests check the CUDA path instead.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/compile/compile.h"
#include "engine/model/loader.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/device.h"
#include "engine/runtime/one_sequence.h"
#include "engine/tokenizer/tokenizer.h"
#include "remote/client/agent_link.h"
#include "remote_test_util.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::DeviceReport;
using edge::runtime::LlamaCpu;
using edge::runtime::probe_devices;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;

using namespace edge;
using namespace edge::protocol;

namespace {

std::string gguf_path() { return test::shared("models/stories260K/stories260K.gguf"); }
std::string bin_path() { return test::shared("models/stories260K/stories260K.bin"); }
std::string tok_path() { return test::shared("models/stories260K/tok512.bin"); }

// stories260K.gguf compiled at its stored precision (FP32) into dir/stories260K.edge; prefill in
// chunks of 4 so the 5-token prompts run as two chunks.
std::string compile_stories(const std::filesystem::path& dir) {
    auto m = load_model(gguf_path());
    EXPECT_TRUE(m.ok()) << m.message();
    if (!m.ok()) return {};
    compile::CompileOptions o;
    o.out_path = (dir / "stories260K.edge").string();
    o.prefill_batch = 4;
    o.max_seq = 256;
    auto rep = compile::compile(m.value(), o);
    EXPECT_TRUE(rep.ok()) << rep.message();
    return rep.ok() ? o.out_path : std::string();
}

std::unique_ptr<client::AgentLink> open_agent(const std::filesystem::path& dir, const std::string& backend) {
    std::vector<std::string> argv = {EDGE_AGENT_PATH, "--lock",    (dir / "agent.lock").string(), "--threads", "1",
                                     "--root",        dir.string()};
    if (!backend.empty()) argv.insert(argv.end(), {"--backend", backend});
    auto t = client::start_local_agent(argv);
    EXPECT_TRUE(t.ok()) << t.message();
    if (!t.ok()) return nullptr;
    auto l = client::AgentLink::open(std::move(t).value());
    EXPECT_TRUE(l.ok()) << l.message();
    return l.ok() ? std::move(l).value() : nullptr;
}

test::Collected load(client::AgentLink& link, const std::string& path, const std::string& tokenizer = "") {
    uint32_t id = link.next_request_id();
    EXPECT_TRUE(link.send(LoadEngine{id, path, std::nullopt, tokenizer, ""}).ok());
    return test::collect(link, id, 30000);
}

test::Collected run(client::AgentLink& link, std::vector<std::string> prompts, uint32_t max_tokens) {
    RunWorkload r;
    r.request_id = link.next_request_id();
    r.prompts = std::move(prompts);
    r.max_tokens = max_tokens;
    EXPECT_TRUE(link.send(r).ok());
    return test::collect(link, r.request_id, 60000);
}

std::vector<std::string> texts(const test::Collected& c) {
    std::vector<std::string> t;
    for (const auto& r : c.results) t.push_back(r.text);
    return t;
}

const std::vector<std::string> kPrompts = {"Once upon a time", "The little dog", "Lily wanted to"};

std::string cpu_label() {
    return std::string("cpu (compiled program, ") + runtime::qkernels::kernel_name() + " kernels, 1 thread)";
}

}  // namespace

TEST(AgentBackend, EdgeEngineGivesTheGreedyTextOfTheGgufAndTheBin) {
    EDGE_REQUIRE_SHARED(gguf_path());
    EDGE_REQUIRE_SHARED(bin_path());
    EDGE_REQUIRE_SHARED(tok_path());
    auto dir = test::temp_dir("agent-edge-text");
    const std::string edge = compile_stories(dir);
    ASSERT_FALSE(edge.empty());
    auto link = open_agent(dir, "cpu");
    ASSERT_TRUE(link);
    EXPECT_NE(link->agent_hello().backend.find("forced by --backend cpu"), std::string::npos)
        << link->agent_hello().backend;

    // Relative: against --root. A tokenizer file is not used (the engine embeds one): a warning.
    auto le = load(*link, "stories260K.edge", tok_path());
    ASSERT_TRUE(le.ack.has_value()) << (le.error ? le.error->message : "timeout");
    bool warned = false;
    for (const auto& l : le.logs)
        warned = warned || (l.level == LogLevel::Warn && l.text.find("embeds its tokenizer") != std::string::npos);
    EXPECT_TRUE(warned);
    const std::string& d = le.ack->detail;
    EXPECT_NE(d.find(edge), std::string::npos) << d;
    EXPECT_NE(d.find("; backend: " + cpu_label() + "; forced by --backend cpu"), std::string::npos) << d;
    EXPECT_NE(d.find("mapped in place, scratch"), std::string::npos) << d;
    // the plan's size, as 16 blocks of 16 positions in the PagedKv the prompts run in
    EXPECT_NE(d.find("KV 256 positions (16 blocks, "), std::string::npos) << d;
    auto from_edge = run(*link, kPrompts, 60);
    test::expect_live_telemetry(from_edge, kPrompts.size());

    auto lg = load(*link, gguf_path());
    ASSERT_TRUE(lg.ack.has_value()) << (lg.error ? lg.error->message : "timeout");
    EXPECT_NE(lg.ack->detail.find(std::string("backend: cpu (FP32 arithmetic, ") + runtime::qkernels::kernel_name() +
                                  " kernels, 1 thread)"),
              std::string::npos)
        << lg.ack->detail;
    auto from_gguf = run(*link, kPrompts, 60);
    test::expect_live_telemetry(from_gguf, kPrompts.size());

    auto lb = load(*link, bin_path(), tok_path());
    ASSERT_TRUE(lb.ack.has_value()) << (lb.error ? lb.error->message : "timeout");
    auto from_bin = run(*link, kPrompts, 60);
    test::expect_live_telemetry(from_bin, kPrompts.size());

    EXPECT_EQ(texts(from_edge), texts(from_gguf));
    EXPECT_EQ(texts(from_edge), texts(from_bin));
    EXPECT_EQ(from_edge.results[0].text.rfind(", there was a little girl named Lily", 0), 0u)
        << from_edge.results[0].text;
    for (size_t i = 0; i < kPrompts.size(); ++i) {
        EXPECT_EQ(from_edge.results[i].prompt_tokens, from_gguf.results[i].prompt_tokens);
        EXPECT_EQ(from_edge.results[i].generated_tokens, from_gguf.results[i].generated_tokens);
    }
    std::printf("[edge via %s] %s\n", le.ack->detail.c_str(), from_edge.results[1].text.c_str());
    auto tps = [](const test::Collected& c) {
        double s = 0;
        for (const auto& r : c.results) s += r.tokens_per_s;
        return s / double(c.results.size());
    };
    // Information only (never asserted): 1 thread, a shared machine.
    std::printf(
        "[tok/s, mean of %zu prompts] .edge on the compiled program %.0f, .gguf on the FP32 executor %.0f, .bin "
        "%.0f\n",
        kPrompts.size(), tps(from_edge), tps(from_gguf), tps(from_bin));
    ASSERT_TRUE(link->stop(10000).ok());
}

TEST(AgentBackend, ForcedCudaWithoutADeviceFailsTheLoadNamingTheProbeReason) {
    EDGE_REQUIRE_SHARED(gguf_path());
    auto dir = test::temp_dir("agent-edge-cuda");
    const std::string edge = compile_stories(dir);
    ASSERT_FALSE(edge.empty());
    const DeviceReport dev = probe_devices();
    auto link = open_agent(dir, "cuda");
    ASSERT_TRUE(link);
    auto le = load(*link, edge);
    if (dev.cuda_usable) {  // a GPU machine: the engine runs there
        ASSERT_TRUE(le.ack.has_value()) << (le.error ? le.error->message : "timeout");
        EXPECT_NE(le.ack->detail.find("cuda (" + dev.cuda_name + ")"), std::string::npos) << le.ack->detail;
        auto r = run(*link, {kPrompts[0]}, 20);
        ASSERT_EQ(r.results.size(), 1u);
        EXPECT_GT(r.results[0].generated_tokens, 0u);
    } else {
        ASSERT_FALSE(dev.reason.empty());
        EXPECT_NE(link->agent_hello().backend.find("--backend cuda, but " + dev.reason), std::string::npos)
            << link->agent_hello().backend;
        ASSERT_TRUE(le.error.has_value()) << "a load without a device must fail";
        EXPECT_EQ(le.error->code, ErrorCode::LoadFailed);
        const std::string& m = le.error->message;
        EXPECT_NE(m.find(edge), std::string::npos) << m;
        EXPECT_NE(m.find("cuda backend unavailable: " + dev.reason), std::string::npos) << m;
        EXPECT_NE(m.find("--backend auto or cpu"), std::string::npos) << m;
        // Nothing is loaded after the failure; other formats still run on the CPU executor.
        auto r = run(*link, {kPrompts[0]}, 4);
        ASSERT_TRUE(r.error.has_value());
        EXPECT_EQ(r.error->code, ErrorCode::NotLoaded);
        auto lg = load(*link, gguf_path());
        ASSERT_TRUE(lg.ack.has_value()) << (lg.error ? lg.error->message : "timeout");
        EXPECT_NE(lg.ack->detail.find("backend: cpu (FP32 arithmetic"), std::string::npos) << lg.ack->detail;
    }
    ASSERT_TRUE(link->stop(10000).ok());
}

TEST(AgentBackend, AutoFallsBackToTheCpuAndSaysWhy) {
    EDGE_REQUIRE_SHARED(gguf_path());
    auto dir = test::temp_dir("agent-edge-auto");
    const std::string edge = compile_stories(dir);
    ASSERT_FALSE(edge.empty());
    const DeviceReport dev = probe_devices();
    auto link = open_agent(dir, "");  // the default is auto
    ASSERT_TRUE(link);
    const std::string& hello = link->agent_hello().backend;
    EXPECT_EQ(hello.find("not yet used"), std::string::npos) << hello;
    auto le = load(*link, edge);
    ASSERT_TRUE(le.ack.has_value()) << (le.error ? le.error->message : "timeout");
    const std::string& d = le.ack->detail;
    auto r = run(*link, {kPrompts[0]}, 20);
    ASSERT_TRUE(r.ack.has_value()) << (r.error ? r.error->message : "timeout");
    ASSERT_EQ(r.results.size(), 1u);
    EXPECT_GT(r.results[0].generated_tokens, 0u);
    bool device_mem = false;
    for (const auto& b : r.batches)
        for (const auto& s : b.samples) device_mem = device_mem || s.device_mem_used_bytes.has_value();
    if (dev.cuda_usable) {
        EXPECT_NE(hello.find("cuda (" + dev.cuda_name + ") for .edge engines"), std::string::npos) << hello;
        EXPECT_NE(d.find("; backend: cuda (" + dev.cuda_name + ")"), std::string::npos) << d;
        EXPECT_NE(d.find("on the device"), std::string::npos) << d;
        EXPECT_TRUE(device_mem) << "a CUDA run reports device memory";
    } else {
        ASSERT_FALSE(dev.reason.empty());
        EXPECT_NE(hello.find("for .edge engines; CUDA not used: " + dev.reason), std::string::npos) << hello;
        EXPECT_NE(d.find("; backend: " + cpu_label() + "; CUDA not used: " + dev.reason), std::string::npos) << d;
        EXPECT_FALSE(device_mem) << "the CPU backend has no device memory to report";
        // The log line says the same as the ack.
        bool logged = false;
        for (const auto& l : le.logs) logged = logged || l.text == d;
        EXPECT_TRUE(logged);
    }
    std::printf("[hello] %s\n[ack] %s\n", hello.c_str(), d.c_str());
    ASSERT_TRUE(link->stop(10000).ok());
}

// The same story opening three times, then a longer prompt that starts with it: the later prompts
// run only their new positions (pos > 0 on the backend), decode the same greedy text as a fresh
// prefill, and the reported hit rate counts exactly the reused positions.
TEST(AgentBackend, PrefixReuseOnTheEdgePathReportsTheKvHitRate) {
    EDGE_REQUIRE_SHARED(gguf_path());
    auto dir = test::temp_dir("agent-edge-prefix");
    const std::string edge = compile_stories(dir);
    ASSERT_FALSE(edge.empty());
    auto link = open_agent(dir, "auto");
    ASSERT_TRUE(link);
    auto le = load(*link, edge);
    ASSERT_TRUE(le.ack.has_value()) << (le.error ? le.error->message : "timeout");
    // BOS + 4 pieces ("Once upon a time" encodes to [1, 403, 407, 261, 378], ASSETS.md).
    auto c = run(*link, {"Once upon a time", "Once upon a time", "Once upon a time"}, 30);
    test::expect_live_telemetry(c, 3);
    EXPECT_EQ(c.results[1].text, c.results[0].text) << "a prompt served from cached positions must decode the same";
    EXPECT_EQ(c.results[2].text, c.results[0].text);
    // First prompt: nothing cached (0 of 5); later ones 4 of 5 (the last prompt token always
    // runs: its logits start the generation). Cumulative: 8 / 15.
    double last_rate = -1;
    for (const auto& b : c.batches)
        for (const auto& s : b.samples)
            if (s.prompt_index == 2 && s.kv_hit_rate) last_rate = *s.kv_hit_rate;
    EXPECT_NEAR(last_rate, 8.0 / 15.0, 1e-9);

    // A fresh agent runs the longer prompt with nothing cached: the reference text.
    const std::string longer = "Once upon a time" + c.results[0].text.substr(0, 20);
    auto fresh_dir = test::temp_dir("agent-edge-prefix-fresh");
    auto fresh = open_agent(fresh_dir, "auto");
    ASSERT_TRUE(fresh);
    ASSERT_TRUE(load(*fresh, edge).ack.has_value());
    auto ref = run(*fresh, {longer}, 20);
    ASSERT_EQ(ref.results.size(), 1u);
    ASSERT_TRUE(fresh->stop(10000).ok());

    // On the warm agent the cache holds the opening and its generated tokens: most of the longer
    // prompt is reused, and the text is the fresh run's.
    auto warm = run(*link, {longer}, 20);
    ASSERT_EQ(warm.results.size(), 1u);
    EXPECT_EQ(warm.results[0].text, ref.results[0].text);
    const uint32_t n = warm.results[0].prompt_tokens;
    double rate = -1;
    for (const auto& b : warm.batches)
        for (const auto& s : b.samples)
            if (s.kv_hit_rate) rate = *s.kv_hit_rate;
    // At least the 4 opening positions were reused on top of the earlier 8 of 15.
    EXPECT_GE(rate, (8.0 + 4.0) / (15.0 + n) - 1e-9) << "prompt of " << n << " tokens";
    EXPECT_LE(rate, (8.0 + n - 1) / (15.0 + n) + 1e-9);
    std::printf("[prefix] longer prompt of %u tokens: cumulative hit rate %.4f (%.1f of its positions reused)\n", n,
                rate, rate * (15.0 + n) - 8.0);
    ASSERT_TRUE(link->stop(10000).ok());
}

// A model that names more than one end-of-sequence id (Llama 3's <|eot_id|> beside
// <|end_of_text|>, kept in the engine's tokenizer header) stops at any of them: here stories260K
// with its 5th greedy token after "Once upon a time" made a second EOS id gives the plain
// engine's first 4 tokens, then stops.
TEST(AgentBackend, GenerationStopsAtAnyEosIdTheEngineNames) {
    EDGE_REQUIRE_SHARED(gguf_path());
    auto m = load_model(gguf_path());
    ASSERT_TRUE(m.ok()) << m.message();
    auto model = std::make_shared<Model>(std::move(m).value());
    auto tok = make_tokenizer(model->tokenizer);
    ASSERT_TRUE(tok.ok()) << tok.message();
    std::vector<int32_t> ids = (*tok)->encode("Once upon a time", true);
    auto rt = LlamaCpu::create(model, RuntimeOptions{1, 64});
    ASSERT_TRUE(rt.ok()) << rt.message();
    auto seq = runtime::OneSequence::create(**rt);
    ASSERT_TRUE(seq.ok()) << seq.message();
    std::vector<int32_t> greedy;
    auto l = seq->next(ids);
    while (l && greedy.size() < 5) {
        greedy.push_back(argmax(*l, model->config.vocab_size));
        l = seq->next(std::span(&greedy.back(), 1));
    }
    ASSERT_EQ(greedy.size(), 5u);
    const int32_t stop = greedy[4];
    for (int i = 0; i < 4; ++i) ASSERT_NE(greedy[size_t(i)], stop) << "the stop token must not come earlier";

    auto dir = test::temp_dir("agent-edge-eos");
    const std::string plain = compile_stories(dir);
    Model with_eot = *model;
    with_eot.tokenizer.add_eos(stop);
    ASSERT_EQ(with_eot.tokenizer.eos_id, model->tokenizer.eos_id);
    compile::CompileOptions o;
    o.out_path = (dir / "stories260K-eot.edge").string();
    o.prefill_batch = 4;
    o.max_seq = 256;
    ASSERT_TRUE(compile::compile(with_eot, o).ok());

    auto link = open_agent(dir, "cpu");
    ASSERT_TRUE(link);
    ASSERT_TRUE(load(*link, plain).ack.has_value());
    auto full = run(*link, {"Once upon a time"}, 20);
    ASSERT_EQ(full.results.size(), 1u);
    EXPECT_EQ(full.results[0].generated_tokens, 20u);
    ASSERT_TRUE(load(*link, o.out_path).ack.has_value());
    auto stopped = run(*link, {"Once upon a time"}, 20);
    ASSERT_EQ(stopped.results.size(), 1u);
    EXPECT_EQ(stopped.results[0].generated_tokens, 4u);
    EXPECT_EQ(full.results[0].text.rfind(stopped.results[0].text, 0), 0u)
        << "'" << stopped.results[0].text << "' is not the start of '" << full.results[0].text << "'";
    EXPECT_LT(stopped.results[0].text.size(), full.results[0].text.size());
    ASSERT_TRUE(link->stop(10000).ok());
}

TEST(AgentBackend, CorruptEngineAndUnknownBackendAreRefusedClearly) {
    EDGE_REQUIRE_SHARED(gguf_path());
    auto dir = test::temp_dir("agent-edge-bad");
    const std::string edge = compile_stories(dir);
    ASSERT_FALSE(edge.empty());
    // One flipped byte inside the weights section (the first section, from offset 4096).
    const std::streamoff at = 4096 + 100;
    {
        std::fstream f(edge, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(at);
        char b = 0;
        f.read(&b, 1);
        b = char(b ^ 0x5a);
        f.seekp(at);
        f.write(&b, 1);
    }
    auto link = open_agent(dir, "cpu");
    ASSERT_TRUE(link);
    auto le = load(*link, edge);
    ASSERT_TRUE(le.error.has_value());
    EXPECT_EQ(le.error->code, ErrorCode::LoadFailed);
    EXPECT_NE(le.error->message.find(edge), std::string::npos) << le.error->message;
    EXPECT_NE(le.error->message.find("weights"), std::string::npos) << le.error->message;
    ASSERT_TRUE(link->stop(10000).ok());

    auto sh = test::run_shell(test::command_line(EDGE_AGENT_PATH, {"--backend", "tpu"}), dir);
    EXPECT_EQ(sh.rc, 64);
    EXPECT_NE(sh.err.find("unknown backend 'tpu' (expected auto, cpu or cuda)"), std::string::npos) << sh.err;
}

#if defined(EDGE_AARCH64_AGENT) && defined(EDGE_QEMU_AARCH64)
// The agent-only aarch64 build (no compiler, no CUDA) runs the same .edge through its CPU backend
// under qemu-user, says why CUDA is not used, and gives the host's greedy text of the GGUF.
TEST(AgentBackend, TheAarch64AgentRunsACompiledEngineUnderQemu) {
    EDGE_REQUIRE_SHARED(gguf_path());
    auto dir = test::temp_dir("agent-edge-qemu");
    const std::string edge = compile_stories(dir);
    ASSERT_FALSE(edge.empty());
    auto t =
        client::start_local_agent({EDGE_QEMU_AARCH64, "-L", "/usr/aarch64-linux-gnu", EDGE_AARCH64_AGENT, "--threads",
                                   "1", "--root", dir.string(), "--lock", (dir / "agent.lock").string()});
    ASSERT_TRUE(t.ok()) << t.message();
    auto l = client::AgentLink::open(std::move(t).value());
    ASSERT_TRUE(l.ok()) << l.message();
    client::AgentLink& arm = *l.value();
    EXPECT_NE(arm.agent_hello().backend.find("CUDA not used: built without CUDA"), std::string::npos)
        << arm.agent_hello().backend;
    auto le = load(arm, "stories260K.edge");
    ASSERT_TRUE(le.ack.has_value()) << (le.error ? le.error->message : "timeout");
    EXPECT_NE(le.ack->detail.find("; backend: cpu ("), std::string::npos) << le.ack->detail;
    EXPECT_NE(le.ack->detail.find("CUDA not used: built without CUDA"), std::string::npos) << le.ack->detail;
    auto on_arm = run(arm, kPrompts, 40);
    test::expect_live_telemetry(on_arm, kPrompts.size());
    ASSERT_TRUE(arm.stop(20000).ok());

    auto host = open_agent(test::temp_dir("agent-edge-qemu-host"), "");
    ASSERT_TRUE(host);
    ASSERT_TRUE(load(*host, gguf_path()).ack.has_value());
    auto on_host = run(*host, kPrompts, 40);
    ASSERT_TRUE(host->stop(10000).ok());
    EXPECT_EQ(texts(on_arm), texts(on_host));
    std::printf("[qemu ack] %s\n", le.ack->detail.c_str());
}
#endif
