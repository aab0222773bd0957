// Fused importance, the sensitivity JSON, the knapsack autoplan (against brute force), budgets and
// Spearman; and the whole analysis on stories260K with real text (small settings).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/analysis/sensitivity.h"
#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/quant/autoplan.h"
#include "engine/quant/calib.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

using edge::model::list_layers;
using edge::model::load_model;
using edge::tokenizer::make_tokenizer;

using namespace edge;
using namespace edge::analysis;
using namespace edge::quant;
using quant::Precision;

namespace {

TEST(Importance, EachTermIsNormalisedAcrossLayers) {
    std::vector<LayerAnalysis> L(3);
    L[0].eigenvalues = {4.0, -2.0};  // mean |lambda| 3
    L[1].eigenvalues = {1.5};        // 1.5
    L[2].eigenvalues = {0.3, 0.3};   // 0.3
    L[0].grad_norm_std = 0.0;
    L[1].grad_norm_std = 0.004;
    L[2].grad_norm_std = 0.002;
    fuse_importance(L, 0.6);
    EXPECT_DOUBLE_EQ(L[0].eig_mean_abs, 3.0);
    EXPECT_DOUBLE_EQ(L[0].hessian_term, 1.0);
    EXPECT_DOUBLE_EQ(L[1].hessian_term, 0.5);
    EXPECT_DOUBLE_EQ(L[1].gradient_term, 1.0);
    EXPECT_DOUBLE_EQ(L[0].importance, 0.6);
    EXPECT_DOUBLE_EQ(L[1].importance, 0.6 * 0.5 + 0.4 * 1.0);
    EXPECT_EQ(L[1].rank, 1);  // 0.7
    EXPECT_EQ(L[0].rank, 2);  // 0.6
    EXPECT_EQ(L[2].rank, 3);  // 0.06 + 0.2
    fuse_importance(L, 1.0);
    EXPECT_EQ(L[0].rank, 1);
}

TEST(SensitivityJson, RoundTripsAndRejectsBadInput) {
    AnalysisReport r;
    r.model = "m.gguf";
    r.calib = "c.txt";
    r.options.topk = 3;
    LayerAnalysis a;
    a.layer = "blk.0.attn_q";
    a.kind = "attn_q";
    a.block = 0;
    a.shape = {64, 64};
    a.params = 4096;
    a.eigenvalues = {2.5, -1.0, 0.5};
    a.grad_norm_std = 0.01;
    a.int4_kl = 0.002;
    a.int4_bytes = 2560;
    LayerAnalysis b = a;
    b.layer = "output";
    b.int4_kl.reset();
    b.int4_bytes.reset();
    r.layers = {a, b};
    fuse_importance(r.layers, 0.6);
    auto back = analysis_from_json(analysis_to_json(r));
    ASSERT_TRUE(back.ok()) << back.message();
    ASSERT_EQ(back->layers.size(), 2u);
    EXPECT_EQ(back->options.topk, 3);
    EXPECT_EQ(back->layers[0].eigenvalues, a.eigenvalues);
    EXPECT_EQ(back->layers[0].shape, a.shape);
    EXPECT_DOUBLE_EQ(*back->layers[0].int4_kl, 0.002);
    EXPECT_FALSE(back->layers[1].int4_kl.has_value());
    EXPECT_EQ(back->layers[0].rank, r.layers[0].rank);
    auto bad = analysis_from_json(R"({"version": 2, "layers": []})", "s.json");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("s.json"), std::string::npos);
    EXPECT_TRUE(edge::test::fails_with(analysis_from_json("{not json", "s.json"), {"s.json", "not a JSON object"}));
    EXPECT_TRUE(edge::test::fails_with(analysis_from_json(R"({"version": 1, "layers": [{"kind": "x"}]})"),
                                       {"<json>", "layers[0] has no \"layer\" name"}));
}

