// Hugging Face folders written by hf_fixture from stories260K.gguf: the writer's RoPE permutation
// checked independently (attention scores), every variant loading to the GGUF's tensors, logits
// and greedy tokens through the runtime, and bad folders.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/core/mapped_file.h"
#include "engine/model/edgeq.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/hf_config.h"
#include "engine/model/loader.h"
#include "engine/model/safetensors.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/tokenizer/tokenizer.h"
#include "hf_fixture.h"
#include "test_support.h"

using edge::model::encode_f32_as;
using edge::model::HfConfig;
using edge::model::LlamaConfig;
using edge::model::load_gguf_model;
using edge::model::load_model;
using edge::model::Model;
using edge::model::open_safetensors;
using edge::model::SafetensorsWriteItem;
using edge::model::save_edgeq;
using edge::model::write_gguf_model;
using edge::model::write_safetensors;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::tokenizer::make_tokenizer;

namespace edge {
namespace {

namespace fs = std::filesystem;
using test::HfFixtureOptions;
using test::HfTie;

const std::vector<int32_t> kPromptIds = {1, 403, 407, 261, 378};
const std::vector<int32_t> kGreedy30 = {432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267,
                                        337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432};

const Model* gguf_model() {
    static Result<Model> m = load_gguf_model(test::shared("models/stories260K/stories260K.gguf"));
    return m.ok() ? &m.value() : nullptr;
}

#define REQUIRE_GGUF()                                                        \
    EDGE_REQUIRE_SHARED(test::shared("models/stories260K/stories260K.gguf")); \
    const Model* ref = gguf_model();                                          \
    ASSERT_NE(ref, nullptr) << "stories260K.gguf does not load"

fs::path write_fixture(const Model& m, const HfFixtureOptions& o, const std::string& tag) {
    fs::path dir = test::temp_dir("hf-" + tag);
    const std::string e = test::write_hf_folder(m, dir, o);
    EXPECT_EQ(e, "");
    return dir;
}

// y = W x for a [rows, cols] row-major matrix.
std::vector<double> matvec(const float* w, int rows, int cols, const std::vector<double>& x) {
    std::vector<double> y(size_t(rows), 0.0);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) y[size_t(r)] += double(w[size_t(r) * cols + c]) * x[size_t(c)];
    return y;
}

// HF's rotary embedding (rotate_half): pair i of a head is dims (i, i + d/2).
void rope_rotate_half(std::vector<double>& v, int heads, int d, int pos, double theta) {
    for (int h = 0; h < heads; ++h) {
        double* x = v.data() + size_t(h) * d;
        for (int i = 0; i < d / 2; ++i) {
            const double a = pos * std::pow(theta, -2.0 * i / d), c = std::cos(a), s = std::sin(a);
            const double x1 = x[i], x2 = x[i + d / 2];
            x[i] = x1 * c - x2 * s;          // x * cos + rotate_half(x) * sin, first half
            x[i + d / 2] = x2 * c + x1 * s;  // second half
        }
    }
}

// The IR's interleaved RoPE: pair i of a head is dims (2i, 2i+1).
void rope_interleaved(std::vector<double>& v, int heads, int d, int pos, double theta) {
    for (int h = 0; h < heads; ++h) {
        double* x = v.data() + size_t(h) * d;
        for (int i = 0; i < d / 2; ++i) {
            const double a = pos * std::pow(theta, -2.0 * i / d), c = std::cos(a), s = std::sin(a);
            const double x0 = x[2 * i], x1 = x[2 * i + 1];
            x[2 * i] = x0 * c - x1 * s;
            x[2 * i + 1] = x0 * s + x1 * c;
        }
    }
}

TEST(HfFixture, PermutedProjectionsGiveTheSameAttentionScores) {
    REQUIRE_GGUF();
    const LlamaConfig& c = ref->config;
    const fs::path dir = write_fixture(*ref, {}, "rope");
    auto st = open_safetensors((dir / "model.safetensors").string());
    ASSERT_TRUE(st.ok()) << st.message();
    std::mt19937 rng(7);
    std::normal_distribution<double> nd;
    const int hd = c.head_dim, group = c.n_heads / c.n_kv_heads;
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
        auto wq_hf = st->to_f32(*st->find(p + "q_proj.weight"), "q");
        auto wk_hf = st->to_f32(*st->find(p + "k_proj.weight"), "k");
        ASSERT_TRUE(wq_hf.ok() && wk_hf.ok());
        const Tensor& wq = *ref->find("blk." + std::to_string(l) + ".attn_q.weight");
        const Tensor& wk = *ref->find("blk." + std::to_string(l) + ".attn_k.weight");
        for (int trial = 0; trial < 3; ++trial) {
            std::vector<double> xq(size_t(c.dim)), xk(size_t(c.dim));
            for (auto& v : xq) v = nd(rng);
            for (auto& v : xk) v = nd(rng);
            const int pq = 3 + 17 * trial + l, pk = 1 + 5 * trial;
            auto q_hf = matvec(wq_hf->f32(), c.q_dim(), c.dim, xq), k_hf = matvec(wk_hf->f32(), c.kv_dim(), c.dim, xk);
            auto q_ir = matvec(wq.f32(), c.q_dim(), c.dim, xq), k_ir = matvec(wk.f32(), c.kv_dim(), c.dim, xk);
            rope_rotate_half(q_hf, c.n_heads, hd, pq, c.rope_theta);
            rope_rotate_half(k_hf, c.n_kv_heads, hd, pk, c.rope_theta);
            rope_interleaved(q_ir, c.n_heads, hd, pq, c.rope_theta);
            rope_interleaved(k_ir, c.n_kv_heads, hd, pk, c.rope_theta);
            for (int h = 0; h < c.n_heads; ++h) {
                const int kh = h / group;
                double s_hf = 0, s_ir = 0, scale = 0;
                for (int i = 0; i < hd; ++i) {
                    s_hf += q_hf[size_t(h) * size_t(hd) + size_t(i)] * k_hf[size_t(kh) * size_t(hd) + size_t(i)];
                    s_ir += q_ir[size_t(h) * size_t(hd) + size_t(i)] * k_ir[size_t(kh) * size_t(hd) + size_t(i)];
                    scale +=
                        std::fabs(q_ir[size_t(h) * size_t(hd) + size_t(i)] * k_ir[size_t(kh) * size_t(hd) + size_t(i)]);
                }
                EXPECT_NEAR(s_hf, s_ir, 1e-9 * (1 + scale)) << "layer " << l << " head " << h;
                // Element-wise: HF dim c*d/2 + i is IR dim 2i + c.
                for (int i = 0; i < hd / 2; ++i)
                    for (int comp = 0; comp < 2; ++comp)
                        EXPECT_NEAR(q_hf[size_t(h * hd + comp * hd / 2 + i)], q_ir[size_t(h * hd + 2 * i + comp)],
                                    1e-9);
            }
        }
    }
}

