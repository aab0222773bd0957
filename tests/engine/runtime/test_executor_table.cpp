// One table of batch steps run on every runtime::Executor this build has (engine/runtime/
// executor.h), each checked against the CPU reference by normalised error, ggml's
// test-backend-ops style: a new implementation is one row in implementations(), not a new set of
// hand-written checks. The CPU implementation itself must be batch-invariant: a sequence's logits
// are bit-identical whether it runs alone, in chunks that cross block borders, or in a batch of 8
// sharing a system prompt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/compile/compile.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/loader.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/device.h"
#include "engine/runtime/executor.h"
#include "engine/runtime/one_sequence.h"
#include "test_support.h"

using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::BackendOptions;
using edge::runtime::LlamaCpu;
using edge::runtime::make_backend;
using edge::runtime::probe_devices;
using edge::runtime::RuntimeOptions;

using namespace edge;

namespace {

constexpr int kMaxSeq = 128;

struct Impl {
    std::string name;  // how its capabilities' name starts
    std::function<Result<std::unique_ptr<runtime::Executor>>(std::shared_ptr<const Model>)> make;
    double max_nmse;  // against the CPU reference; 0: bit-identical
    // A sequence's logits are bit-identical however its tokens are cut into steps; false: within
    // max_nmse of its own run alone (CUDA: one token runs the GEMV, several the tiled GEMM).
    bool chunk_invariant = true;
};

// The reference: the CPU executor over the model as imported.
Result<std::unique_ptr<runtime::Executor>> make_reference(const std::shared_ptr<const Model>& m) {
    auto r = LlamaCpu::create(m, RuntimeOptions{2, kMaxSeq});
    if (!r) return r.error();
    return std::unique_ptr<runtime::Executor>(std::move(r).value());
}

// The model compiled to an .edge file (fused program, one arena) on a backend, as the agent runs
// it. A prefill batch of 16 makes a batch step run in several program passes; 5 rows of logits
// and score scratch make each pass run attention and the output head in pieces that do not
// divide it (and the 8 sequences' last rows in two groups of the head).
Result<std::unique_ptr<runtime::Executor>> make_compiled(const std::shared_ptr<const Model>& m, const char* backend) {
    static int k = 0;
    const std::string out = (test::temp_dir("executor-table") / ("m" + std::to_string(k++) + ".edge")).string();
    compile::CompileOptions o;
    o.out_path = out;
    o.max_seq = kMaxSeq;
    o.prefill_batch = 16;
    o.wide_rows = 5;
    if (auto rep = compile::compile(*m, o); !rep) return rep.error();
    auto eng = compile::load_engine(out);
    if (!eng) return eng.error();
    auto model = std::make_shared<Model>(std::move(eng->file.model));
    auto be = make_backend(backend);
    if (!be) return be.error();
    EDGE_TRY((*be)->load(model, eng->program, BackendOptions{2, kMaxSeq}));
    return std::unique_ptr<runtime::Executor>(std::move(be).value());  // it holds the model
}

// Every executor implementation of this build: the CPU reference, the compiled program on the
// CPU backend, and on CUDA when a device answers (tests/gpu measures it further).
std::vector<Impl> implementations() {
    std::vector<Impl> v = {{"cpu (FP32", make_reference, 0.0},
                           {"cpu (compiled program",
                            [](const std::shared_ptr<const Model>& m) { return make_compiled(m, "cpu"); }, 1e-10}};
    if (probe_devices().cuda_usable)
        v.push_back(
            {"cuda (", [](const std::shared_ptr<const Model>& m) { return make_compiled(m, "cuda"); }, 1e-8, false});
    return v;
}

std::shared_ptr<const Model> load_shared_model(const std::string& rel) {
    auto r = load_model(test::shared(rel));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.message());
    return r.ok() ? std::make_shared<Model>(std::move(r).value()) : nullptr;
}

