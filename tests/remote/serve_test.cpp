// The board agent serving a workload through engine/sched (protocol 3, serve-workload): the
// agent process over pipes, the x86 agent and the cross-built aarch64 agent under qemu. Its
// counts are the scheduler's own: with a virtual clock they equal a local sched::serve of the
// same workload, budget and step, request for request; a hand-computed 3-request fixture pins
// the prefix-cache hit rate; halving the budget preempts more; bad input is an error to that
// request only.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "engine/model/loader.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/sched/scheduler.h"
#include "engine/sched/workload.h"
#include "remote/client/agent_link.h"
#include "remote_test_util.h"
#include "test_support.h"

using edge::model::load_model;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;
using namespace edge::protocol;

namespace {

std::string model_path() { return test::shared("models/stories260K/stories260K.gguf"); }

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

std::string mixed() { return read_text(std::string(EDGE_SOURCE_DIR) + "/tests/data/workloads/mixed.workload"); }

std::unique_ptr<client::AgentLink> open_agent(const std::vector<std::string>& argv) {
    auto t = client::start_local_agent(argv);
    EXPECT_TRUE(t.ok()) << t.message();
    if (!t.ok()) return nullptr;
    auto l = client::AgentLink::open(std::move(t).value());
    EXPECT_TRUE(l.ok()) << l.message();
    return l.ok() ? std::move(l).value() : nullptr;
}

std::vector<std::string> host_agent(const std::filesystem::path& dir) {
    return {EDGE_AGENT_PATH, "--lock", (dir / "agent.lock").string(), "--threads", "2", "--root", dir.string()};
}

void load(client::AgentLink& l, const std::string& path) {
    const uint32_t id = l.next_request_id();
    ASSERT_TRUE(l.send(LoadEngine{id, path, std::nullopt, "", ""}).ok());
    auto c = test::collect(l, id, 120000);
    ASSERT_TRUE(c.ack.has_value()) << (c.error ? c.error->message : "no ack to load-engine");
}

ServeWorkload request(const std::string& text, uint64_t budget, uint32_t concurrency = 8) {
    ServeWorkload w;
    w.workload = text;
    w.concurrency = concurrency;
    w.budget_blocks = budget;
    w.step_ms = 1.0;  // a virtual clock: counts and times reproducible, comparable with a local run
    return w;
}

test::Collected serve(client::AgentLink& l, ServeWorkload w, int timeout_ms = 180000) {
    w.request_id = l.next_request_id();
    EXPECT_TRUE(l.send(w).ok());
    return test::collect(l, w.request_id, timeout_ms);
}

// The same workload through a local scheduler on the same model.
sched::ServeResult local(const std::string& text, int64_t budget, int concurrency = 8) {
    auto m = load_model(model_path());
    EXPECT_TRUE(m.ok()) << m.message();
    auto rt = LlamaCpu::create(std::make_shared<Model>(std::move(m).value()), RuntimeOptions{2, 0});
    EXPECT_TRUE(rt.ok()) << rt.message();
    auto w = sched::parse_workload(text, "local");
    EXPECT_TRUE(w.ok()) << w.message();
    std::vector<sched::ServeRequest> reqs;
    for (size_t i = 0; i < w->requests.size(); ++i)
        reqs.push_back({w->requests[i].arrival_ms, sched::prompt_tokens(*w, i, (*rt)->config().vocab_size),
                        w->requests[i].output_tokens});
    sched::SchedConfig cfg;
    cfg.budget_blocks = budget;
    cfg.max_running = concurrency;
    cfg.step_ms = 1.0;
    auto r = sched::serve(**rt, reqs, cfg);
    EXPECT_TRUE(r.ok()) << r.message();
    return std::move(r).value();
}

void expect_same_counts(const ServeReport& board, const sched::ServeResult& here) {
    ASSERT_EQ(board.requests.size(), here.requests.size());
    EXPECT_EQ(board.steps, uint32_t(here.total.steps));
    EXPECT_EQ(board.preemptions, uint32_t(here.total.preemptions));
    EXPECT_EQ(board.output_tokens, uint64_t(here.total.output_tokens));
    EXPECT_EQ(board.recomputed_tokens, uint64_t(here.total.recomputed_tokens));
    EXPECT_EQ(board.peak_blocks, uint64_t(here.total.peak_blocks));
    EXPECT_EQ(board.queue_max, uint32_t(here.total.queue_max));
    EXPECT_DOUBLE_EQ(board.kv_hit_rate, here.total.kv_hit_rate);
    EXPECT_DOUBLE_EQ(board.makespan_ms, here.total.makespan_ms);
    for (size_t i = 0; i < board.requests.size(); ++i) {
        const ServedRequest& b = board.requests[i];
        const sched::RequestMetrics& h = here.requests[i];
        EXPECT_EQ(b.context_tokens, uint64_t(h.context_tokens)) << "request " << i;
        EXPECT_EQ(b.shared_tokens, uint64_t(h.shared_tokens)) << "request " << i;
        EXPECT_EQ(b.preemptions, uint32_t(h.preemptions)) << "request " << i;
        EXPECT_DOUBLE_EQ(b.ttft_ms, h.ttft_ms) << "request " << i;
        EXPECT_DOUBLE_EQ(b.tpot_ms, h.tpot_ms) << "request " << i;
    }
}

struct Seen {
    uint32_t max_batch = 0, max_queue = 0;
    uint64_t preemptions = 0;
    double hit_rate = 0;
    size_t samples = 0, dropped = 0;
};
Seen telemetry(const test::Collected& c) {
    Seen s;
    for (const auto& b : c.batches) {
        s.dropped += b.dropped;
        for (const auto& x : b.samples) {
            ++s.samples;
            if (x.batch_size) s.max_batch = std::max(s.max_batch, *x.batch_size);
            if (x.queue_length) s.max_queue = std::max(s.max_queue, *x.queue_length);
            if (x.preemptions) s.preemptions = std::max(s.preemptions, *x.preemptions);
            if (x.kv_hit_rate) s.hit_rate = *x.kv_hit_rate;
        }
    }
    return s;
}

}  // namespace