struct Variant {
    const char* tag;
    HfFixtureOptions o;
};

const std::vector<Variant>& variants() {
    static const std::vector<Variant> v = {
        {"single", {false, HfTie::Untied, false, DType::F32, true}},
        {"sharded", {true, HfTie::Untied, false, DType::F32, true}},
        {"tied-embed", {false, HfTie::EmbedOnly, false, DType::F32, true}},
        {"tied-lmhead", {true, HfTie::LmHeadOnly, false, DType::F32, true}},
        {"phi3", {false, HfTie::Untied, true, DType::F32, true}},
        {"f16", {true, HfTie::EmbedOnly, false, DType::F16, true}},
        {"bf16-phi3", {false, HfTie::Untied, true, DType::BF16, true}},
    };
    return v;
}

TEST(HfImport, EveryVariantLoadsToTheGgufTensors) {
    REQUIRE_GGUF();
    for (const Variant& v : variants()) {
        SCOPED_TRACE(v.tag);
        const fs::path dir = write_fixture(*ref, v.o, v.tag);
        auto m = load_model(dir.string());
        ASSERT_TRUE(m.ok()) << m.message();
        EXPECT_EQ(m->source_format, "hf");
        EXPECT_EQ(m->config.tied_embeddings, v.o.tie != HfTie::Untied);
        EXPECT_EQ(m->config.context_length, ref->config.context_length);
        EXPECT_FLOAT_EQ(m->config.norm_eps, ref->config.norm_eps);
        EXPECT_EQ(test::compare_models(*ref, *m, v.o.storage), "");
        EXPECT_EQ(m->tokenizer.model, "hf");
        EXPECT_TRUE(m->tokenizer.add_bos);
        if (v.o.storage != DType::F32) {
            EXPECT_EQ(m->find("blk.0.attn_q.weight")->source_type, v.o.storage);
        }
    }
}