kv::PagedKv memory(const LlamaConfig& c, int64_t blocks = 96) {
    auto kv = kv::PagedKv::create(kv::KvConfig{kv::KvShape{c.n_layers, c.n_kv_heads, c.head_dim, 16}, blocks});
    EXPECT_TRUE(kv.ok()) << (kv.ok() ? "" : kv.message());
    return std::move(kv).value();
}

double nmse(const std::vector<float>& ref, const std::vector<float>& got) {
    double num = 0, den = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        num += (double(ref[i]) - got[i]) * (double(ref[i]) - got[i]);
        den += double(ref[i]) * ref[i];
    }
    return den > 0 ? num / den : num;
}

// The step table. Each script returns, per sequence, the logits after its prompt and after each
// of `decode` greedy tokens, concatenated; greedy choices are the executor's own.
using Script = std::function<std::vector<std::vector<float>>(
    runtime::Executor&, const std::vector<std::vector<int32_t>>&, int chunk, int decode)>;

// Every prompt in one batch: prefill chunks of `chunk` tokens for all sequences in the same
// steps, then `decode` steps of one token each for all of them.
std::vector<std::vector<float>> run_batched(runtime::Executor& ex, const std::vector<std::vector<int32_t>>& prompts,
                                            int chunk, int decode) {
    const int V = ex.config().vocab_size;
    kv::PagedKv kv = memory(ex.config());
    std::vector<std::vector<float>> out(prompts.size());
    std::vector<size_t> done(prompts.size(), 0);
    std::vector<int32_t> next(prompts.size());
    for (bool left = true; left;) {
        left = false;
        std::vector<runtime::PagedStep> batch;
        std::vector<size_t> who;
        for (size_t i = 0; i < prompts.size(); ++i) {
            if (done[i] >= prompts[i].size()) continue;
            const size_t n = std::min(prompts[i].size() - done[i], size_t(chunk));
            batch.push_back({int32_t(i), std::span(prompts[i]).subspan(done[i], n)});
            who.push_back(i);
            done[i] += n;
        }
        if (batch.empty()) break;
        left = true;
        auto l = ex.step(kv, batch);
        EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.message());
        if (!l.ok()) return {};
        for (size_t b = 0; b < who.size(); ++b)
            if (done[who[b]] == prompts[who[b]].size()) {
                const float* row = *l + b * size_t(V);
                out[who[b]].insert(out[who[b]].end(), row, row + V);
                next[who[b]] = argmax(row, V);
            }
    }
    for (int d = 0; d < decode; ++d) {
        std::vector<runtime::PagedStep> batch;
        for (size_t i = 0; i < prompts.size(); ++i) batch.push_back({int32_t(i), std::span(&next[i], 1)});
        auto l = ex.step(kv, batch);
        EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.message());
        if (!l.ok()) return {};
        for (size_t i = 0; i < prompts.size(); ++i) {
            const float* row = *l + i * size_t(V);
            out[i].insert(out[i].end(), row, row + V);
            next[i] = argmax(row, V);
        }
    }
    EXPECT_TRUE(kv.check().ok());
    return out;
}

// Each sequence alone on a fresh KV memory, its prompt in one step.
std::vector<std::vector<float>> run_alone(runtime::Executor& ex, const std::vector<std::vector<int32_t>>& prompts, int,
                                          int decode) {
    std::vector<std::vector<float>> out;
    out.reserve(prompts.size());
    for (const auto& p : prompts) out.push_back(run_batched(ex, {p}, int(p.size()), decode)[0]);
    return out;
}

struct Row {
    const char* what;
    Script script;
    int chunk;
};

const char* kModels[] = {"models/stories260K/stories260K.gguf", "models/stories260K/llamacpp/stories260K-Q8_0.gguf"};

