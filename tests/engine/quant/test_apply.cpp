// apply_plan end to end on stories260K, the .edgeq file, GPTQ and AWQ on a single layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "engine/model/edgeq.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/quant/methods.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

using edge::model::EdgeqChecksums;
using edge::model::EdgeqHeader;
using edge::model::load_model;
using edge::model::Model;
using edge::model::save_edgeq;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;

using namespace edge;
using namespace edge::quant;

namespace {

const std::vector<int32_t> kPrompt{1, 403, 407, 261, 378};
const std::vector<int32_t> kGreedy{432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267,
                                   337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432};

std::vector<int32_t> greedy(const std::shared_ptr<const Model>& m, int n) {
    auto rt = LlamaCpu::create(m, RuntimeOptions{2, 64});
    EXPECT_TRUE(rt.ok()) << rt.message();
    if (!rt.ok()) return {};
    const float* logits = (*rt)->prefill(kPrompt.data(), int(kPrompt.size()), 0);
    std::vector<int32_t> out;
    for (int i = 0; i < n; ++i) {
        const int32_t t = argmax(logits, m->config.vocab_size);
        out.push_back(t);
        logits = (*rt)->forward(t, int(kPrompt.size()) + i);
    }
    return out;
}

Model stories() {
    auto m = load_model(edge::test::shared("models/stories260K/stories260K.gguf"));
    EXPECT_TRUE(m.ok()) << m.message();
    return std::move(m).value();
}

}  // namespace

TEST(QuantApply, Int8RtnKeepsTheGreedyTextAndSavesReloads) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    const Model m = stories();
    auto q = apply_plan(m, uniform_plan(Precision::INT8), nullptr);
    ASSERT_TRUE(q.ok()) << q.message();
    EXPECT_LT(q->model.weight_bytes(), m.weight_bytes() / 2);  // the F32 token embedding is no linear layer
    for (const LayerReport& r : q->layers) EXPECT_TRUE(r.error.within_bound) << r.layer;
    auto shared = std::make_shared<const Model>(q->model);
    EXPECT_EQ(greedy(shared, 30), kGreedy);

    const auto dir = edge::test::temp_dir("edgeq");
    const std::string path = (dir / "s8.edgeq").string();
    ASSERT_TRUE(save_edgeq(q->model, path).ok());
    auto back = load_model(path);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->tensors.size(), q->model.tensors.size());
    EXPECT_EQ(back->weight_bytes(), q->model.weight_bytes());
    EXPECT_EQ(back->tokenizer.tokens, m.tokenizer.tokens);
    EXPECT_EQ(greedy(std::make_shared<const Model>(std::move(back).value()), 30), kGreedy);
}

TEST(QuantApply, Int4AndFp16RunAsStored) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    const Model m = stories();
    for (Precision p : {Precision::FP16, Precision::INT4}) {
        auto q = apply_plan(m, uniform_plan(p), nullptr);
        ASSERT_TRUE(q.ok()) << q.message();
        const auto toks = greedy(std::make_shared<const Model>(q->model), 10);
        ASSERT_EQ(toks.size(), 10u);
        if (p == Precision::FP16) {
            EXPECT_EQ(toks, std::vector<int32_t>(kGreedy.begin(), kGreedy.begin() + 10));
        }
        for (const Tensor& t : q->model.tensors) {
            if (t.shape.size() == 2 && t.name != "token_embd.weight") {
                EXPECT_EQ(t.type, p == Precision::FP16 ? DType::F16 : DType::QI4) << t.name;
            }
        }
    }
}

