#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/kv/paged_kv.h"
#include "engine/kv/waste.h"
#include "test_support.h"

using namespace edge::kv;

namespace {

constexpr KvShape kShape{2, 2, 4, 16};  // 2 layers, kv_dim 8, blocks of 16

PagedKv make(int64_t blocks, bool data = true) {
    auto kv = PagedKv::create(KvConfig{kShape, blocks, data});
    EXPECT_TRUE(kv.ok()) << (kv.ok() ? "" : kv.message());
    return std::move(kv.value());
}

// rows [token][layer][kv_dim] with value = seq * 1e4 + pos * 10 + layer (+0.5 for V)
struct Rows {
    std::vector<int32_t> tokens;
    std::vector<float> k, v;
};
Rows rows(int seq, int from, int n, int token_base = 0) {
    Rows r;
    const int kvd = kShape.kv_dim();
    for (int i = 0; i < n; ++i) {
        r.tokens.push_back(token_base + from + i);
        for (int l = 0; l < kShape.n_layers; ++l)
            for (int j = 0; j < kvd; ++j) {
                r.k.push_back(float(seq * 10000 + (from + i) * 10 + l));
                r.v.push_back(float(seq * 10000 + (from + i) * 10 + l) + 0.5f);
            }
    }
    return r;
}
edge::Result<KvApplied> append(PagedKv& kv, SeqId s, const Rows& r) {
    return kv.apply(op::Append{s, r.tokens, r.k.data(), r.v.data()});
}

}  // namespace

TEST(PagedKv, BadConfigurationIsAClearError) {
    auto zero_block = PagedKv::create(KvConfig{KvShape{2, 2, 4, 0}, 8});
    ASSERT_FALSE(zero_block.ok());
    EXPECT_NE(zero_block.message().find("block size"), std::string::npos) << zero_block.message();
    auto zero_budget = PagedKv::create(KvConfig{kShape, 0});
    ASSERT_FALSE(zero_budget.ok());
    EXPECT_NE(zero_budget.message().find("at least one block"), std::string::npos) << zero_budget.message();
    auto absurd = PagedKv::create(KvConfig{kShape, int64_t(1) << 40});
    ASSERT_FALSE(absurd.ok());
    EXPECT_NE(absurd.message().find("absurd"), std::string::npos) << absurd.message();
    auto absurd_bytes = PagedKv::create(KvConfig{KvShape{4096, 64, 128, 16}, 1 << 20});
    ASSERT_TRUE(edge::test::fails_with(absurd_bytes,
                                       {"KV device tier budget of 1048576 blocks x 4294967296 bytes e", "absurd"}));
    EXPECT_TRUE(edge::test::fails_with(PagedKv::create(KvConfig{KvShape{0, 2, 4, 16}, 8}),
                                       {"KV layer count 0 is out of range [1, 4096]"}));
    EXPECT_TRUE(edge::test::fails_with(PagedKv::create(KvConfig{KvShape{2, -1, 4, 16}, 8}),
                                       {"KV head count -1 is out of range [1, 4096]"}));
}

TEST(PagedKv, AppendThenReadRowsThroughTheBlockTable) {
    PagedKv kv = make(8);
    ASSERT_TRUE(append(kv, 1, rows(1, 0, 37)).ok());
    EXPECT_EQ(kv.seq_len(1), 37);
    EXPECT_EQ(kv.block_table(1).size(), 3u);
    for (int pos = 0; pos < 37; ++pos)
        for (int l = 0; l < 2; ++l) {
            EXPECT_EQ(kv.key_row(1, l, pos)[3], float(10000 + pos * 10 + l));
            EXPECT_EQ(kv.value_row(1, l, pos)[0], float(10000 + pos * 10 + l) + 0.5f);
        }
    EXPECT_EQ(kv.key_row(1, 0, 37), nullptr);
    EXPECT_TRUE(kv.check().ok());
}

TEST(PagedKv, NoLeakAfterManySequences) {
    PagedKv kv = make(64, false);
    for (int round = 0; round < 5; ++round) {
        for (SeqId s = 0; s < 8; ++s) {
            Rows r = rows(s, 0, 17 + 13 * s, 1000 * s + round * 100000);
            ASSERT_TRUE(kv.apply(op::Append{s, r.tokens}).ok());
        }
        ASSERT_TRUE(kv.check().ok()) << kv.check().message();
        for (SeqId s = 0; s < 8; ++s) ASSERT_TRUE(kv.apply(op::Remove{s}).ok());
        EXPECT_EQ(kv.free_blocks(), 64);
        ASSERT_TRUE(kv.check().ok());
    }
}