// Acceptance 2 (issue 20): mixed.workload at concurrency 8 on 36 blocks (its peak at concurrency
// 8 is 57 blocks, its total demand 217) through the agent process completes every request, streams batch-8 steps, prefix hits and
// preemptions, and reports exactly what the scheduler counts locally.
TEST(AgentServe, MixedWorkloadMatchesTheLocalSchedulerCountForCount) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-serve");
    auto l = open_agent(host_agent(dir));
    ASSERT_TRUE(l);
    load(*l, model_path());
    auto c = serve(*l, request(mixed(), 36));
    ASSERT_TRUE(c.ack.has_value()) << (c.error ? c.error->message : "no ack");
    ASSERT_TRUE(c.serve.has_value());
    const ServeReport& r = *c.serve;
    EXPECT_EQ(r.requests.size(), 24u);
    for (const ServedRequest& q : r.requests) EXPECT_GT(q.output_tokens, 0u);
    EXPECT_GT(r.preemptions, 0u);
    EXPECT_GT(r.kv_hit_rate, 0.0);
    EXPECT_LE(r.peak_blocks, 36u);
    EXPECT_NE(r.backend.find("cpu"), std::string::npos) << r.backend;
    expect_same_counts(r, local(mixed(), 36));
    const Seen s = telemetry(c);
    EXPECT_EQ(s.max_batch, 8u);
    EXPECT_GT(s.max_queue, 0u);
    EXPECT_EQ(s.preemptions, r.preemptions);
    EXPECT_DOUBLE_EQ(s.hit_rate, r.kv_hit_rate);
    EXPECT_EQ(s.samples + s.dropped, r.steps) << "one sample per scheduler step";
}

namespace {

std::string shared_prompt() {
    return read_text(std::string(EDGE_SOURCE_DIR) + "/tests/data/workloads/shared_prompt.workload");
}

std::vector<uint64_t> digests(const test::Collected& c) {
    std::vector<uint64_t> d;
    EXPECT_TRUE(c.serve.has_value()) << (c.error ? c.error->message : "no report");
    if (c.serve)
        for (const ServedRequest& q : c.serve->requests) d.push_back(q.logits_digest);
    return d;
}

}  // namespace

