// Fusion passes (node counts, groups) and the memory planner's invariants.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <set>

#include "engine/compile/passes.h"
#include "engine/model/xxh64.h"
#include "engine/runtime/exec_program.h"
#include "test_support.h"

using edge::model::build_llama_graph;
using edge::model::Graph;
using edge::model::LlamaConfig;
using edge::model::xxh64;

using namespace edge;
using namespace edge::compile;

namespace {

LlamaConfig stories_cfg() {  // stories260K
    LlamaConfig c;
    c.dim = 64, c.hidden_dim = 172, c.n_layers = 5, c.n_heads = 8, c.n_kv_heads = 4, c.head_dim = 8;
    c.vocab_size = 512, c.context_length = 512, c.rope_dim = 8;
    return c;
}

LlamaConfig tinyllama_cfg() {  // TinyLlama-1.1B shape
    LlamaConfig c;
    c.dim = 2048, c.hidden_dim = 5632, c.n_layers = 22, c.n_heads = 32, c.n_kv_heads = 4, c.head_dim = 64;
    c.vocab_size = 32000, c.context_length = 2048, c.rope_dim = 64;
    return c;
}

// stories260K's fused program at 64 positions: decode, and a prefill plan of `batch` rows.
ExecProgram stories_program(int batch, int wide_rows) {
    const LlamaConfig c = stories_cfg();
    const Graph g = build_llama_graph(c);
    ExecProgram e;
    e.ops_before = int(g.ops.size());
    e.nodes = fuse(g);
    e.decode = plan_memory(e.nodes, g, c, 1, 64).value();
    e.prefill = plan_memory(e.nodes, g, c, batch, 64, wide_rows).value();
    return e;
}

}  // namespace

TEST(Xxh64, KnownVectors) {
    EXPECT_EQ(xxh64("", 0), 0xEF46DB3751D8E999ULL);
    EXPECT_EQ(xxh64("a", 1), 0xD24EC4F1A98C6E5BULL);
    EXPECT_EQ(xxh64("abc", 3), 0x44BC2CF5AD770999ULL);
    const char* s = "Nobody inspects the spammish repetition";
    EXPECT_EQ(xxh64(s, std::strlen(s)), 0xFBCEA83C8A378BF1ULL);
}

TEST(Fusion, LlamaBlockBecomesSixNodes) {
    const LlamaConfig c = stories_cfg();
    const Graph g = build_llama_graph(c);
    const auto nodes = fuse(g);
    EXPECT_EQ(g.ops.size(), size_t(3 + 14 * c.n_layers));
    EXPECT_EQ(nodes.size(), size_t(2 + 6 * c.n_layers));
    // Every IR op is covered by exactly one fusion group.
    std::multiset<int> covered;
    for (const auto& n : nodes) covered.insert(n.ops.begin(), n.ops.end());
    ASSERT_EQ(covered.size(), g.ops.size());
    for (int i = 0; i < int(g.ops.size()); ++i) EXPECT_EQ(covered.count(i), 1u) << g.ops[size_t(i)].name;
    // Block 0: qkv with an RMSNorm prologue, rope, attention, wo + residual, gate/up/SwiGLU with an
    // RMSNorm prologue, down + residual.
    ASSERT_GE(nodes.size(), 7u);
    EXPECT_EQ(nodes[1].kind, "qkv_matmul");
    EXPECT_EQ(nodes[1].prologue, "rmsnorm");
    EXPECT_EQ(nodes[1].prologue_weight, "blk.0.attn_norm.weight");
    EXPECT_EQ(nodes[1].weights.size(), 3u);
    EXPECT_EQ(nodes[1].ops.size(), 4u);
    EXPECT_EQ(nodes[2].kind, "rope");
    EXPECT_EQ(nodes[3].kind, "attention");
    EXPECT_EQ(nodes[4].kind, "linear");
    EXPECT_EQ(nodes[4].epilogue, "residual_add");
    EXPECT_EQ(nodes[4].epilogue_input, "x0");
    EXPECT_EQ(nodes[5].kind, "gate_up_swiglu");
    EXPECT_EQ(nodes[5].prologue, "rmsnorm");
    EXPECT_EQ(nodes[5].outputs, std::vector<std::string>{"blk.0.a"});
    EXPECT_EQ(nodes[6].epilogue, "residual_add");
    EXPECT_EQ(nodes.back().kind, "linear");
    EXPECT_EQ(nodes.back().prologue, "rmsnorm");
    EXPECT_EQ(nodes.back().outputs, std::vector<std::string>{"logits"});
}

TEST(Fusion, EachPassAloneKeepsTheGraphValid) {
    const Graph g = build_llama_graph(stories_cfg());
    auto n = unfused_nodes(g);
    fuse_residual_epilogues(n, g);  // without the matmul passes: only the two residuals per block
    EXPECT_EQ(n.size(), g.ops.size() - 2 * 5);
    fuse_rmsnorm_prologues(n, g);  // norms feeding three separate matmuls are not fused
    EXPECT_EQ(n.size(), g.ops.size() - 2 * 5 - 1);
}