TEST(PagedKv, ForkSharesBlocksAndCopiesOnWrite) {
    PagedKv kv = make(8);
    ASSERT_TRUE(append(kv, 1, rows(1, 0, 20)).ok());
    ASSERT_TRUE(kv.apply(op::Fork{1, 2}).ok());
    const auto t1 = kv.block_table(1);
    EXPECT_EQ(kv.refcount(t1[0]), 2);
    EXPECT_EQ(kv.refcount(t1[1]), 2);
    EXPECT_EQ(kv.free_blocks(), 6);
    // seq 2 diverges inside the shared partial block: that block is copied, the full one is not
    auto a = append(kv, 2, rows(2, 20, 3));
    ASSERT_TRUE(a.ok()) << a.message();
    EXPECT_EQ(a->cow_copies, 1);
    EXPECT_EQ(kv.block_table(2)[0], kv.block_table(1)[0]);
    EXPECT_NE(kv.block_table(2)[1], kv.block_table(1)[1]);
    EXPECT_EQ(kv.refcount(kv.block_table(1)[0]), 2);
    EXPECT_EQ(kv.refcount(kv.block_table(1)[1]), 1);
    EXPECT_EQ(kv.seq_len(1), 20);
    EXPECT_EQ(kv.seq_len(2), 23);
    for (int pos = 0; pos < 20; ++pos)
        EXPECT_EQ(kv.key_row(2, 1, pos)[0], float(10000 + pos * 10 + 1));  // seq 1's rows
    EXPECT_EQ(kv.key_row(2, 0, 21)[0], float(20000 + 210));
    // seq 1 now owns its partial block alone: appending writes in place, no copy
    auto b = append(kv, 1, rows(1, 20, 2));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->cow_copies, 0);
    EXPECT_EQ(kv.key_row(1, 0, 20)[0], float(10000 + 200));
    EXPECT_TRUE(kv.check().ok()) << kv.check().message();
    ASSERT_TRUE(kv.apply(op::Remove{1}).ok());
    ASSERT_TRUE(kv.apply(op::Remove{2}).ok());
    EXPECT_EQ(kv.free_blocks(), 8);
}

TEST(PagedKv, PrefixSharingByContentHash) {
    PagedKv kv = make(16);
    Rows sys = rows(1, 0, 50);  // 3 full blocks + 2 tokens
    ASSERT_TRUE(append(kv, 1, sys).ok());
    const int64_t used_one = 16 - kv.free_blocks();
    auto at = kv.apply(op::AttachPrefix{2, sys.tokens});
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(at->tokens_shared, 48);
    EXPECT_EQ(16 - kv.free_blocks(), used_one);  // attaching allocates nothing
    Rows rest = rows(1, 48, 2);
    ASSERT_TRUE(append(kv, 2, rest).ok());
    EXPECT_EQ(kv.key_row(2, 1, 47)[0], kv.key_row(1, 1, 47)[0]);
    EXPECT_EQ(kv.refcount(kv.block_table(1)[2]), 2);
    // a different token in block 1 breaks the chain from there on
    Rows other = sys;
    other.tokens[20] = -5;
    auto at3 = kv.apply(op::AttachPrefix{3, other.tokens});
    ASSERT_TRUE(at3.ok());
    EXPECT_EQ(at3->tokens_shared, 16);
    // blocks that fill up with the same content after the same prefix are deduplicated
    PagedKv kv2 = make(16);
    ASSERT_TRUE(append(kv2, 1, sys).ok());
    auto dup = append(kv2, 2, sys);
    ASSERT_TRUE(dup.ok());
    EXPECT_EQ(dup->dedup_hits, 3);
    EXPECT_EQ(16 - kv2.free_blocks(), 3 + 2);  // 3 shared full blocks, 2 private partial ones
    EXPECT_TRUE(kv.check().ok());
    EXPECT_TRUE(kv2.check().ok());
    ASSERT_TRUE(kv2.apply(op::Remove{1}).ok());
    EXPECT_EQ(kv2.seq_len(2), 50);
    EXPECT_EQ(kv2.key_row(2, 0, 49)[0], float(10000 + 490));
    ASSERT_TRUE(kv2.apply(op::Remove{2}).ok());
    EXPECT_EQ(kv2.free_blocks(), 16);
    EXPECT_TRUE(kv2.check().ok());
}