// 8 prompts: a 24-token system prompt shared by all (a full block and a half), then 3-13 own tokens.
std::vector<std::vector<int32_t>> prompts(int vocab) {
    const auto sys = test::random_tokens(24, 99, vocab);
    std::vector<std::vector<int32_t>> p;
    for (int i = 0; i < 8; ++i) {
        auto own = test::random_tokens(3 + (i * 5) % 11, uint32_t(i + 1), vocab);
        std::vector<int32_t> x = sys;
        x.insert(x.end(), own.begin(), own.end());
        p.push_back(std::move(x));
    }
    return p;
}

}  // namespace

TEST(ExecutorTable, CapabilitiesSayWhatRuns) {
    for (const char* rel : kModels) {
        EDGE_REQUIRE_SHARED(test::shared(rel));
        auto m = load_shared_model(rel);
        ASSERT_TRUE(m);
        for (const Impl& impl : implementations()) {
            auto ex = impl.make(m);
            ASSERT_TRUE(ex.ok()) << impl.name << ": " << ex.message();
            const runtime::ExecutorCaps c = (*ex)->capabilities();
            EXPECT_EQ(c.name.rfind(impl.name, 0), 0u) << c.name;
            EXPECT_EQ(c.max_seq, kMaxSeq) << impl.name;
            EXPECT_NE(std::find(c.stored_types.begin(), c.stored_types.end(), DType::F32), c.stored_types.end());
        }
    }
}

// Every row of the table on every implementation: bit-identical to the same implementation run
// alone (batch and chunk invariance), and within the implementation's bound of the CPU reference.
TEST(ExecutorTable, EveryStepShapeMatchesTheReferenceRunAlone) {
    const Row rows[] = {{"alone, whole prompt", run_alone, 0},
                        {"batch of 8, whole prompts", run_batched, 64},
                        {"batch of 8, chunks of 7 (cross block borders)", run_batched, 7},
                        {"batch of 8, one token per step", run_batched, 1}};
    for (const char* rel : kModels) {
        EDGE_REQUIRE_SHARED(test::shared(rel));
        auto m = load_shared_model(rel);
        ASSERT_TRUE(m);
        auto ref_ex = make_reference(m);
        ASSERT_TRUE(ref_ex.ok()) << ref_ex.message();
        const auto ps = prompts(m->config.vocab_size);
        const auto reference = run_alone(**ref_ex, ps, 0, 4);
        ASSERT_EQ(reference.size(), ps.size());
        for (const Impl& impl : implementations()) {
            auto ex = impl.make(m);
            ASSERT_TRUE(ex.ok()) << impl.name << ": " << ex.message();
            const auto own_alone = run_alone(**ex, ps, 0, 4);
            for (const Row& r : rows) {
                const auto got = r.script(**ex, ps, r.chunk, 4);
                ASSERT_EQ(got.size(), ps.size()) << impl.name << " / " << r.what;
                for (size_t i = 0; i < ps.size(); ++i) {
                    ASSERT_EQ(got[i].size(), reference[i].size()) << impl.name << " / " << r.what << " seq " << i;
                    if (impl.chunk_invariant)
                        EXPECT_TRUE(std::memcmp(got[i].data(), own_alone[i].data(), got[i].size() * sizeof(float)) == 0)
                            << impl.name << " / " << r.what << ": seq " << i
                            << " differs from the same sequence alone (" << rel << ")";
                    else
                        EXPECT_LE(nmse(own_alone[i], got[i]), impl.max_nmse)
                            << impl.name << " / " << r.what << ": seq " << i << " vs the same sequence alone (" << rel
                            << ")";
                    EXPECT_LE(nmse(reference[i], got[i]), impl.max_nmse)
                        << impl.name << " / " << r.what << ": seq " << i << " vs the CPU reference (" << rel << ")";
                }
            }
        }
    }
}