// INT4's half scales survive .edgeq and .edge (the tensor tables say "scales": "f16"), and a
// plan can keep float32 scales.
TEST(QuantApply, Int4ScaleStorageSurvivesTheFileAndThePlanChoosesIt) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    const Model m = stories();
    auto half = apply_plan(m, uniform_plan(Precision::INT4), nullptr);
    ASSERT_TRUE(half.ok()) << half.message();
    auto plan32 = parse_plan(R"({"default":{"precision":"int4","group_size":32,"scales":"fp32"}})");
    ASSERT_TRUE(plan32.ok()) << plan32.message();
    auto full = apply_plan(m, *plan32, nullptr);
    ASSERT_TRUE(full.ok()) << full.message();
    EXPECT_LT(half->model.weight_bytes(), full->model.weight_bytes());
    const auto dir = edge::test::temp_dir("edgeq-half");
    const std::string path = (dir / "m.edgeq").string();
    ASSERT_TRUE(save_edgeq(half->model, path).ok());
    auto back = load_model(path);
    ASSERT_TRUE(back.ok()) << back.message();
    int half_tensors = 0;
    for (const Tensor& t : back->tensors) {
        if (t.type != DType::QI4) continue;
        const Tensor* orig = half->model.find(t.name);
        ASSERT_NE(orig, nullptr);
        EXPECT_EQ(t.quant->scale_type, orig->quant->scale_type) << t.name;
        ASSERT_EQ(t.nbytes, orig->nbytes);
        EXPECT_EQ(std::memcmp(t.data.get(), orig->data.get(), t.nbytes), 0) << t.name;
        half_tensors += t.quant->scale_type == QScale::F16;
    }
    EXPECT_GT(half_tensors, 0);
    for (const Tensor& t : full->model.tensors) {
        if (t.quant) {
            EXPECT_EQ(t.quant->scale_type, QScale::F32) << t.name;
        }
    }
    // The reloaded model runs exactly as the one in memory.
    EXPECT_EQ(greedy(std::make_shared<const Model>(std::move(back).value()), 10),
              greedy(std::make_shared<const Model>(half->model), 10));
}

TEST(QuantApply, CorruptEdgeqIsRefusedWithTheReason) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    auto q = apply_plan(stories(), uniform_plan(Precision::INT4), nullptr);
    ASSERT_TRUE(q.ok());
    const auto dir = edge::test::temp_dir("edgeq-bad");
    const std::string path = (dir / "m.edgeq").string();
    ASSERT_TRUE(save_edgeq(q->model, path).ok());
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);
    auto bad = load_model(path);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("truncated"), std::string::npos) << bad.message();
}

// Regression (issue 21): a flipped byte anywhere in an .edgeq file used to load silently (no
// checksums); each section is now checked and the error names it.
TEST(QuantApply, EveryEdgeqSectionIsChecksummed) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    auto q = apply_plan(stories(), uniform_plan(Precision::INT8), nullptr);
    ASSERT_TRUE(q.ok());
    const auto dir = edge::test::temp_dir("edgeq-flip");
    const std::string path = (dir / "m.edgeq").string();
    ASSERT_TRUE(save_edgeq(q->model, path).ok());
    std::string bytes;
    {
        std::ifstream f(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(f), {});
    }
    EdgeqHeader h{};
    std::memcpy(&h, bytes.data(), sizeof h);
    ASSERT_EQ(h.version, 2u);
    ASSERT_EQ(h.header_bytes, sizeof(EdgeqHeader) + sizeof(EdgeqChecksums));
    const struct {
        uint64_t at;
        const char* names;
    } flips[] = {{20, "header checksum"},
                 {h.meta_offset + h.meta_bytes / 2, "metadata section checksum"},
                 {h.strings_offset + h.strings_bytes / 2, "strings section checksum"},
                 {h.data_offset + h.data_bytes / 2, "data section checksum"},
                 {h.data_offset + h.data_bytes - 1, "data section checksum"}};
    for (const auto& f : flips) {
        std::string bad = bytes;
        bad[size_t(f.at)] = char(bad[size_t(f.at)] ^ 0x10);
        const std::string bad_path = (dir / "flipped.edgeq").string();
        std::ofstream(bad_path, std::ios::binary | std::ios::trunc).write(bad.data(), std::streamsize(bad.size()));
        EXPECT_TRUE(edge::test::fails_with(load_model(bad_path), {"flipped.edgeq", f.names, "corrupt"})) << f.at;
    }
}

