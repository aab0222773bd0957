// Acceptance 1 (issue 6): attention through block tables in the CPU executor. A prompt in one
// step vs in chunks across block borders, and shared vs unshared blocks, give bit-identical
// logits on stories260K.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "engine/kv/paged_kv.h"
#include "engine/model/loader.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "test_support.h"

using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::runtime::PagedStep;
using edge::runtime::RuntimeOptions;

using namespace edge;

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

kv::PagedKv cache(const LlamaConfig& c, int64_t blocks, int block_tokens = 16) {
    auto kv =
        kv::PagedKv::create(kv::KvConfig{kv::KvShape{c.n_layers, c.n_kv_heads, c.head_dim, block_tokens}, blocks});
    EXPECT_TRUE(kv.ok()) << (kv.ok() ? "" : kv.message());
    return std::move(kv).value();
}

bool same(const float* a, const float* b, int n) { return std::memcmp(a, b, sizeof(float) * size_t(n)) == 0; }

// Logits of every generated step of a sequence run alone (the executor's own single-sequence
// KV memory, the whole prompt in one step): after the prompt, then `steps` greedy tokens.
std::vector<std::vector<float>> alone(const std::vector<int32_t>& prompt, int steps) {
    auto rt = executor();
    const int V = rt->config().vocab_size;
    std::vector<std::vector<float>> out;
    const float* l = rt->prefill(prompt.data(), int(prompt.size()), 0);
    int pos = int(prompt.size());
    for (int s = 0; s < steps; ++s) {
        out.emplace_back(l, l + V);
        l = rt->forward(argmax(l, V), pos++);
    }
    return out;
}

}  // namespace

TEST(PagedAttention, ChunkedPrefillMatchesOneStepBitForBit) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    auto ref = executor();
    auto paged = executor();
    const int V = ref->config().vocab_size;
    const std::vector<int32_t> prompt = test::random_tokens(53, 1, V);
    std::vector<float> all(prompt.size() * size_t(V));
    ref->prefill(prompt.data(), int(prompt.size()), 0, all.data());
    // chunked prefill through another KV memory (chunks of 7 cross block borders)
    kv::PagedKv kv = cache(paged->config(), 16);
    for (size_t p = 0; p < prompt.size(); p += 7) {
        const size_t n = std::min<size_t>(7, prompt.size() - p);
        auto l = paged->forward_paged(kv, std::vector<PagedStep>{{5, std::span(prompt).subspan(p, n)}});
        ASSERT_TRUE(l.ok()) << l.message();
        EXPECT_TRUE(same(*l, &all[(p + n - 1) * size_t(V)], V)) << "prefill chunk at " << p;
    }
    // greedy decode, both ways
    int32_t next = argmax(&all[(prompt.size() - 1) * size_t(V)], V);
    for (int pos = int(prompt.size()); pos < int(prompt.size()) + 24; ++pos) {
        const float* a = ref->forward(next, pos);
        auto b = paged->forward_paged(kv, std::vector<PagedStep>{{5, std::span(&next, 1)}});
        ASSERT_TRUE(b.ok()) << b.message();
        ASSERT_TRUE(same(a, *b, V)) << "decode position " << pos;
        next = argmax(a, V);
    }
    EXPECT_EQ(kv.seq_len(5), int(prompt.size()) + 24);
    EXPECT_TRUE(kv.check().ok());
}