TEST(HfImport, LogitsAndGreedyTokensMatchTheGguf) {
    REQUIRE_GGUF();
    auto ref_ptr = std::make_shared<Model>(*ref);
    auto rt_ref = LlamaCpu::create(ref_ptr, {2, 512});
    ASSERT_TRUE(rt_ref.ok()) << rt_ref.message();
    std::vector<int32_t> seq = kPromptIds;
    seq.insert(seq.end(), kGreedy30.begin(), kGreedy30.end());
    const int V = ref->config.vocab_size;
    std::vector<float> la(seq.size() * size_t(V));
    (*rt_ref)->prefill(seq.data(), int(seq.size()), 0, la.data());
    for (const Variant& v : variants()) {
        if (v.o.storage != DType::F32) continue;  // reduced precision: tensors are checked above
        SCOPED_TRACE(v.tag);
        auto m = load_model(write_fixture(*ref, v.o, v.tag).string());
        ASSERT_TRUE(m.ok()) << m.message();
        auto model = std::make_shared<Model>(std::move(m).value());
        auto tok = make_tokenizer(model->tokenizer);
        ASSERT_TRUE(tok.ok()) << tok.message();
        EXPECT_EQ((*tok)->encode("Once upon a time", true), kPromptIds);
        auto rt = LlamaCpu::create(model, {2, 512});
        ASSERT_TRUE(rt.ok()) << rt.message();
        std::vector<float> lb(la.size());
        (*rt)->prefill(seq.data(), int(seq.size()), 0, lb.data());
        for (size_t p = 0; p < seq.size(); ++p) {
            float num = 0, den = 0;
            for (int i = 0; i < V; ++i) {
                num = std::max(num, std::fabs(la[p * V + size_t(i)] - lb[p * V + size_t(i)]));
                den = std::max(den, std::fabs(la[p * V + size_t(i)]));
            }
            EXPECT_LE(num / den, 1e-5f) << "position " << p;
        }
        const float* logits = (*rt)->prefill(kPromptIds.data(), int(kPromptIds.size()), 0);
        std::vector<int32_t> out;
        for (int i = 0, pos = int(kPromptIds.size()); i < 30; ++i) {
            out.push_back(argmax(logits, V));
            logits = (*rt)->forward(out.back(), pos++);
        }
        EXPECT_EQ(out, kGreedy30);
        std::vector<int32_t> all = kPromptIds;
        all.insert(all.end(), out.begin(), out.end());
        EXPECT_EQ((*tok)->decode(all),
                  "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One "
                  "day,");
    }
}

// ---- bad folders ---------------------------------------------------------------------------

nlohmann::json read_json(const fs::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}
void write_json(const fs::path& p, const nlohmann::json& j) {
    std::ofstream out(p, std::ios::trunc);
    out << j.dump(2);
}

void expect_error(const std::string& path, const std::vector<std::string>& needles) {
    auto r = load_model(path);
    ASSERT_FALSE(r.ok()) << path << " loaded";
    for (const auto& n : needles) EXPECT_NE(r.message().find(n), std::string::npos) << r.message();
}

TEST(HfImport, ShapeDisagreeingWithConfigNamesTheTensor) {
    REQUIRE_GGUF();
    const fs::path dir = write_fixture(*ref, {}, "shape");
    auto cfg = read_json(dir / "config.json");
    cfg["intermediate_size"] = 170;
    write_json(dir / "config.json", cfg);
    expect_error(dir.string(), {"model.safetensors", "model.layers.0.mlp.gate_proj.weight", "[172, 64]", "[170, 64]"});
}