// Random candidate sets: the knapsack equals the brute-force optimum over all 3^n choices.
TEST(Autoplan, KnapsackIsExactAgainstBruteForce) {
    uint64_t s = 12345;
    auto rnd = [&] {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return double((s >> 33) % 1000000) / 1e6;
    };
    for (int trial = 0; trial < 20; ++trial) {
        const int n = 6;
        std::vector<LayerCandidates> c(static_cast<size_t>(n));
        for (auto& l : c) {
            l.layer = "l";
            l.params = 64 * (1 + int64_t(rnd() * 8));
            const double sens = rnd();
            l.options = {{Precision::FP16, size_t(l.params * 2), 0.0, 0.0},
                         {Precision::INT8, size_t(l.params + l.params / 16), 0, sens * 1e-3 * rnd()},
                         {Precision::INT4, size_t(l.params / 2 + l.params / 16), 0, sens * (0.5 + rnd())}};
        }
        size_t lo = 0, hi = 0;
        for (auto& l : c) {
            lo += l.options[2].bytes;
            hi += l.options[0].bytes;
        }
        const size_t budget = lo + size_t(rnd() * double(hi - lo));
        double best = std::numeric_limits<double>::infinity();
        for (int code = 0; code < 729; ++code) {
            size_t bytes = 0;
            double cost = 0;
            for (int i = 0, k = code; i < n; ++i, k /= 3) {
                bytes += c[size_t(i)].options[size_t(k % 3)].bytes;
                cost += c[size_t(i)].options[size_t(k % 3)].cost;
            }
            if (bytes <= budget) best = std::min(best, cost);
        }
        auto p = autoplan(c, budget);
        ASSERT_TRUE(p.ok()) << p.message();
        EXPECT_LE(p->bytes, budget);
        EXPECT_NEAR(p->predicted, best, 1e-12) << "trial " << trial;
        EXPECT_EQ(p->slack, 0u);
    }
    std::vector<LayerCandidates> c(1);
    c[0].options = {{Precision::FP16, 200, 0, 0}, {Precision::INT4, 60, 0, 1}};
    auto tight = autoplan(c, 59);
    ASSERT_FALSE(tight.ok());
    EXPECT_NE(tight.message().find("60"), std::string::npos) << tight.message();
}

TEST(Autoplan, BudgetsAndSpearman) {
    EXPECT_EQ(parse_budget("4bpw", 1000).value(), 500u);
    EXPECT_EQ(parse_budget("300KB", 1).value(), 300000u);
    EXPECT_EQ(parse_budget("1.5KiB", 1).value(), 1536u);
    EXPECT_EQ(parse_budget("1234", 1).value(), 1234u);
    EXPECT_TRUE(edge::test::fails_with(parse_budget("lots", 1), {"budget 'lots' does not start with a number"}));
    EXPECT_TRUE(
        edge::test::fails_with(parse_budget("4parsecs", 1),
                               {"budget '4parsecs'", "unknown unit 'parsecs' (bpw, B, KB, MB, GB, KiB, MiB, GiB)"}));
    EXPECT_TRUE(edge::test::fails_with(parse_budget("0", 1), {"budget '0' must be positive"}));
    EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}), 0.8, 1e-12);
    EXPECT_DOUBLE_EQ(spearman({1, 1, 1}, {1, 2, 3}), 0.0);
}

