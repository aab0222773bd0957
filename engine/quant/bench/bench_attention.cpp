// edge-quant-bench --mode attention: the CPU executors' causal attention (engine/runtime/cpu/
// attention.h) in a prefill of the Llama-3.2-1B shape (32 query heads, 8 KV heads, head_dim 64,
// KV blocks of 16 positions): --tokens (default 128,512) tokens of one sequence whose keys and
// values are all in the paged cache, attended in pieces of 64 tokens as the compiled program's
// wide rows run it, one layer, at 1 and 2 threads. Each cell: the median and
// the best of --calib-seqs runs (default 32) after a warm-up, and the useful multiply-adds per
// second: Σ over tokens of (position + 1) · head_dim · heads, twice (scores and values). The
// per-(token, head) loop the fast layout reproduces (causal_attention_rows) is timed beside it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "engine/core/thread_pool.h"
#include "engine/runtime/cpu/attention.h"

using namespace edge;
using namespace edge::runtime::kernels;

namespace {

using Clock = std::chrono::steady_clock;

struct Cache {
    int B = 16;
    int64_t width = 0;
    std::vector<float> k, v;
    static const float* rows(const void* p, int /*t*/, int block, bool values) {
        const Cache& c = *static_cast<const Cache*>(p);
        return (values ? c.v : c.k).data() + int64_t(block) * c.B * c.width;
    }
};

}  // namespace

int run_attention_bench(const BenchArgs& a) {
    constexpr int kHeads = 32, kKvHeads = 8, kHeadDim = 64, kBlock = 16, kPiece = 64;
    std::vector<int> token_counts;
    {
        std::stringstream ss(a.tokens.empty() ? std::string("128,512") : a.tokens);
        for (std::string item; std::getline(ss, item, ',');) token_counts.push_back(std::stoi(item));
    }
    const int max_tokens = *std::max_element(token_counts.begin(), token_counts.end());
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    Cache cache;
    cache.B = kBlock;
    cache.width = int64_t(kKvHeads) * kHeadDim;
    const size_t floats = size_t((max_tokens + kBlock - 1) / kBlock * kBlock) * size_t(cache.width);
    cache.k.resize(floats);
    cache.v.resize(floats);
    for (auto& x : cache.k) x = nd(rng);
    for (auto& x : cache.v) x = nd(rng);
    std::vector<float> q(size_t(max_tokens) * kHeads * kHeadDim);
    for (auto& x : q) x = nd(rng);
    std::vector<float> out(q.size());
    std::vector<int> pos(static_cast<size_t>(max_tokens)), seq(static_cast<size_t>(max_tokens), 0);
    for (int t = 0; t < max_tokens; ++t) pos[size_t(t)] = t;
    const KvBlocks kv{&cache, &Cache::rows};
    const int runs = std::max(3, a.calib_seqs);

    std::printf("CPU: %s\n", cpu_model().c_str());
    std::printf("causal attention, 32 heads / 8 KV heads, head_dim 64, KV blocks of 16, pieces of 64 tokens\n\n");
    std::printf(
        "| tokens | threads | layout | median ms | best ms | G MAC/s (median) |\n|---:|---:|---|---:|---:|---:|\n");
    for (int n : token_counts)
        for (int threads = 1; threads <= 2; ++threads) {
            ThreadPool pool(threads);
            const AttentionShape shape{
                kHeads, kKvHeads, kHeadDim, kBlock, cache.width, int64_t(n), 1.0f / std::sqrt(float(kHeadDim))};
            std::vector<float> scores(size_t(kPiece) * kHeads * size_t(n));
            double macs = 0;
            for (int t = 0; t < n; ++t) macs += 2.0 * double(t + 1) * kHeadDim * kHeads;
            for (int layout = 0; layout < 2; ++layout) {
                const auto once = [&] {
                    for (int t0 = 0; t0 < n; t0 += kPiece) {
                        const int m = std::min(kPiece, n - t0);
                        float* o = out.data() + size_t(t0) * kHeads * kHeadDim;
                        const float* qq = q.data() + size_t(t0) * kHeads * kHeadDim;
                        if (layout == 0)
                            causal_attention(o, qq, m, pos.data() + t0, seq.data() + t0, shape, kv, scores.data(),
                                             pool);
                        else
                            causal_attention_rows(o, qq, m, pos.data() + t0, shape, kv, scores.data(), pool);
                    }
                };
                once();
                std::vector<double> ms;
                for (int r = 0; r < (layout == 0 ? runs : 3); ++r) {
                    const auto t0 = Clock::now();
                    once();
                    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
                }
                const double med = median(ms), best = *std::min_element(ms.begin(), ms.end());
                std::printf("| %d | %d | %s | %.3f | %.3f | %.1f |\n", n, threads,
                            layout == 0 ? "keys in lanes" : "per (token, head)", med, best, macs / med / 1e6);
            }
        }
    return 0;
}
