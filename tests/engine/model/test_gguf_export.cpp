// GGUF export of quantized models, against files llama.cpp made: stories260K quantized here with
// ggml's Q8_0 / Q4_0 rounding rules ("rounding": "ggml" in the plan, engine/core/ggml_blocks.h),
// exported, is byte for byte what llama.cpp's llama-quantize wrote (../shared/models/stories260K/
// llamacpp/, upstream 82bb485): the same tensor types, the same bytes, the same required keys.
// The export re-imports to the values the .edgeq holds, bit for bit.
#include <gtest/gtest.h>

#include <cstring>

#include <filesystem>
#include "engine/core/half.h"

#include "engine/model/edgeq.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_export.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/quant/plan.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/tokenizer/tokenizer.h"
#include "hf_fixture.h"
#include "test_support.h"
#include "tests/engine/tokenizer/tok_test_util.h"

using edge::model::load_model;
using edge::model::Model;
using edge::model::save_edgeq;
using edge::tokenizer::make_tokenizer;

namespace edge {
namespace {

namespace fs = std::filesystem;

struct Variant {
    const char* file;  // llama.cpp's
    const char* plan;
    DType embedding;
};

// llama-quantize's choices for these files: every matrix in the type, ffn_down (172-wide rows)
// at F16, and for Q4_0 the output head at Q8_0 (its fallback when Q6_K's 256-blocks do not fit).
const Variant kVariants[] = {
    {"stories260K-Q8_0.gguf",
     R"({"default": {"precision": "int8", "rounding": "ggml", "group_size": 32, "scales": "fp16"},
         "layers": {"blk.*.ffn_down": {"precision": "fp16"}}})",
     DType::Q8_0},
    {"stories260K-Q4_0.gguf",
     R"({"default": {"precision": "int4", "rounding": "ggml", "group_size": 32},
         "layers": {"blk.*.ffn_down": {"precision": "fp16"},
                    "output": {"precision": "int8", "rounding": "ggml", "group_size": 32, "scales": "fp16"}}})",
     DType::Q4_0},
};

// The quantized model of a variant, saved as .edgeq and read back (what `quantize` writes).
Model quantized(const Variant& v, const fs::path& dir) {
    auto src = load_model(test::shared("models/stories260K/stories260K.gguf"));
    EXPECT_TRUE(src.ok()) << src.message();
    auto plan = quant::parse_plan(v.plan, v.file);
    EXPECT_TRUE(plan.ok()) << plan.message();
    auto q = quant::apply_plan(*src, *plan, nullptr);
    EXPECT_TRUE(q.ok()) << q.message();
    const std::string edgeq = (dir / (std::string(v.file) + ".edgeq")).string();
    EXPECT_TRUE(save_edgeq(q->model, edgeq).ok());
    auto back = load_model(edgeq);
    EXPECT_TRUE(back.ok()) << back.message();
    return back.ok() ? std::move(back).value() : Model{};
}

TEST(GgufExport, GgmlRoundedLayersExportAsLlamaCppWroteThemByteForByte) {
    const fs::path dir = test::temp_dir("gguf_export");
    for (const Variant& v : kVariants) {
        SCOPED_TRACE(v.file);
        const std::string theirs_path = test::shared(std::string("models/stories260K/llamacpp/") + v.file);
        EDGE_REQUIRE_SHARED(theirs_path);
        const Model q = quantized(v, dir);
        model::GgufExportOptions o;
        o.embedding_given = true;
        o.embedding = v.embedding;
        const std::string ours_path = (dir / v.file).string();
        auto rep = model::export_gguf(q, ours_path, o);
        ASSERT_TRUE(rep.ok()) << rep.message();
        auto ours = model::gguf::open(ours_path);
        auto theirs = model::gguf::open(theirs_path);
        ASSERT_TRUE(ours.ok()) << ours.message();
        ASSERT_TRUE(theirs.ok()) << theirs.message();
        ASSERT_EQ(ours->tensors.size(), theirs->tensors.size());
        int same = 0;
        for (const model::gguf::TensorInfo& t : theirs->tensors) {
            const model::gguf::TensorInfo* o2 = ours->find_tensor(t.name);
            ASSERT_NE(o2, nullptr) << t.name;
            EXPECT_EQ(dtype_name(o2->type), std::string(dtype_name(t.type))) << t.name;
            EXPECT_EQ(o2->ne, t.ne) << t.name;
            ASSERT_EQ(o2->nbytes, t.nbytes) << t.name;
            const bool equal = std::memcmp(o2->data, t.data, t.nbytes) == 0;
            EXPECT_TRUE(equal) << t.name << " (" << dtype_name(t.type) << ") differs";
            same += equal;
        }
        std::printf("%s: %d of %zu tensors byte-identical to llama.cpp's\n", v.file, same, theirs->tensors.size());
        // The keys llama.cpp needs to load the file, with the values its own file has.
        for (const char* key :
             {"general.architecture", "llama.context_length", "llama.embedding_length", "llama.block_count",
              "llama.feed_forward_length", "llama.attention.head_count", "llama.attention.head_count_kv",
              "llama.attention.layer_norm_rms_epsilon", "llama.rope.dimension_count", "tokenizer.ggml.model",
              "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
              "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"}) {
            const model::gguf::Value* a = ours->find(key);
            const model::gguf::Value* b = theirs->find(key);
            ASSERT_NE(b, nullptr) << key;
            ASSERT_NE(a, nullptr) << key;
            EXPECT_EQ(a->to_string(1000000), b->to_string(1000000)) << key;
        }
        // Read back, every tensor the .edgeq quantized holds bit for bit the values it held there
        // (the embedding, quantized by the export itself, aside).
        auto re = load_model(ours_path);
        ASSERT_TRUE(re.ok()) << re.message();
        int compared = 0;
        for (const Tensor& t : q.tensors) {
            if (t.name == "token_embd.weight" || t.shape.size() != 2) continue;
            const Tensor* back = re->find(t.name);
            ASSERT_NE(back, nullptr) << t.name;
            const std::vector<float> want =
                t.type == DType::F16 ? std::vector<float>() : runtime::qkernels::dequantize(t);
            for (int64_t i = 0; i < t.numel(); ++i) {
                float w;
                if (t.type == DType::F16) {
                    uint16_t h;
                    std::memcpy(&h, t.data.get() + i * 2, 2);
                    w = f16_to_f32(h);
                } else {
                    w = want[size_t(i)];
                }
                ASSERT_EQ(back->f32()[i], w) << t.name << " element " << i;
            }
            ++compared;
        }
        EXPECT_GE(compared, 36);
    }
}