// Four sequences behind one 40-token system prompt: two attach its full blocks (prefix sharing),
// one forks the whole prompt (its partial last block is then copied on write), all decode in one
// batch. Each one's logits equal running it alone, and the shared blocks are held once.
TEST(PagedAttention, SharedPrefixBatchEqualsEachSequenceAlone) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    auto paged = executor();
    const int V = paged->config().vocab_size;
    const std::vector<int32_t> sys = test::random_tokens(40, 7, V);
    std::vector<std::vector<int32_t>> prompts;
    for (int i = 0; i < 4; ++i) {
        std::vector<int32_t> p = sys;
        const auto own = test::random_tokens(3 + 9 * i, 100 + uint32_t(i), V);
        p.insert(p.end(), own.begin(), own.end());
        prompts.push_back(p);
    }
    constexpr int kSteps = 16;
    kv::PagedKv kv = cache(paged->config(), 64);
    ASSERT_TRUE(paged->forward_paged(kv, std::vector<PagedStep>{{0, std::span(sys)}}).ok());
    ASSERT_TRUE(kv.apply(kv::op::Fork{0, 3}).ok());
    for (kv::SeqId s : {1, 2}) {
        auto a = kv.apply(kv::op::AttachPrefix{s, prompts[size_t(s)]});
        ASSERT_TRUE(a.ok()) << a.message();
        EXPECT_EQ(a->tokens_shared, 32);  // the two full blocks of the system prompt
    }
    EXPECT_EQ(kv.refcount(kv.block_table(0)[0]), 4);
    EXPECT_EQ(kv.refcount(kv.block_table(0)[2]), 2);  // the partial block: seq 0 and its fork
    // one batch: the rest of every prompt (seq 3 writes into the forked partial block: copy on write)
    std::vector<PagedStep> batch;
    batch.reserve(4);
    for (kv::SeqId s = 0; s < 4; ++s)
        batch.push_back({s, std::span(prompts[size_t(s)]).subspan(size_t(kv.seq_len(s)))});
    auto l = paged->forward_paged(kv, batch);
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_NE(kv.block_table(3)[2], kv.block_table(0)[2]) << "the fork's partial block was not copied on write";
    EXPECT_EQ(kv.block_table(1)[0], kv.block_table(2)[0]);
    EXPECT_TRUE(kv.check().ok());

    std::vector<std::vector<std::vector<float>>> ref;
    ref.reserve(prompts.size());
    for (const auto& p : prompts) ref.push_back(alone(p, kSteps));
    std::vector<int32_t> next(4);
    for (int step = 0; step < kSteps; ++step) {
        for (int s = 0; s < 4; ++s) {
            ASSERT_TRUE(same(*l + size_t(s) * V, ref[size_t(s)][size_t(step)].data(), V))
                << "sequence " << s << " step " << step;
            next[size_t(s)] = argmax(*l + size_t(s) * V, V);
        }
        batch.clear();
        for (kv::SeqId s = 0; s < 4; ++s) batch.push_back({s, std::span(&next[size_t(s)], 1)});
        l = paged->forward_paged(kv, batch);
        ASSERT_TRUE(l.ok()) << l.message();
    }
    // shared: 2 system blocks held once instead of four times
    const auto u = kv.usage();
    int64_t unshared = 0;
    for (kv::SeqId s = 0; s < 4; ++s) unshared += int64_t(kv.block_table(s).size());
    EXPECT_EQ(u.blocks_used, unshared - 6);
    EXPECT_TRUE(kv.check().ok());
}

TEST(PagedAttention, BadBatchesAreErrorsAndLeaveTheCacheUnchanged) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    auto paged = executor();
    const int V = paged->config().vocab_size;
    const auto c = paged->config();
    const std::vector<int32_t> p = test::random_tokens(40, 3, V);
    // a cache of the wrong shape
    auto wrong = kv::PagedKv::create(kv::KvConfig{kv::KvShape{c.n_layers + 1, c.n_kv_heads, c.head_dim, 16}, 8});
    ASSERT_TRUE(wrong.ok());
    auto e1 = paged->forward_paged(*wrong, std::vector<PagedStep>{{0, std::span(p)}});
    ASSERT_FALSE(e1.ok());
    EXPECT_NE(e1.message().find("does not match the model"), std::string::npos) << e1.message();
    // budget exhausted: 40 tokens need 3 blocks of 16, only 2
    kv::PagedKv small = cache(c, 2);
    auto e2 = paged->forward_paged(small, std::vector<PagedStep>{{0, std::span(p)}});
    ASSERT_FALSE(e2.ok());
    EXPECT_NE(e2.message().find("KV budget exhausted"), std::string::npos) << e2.message();
    EXPECT_FALSE(small.has_seq(0));
    EXPECT_EQ(small.free_blocks(), 2);
    // the same sequence twice, and a position past max_seq
    kv::PagedKv kv = cache(c, 32);
    auto e3 = paged->forward_paged(kv, std::vector<PagedStep>{{1, std::span(p)}, {1, std::span(p)}});
    ASSERT_FALSE(e3.ok());
    EXPECT_NE(e3.message().find("twice"), std::string::npos) << e3.message();
    std::vector<int32_t> longp(300, 5);
    auto e4 = paged->forward_paged(kv, std::vector<PagedStep>{{1, std::span(longp)}});
    ASSERT_FALSE(e4.ok());
    EXPECT_NE(e4.message().find("maximum"), std::string::npos) << e4.message();
    EXPECT_EQ(kv.free_blocks(), 32);
    EXPECT_TRUE(kv.check().ok());
}
