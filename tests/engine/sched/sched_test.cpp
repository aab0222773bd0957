// engine/sched: workload files, and acceptance 3 of issue 6 on stories260K: a workload whose KV
// demand is 3x the budget completes; with recompute or lossless swap every output equals running
// the request alone; through the lossy INT8 tier agreement and KL are computed and sane.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "engine/model/loader.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/sched/scheduler.h"
#include "engine/sched/workload.h"
#include "test_support.h"

using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

using namespace edge;
using namespace edge::sched;

namespace {

std::shared_ptr<const Model> stories() {
    static std::shared_ptr<const Model> m = [] {
        auto r = load_model(test::shared("models/stories260K/stories260K.gguf"));
        EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.message());
        return r.ok() ? std::make_shared<Model>(std::move(r).value()) : nullptr;
    }();
    return m;
}

std::unique_ptr<LlamaCpu> executor() {
    auto rt = LlamaCpu::create(stories(), RuntimeOptions{2, 256});
    EXPECT_TRUE(rt.ok()) << (rt.ok() ? "" : rt.message());
    return std::move(rt).value();
}

// 12 requests arriving over 6 ms, half behind a 40-token system prompt.
const char* kWorkload = R"(edge-workload 1
# acceptance workload: KV demand 3x the budget
prefix sys 40
req 0 sys 12 40
req 0 - 30 36
req 0.5 sys 25 32
req 1 - 18 44
req 1 sys 5 40
req 2 - 41 30
req 2.5 sys 33 28
req 3 - 9 48
req 4 sys 20 36
req 4 - 27 40
req 5 sys 14 44
req 6 - 36 32
)";

std::vector<ServeRequest> requests(const Workload& w, int vocab) {
    std::vector<ServeRequest> out;
    for (size_t i = 0; i < w.requests.size(); ++i)
        out.push_back(ServeRequest{w.requests[i].arrival_ms, prompt_tokens(w, i, vocab), w.requests[i].output_tokens});
    return out;
}

}  // namespace

TEST(Workload, ParsesPrefixesAndRequests) {
    auto w = parse_workload(kWorkload, "w.txt");
    ASSERT_TRUE(w.ok()) << w.message();
    ASSERT_EQ(w->requests.size(), 12u);
    EXPECT_EQ(w->prefixes.size(), 1u);
    EXPECT_EQ(w->requests[0].prefix, 0);
    EXPECT_EQ(w->requests[1].prefix, -1);
    const auto p0 = prompt_tokens(*w, 0, 512), p2 = prompt_tokens(*w, 2, 512);
    EXPECT_EQ(p0.size(), 52u);
    EXPECT_TRUE(std::equal(p0.begin(), p0.begin() + 40, p2.begin())) << "the prefix is shared";
    EXPECT_NE(p0[40], p2[40]);
    for (int32_t t : p0) EXPECT_TRUE(t >= 1 && t < 512);
}

TEST(Workload, BadLinesNameFileLineAndProblem) {
    struct Case {
        const char* text;
        const char* want;
    } cases[] = {
        {"", "empty file"},
        {"edge-workload 2\nreq 0 - 1 1\n", "w:1: workload version 2"},
        {"hello\n", "w:1: expected the header"},
        {"edge-workload 1\nreq 0 - 5\n", "w:2: 'req' takes"},
        {"edge-workload 1\n# c\nreq -3 - 5 5\n", "w:3: arrival time '-3'"},
        {"edge-workload 1\nreq 0 nope 5 5\n", "w:2: unknown prefix 'nope'"},
        {"edge-workload 1\nreq 0 - 5 0\n", "w:2: output length '0'"},
        {"edge-workload 1\nreq 0 - x 4\n", "w:2: prompt length 'x'"},
        {"edge-workload 1\nreq 0 - 0 4\n", "w:2: a request without a prefix"},
        {"edge-workload 1\nprefix a 99999999\n", "w:2: prefix 'a': token count"},
        {"edge-workload 1\nprefix a 4\nprefix a 5\n", "w:3: prefix 'a' is defined twice"},
        {"edge-workload 1\nfoo 1 2\n", "w:2: unknown line kind 'foo'"},
        {"edge-workload 1\n# nothing\n", "no requests"},
    };
    for (const Case& c : cases) {
        auto w = parse_workload(c.text, "w");
        ASSERT_FALSE(w.ok()) << c.text;
        EXPECT_NE(w.message().find(c.want), std::string::npos) << w.message();
    }
    auto missing = read_workload("/nonexistent/w.txt");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.message().find("/nonexistent/w.txt"), std::string::npos);
}

TEST(Scheduler, BadBudgetsAreClearErrors) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    auto rt = executor();
    auto w = parse_workload(kWorkload, "w");
    ASSERT_TRUE(w.ok());
    const auto reqs = requests(*w, rt->config().vocab_size);
    SchedConfig c;
    c.budget_blocks = 0;
    auto r0 = serve(*rt, reqs, c);
    ASSERT_FALSE(r0.ok());
    EXPECT_NE(r0.message().find("at least one block"), std::string::npos) << r0.message();
    c.budget_blocks = int64_t(1) << 40;
    auto r1 = serve(*rt, reqs, c);
    ASSERT_FALSE(r1.ok());
    EXPECT_NE(r1.message().find("absurd"), std::string::npos) << r1.message();
    c.budget_blocks = 16;
    c.block_tokens = 0;
    auto r2 = serve(*rt, reqs, c);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.message().find("block size"), std::string::npos) << r2.message();
    c.block_tokens = 16;
    c.budget_blocks = 4;  // request 0 needs 92 tokens = 6 blocks
    auto r3 = serve(*rt, reqs, c);
    ASSERT_FALSE(r3.ok());
    EXPECT_NE(r3.message().find("request 0: needs 6 KV blocks"), std::string::npos) << r3.message();
}