TEST(GgufExport, LayersGgmlHasNoTypeForAreWrittenAsF16AndSaidSo) {
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf"));
    auto src = load_model(test::shared("models/stories260K/stories260K.gguf"));
    ASSERT_TRUE(src.ok()) << src.message();
    auto plan = quant::parse_plan(R"({"default": {"precision": "int4", "symmetric": false, "group_size": 64}})");
    ASSERT_TRUE(plan.ok()) << plan.message();
    auto q = quant::apply_plan(*src, *plan, nullptr);
    ASSERT_TRUE(q.ok()) << q.message();
    const fs::path dir = test::temp_dir("gguf_export_f16");
    const std::string path = (dir / "asym.gguf").string();
    auto rep = model::export_gguf(q->model, path, {});
    ASSERT_TRUE(rep.ok()) << rep.message();
    bool said = false;
    for (const std::string& n : rep->notes) said = said || n.find("blk.0.attn_q.weight: QI4") != std::string::npos;
    EXPECT_TRUE(said);
    auto g = model::gguf::open(path);
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_EQ(g->find_tensor("blk.0.attn_q.weight")->type, DType::F16);

    // A plan asking ggml's rounding where it cannot hold, and an embedding of rows no block fits.
    auto bad = quant::parse_plan(R"({"default": {"precision": "int4", "rounding": "ggml"}})", "g.plan.json");
    ASSERT_TRUE(bad.ok()) << bad.message();
    EXPECT_TRUE(test::fails_with(quant::apply_plan(*src, *bad, nullptr),
                                 {"g.plan.json", "blk.0.ffn_down", "whole 32-element blocks", "172"}));
    auto asym = quant::parse_plan(R"({"default": {"precision": "int8", "rounding": "ggml", "symmetric": false}})",
                                  "a.plan.json");
    ASSERT_TRUE(asym.ok()) << asym.message();
    EXPECT_TRUE(test::fails_with(quant::apply_plan(*src, *asym, nullptr), {"a.plan.json", "rtn, symmetric"}));
    EXPECT_TRUE(test::fails_with(quant::parse_plan(R"({"default": {"rounding": "up"}})", "r.plan.json"),
                                 {"r.plan.json", "\"nearest\" or \"ggml\"", "\"up\""}));
}

// A Hugging Face folder whose tokenizer.json is SentencePiece-style BPE (byte_fallback, the
// U+2581 normalizer: Llama 2, TinyLlama, Mistral) exports with a GGUF "llama" tokenizer whose
// scores order the merges as the merge list does: the exported file, the folder and the
// stories260K GGUF the folder was written from encode every paragraph to the same ids.
TEST(GgufExport, SentencePieceTokenizerJsonTravelsAsTheLlamaTokenizer) {
    const std::string src_path = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(src_path);
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    auto src = load_model(src_path);
    ASSERT_TRUE(src.ok()) << src.message();
    const fs::path dir = test::temp_dir("gguf-export-spm");
    ASSERT_EQ(test::write_hf_folder(*src, dir / "hf", {}), "");
    auto hf = load_model((dir / "hf").string());
    ASSERT_TRUE(hf.ok()) << hf.message();
    ASSERT_EQ(hf->tokenizer.model, "hf");
    const std::string out = (dir / "out.gguf").string();
    auto rep = model::export_gguf(*hf, out, {});
    ASSERT_TRUE(rep.ok()) << rep.message();
    bool said = false;
    for (const std::string& n : rep->notes) said |= n.find("model 'llama'") != std::string::npos;
    std::string notes;
    for (const std::string& n : rep->notes) notes += n + "\n";
    EXPECT_TRUE(said) << "the export names the tokenizer it wrote:\n" << notes;
    auto back = load_model(out);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->tokenizer.model, "llama") << notes;
    EXPECT_TRUE(back->tokenizer.add_space_prefix);
    auto a = make_tokenizer(src->tokenizer), b = make_tokenizer(hf->tokenizer), c = make_tokenizer(back->tokenizer);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    const auto paras = test::split_parts(test::read_shared("data/tinystories_val.txt"), "\n\n");
    int checked = 0;
    for (size_t i = 100; i < paras.size() && checked < 300; ++i, ++checked) {
        const auto want = (*a)->encode(paras[i], true);
        ASSERT_EQ((*b)->encode(paras[i], true), want) << "tokenizer.json, paragraph " << i;
        ASSERT_EQ((*c)->encode(paras[i], true), want) << "exported GGUF, paragraph " << i;
    }
    EXPECT_EQ(checked, 300);
}

}  // namespace
}  // namespace edge