// A sequence that asks for all its logits (perplexity, validation) gets one row per new token,
// each the logits that token has when the sequence is run one token per step; the sequences
// around it still get one row each, where BatchLayout::out_first puts them.
TEST(ExecutorTable, AllLogitsOfAStepAreEachTokensOwnLogits) {
    EDGE_REQUIRE_SHARED(test::shared(kModels[0]));
    auto m = load_shared_model(kModels[0]);
    ASSERT_TRUE(m);
    const int V = m->config.vocab_size;
    const auto ps = prompts(V);
    ASSERT_GE(ps.size(), 3u);
    for (const Impl& impl : implementations()) {
        auto ex = impl.make(m);
        ASSERT_TRUE(ex.ok()) << impl.name << ": " << ex.message();
        auto kv = memory(m->config);
        const runtime::PagedStep batch[3] = {{0, ps[0]}, {1, ps[1], true}, {2, ps[2]}};
        auto got = (*ex)->step(kv, batch);
        ASSERT_TRUE(got.ok()) << impl.name << ": " << got.message();
        const size_t rows = 2 + ps[1].size();
        const std::vector<float> all(*got, *got + rows * size_t(V));
        // Each row against the same sequence run alone, one token per step.
        std::vector<std::vector<float>> want(3);
        for (int s = 0; s < 3; ++s) {
            auto solo = memory(m->config);
            for (size_t j = 0; j < ps[size_t(s)].size(); ++j) {
                const runtime::PagedStep one{s, std::span(&ps[size_t(s)][j], 1)};
                auto r = (*ex)->step(solo, std::span(&one, 1));
                ASSERT_TRUE(r.ok()) << r.message();
                if (s == 1 || j + 1 == ps[size_t(s)].size()) want[size_t(s)].insert(want[size_t(s)].end(), *r, *r + V);
            }
        }
        const std::vector<float> got0(all.begin(), all.begin() + V), got2(all.end() - V, all.end());
        const std::vector<float> got1(all.begin() + V, all.end() - V);
        const std::pair<const std::vector<float>*, const std::vector<float>*> cmp[3] = {
            {&got0, &want[0]}, {&got1, &want[1]}, {&got2, &want[2]}};
        for (int s = 0; s < 3; ++s) {
            ASSERT_EQ(cmp[s].first->size(), cmp[s].second->size()) << impl.name << " seq " << s;
            if (impl.chunk_invariant)
                EXPECT_EQ(
                    0, std::memcmp(cmp[s].first->data(), cmp[s].second->data(), cmp[s].first->size() * sizeof(float)))
                    << impl.name << ": seq " << s << " differs from its one-token-per-step run";
            else
                EXPECT_LE(nmse(*cmp[s].second, *cmp[s].first), impl.max_nmse) << impl.name << " seq " << s;
        }
    }
}