// The whole analysis on stories260K (small settings), then autoplan candidates and a plan that
// the quantizer accepts.
TEST(Analysis, Stories260KEndToEnd) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    const std::string val = test::shared("data/tinystories_val.txt");
    EDGE_REQUIRE_SHARED(path);
    EDGE_REQUIRE_SHARED(val);
    auto m = load_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    auto tok = make_tokenizer(m->tokenizer);
    ASSERT_TRUE(tok.ok());
    auto text = read_text_file(val);
    ASSERT_TRUE(text.ok());
    auto calib = quant::calib_from_text(**tok, *text, 6, 33);
    ASSERT_TRUE(calib.ok()) << calib.message();
    AnalysisOptions o;
    o.topk = 2;
    o.lanczos_steps = 6;
    o.batches = 3;
    o.batch_size = 2;
    o.seq_len = 32;
    o.hessian_sequences = 2;
    o.quant_sequences = 4;
    o.threads = 2;
    double last = -1;
    bool monotone = true;
    Progress p([&](double f, const std::string&) {
        monotone = monotone && f >= last - 1e-12 && f <= 1.0 + 1e-12;
        last = f;
    });
    auto r = analyze_sensitivity(*m, calib->sequences, o, &p);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_TRUE(monotone);
    EXPECT_DOUBLE_EQ(last, 1.0);
    const auto layers = list_layers(*m);
    ASSERT_EQ(r->layers.size(), layers.size());
    int top = 0;
    for (const auto& L : r->layers) {
        EXPECT_GE(L.importance, 0.0);
        EXPECT_LE(L.importance, 1.0);
        ASSERT_TRUE(L.int4_kl.has_value()) << L.layer;
        EXPECT_GT(*L.int4_kl, 0.0) << L.layer;
        top += L.rank == 1;
    }
    EXPECT_EQ(top, 1);

    auto cands = plan_candidates(*m, autoplan_scores(*r));
    ASSERT_TRUE(cands.ok()) << cands.message();
    for (const auto& c : *cands) {
        ASSERT_EQ(c.options.size(), 3u);
        EXPECT_LT(c.options[0].sq_error, c.options[1].sq_error) << c.layer;  // fp16 < int8 < int4
        EXPECT_LT(c.options[1].sq_error, c.options[2].sq_error) << c.layer;
        EXPECT_GT(c.options[0].bytes, c.options[1].bytes);
        EXPECT_GT(c.options[1].bytes, c.options[2].bytes);
    }
    const AutoplanResult i4 = uniform_autoplan(*cands, Precision::INT4);
    const AutoplanResult i8 = uniform_autoplan(*cands, Precision::INT8);
    auto mid = autoplan(*cands, (i4.bytes + i8.bytes) / 2);
    ASSERT_TRUE(mid.ok()) << mid.message();
    EXPECT_LE(mid->bytes, (i4.bytes + i8.bytes) / 2);
    EXPECT_LT(mid->predicted, i4.predicted);
    EXPECT_GT(mid->predicted, i8.predicted);
    auto q = quant::apply_plan(*m, mid->plan, nullptr);
    ASSERT_TRUE(q.ok()) << q.message();
    size_t after = 0;
    for (const auto& l : q->layers) after += l.bytes_after;
    EXPECT_EQ(after, mid->bytes);
    auto reparsed = quant::parse_plan(quant::plan_to_json(mid->plan));
    ASSERT_TRUE(reparsed.ok()) << reparsed.message();

    Progress cancel;
    cancel.cancel();
    auto c = analyze_sensitivity(*m, calib->sequences, o, &cancel);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.message().find("cancelled"), std::string::npos) << c.message();
}

}  // namespace

namespace {

// A board where a product costs its weight's bytes at `gbps` plus 1 us, and 0.5 ms is outside them.
runtime::BoardCostModel byte_board(const model::Model& m, double gbps) {
    runtime::BoardCostModel cm;
    cm.engine = "e.edge";
    cm.rest_ms = 0.5;
    const std::pair<const char*, double> bytes_per_weight[] = {
        {"fp32", 4}, {"fp16", 2}, {"int8", 1.125}, {"int4", 0.5625}};
    for (const model::LayerInfo& li : list_layers(m))
        for (const auto& [p, b] : bytes_per_weight)
            cm.linears.push_back({li.shape[0], li.shape[1], p, 1.0 + double(li.params) * b / (gbps * 1e3)});
    return cm;
}

}  // namespace