TEST(Scheduler, ThreeTimesOverBudgetCompletesAndMatchesRunningAlone) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    auto paged = executor();
    auto alone = executor();
    auto w = parse_workload(kWorkload, "w");
    ASSERT_TRUE(w.ok());
    const auto reqs = requests(*w, paged->config().vocab_size);
    auto ref = run_alone(*alone, reqs, true);
    ASSERT_TRUE(ref.ok()) << ref.message();

    SchedConfig c;
    c.block_tokens = 16;
    c.max_batch_tokens = 48;
    c.prefill_chunk = 16;
    c.step_ms = 1.0;  // a reproducible schedule
    c.record_logits = true;
    int64_t demand = 0;
    for (const auto& q : reqs) demand += (int64_t(q.prompt.size()) + q.output_tokens + 15) / 16;
    c.budget_blocks = demand / 3;
    ASSERT_GE(c.budget_blocks, 7);  // the longest request fits alone

    for (Preempt mode : {Preempt::Recompute, Preempt::Swap, Preempt::SwapInt8}) {
        c.preempt = mode;
        auto r = serve(*paged, reqs, c);
        ASSERT_TRUE(r.ok()) << r.message();
        const Aggregate& a = r->total;
        EXPECT_EQ(a.demand_blocks, demand);
        EXPECT_LE(a.peak_blocks, c.budget_blocks);
        EXPECT_GT(a.preemptions, 0) << preempt_name(mode) << ": the budget never forced a preemption";
        ASSERT_EQ(r->outputs.size(), reqs.size());
        for (size_t i = 0; i < reqs.size(); ++i) {
            EXPECT_EQ(int(r->outputs[i].size()), reqs[i].output_tokens) << "request " << i << " incomplete";
            EXPECT_GE(r->requests[i].ttft_ms, 0.0);
            EXPECT_GE(r->requests[i].finish_ms, r->requests[i].arrival_ms);
        }
        EXPECT_GT(a.kv_hit_rate, 0.0) << "the system prompt was never shared";
        EXPECT_GT(a.tokens_per_s, 0.0);
        const Agreement g = compare(*ref, *r);
        if (mode == Preempt::Recompute) {
            EXPECT_GT(a.recomputed_tokens, 0);
            EXPECT_EQ(a.swap_out_bytes, 0u);
        } else {
            EXPECT_GT(a.swap_out_bytes, 0u);
            EXPECT_GT(a.swap_in_bytes, 0u);
        }
        if (mode != Preempt::SwapInt8) {
            for (size_t i = 0; i < reqs.size(); ++i)
                EXPECT_EQ(r->outputs[i], ref->outputs[i])
                    << preempt_name(mode) << ": request " << i << " differs from running alone";
            EXPECT_EQ(g.identical_requests, int(reqs.size()));
            EXPECT_EQ(g.max_kl, 0.0) << preempt_name(mode) << ": logits differ from running alone";
        } else {
            // lossy: reported (docs/kv.md), asserted only to be computed and sane
            EXPECT_GT(g.kl_steps, 0);
            EXPECT_TRUE(std::isfinite(g.mean_kl));
            EXPECT_GE(g.mean_kl, 0.0);
            EXPECT_LT(g.mean_kl, 0.5) << "INT8 K/V should perturb the next-token distribution only slightly";
            EXPECT_GT(g.token_agreement, 0.0);
            EXPECT_LE(g.token_agreement, 1.0);
            std::printf(
                "swap-int8: token agreement %.3f, mean KL %.3g, max KL %.3g over %lld steps, %d/%zu identical\n",
                g.token_agreement, g.mean_kl, g.max_kl, (long long)g.kl_steps, g.identical_requests, reqs.size());
        }
    }
}

// An executor that keeps K/V rows in its own device memory (the CUDA backend says so in its
// capabilities) cannot hand preempted requests' rows to the host tier: swap is refused before
// anything runs, naming the executor; recompute is the way. The step itself is never reached.
TEST(Scheduler, SwapIsRefusedForAnExecutorThatKeepsKvOnItsDevice) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    struct DeviceKv final : runtime::Executor {
        std::unique_ptr<LlamaCpu> cpu = executor();
        int steps = 0;
        Result<const float*> step(kv::PagedKv& kv, std::span<const runtime::PagedStep> b) override {
            ++steps;
            return cpu->step(kv, b);
        }
        const LlamaConfig& config() const override { return cpu->config(); }
        runtime::ExecutorCaps capabilities() const override {
            auto c = cpu->capabilities();
            c.name = "device-kv test executor";
            c.kv_on_device = true;
            return c;
        }
        runtime::ExecutorMemory held_memory() const override { return cpu->held_memory(); }
    } dev;
    auto w = parse_workload(kWorkload, "w");
    ASSERT_TRUE(w.ok());
    const auto reqs = requests(*w, dev.config().vocab_size);
    for (Preempt p : {Preempt::Swap, Preempt::SwapInt8}) {
        SchedConfig c;
        c.budget_blocks = 24;
        c.preempt = p;
        auto r = serve(dev, reqs, c);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.message().find("device-kv test executor keeps K/V rows in device memory: preemption by " +
                                   preempt_name(p) + " needs them on the host tier; use recompute"),
                  std::string::npos)
            << r.message();
    }
    EXPECT_EQ(dev.steps, 0);
}