// The single-sequence pass (LlamaCpu::prefill/forward, Backend::run) is the executor's own step
// on a KV memory of its own: the same logits as a step on a caller's memory; going back cuts the
// sequence there (position 0 starts a new one, a later position keeps the prefix); skipping
// ahead is an error naming both positions.
TEST(ExecutorTable, TheSingleSequencePassIsTheStepOnAMemoryOfItsOwn) {
    EDGE_REQUIRE_SHARED(test::shared(kModels[0]));
    auto m = load_shared_model(kModels[0]);
    ASSERT_TRUE(m);
    const int V = m->config.vocab_size;
    const auto ps = prompts(V);
    for (const Impl& impl : implementations()) {
        auto ex = impl.make(m);
        ASSERT_TRUE(ex.ok()) << impl.name << ": " << ex.message();
        auto step_logits = [&](std::span<const int32_t> t) {
            auto kv = memory(m->config);
            const runtime::PagedStep st{0, t, true};
            auto r = (*ex)->step(kv, std::span(&st, 1));
            EXPECT_TRUE(r.ok()) << r.message();
            return r ? std::vector<float>(*r, *r + t.size() * size_t(V)) : std::vector<float>{};
        };
        runtime::OwnSequence own;
        EXPECT_EQ(own.kv_bytes(), 0u) << impl.name << ": nothing is held before the first call";
        std::vector<float> all(ps[1].size() * size_t(V));
        ASSERT_TRUE(own.run(**ex, ps[0].data(), int(ps[0].size()), 0, nullptr).ok());
        auto r = own.run(**ex, ps[1].data(), int(ps[1].size()), 0, all.data());  // a new sequence
        ASSERT_TRUE(r.ok()) << impl.name << ": " << r.message();
        EXPECT_GT(own.kv_bytes(), 0u);
        EXPECT_EQ(own.kv()->seq_len(0), int(ps[1].size()));
        EXPECT_EQ(all, step_logits(ps[1])) << impl.name;
        EXPECT_EQ(0, std::memcmp(*r, &all[(ps[1].size() - 1) * size_t(V)], sizeof(float) * size_t(V)));

        // Back to position 5 with a different token: the logits of the first 5 tokens and it.
        std::vector<int32_t> cut(ps[1].begin(), ps[1].begin() + 5);
        cut.push_back((ps[1][5] + 1) % V);
        auto back = own.run(**ex, &cut[5], 1, 5, nullptr);
        ASSERT_TRUE(back.ok()) << back.message();
        const std::vector<float> want = step_logits(cut);
        EXPECT_EQ(0, std::memcmp(*back, &want[5 * size_t(V)], sizeof(float) * size_t(V))) << impl.name;
        EXPECT_EQ(own.kv()->seq_len(0), 6);
        EXPECT_TRUE(own.kv()->check().ok());

        auto ahead = own.run(**ex, cut.data(), 1, 9, nullptr);
        EXPECT_TRUE(test::fails_with(ahead, {"position 9", "6 tokens"})) << impl.name;
        EXPECT_EQ(own.kv()->seq_len(0), 6) << impl.name << ": an error changes nothing";
    }
    // LlamaCpu's conveniences are that pass (null where it is an error).
    auto rt = LlamaCpu::create(m, RuntimeOptions{2, kMaxSeq});
    ASSERT_TRUE(rt.ok()) << rt.message();
    EXPECT_EQ((*rt)->held_memory().kv_bytes, 0u);
    ASSERT_NE((*rt)->prefill(ps[1].data(), int(ps[1].size()), 0), nullptr);
    EXPECT_GT((*rt)->held_memory().kv_bytes, 0u);
    EXPECT_EQ((*rt)->forward(1, int(ps[1].size()) + 2), nullptr);
    EXPECT_NE((*rt)->forward(1, int(ps[1].size())), nullptr);
}

// A step the executor cannot run leaves the KV memory as it was and names the sequence.
TEST(ExecutorTable, ABadStepIsAnErrorAndChangesNothing) {
    EDGE_REQUIRE_SHARED(test::shared(kModels[0]));
    auto m = load_shared_model(kModels[0]);
    ASSERT_TRUE(m);
    for (const Impl& impl : implementations()) {
        auto ex = impl.make(m);
        ASSERT_TRUE(ex.ok()) << ex.message();
        kv::PagedKv kv = memory((*ex)->config());
        const auto p = test::random_tokens(20, 3, m->config.vocab_size);
        ASSERT_TRUE((*ex)->step(kv, std::vector<runtime::PagedStep>{{4, std::span(p)}}).ok());
        const int64_t free_before = kv.free_blocks();
        const auto longp = test::random_tokens(kMaxSeq, 4, m->config.vocab_size);
        auto twice = (*ex)->step(kv, std::vector<runtime::PagedStep>{{1, std::span(p)}, {1, std::span(p)}});
        EXPECT_TRUE(test::fails_with(twice, {"1"})) << impl.name;
        auto too_long = (*ex)->step(kv, std::vector<runtime::PagedStep>{{4, std::span(longp)}});
        EXPECT_TRUE(test::fails_with(too_long, {"4"})) << impl.name;
        EXPECT_EQ(kv.free_blocks(), free_before) << impl.name;
        EXPECT_EQ(kv.seq_len(4), 20) << impl.name;
        EXPECT_FALSE(kv.has_seq(1)) << impl.name;
        EXPECT_TRUE(kv.check().ok());
    }
}