// Acceptance 1 (issue 20): every request's logits are bit-identical whether it is served alone
// (concurrency 1), in batches of 8 behind a shared 64-token system prompt, or 3x over the KV budget
// with recompute or LZ4 swap preemption; only the lossy INT8 tier may move them.
TEST(AgentServe, LogitsAreBitIdenticalAloneBatchedAndPreempted) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-serve-bits");
    auto l = open_agent(host_agent(dir));
    ASSERT_TRUE(l);
    load(*l, model_path());
    auto run = [&](uint32_t concurrency, uint64_t budget, PreemptMode mode) {
        ServeWorkload w = request(shared_prompt(), budget, concurrency);
        w.preempt = mode;
        w.digest_logits = true;
        return serve(*l, w);
    };
    auto alone = run(1, 256, PreemptMode::Recompute);
    const auto ref = digests(alone);
    ASSERT_EQ(ref.size(), 16u);
    for (uint64_t d : ref) EXPECT_NE(d, 0u);
    auto batched = run(8, 256, PreemptMode::Recompute);
    EXPECT_EQ(digests(batched), ref) << "batch of 8";
    ASSERT_TRUE(batched.serve);
    EXPECT_GT(batched.serve->kv_hit_rate, 0.3);
    EXPECT_EQ(telemetry(batched).max_batch, 8u);
    auto recompute = run(8, 24, PreemptMode::Recompute);
    EXPECT_EQ(digests(recompute), ref) << "3x over budget, recompute";
    ASSERT_TRUE(recompute.serve);
    EXPECT_GT(recompute.serve->preemptions, 0u);
    auto swap = run(8, 24, PreemptMode::Swap);
    EXPECT_EQ(digests(swap), ref) << "3x over budget, LZ4 swap";
    ASSERT_TRUE(swap.serve);
    EXPECT_GT(swap.serve->preemptions, 0u);
    EXPECT_GT(swap.serve->swap_out_bytes, 0u);
}

// Halving the budget: more preemptions, more recomputed tokens, a longer makespan; everything
// still completes, and the counts still equal the local scheduler's.
TEST(AgentServe, HalvingTheBudgetMovesTheCountsAsExpected) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-serve-half");
    auto l = open_agent(host_agent(dir));
    ASSERT_TRUE(l);
    load(*l, model_path());
    auto full = serve(*l, request(mixed(), 72));
    auto half = serve(*l, request(mixed(), 36));
    ASSERT_TRUE(full.serve && half.serve)
        << (full.error ? full.error->message : "") << (half.error ? half.error->message : "");
    EXPECT_GT(half.serve->preemptions, full.serve->preemptions);
    EXPECT_GT(half.serve->recomputed_tokens, full.serve->recomputed_tokens);
    EXPECT_GE(half.serve->makespan_ms, full.serve->makespan_ms);
    EXPECT_EQ(half.serve->output_tokens, full.serve->output_tokens);
    expect_same_counts(*half.serve, local(mixed(), 36));
}

// Three requests by hand: a 32-token system prompt (two full blocks of 16) and 8, 4 and 6 own
// tokens. Request 0 arrives at 0 and is still decoding (200 tokens) when 1 and 2 arrive at 50
// and 60 ms, so both find its two prefix blocks resident. Context at admission = prompt - 1 (the
// last prompt token is computed, not attached): 39, 35, 37; shared: 0, 32, 32. Hit rate 64/111.
TEST(AgentServe, HandComputedThreeRequestFixture) {
    EDGE_REQUIRE_SHARED(model_path());
    const std::string text = "edge-workload 1\nprefix sys 32\nreq 0 sys 8 200\nreq 50 sys 4 10\nreq 60 sys 6 10\n";
    auto dir = test::temp_dir("agent-serve-three");
    auto l = open_agent(host_agent(dir));
    ASSERT_TRUE(l);
    load(*l, model_path());
    auto c = serve(*l, request(text, 64));
    ASSERT_TRUE(c.serve) << (c.error ? c.error->message : "no report");
    const ServeReport& r = *c.serve;
    ASSERT_EQ(r.requests.size(), 3u);
    const uint64_t ctx[] = {39, 35, 37}, shared[] = {0, 32, 32};
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r.requests[i].context_tokens, ctx[i]) << i;
        EXPECT_EQ(r.requests[i].shared_tokens, shared[i]) << i;
    }
    EXPECT_DOUBLE_EQ(r.kv_hit_rate, 64.0 / 111.0);
    EXPECT_EQ(r.preemptions, 0u);
    EXPECT_EQ(r.output_tokens, 220u);
}