TEST(PagedKv, FailedApplyLeavesTheCacheUnchanged) {
    PagedKv kv = make(3);
    ASSERT_TRUE(append(kv, 1, rows(1, 0, 40)).ok());
    const KvUsage before = kv.usage();
    auto r = append(kv, 1, rows(1, 40, 20));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("budget exhausted"), std::string::npos) << r.message();
    EXPECT_EQ(kv.usage().blocks_used, before.blocks_used);
    EXPECT_EQ(kv.seq_len(1), 40);
    EXPECT_TRUE(kv.check().ok());
    EXPECT_TRUE(edge::test::fails_with(kv.apply(op::Remove{9}), {"KV remove", "sequence 9 does not exist"}));
    EXPECT_TRUE(edge::test::fails_with(kv.apply(op::Fork{9, 10}), {"KV fork", "source sequence 9 does not exist"}));
    EXPECT_TRUE(edge::test::fails_with(kv.apply(op::Fork{1, 1}), {"KV fork", "target sequence 1 already exists"}));
    Rows k_only = rows(2, 0, 1);
    EXPECT_TRUE(edge::test::fails_with(kv.apply(op::Append{2, k_only.tokens, k_only.k.data(), nullptr}),
                                       {"KV append to sequence 2", "K given without V or V without K"}));
    EXPECT_TRUE(edge::test::fails_with(kv.apply(op::AttachPrefix{1, k_only.tokens}),
                                       {"KV attach-prefix", "sequence 1 already holds 40 tokens"}));
    EXPECT_TRUE(kv.check().ok());
}

TEST(PagedKvWaste, MixedWorkloadUnderFourPercent) {
    auto w = measure_waste(KvShape{22, 4, 64, 16}, MixedWorkload{});
    ASSERT_TRUE(w.ok()) << w.message();
    EXPECT_LT(w->paged_waste, 0.04);
    EXPECT_GT(w->contiguous_waste, 0.3);
    EXPECT_LT(w->paged_peak_bytes, w->contiguous_peak_bytes);
    MixedWorkload bad;
    bad.prompt_min = 0;
    EXPECT_TRUE(edge::test::fails_with(measure_waste(KvShape{22, 4, 64, 16}, bad),
                                       {"workload prompt length range [0, 1024] is invalid"}));
    EXPECT_TRUE(edge::test::fails_with(measure_waste(KvShape{22, 4, 64, 0}, MixedWorkload{}),
                                       {"KV block size must be at least 1 token (got 0)"}));
}

TEST(PagedKvWaste, PrefixSharingSavesMemory) {
    auto s = measure_prefix_sharing(kShape, 32, 512, 64, 3);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(s->blocks_unshared, 32 * 36);
    EXPECT_EQ(s->blocks_shared, 32 + 32 * 4);
    EXPECT_GT(s->saving(), 0.8);
}

// op::Write fills rows of appended tokens through the block table; no_share keeps approximate
// (lossy-restored) K/V out of the prefix index.
TEST(PagedKv, WriteRowsAndNoShareSequences) {
    PagedKv kv = make(8);
    const Rows r = rows(1, 0, 20);
    ASSERT_TRUE(kv.apply(op::Append{1, r.tokens}).ok());  // bookkeeping only
    const int kvd = kShape.kv_dim();
    std::vector<float> k(size_t(20) * kvd), v(k.size());
    for (size_t i = 0; i < k.size(); ++i) k[i] = float(i), v[i] = -float(i);
    ASSERT_TRUE(kv.apply(op::Write{1, 1, 0, 20, k.data(), v.data()}).ok());
    EXPECT_EQ(kv.key_row(1, 1, 17)[3], float(17 * kvd + 3));
    EXPECT_EQ(kv.value_row(1, 1, 17)[3], -float(17 * kvd + 3));
    auto past = kv.apply(op::Write{1, 0, 15, 6, k.data(), v.data()});
    ASSERT_FALSE(past.ok());
    EXPECT_NE(past.message().find("not all appended"), std::string::npos) << past.message();
    EXPECT_TRUE(
        edge::test::fails_with(kv.apply(op::Write{1, 2, 0, 1, k.data(), v.data()}),
                               {"KV write to sequence 1", "layer 2 out of range (2 layers)"}));  // layer out of range
    EXPECT_TRUE(edge::test::fails_with(kv.apply(op::Write{9, 0, 0, 1, k.data(), v.data()}),
                                       {"KV write", "sequence 9 does not exist"}));  // no such sequence
    // a no_share sequence's full block is not indexed: nobody can attach to it
    const Rows s = rows(2, 0, 16, 500);
    ASSERT_TRUE(kv.apply(op::Append{2, s.tokens, s.k.data(), s.v.data(), true}).ok());
    auto a = kv.apply(op::AttachPrefix{3, s.tokens});
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->tokens_shared, 0);
    EXPECT_EQ(kv.blocks_needed(3, 16), 1);
    EXPECT_EQ(kv.blocks_needed(1, 12), 0);  // fills the partial block
    EXPECT_EQ(kv.blocks_needed(1, 13), 1);
    EXPECT_TRUE(kv.check().ok());
}