TEST(HfImport, UnknownArchitectureAndUnsupportedFeatures) {
    REQUIRE_GGUF();
    const fs::path dir = write_fixture(*ref, {}, "arch");
    auto cfg = read_json(dir / "config.json");
    auto bad = cfg;
    bad["architectures"] = {"GPT2LMHeadModel"};
    write_json(dir / "config.json", bad);
    expect_error(dir.string(), {"config.json", "GPT2LMHeadModel", "LlamaForCausalLM"});
    bad = cfg;
    bad["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 8.0}};
    write_json(dir / "config.json", bad);
    expect_error(dir.string(), {"config.json", "rope_scaling", "yarn"});
    bad = cfg;
    bad.erase("hidden_size");
    write_json(dir / "config.json", bad);
    expect_error(dir.string(), {"config.json", "hidden_size"});
    std::ofstream(dir / "config.json", std::ios::trunc) << "{ not json";
    expect_error(dir.string(), {"config.json"});
    fs::remove(dir / "config.json");
    expect_error(dir.string(), {dir.string(), "config.json"});
}

TEST(HfImport, MissingShardAndTruncatedWeights) {
    REQUIRE_GGUF();
    const fs::path dir = write_fixture(*ref, {true, HfTie::Untied, false, DType::F32, true}, "shard");
    fs::remove(dir / "model-00002-of-00002.safetensors");
    expect_error(dir.string(), {"model-00002-of-00002.safetensors", "missing shard"});

    const fs::path one = write_fixture(*ref, {}, "trunc");
    const fs::path st = one / "model.safetensors";
    fs::resize_file(st, fs::file_size(st) - 1000);
    expect_error(one.string(), {st.string(), "past the end"});

    fs::remove(st);
    expect_error(one.string(), {"model.safetensors"});
}

// Rewrites model.safetensors without `drop` and with `extra` added.
void rewrite_weights(const fs::path& dir, const std::string& drop, const std::string& extra) {
    auto st = open_safetensors((dir / "model.safetensors").string());
    ASSERT_TRUE(st.ok()) << st.message();
    std::vector<SafetensorsWriteItem> items;
    for (const auto& e : st->entries) {
        if (e.name == drop) continue;
        const uint8_t* b = st->bytes(e);
        items.push_back({e.name, *e.dtype, e.shape, std::vector<uint8_t>(b, b + (e.end - e.begin))});
    }
    const float bias[64] = {};
    if (!extra.empty()) items.push_back({extra, DType::F32, {64}, encode_f32_as(bias, 64, DType::F32)});
    st = Error{};  // unmap before rewriting
    ASSERT_TRUE(write_safetensors((dir / "model.safetensors").string(), items).ok());
}

TEST(HfImport, UnexpectedAndMissingTensors) {
    REQUIRE_GGUF();
    const fs::path a = write_fixture(*ref, {}, "missing");
    rewrite_weights(a, "model.layers.2.mlp.up_proj.weight", "");
    expect_error(a.string(), {a.string(), "model.layers.2.mlp.up_proj.weight", "missing"});
    const fs::path b = write_fixture(*ref, {}, "extra");
    rewrite_weights(b, "", "model.layers.0.self_attn.q_proj.bias");
    expect_error(b.string(), {"model.safetensors", "model.layers.0.self_attn.q_proj.bias", "not part of"});
    const fs::path c = write_fixture(*ref, {}, "nohead");
    rewrite_weights(c, "lm_head.weight", "");
    expect_error(c.string(), {"lm_head.weight", "tie_word_embeddings"});
}

TEST(HfImport, MissingTokenizerLoadsWithoutOne) {
    REQUIRE_GGUF();
    const fs::path dir = write_fixture(*ref, {false, HfTie::Untied, false, DType::F32, false}, "notok");
    auto m = load_model(dir.string());
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_TRUE(m->tokenizer.empty());
}

// generation_config.json: EOS ids added to config.json's, sampling defaults (greedy without
// do_sample), both kept by .edgeq and, for the EOS ids, by GGUF (as eot_token_id).
TEST(HfImport, GenerationConfigEosIdsAndSamplingSurviveSaving) {
    REQUIRE_GGUF();
    const fs::path dir = write_fixture(*ref, {}, "genconf");
    std::ofstream(dir / "generation_config.json")
        << R"({"eos_token_id": [2, 7, 7], "do_sample": true, "temperature": 0.6, "top_p": 0.9})";
    auto m = load_model(dir.string());
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_EQ(m->tokenizer.eos_id, 2);
    EXPECT_EQ(m->tokenizer.eos_ids, (std::vector<int32_t>{2, 7}));
    EXPECT_TRUE(m->tokenizer.ends_generation(7));
    EXPECT_FALSE(m->tokenizer.ends_generation(8));
    EXPECT_FLOAT_EQ(m->tokenizer.generation.temperature, 0.6f);
    EXPECT_FLOAT_EQ(m->tokenizer.generation.top_p, 0.9f);
    EXPECT_EQ(m->tokenizer.generation.top_k, -1);

    const fs::path out = test::temp_dir("genconf-out");
    ASSERT_TRUE(save_edgeq(*m, (out / "m.edgeq").string()).ok());
    auto q = load_model((out / "m.edgeq").string());
    ASSERT_TRUE(q.ok()) << q.message();
    EXPECT_EQ(q->tokenizer.eos_ids, (std::vector<int32_t>{2, 7}));
    EXPECT_FLOAT_EQ(q->tokenizer.generation.temperature, 0.6f);
    EXPECT_EQ(q->tokenizer.generation.source, (dir / "generation_config.json").string());
    // GGUF keeps a second EOS id as eot_token_id (a GGUF-tokenizer model: HF tokenizers are not
    // written to GGUF yet).
    Model two = *ref;
    two.tokenizer.add_eos(7);
    ASSERT_TRUE(write_gguf_model(two, (out / "m.gguf").string()).ok());
    auto g = load_model((out / "m.gguf").string());
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_EQ(g->tokenizer.eos_ids, (std::vector<int32_t>{2, 7}));

    std::ofstream(dir / "generation_config.json") << R"({"temperature": 0.7})";
    auto greedy = load_model(dir.string());
    ASSERT_TRUE(greedy.ok()) << greedy.message();
    EXPECT_EQ(greedy->tokenizer.generation.temperature, 0.0f);  // do_sample absent: greedy
    std::ofstream(dir / "generation_config.json") << R"({"do_sample": "yes"})";
    expect_error(dir.string(), {"generation_config.json", "do_sample must be true or false", "\"yes\""});
}

// tokenizer_config.json's chat_template (a string, or named templates of which "default" is
// taken) is kept with the tokenizer through .edgeq and GGUF (tokenizer.chat_template); a
// template of the wrong type names the file and the field.
TEST(HfImport, ChatTemplateOfTokenizerConfigSurvivesSaving) {
    REQUIRE_GGUF();
    const fs::path dir = write_fixture(*ref, {}, "chattpl");
    const std::string tpl =
        "{%- for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] | trim }}<|end|>\n{%- endfor %}"
        "{%- if add_generation_prompt %}<|assistant|>\n{%- endif %}";
    std::ofstream(dir / "tokenizer_config.json")
        << nlohmann::json{{"add_bos_token", false}, {"chat_template", tpl}}.dump();
    auto m = load_model(dir.string());
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_EQ(m->tokenizer.chat_template, tpl);
    EXPECT_EQ(m->tokenizer.chat_template_source, (dir / "tokenizer_config.json").string());
    EXPECT_FALSE(m->tokenizer.add_bos);

    const fs::path out = test::temp_dir("chattpl-out");
    ASSERT_TRUE(save_edgeq(*m, (out / "m.edgeq").string()).ok());
    auto q = load_model((out / "m.edgeq").string());
    ASSERT_TRUE(q.ok()) << q.message();
    EXPECT_EQ(q->tokenizer.chat_template, tpl);
    EXPECT_EQ(q->tokenizer.chat_template_source, m->tokenizer.chat_template_source);
    Model g = *ref;  // a GGUF tokenizer (HF tokenizers are not written to GGUF yet)
    g.tokenizer.chat_template = tpl;
    ASSERT_TRUE(write_gguf_model(g, (out / "m.gguf").string()).ok());
    auto back = load_model((out / "m.gguf").string());
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->tokenizer.chat_template, tpl);
    EXPECT_EQ(back->tokenizer.chat_template_source, (out / "m.gguf").string());

    // Named templates: "default" wins wherever it is in the list.
    std::ofstream(dir / "tokenizer_config.json")
        << nlohmann::json{{"chat_template", nlohmann::json::array({{{"name", "tool_use"}, {"template", "T"}},
                                                                   {{"name", "default"}, {"template", "D"}}})}}
               .dump();
    auto named = load_model(dir.string());
    ASSERT_TRUE(named.ok()) << named.message();
    EXPECT_EQ(named->tokenizer.chat_template, "D");
    EXPECT_TRUE(named->tokenizer.add_bos);

    std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": 42})";
    expect_error(dir.string(), {"tokenizer_config.json", "chat_template must be a template string", "42"});
    std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": [{"name": "default"}]})";
    expect_error(dir.string(), {"tokenizer_config.json", "chat_template[0]", "\"template\""});
    std::ofstream(dir / "tokenizer_config.json") << R"({"add_bos_token": "no"})";
    expect_error(dir.string(), {"tokenizer_config.json", "add_bos_token must be true or false", "\"no\""});
    std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": "x",)";
    expect_error(dir.string(), {"tokenizer_config.json"});
}