// Bad input is an error to that request only; the same agent then serves the next one.
TEST(AgentServe, BadWorkloadsAndBudgetsAreClearErrorsAndTheAgentServesOn) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-serve-bad");
    auto l = open_agent(host_agent(dir));
    ASSERT_TRUE(l);
    {  // before any engine is loaded
        auto c = serve(*l, request(mixed(), 72));
        ASSERT_TRUE(c.error.has_value());
        EXPECT_EQ(c.error->code, ErrorCode::NotLoaded);
        EXPECT_NE(c.error->message.find("load-engine first"), std::string::npos) << c.error->message;
    }
    load(*l, model_path());
    {
        auto c = serve(*l, request("edge-workload 1\nreq 0 - 10 5\nreq zero - 10 5\n", 72));
        ASSERT_TRUE(c.error.has_value());
        EXPECT_EQ(c.error->code, ErrorCode::BadRequest);
        EXPECT_NE(c.error->message.find("serve-workload:3"), std::string::npos) << c.error->message;
    }
    {
        auto c = serve(*l, request(mixed(), 4));  // its longest request needs more than 4 blocks
        ASSERT_TRUE(c.error.has_value());
        EXPECT_NE(c.error->message.find("could never run"), std::string::npos) << c.error->message;
    }
    {
        auto w = request(mixed(), 72);
        w.concurrency = 0;
        auto c = serve(*l, w);
        ASSERT_TRUE(c.error.has_value());
        EXPECT_NE(c.error->message.find("concurrency"), std::string::npos) << c.error->message;
    }
    auto ok = serve(*l, request(mixed(), 72));
    ASSERT_TRUE(ok.serve) << (ok.error ? ok.error->message : "no report");
    EXPECT_EQ(ok.serve->requests.size(), 24u);
}

// --kv-budget at agent start: nonsense is refused before the agent speaks.
TEST(AgentServe, AKvBudgetThatHoldsNothingIsRefusedAtStart) {
    for (const char* bad : {"0", "-3", "1.5", "12 GB", "lots"}) {
        std::string cmd = std::string(EDGE_AGENT_PATH) + " --kv-budget '" + bad + "' --version 2>&1";
        FILE* p = popen(cmd.c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string out;
        char buf[256];
        while (fgets(buf, sizeof buf, p)) out += buf;
        const int rc = pclose(p);
        EXPECT_NE(rc, 0) << bad;
        EXPECT_NE(out.find("--kv-budget"), std::string::npos) << bad << ": " << out;
    }
}

#if defined(EDGE_AARCH64_AGENT) && defined(EDGE_QEMU_AARCH64)
// The cross-built aarch64 agent under qemu-user serves the same workload with the same counts.
TEST(AgentServe, Aarch64AgentUnderQemuServesWithTheSameCounts) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-serve-qemu");
    auto l = open_agent({EDGE_QEMU_AARCH64, "-L", "/usr/aarch64-linux-gnu", EDGE_AARCH64_AGENT, "--threads", "2",
                         "--lock", (dir / "agent.lock").string(), "--root", dir.string()});
    ASSERT_TRUE(l);
    load(*l, model_path());
    auto c = serve(*l, request(mixed(), 36), 300000);
    ASSERT_TRUE(c.serve) << (c.error ? c.error->message : "no report");
    EXPECT_GT(c.serve->preemptions, 0u);
    expect_same_counts(*c.serve, local(mixed(), 36));
}
#endif
