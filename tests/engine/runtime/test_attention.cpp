// The CPU executors' attention (engine/runtime/cpu/attention.h): its fast layout (keys in lanes,
// outputs in registers) must give the bits of the per-(token, head) loop it replaces, for every
// head size, group size, ragged block and mix of sequences.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "engine/runtime/cpu/attention.h"
#include "engine/runtime/cpu/qkernels.h"

using namespace edge;
using namespace edge::runtime::kernels;
namespace qkernels = edge::runtime::qkernels;

namespace {

// Paged K/V in one buffer: sequence s's block b at blocks[s][b].
struct Pages {
    int B = 0, layer_rows = 0;
    int64_t width = 0;
    std::vector<float> k, v;
    std::vector<std::vector<int>> blocks;  // per sequence: its blocks' indices
    std::vector<int> seq_of_token;

    static const float* rows(const void* p, int t, int block, bool values) {
        const Pages& x = *static_cast<const Pages*>(p);
        const int b = x.blocks[size_t(x.seq_of_token[size_t(t)])][size_t(block)];
        return (values ? x.v : x.k).data() + int64_t(b) * x.B * x.width;
    }
};

}  // namespace

TEST(Attention, KeysInLanesGiveThePerHeadLoopsBits) {
    ThreadPool pool(2);
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    struct Case {
        int heads, kv_heads, head_dim, block;
    };
    // Each case on the processor's own kernel family (AVX-512: 16 keys a vector, up to four heads a
    // pass) and capped to AVX2 (8 keys a vector, one head), where the processor has them. Head
    // groups of 1 to 5 heads (5: a pass of four and one of one), head sizes that are and are not
    // multiples of 16, KV blocks of 12, 16 and 32 positions.
    for (const auto level : {qkernels::KernelLevel::Auto, qkernels::KernelLevel::Avx2})
        for (const Case& c :
             {Case{8, 4, 8, 16}, Case{4, 4, 16, 16}, Case{32, 8, 64, 16}, Case{8, 2, 128, 16}, Case{6, 3, 48, 16},
              Case{4, 1, 64, 12}, Case{4, 2, 12, 16}, Case{10, 2, 32, 16}, Case{6, 2, 64, 16}, Case{8, 2, 64, 32}})
            for (int mode = 0; mode < 3; ++mode) {
                qkernels::force_kernels(level);
                // mode 0: one decode token at position 40; 1: a prefill chunk of 37 tokens at 21..57;
                // 2: three sequences (a 19-token chunk, two decode tokens), as a batched step has them.
                std::vector<int> pos, seq;
                if (mode == 0) {
                    pos = {40};
                    seq = {0};
                } else if (mode == 1) {
                    for (int i = 0; i < 37; ++i) pos.push_back(21 + i), seq.push_back(0);
                } else {
                    for (int i = 0; i < 19; ++i) pos.push_back(5 + i), seq.push_back(0);
                    pos.push_back(70), seq.push_back(1);
                    pos.push_back(3), seq.push_back(2);
                }
                const int n = int(pos.size());
                Pages pg;
                pg.B = c.block;
                pg.width = int64_t(c.kv_heads) * c.head_dim;
                pg.seq_of_token = seq;
                const int max_pos = 80, per_seq = (max_pos + c.block - 1) / c.block;
                int next = 0;
                for (int s = 0; s < 3; ++s) {
                    std::vector<int> b;
                    b.reserve(size_t(per_seq));
                    for (int i = 0; i < per_seq; ++i) b.push_back((next++ * 7) % (3 * per_seq));  // scattered blocks
                    pg.blocks.push_back(b);
                }
                const size_t floats = size_t(3 * per_seq) * size_t(c.block) * size_t(pg.width);
                pg.k.resize(floats);
                pg.v.resize(floats);
                for (auto& x : pg.k) x = nd(rng);
                for (auto& x : pg.v) x = nd(rng);
                const int QD = c.heads * c.head_dim;
                std::vector<float> q(size_t(n) * QD);
                for (auto& x : q) x = nd(rng);
                const AttentionShape shape{
                    c.heads, c.kv_heads, c.head_dim, c.block, pg.width, 96, 1.0f / std::sqrt(float(c.head_dim))};
                const KvBlocks kv{&pg, &Pages::rows};
                std::vector<float> fast(size_t(n) * QD, -1.0f), ref(size_t(n) * QD, -2.0f);
                std::vector<float> s1(size_t(n) * c.heads * 96), s2(s1.size());
                causal_attention(fast.data(), q.data(), n, pos.data(), seq.data(), shape, kv, s1.data(), pool);
                causal_attention_rows(ref.data(), q.data(), n, pos.data(), shape, kv, s2.data(), pool);
                qkernels::force_kernels(qkernels::KernelLevel::Auto);
                EXPECT_EQ(0, std::memcmp(fast.data(), ref.data(), fast.size() * sizeof(float)))
                    << c.heads << " heads, " << c.kv_heads << " kv heads, head_dim " << c.head_dim << ", block "
                    << c.block << ", mode " << mode << ", kernels "
                    << (level == qkernels::KernelLevel::Auto ? "auto" : "avx2");
            }
}