TEST(QuantApply, AwqAndGptqNeedCalibration) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    auto q = apply_plan(stories(), uniform_plan(Precision::INT4, QMethod::GPTQ), nullptr);
    ASSERT_FALSE(q.ok());
    EXPECT_NE(q.message().find("calibration"), std::string::npos);
    const Model m = stories();
    auto tok = make_tokenizer(m.tokenizer);
    ASSERT_TRUE(tok.ok());
    EXPECT_TRUE(edge::test::fails_with(calib_from_text(**tok, "", 4, 64),
                                       {"the calibration text gives 0 tokens; at least 63 are needed for one"}));
    auto shortc = calib_from_text(**tok, "Once upon a time.", 4, 64);
    ASSERT_FALSE(shortc.ok());
    EXPECT_NE(shortc.message().find("tokens"), std::string::npos);
}

TEST(QuantMethods, GptqBeatsRtnOnTheLayerOutput) {
    const int64_t rows = 24, cols = 96, n = 400;
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> w(size_t(rows * cols)), x(size_t(n * cols));
    for (auto& v : w) v = 0.05f * nd(rng);
    // Correlated inputs with a few loud channels: where error feedback pays off.
    for (int64_t t = 0; t < n; ++t) {
        const float common = nd(rng);
        for (int64_t i = 0; i < cols; ++i)
            x[size_t(t * cols + i)] = nd(rng) + 0.8f * common + (i % 17 == 0 ? 4.0f * nd(rng) : 0.0f);
    }
    auto out_err = [&](const Tensor& q) {
        const auto d = runtime::qkernels::dequantize(q);
        double e = 0;
        for (int64_t t = 0; t < n; ++t)
            for (int64_t r = 0; r < rows; ++r) {
                double s = 0;
                for (int64_t i = 0; i < cols; ++i)
                    s += double(w[size_t(r * cols + i)] - d[size_t(r * cols + i)]) * x[size_t(t * cols + i)];
                e += s * s;
            }
        return e;
    };
    const QuantSpec spec{4, true, QGrouping::Group, 32, QMethod::RTN};
    auto rtn = quantize_rtn("w", w.data(), {rows, cols}, spec);
    ASSERT_TRUE(rtn.ok());
    const auto h = hessian_from_inputs(x.data(), n, cols);
    for (bool act : {false, true}) {
        GptqOptions o;
        o.act_order = act;
        o.block = 32;  // several lazy blocks
        auto g = quantize_gptq("w", w.data(), rows, cols, h, spec, o);
        ASSERT_TRUE(g.ok()) << g.message();
        EXPECT_LT(out_err(*g), 0.8 * out_err(*rtn)) << "act_order " << act;
    }
    // AWQ never does worse than RTN on its objective (α = 0 is RTN).
    AwqMember mem{w.data(), rows, spec, true};
    auto a = awq_search({mem}, cols, x.data(), n, AwqOptions{});
    ASSERT_TRUE(a.ok());
    EXPECT_LE(a->error_after, a->error_before);
}

// Regression (issue 21), the .edge reader's finding in the .edgeq reader too: a tensor entry whose
// shape names more elements than 64 bits count (or than the data section could hold) overflowed the
// element count before any size check. Both readers now share the shape check and name the tensor.
TEST(QuantApply, AnEdgeqShapeLargerThanItsDataSectionIsRefusedNamingTheTensor) {
    EDGE_REQUIRE_SHARED(edge::test::shared("models/stories260K/stories260K.gguf"));
    auto q = apply_plan(stories(), uniform_plan(Precision::INT8), nullptr);
    ASSERT_TRUE(q.ok());
    const auto dir = edge::test::temp_dir("edgeq-shape");
    for (const auto& shape : {std::vector<int64_t>{int64_t(1) << 31, int64_t(1) << 31},
                              std::vector<int64_t>{int64_t(1) << 32, int64_t(1) << 32, 4}}) {
        Model m = q->model;
        auto t = std::find_if(m.tensors.begin(), m.tensors.end(), [](const auto& x) { return !x.quant; });
        ASSERT_NE(t, m.tensors.end()) << "no unquantized tensor";
        t->shape = shape;  // its data and byte count unchanged: only the entry's shape lies
        const std::string path = (dir / "huge-shape.edgeq").string();
        ASSERT_TRUE(save_edgeq(m, path).ok());
        EXPECT_TRUE(edge::test::fails_with(load_model(path), {"huge-shape.edgeq", "tensor '" + t->name + "'",
                                                              "has more elements than its section can hold"}));
    }
}