TEST(Loader, DispatchesAndExplainsWhatItCannotLoad) {
    REQUIRE_GGUF();
    const fs::path dir = write_fixture(*ref, {}, "dispatch");
    // model.safetensors inside a folder with config.json loads the folder.
    auto m = load_model((dir / "model.safetensors").string());
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_EQ(m->source_format, "hf");
    // A bare safetensors file elsewhere needs a config.json.
    const fs::path bare = test::temp_dir("bare") / "weights.safetensors";
    fs::copy_file(dir / "model.safetensors", bare);
    expect_error(bare.string(), {bare.string(), "config.json is needed"});
    expect_error((dir / "nothing-here.gguf").string(), {"nothing-here.gguf", "no such file"});
    std::ofstream(dir / "notes.txt") << "hello, I am not a model";
    expect_error((dir / "notes.txt").string(), {"notes.txt", "unrecognised model format", "GGUF", "llama2.c"});
    std::ofstream(dir / "empty.bin").close();  // an empty file
    expect_error((dir / "empty.bin").string(), {"empty.bin", "empty"});
    auto g = load_model(test::shared("models/stories260K/stories260K.gguf"));
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_EQ(g->source_format, "gguf");
}

}  // namespace
}  // namespace edge

// Regression (issue 21): config.json nested 100,000 deep overflowed the stack when the error
// message printed the value; a wrong-typed value is now quoted as a short excerpt.
TEST(HfConfig, DeeplyNestedJsonIsRefusedAndBadValuesAreQuotedShort) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_TRUE(edge::test::fails_with(edge::model::parse_hf_config("{\"hidden_size\": " + deep + "}", "m/config.json"),
                                       {"m/config.json", "nested more than"}));
    std::string wide = "[";
    for (int i = 0; i < 20000; ++i) wide += (i ? ",1" : "1");
    wide += "]";
    auto r = edge::model::parse_hf_config("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": " + wide + "}",
                                          "m/config.json");
    ASSERT_TRUE(edge::test::fails_with(r, {"m/config.json", "hidden_size"}));
    EXPECT_LT(r.message().size(), 300u) << r.message();
}

TEST(HfConfig, AttentionSizesWhoseProductOverflowsAreRefused) {
    // Each value in range alone (get_int takes up to 2^30), but 8 heads of 2^28 would overflow the
    // int products q_dim() and kv_dim() that the tensor list is made from: the configuration is
    // checked (check_llama_config) before anything computes a shape from it.
    const std::string config = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
        "intermediate_size": 172, "num_hidden_layers": 2, "num_attention_heads": 8,
        "num_key_value_heads": 4, "vocab_size": 512, "head_dim": 268435456})";
    EXPECT_TRUE(edge::test::fails_with(edge::model::parse_hf_config(config, "m/config.json"),
                                       {"m/config.json", "attention sizes are implausible", "8 heads of 268435456"}));
}