// Truncate keeps a prefix and forgets the rest: blocks past it return to the free list, a block
// left partial stops serving other sequences' prefixes, a shared block is copied first so the
// other sequence keeps its tokens, and appending continues at the new length.
TEST(PagedKv, TruncateKeepsAPrefixAndCopiesASharedBlock) {
    PagedKv kv = make(8);
    ASSERT_TRUE(append(kv, 1, rows(1, 0, 40)).ok());  // blocks: 16 + 16 + 8
    EXPECT_EQ(kv.free_blocks(), 5);
    auto t = kv.apply(op::Truncate{1, 20});
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ(t->blocks_freed, 1);
    EXPECT_EQ(kv.seq_len(1), 20);
    EXPECT_EQ(kv.free_blocks(), 6);
    EXPECT_TRUE(kv.check().ok()) << kv.check().message();
    // the second block is partial now: a prompt with the old 32 tokens shares only the first
    Rows old = rows(1, 0, 32);
    auto at = kv.apply(op::AttachPrefix{2, old.tokens});
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(at->tokens_shared, 16);
    ASSERT_TRUE(kv.apply(op::Remove{2}).ok());
    // appending continues at 20 with new rows
    ASSERT_TRUE(append(kv, 1, rows(3, 20, 4)).ok());
    EXPECT_EQ(kv.seq_len(1), 24);
    EXPECT_EQ(kv.key_row(1, 0, 19)[0], float(10000 + 190));
    EXPECT_EQ(kv.key_row(1, 0, 20)[0], float(30000 + 200));

    // a fork shares both blocks; truncating one side into the shared block copies it
    ASSERT_TRUE(kv.apply(op::Fork{1, 4}).ok());
    auto t2 = kv.apply(op::Truncate{4, 18});
    ASSERT_TRUE(t2.ok()) << t2.message();
    EXPECT_EQ(t2->cow_copies, 1);
    EXPECT_NE(kv.block_table(4)[1], kv.block_table(1)[1]);
    EXPECT_EQ(kv.block_table(4)[0], kv.block_table(1)[0]);
    EXPECT_EQ(kv.seq_len(1), 24);
    EXPECT_EQ(kv.key_row(1, 1, 23)[0], float(30000 + 231));
    EXPECT_EQ(kv.key_row(4, 1, 17)[0], float(10000 + 171));
    EXPECT_TRUE(kv.check().ok()) << kv.check().message();
    // a truncate to the current length changes nothing; past it, or of an unknown sequence, fails
    EXPECT_TRUE(kv.apply(op::Truncate{4, 18}).ok());
    auto past = kv.apply(op::Truncate{4, 19});
    ASSERT_FALSE(past.ok());
    EXPECT_NE(past.message().find("sequence 4 holds 18 tokens, cannot keep 19"), std::string::npos) << past.message();
    auto unknown = kv.apply(op::Truncate{9, 0});
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.message().find("sequence 9 does not exist"), std::string::npos) << unknown.message();
    ASSERT_TRUE(kv.apply(op::Truncate{4, 0}).ok());
    EXPECT_EQ(kv.seq_len(4), 0);
    ASSERT_TRUE(kv.apply(op::Remove{1}).ok());
    ASSERT_TRUE(kv.apply(op::Remove{4}).ok());
    EXPECT_EQ(kv.free_blocks(), 8);
    EXPECT_TRUE(kv.check().ok());
}