class Planner : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Planner, NoLiveOverlapAndArenaNearPeak) {
    const auto [which, batch] = GetParam();
    const LlamaConfig c = which == 0 ? stories_cfg() : tinyllama_cfg();
    const Graph g = build_llama_graph(c);
    for (bool fused : {false, true}) {
        const auto nodes = fused ? fuse(g) : unfused_nodes(g);
        auto p = plan_memory(nodes, g, c, batch, 256);
        ASSERT_TRUE(p.ok()) << p.message();
        std::string why;
        EXPECT_FALSE(layout_has_overlap(*p, &why)) << why;
        EXPECT_GE(p->arena_bytes, p->peak_live_bytes);
        EXPECT_LE(double(p->arena_bytes), 1.1 * double(p->peak_live_bytes))
            << "arena " << p->arena_bytes << " peak " << p->peak_live_bytes << " fused " << fused;
        EXPECT_LT(p->arena_bytes, p->naive_bytes);
        for (const Buffer& b : p->buffers) {
            EXPECT_EQ(b.offset % 64, 0u) << b.name;
            EXPECT_LE(b.first, b.last) << b.name;
            EXPECT_LE(b.offset + b.bytes, p->arena_bytes) << b.name;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Planner, ::testing::Combine(::testing::Values(0, 1), ::testing::Values(1, 7, 64)));

TEST(Planner, UnknownValueIsAnError) {
    const LlamaConfig c = stories_cfg();
    Graph g = build_llama_graph(c);
    auto nodes = fuse(g);
    nodes[1].outputs.push_back("mystery");
    auto p = plan_memory(nodes, g, c, 1, 16);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.message().find("mystery"), std::string::npos);
}

TEST(Planner, PlanSurvivesJson) {
    const ExecProgram e = stories_program(8, kWideRows);
    auto back = exec_program_from_json(exec_program_to_json(e), "mem");
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->nodes.size(), e.nodes.size());
    EXPECT_EQ(back->nodes[1].prologue_weight, e.nodes[1].prologue_weight);
    EXPECT_EQ(back->prefill.arena_bytes, e.prefill.arena_bytes);
    EXPECT_EQ(back->decode.buffers.size(), e.decode.buffers.size());
}

// The logits and the score scratch hold wide_rows rows, not the batch: a 512-token prefill plan of
// a 1B-class shape keeps the arena of a 64-token plan's wide buffers (the backends run attention
// and the head in pieces; tests/engine/runtime/test_executor_table.cpp checks their bits).
TEST(Planner, WideBuffersHoldWideRowsNotTheBatch) {
    LlamaConfig c = tinyllama_cfg();
    c.vocab_size = 128256;  // Llama 3's vocabulary: 513 KB of logits a row
    const Graph g = build_llama_graph(c);
    const auto nodes = fuse(g);
    const int max_seq = 4096;
    auto p = plan_memory(nodes, g, c, 512, max_seq);
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_EQ(p->batch, 512);
    EXPECT_EQ(p->wide_rows, kWideRows);
    size_t biggest_narrow = 0;
    for (const Buffer& b : p->buffers) {
        if (b.name == "logits")
            EXPECT_EQ(b.bytes, size_t(kWideRows) * size_t(c.vocab_size) * sizeof(float));
        else if (b.name.ends_with(".scores"))
            EXPECT_EQ(b.bytes, size_t(kWideRows) * size_t(c.n_heads) * max_seq * sizeof(float)) << b.name;
        else
            biggest_narrow = std::max(biggest_narrow, b.bytes);
    }
    EXPECT_EQ(biggest_narrow, size_t(512) * size_t(c.hidden_dim) * sizeof(float));  // gate/up/SwiGLU output
    // The old layout (every row wide) needed 512 rows of scores: 268 MB at this shape.
    auto old = plan_memory(nodes, g, c, 512, max_seq, 512);
    ASSERT_TRUE(old.ok()) << old.message();
    EXPECT_GT(old->arena_bytes, size_t(256) << 20);
    EXPECT_LT(p->arena_bytes, size_t(64) << 20) << p->arena_bytes;
    std::string why;
    EXPECT_FALSE(layout_has_overlap(*p, &why)) << why;
    // A batch below wide_rows: the wide buffers hold the batch.
    auto small = plan_memory(nodes, g, c, 7, max_seq);
    ASSERT_TRUE(small.ok());
    EXPECT_EQ(small->wide_rows, 7);
    EXPECT_TRUE(test::fails_with(plan_memory(nodes, g, c, 8, max_seq, 0),
                                 {"memory plan:", "rows of the wide buffers 0", "must be positive"}));
}

// wide_rows survives the plan's JSON; a file from before the field reads as wide_rows = batch.
TEST(Planner, WideRowsSurviveJsonAndOldFilesReadAsTheBatch) {
    const ExecProgram e = stories_program(32, 5);
    const std::string text = exec_program_to_json(e);
    auto back = exec_program_from_json(text, "mem");
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->prefill.wide_rows, 5);
    EXPECT_EQ(back->decode.wide_rows, 1);
    nlohmann::json old = nlohmann::json::parse(text);
    for (const char* plan : {"decode", "prefill"}) old["memory"][plan].erase("wide_rows");
    ASSERT_EQ(old.dump().find("wide_rows"), std::string::npos);
    auto before = exec_program_from_json(old.dump(), "old");
    ASSERT_TRUE(before.ok()) << before.message();
    EXPECT_EQ(before->prefill.wide_rows, 32);
}