TEST(BoardAutoplan, PredictsTheRestPlusEachLayersProductAndKeepsToTheTimeBudget) {
    const std::string path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(path);
    auto m = load_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    const runtime::BoardCostModel cm = byte_board(*m, 0.05);
    double int4_ms = cm.rest_ms, fp32_ms = cm.rest_ms;
    for (const model::LayerInfo& li : list_layers(*m)) {
        int4_ms += (1.0 + double(li.params) * 0.5625 / 50.0) / 1000.0;
        fp32_ms += (1.0 + double(li.params) * 4.0 / 50.0) / 1000.0;
    }
    auto t4 = predict_tpot_ms(*m, quant::uniform_plan(Precision::INT4), cm);
    ASSERT_TRUE(t4.ok()) << t4.message();
    EXPECT_NEAR(*t4, int4_ms, 1e-9);
    auto t32 = predict_tpot_ms(*m, quant::QuantPlan{}, cm);  // an empty plan leaves every layer FP32
    ASSERT_TRUE(t32.ok()) << t32.message();
    EXPECT_NEAR(*t32, fp32_ms, 1e-9);

    // Every layer equally sensitive (Hessian predictor): the plan spends the time where it buys the
    // most error, and never goes over the budget.
    AnalysisReport rep;
    for (const model::LayerInfo& li : list_layers(*m)) {
        LayerAnalysis L;
        L.layer = li.name;
        L.eigenvalues = {1.0};
        rep.layers.push_back(L);
    }
    fuse_importance(rep.layers, 0.6);
    AutoplanOptions ao;
    ao.predictor = Predictor::Hessian;
    auto cands = plan_candidates(*m, autoplan_scores(rep), ao);
    ASSERT_TRUE(cands.ok()) << cands.message();
    auto t16 = predict_tpot_ms(*m, quant::uniform_plan(Precision::FP16), cm);
    ASSERT_TRUE(t16.ok());
    auto fastest = fastest_tpot_ms(*cands, *m, cm);  // INT4 is every layer's fastest here
    ASSERT_TRUE(fastest.ok()) << fastest.message();
    EXPECT_NEAR(*fastest, *t4, 1e-9);
    double last_error = std::numeric_limits<double>::infinity();
    for (double f : {0.0, 0.3, 0.6, 1.0}) {
        const double budget = *t4 + f * (*t16 - *t4) + 1e-6;
        auto p = autoplan_for_board(*cands, *m, cm, budget, ao);
        ASSERT_TRUE(p.ok()) << p.message();
        EXPECT_LE(p->predicted_tpot_ms, budget) << f;
        auto again = predict_tpot_ms(*m, p->plan, cm);
        ASSERT_TRUE(again.ok());
        EXPECT_NEAR(*again, p->predicted_tpot_ms, 1e-12);
        EXPECT_LE(p->predicted, last_error + 1e-12) << "more time buys no worse a plan";
        last_error = p->predicted;
        if (f == 0.0) {
            EXPECT_EQ(p->bytes, uniform_autoplan(*cands, Precision::INT4, ao).bytes);
        } else if (f == 1.0) {
            EXPECT_EQ(p->bytes, uniform_autoplan(*cands, Precision::FP16, ao).bytes);
        }
    }
    // A budget of exactly the fastest plan's time: each option's time is rounded up to 10 ns for the
    // knapsack, so before it was refused as below the smallest plan (the loop above adds 1e-6 ms).
    auto exact = autoplan_for_board(*cands, *m, cm, *fastest, ao);
    ASSERT_TRUE(exact.ok()) << exact.message();
    EXPECT_EQ(exact->bytes, uniform_autoplan(*cands, Precision::INT4, ao).bytes);
    EXPECT_LE(exact->predicted_tpot_ms, *fastest + 1e-12);
    EXPECT_TRUE(test::fails_with(autoplan_for_board(*cands, *m, cm, *t4 * 0.9, ao),
                                 {"below the fastest plan's predicted", "ms on this board", "0.5 ms of it outside"}));
    runtime::BoardCostModel other = cm;
    other.linears.resize(2);
    EXPECT_TRUE(test::fails_with(predict_tpot_ms(*m, quant::uniform_plan(Precision::INT4), other),
                                 {"e.edge", "has no timing for a", "at int4"}));
}
