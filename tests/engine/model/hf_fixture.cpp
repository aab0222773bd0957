#include "hf_fixture.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "engine/core/half.h"
#include "engine/model/hf_export.h"
#include "engine/model/safetensors.h"
#include "engine/tokenizer/gguf_translate.h"

using edge::model::encode_f32_as;
using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::SafetensorsWriteItem;
using edge::model::write_safetensors;
using edge::tokenizer::TokenizerSpec;

namespace edge::test {

namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

const std::string kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

std::string sp_text(const std::string& t) {
    std::string out;
    for (char ch : t) {
        if (ch == ' ')
            out += kSpace;
        else
            out.push_back(ch);
    }
    return out;
}

// Splits a UTF-8 string at code point boundaries.
std::vector<size_t> boundaries(const std::string& s) {
    std::vector<size_t> b;
    for (size_t i = 1; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) b.push_back(i);
    return b;
}

bool write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    return bool(out);
}

}  // namespace

std::vector<float> permute_to_hf(const float* w, int heads, int head_dim, int cols) {
    // view(heads, head_dim/2, 2, cols) -> transpose(1, 2) -> (heads, 2, head_dim/2, cols)
    const int half = head_dim / 2;
    std::vector<float> out(size_t(heads) * head_dim * cols);
    size_t o = 0;
    for (int h = 0; h < heads; ++h)
        for (int two = 0; two < 2; ++two)
            for (int i = 0; i < half; ++i) {
                const float* src = w + ((size_t(h) * half + i) * 2 + two) * cols;
                std::copy(src, src + cols, out.begin() + std::ptrdiff_t(o));
                o += size_t(cols);
            }
    return out;
}

std::string make_llama_tokenizer_json(const TokenizerSpec& spec) {
    const size_t n = spec.tokens.size();
    auto type_of = [&](size_t i) { return i < spec.token_types.size() ? spec.token_types[i] : 1; };
    ojson vocab = ojson::object();
    std::map<std::string, int> ids;
    for (size_t i = 0; i < n; ++i) {
        const std::string t = type_of(i) == 1 ? sp_text(spec.tokens[i]) : spec.tokens[i];
        vocab[t] = int(i);
        ids.emplace(t, int(i));
    }
    struct Merge {
        std::string a, b;
        float score;
        int left, right;
    };
    std::vector<Merge> merges;
    for (size_t i = 0; i < n; ++i) {
        if (type_of(i) != 1) continue;
        const std::string t = sp_text(spec.tokens[i]);
        std::vector<Merge> local;
        for (size_t cut : boundaries(t)) {
            auto l = ids.find(t.substr(0, cut)), r = ids.find(t.substr(cut));
            if (l != ids.end() && r != ids.end() && type_of(size_t(l->second)) == 1 && type_of(size_t(r->second)) == 1)
                local.push_back({l->first, r->first, spec.scores.at(i), l->second, r->second});
        }
        std::sort(local.begin(), local.end(),
                  [](const Merge& x, const Merge& y) { return std::tie(x.left, x.right) < std::tie(y.left, y.right); });
        merges.insert(merges.end(), local.begin(), local.end());
    }
    std::stable_sort(merges.begin(), merges.end(), [](const Merge& x, const Merge& y) { return x.score > y.score; });
    ojson merge_list = ojson::array();
    for (const auto& m : merges) merge_list.push_back(m.a + " " + m.b);

    ojson added = ojson::array();
    for (size_t i = 0; i < n; ++i) {
        if (type_of(i) != 2 && type_of(i) != 3) continue;
        added.push_back({{"id", int(i)},
                         {"content", spec.tokens[i]},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    }
    const std::string bos = spec.bos_id >= 0 ? spec.tokens.at(size_t(spec.bos_id)) : "<s>";
    const std::string unk = spec.unk_id >= 0 ? spec.tokens.at(size_t(spec.unk_id)) : "<unk>";
    ojson j;
    j["version"] = "1.0";
    j["truncation"] = nullptr;
    j["padding"] = nullptr;
    j["added_tokens"] = added;
    j["normalizer"] = {{"type", "Sequence"},
                       {"normalizers",
                        {{{"type", "Prepend"}, {"prepend", kSpace}},
                         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSpace}}}}};
    j["pre_tokenizer"] = nullptr;
    j["post_processor"] = ojson::parse(tokenizer::bos_post_processor_json(bos, spec.bos_id));
    j["decoder"] = {{"type", "Sequence"},
                    {"decoders",
                     {{{"type", "Replace"}, {"pattern", {{"String", kSpace}}}, {"content", " "}},
                      {{"type", "ByteFallback"}},
                      {{"type", "Fuse"}},
                      {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
    j["model"] = {{"type", "BPE"},
                  {"dropout", nullptr},
                  {"unk_token", unk},
                  {"continuing_subword_prefix", nullptr},
                  {"end_of_word_suffix", nullptr},
                  {"fuse_unk", true},
                  {"byte_fallback", true},
                  {"ignore_merges", false},
                  {"vocab", vocab},
                  {"merges", merge_list}};
    return j.dump(2);
}

std::string compare_models(const Model& want, const Model& got, DType round) {
    auto rounded = [&](float v) {
        if (round == DType::F16) return f16_to_f32(f32_to_f16(v));
        if (round == DType::BF16) return bf16_to_f32(f32_to_bf16(v));
        return v;
    };
    auto bits = [](float v) {
        uint32_t b = 0;
        std::memcpy(&b, &v, sizeof b);
        return b;
    };
    auto same = [&](const Tensor& a, const Tensor& b) -> std::string {
        if (a.shape != b.shape) return a.name + ": shape " + a.shape_str() + " vs " + b.shape_str();
        if (a.type != DType::F32 || b.type != DType::F32) return a.name + ": not F32";
        for (int64_t i = 0; i < a.numel(); ++i) {
            const float x = rounded(a.f32()[i]), y = b.f32()[i];
            if (bits(x) != bits(y))  // bit for bit
                return a.name + "[" + std::to_string(i) + "]: " + std::to_string(x) + " vs " + std::to_string(y);
        }
        return {};
    };
    for (const Tensor& t : want.tensors) {
        if (t.name == "output.weight") continue;
        const Tensor* g = got.find(t.name);
        if (!g) return t.name + " missing";
        if (auto d = same(t, *g); !d.empty()) return d;
    }
    if (!want.output_head() || !got.output_head()) return "no output head";
    if (auto d = same(*want.output_head(), *got.output_head()); !d.empty()) return "output head: " + d;
    if (want.config.dim != got.config.dim || want.config.hidden_dim != got.config.hidden_dim ||
        want.config.n_layers != got.config.n_layers || want.config.n_heads != got.config.n_heads ||
        want.config.n_kv_heads != got.config.n_kv_heads || want.config.head_dim != got.config.head_dim ||
        want.config.vocab_size != got.config.vocab_size || want.config.rope_dim != got.config.rope_dim)
        return "configurations differ";
    return {};
}

std::string write_hf_folder(const Model& m, const fs::path& dir, const HfFixtureOptions& o) {
    const LlamaConfig& c = m.config;
    std::error_code ec;
    fs::create_directories(dir, ec);
    const Tensor* embd = m.find("token_embd.weight");
    const Tensor* head = m.output_head();
    if (!embd || !head) return "model has no token_embd";

    std::vector<SafetensorsWriteItem> items;
    auto add = [&](const std::string& name, const float* v, std::vector<int64_t> shape) {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        items.push_back({name, o.storage, std::move(shape), encode_f32_as(v, n, o.storage)});
    };
    auto t = [&](const std::string& name) -> const Tensor& { return *m.find(name); };
    const int64_t D = c.dim, F = c.hidden_dim, Q = c.q_dim(), KV = c.kv_dim();

    if (o.tie != HfTie::LmHeadOnly) add("model.embed_tokens.weight", embd->f32(), {c.vocab_size, D});
    for (int l = 0; l < c.n_layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        const std::string p = "model.layers." + std::to_string(l) + ".";
        add(p + "input_layernorm.weight", t(b + "attn_norm.weight").f32(), {D});
        const auto q = permute_to_hf(t(b + "attn_q.weight").f32(), c.n_heads, c.head_dim, c.dim);
        const auto k = permute_to_hf(t(b + "attn_k.weight").f32(), c.n_kv_heads, c.head_dim, c.dim);
        const float* v = t(b + "attn_v.weight").f32();
        if (o.phi3) {
            std::vector<float> qkv(q);
            qkv.insert(qkv.end(), k.begin(), k.end());
            qkv.insert(qkv.end(), v, v + KV * D);
            add(p + "self_attn.qkv_proj.weight", qkv.data(), {Q + 2 * KV, D});
        } else {
            add(p + "self_attn.q_proj.weight", q.data(), {Q, D});
            add(p + "self_attn.k_proj.weight", k.data(), {KV, D});
            add(p + "self_attn.v_proj.weight", v, {KV, D});
            if (c.attn_qkv_bias) {  // Qwen2: the Q/K biases permuted with their rows
                const auto bq = permute_to_hf(t(b + "attn_q.bias").f32(), c.n_heads, c.head_dim, 1);
                const auto bk = permute_to_hf(t(b + "attn_k.bias").f32(), c.n_kv_heads, c.head_dim, 1);
                add(p + "self_attn.q_proj.bias", bq.data(), {Q});
                add(p + "self_attn.k_proj.bias", bk.data(), {KV});
                add(p + "self_attn.v_proj.bias", t(b + "attn_v.bias").f32(), {KV});
            }
        }
        add(p + "self_attn.o_proj.weight", t(b + "attn_output.weight").f32(), {D, Q});
        add(p + "post_attention_layernorm.weight", t(b + "ffn_norm.weight").f32(), {D});
        if (o.phi3) {
            std::vector<float> gu(t(b + "ffn_gate.weight").f32(), t(b + "ffn_gate.weight").f32() + F * D);
            gu.insert(gu.end(), t(b + "ffn_up.weight").f32(), t(b + "ffn_up.weight").f32() + F * D);
            add(p + "mlp.gate_up_proj.weight", gu.data(), {2 * F, D});
        } else {
            add(p + "mlp.gate_proj.weight", t(b + "ffn_gate.weight").f32(), {F, D});
            add(p + "mlp.up_proj.weight", t(b + "ffn_up.weight").f32(), {F, D});
        }
        add(p + "mlp.down_proj.weight", t(b + "ffn_down.weight").f32(), {D, F});
    }
    add("model.norm.weight", t("output_norm.weight").f32(), {D});
    if (o.tie == HfTie::LmHeadOnly) add("lm_head.weight", embd->f32(), {c.vocab_size, D});
    if (o.tie == HfTie::Untied) add("lm_head.weight", head->f32(), {c.vocab_size, D});

    const std::map<std::string, std::string> meta = {{"format", "pt"}};
    if (!o.sharded) {
        if (auto s = write_safetensors((dir / "model.safetensors").string(), items, meta); !s) return s.message();
    } else {
        const size_t half = items.size() / 2;
        std::vector<SafetensorsWriteItem> a(items.begin(), items.begin() + std::ptrdiff_t(half));
        std::vector<SafetensorsWriteItem> b(items.begin() + std::ptrdiff_t(half), items.end());
        const std::string n1 = "model-00001-of-00002.safetensors", n2 = "model-00002-of-00002.safetensors";
        if (auto s = write_safetensors((dir / n1).string(), a, meta); !s) return s.message();
        if (auto s = write_safetensors((dir / n2).string(), b, meta); !s) return s.message();
        ojson wm = ojson::object();
        size_t total = 0;
        for (size_t i = 0; i < items.size(); ++i) {
            wm[items[i].name] = i < half ? n1 : n2;
            total += items[i].bytes.size();
        }
        ojson idx = {{"metadata", {{"total_size", total}}}, {"weight_map", wm}};
        if (!write_text(dir / "model.safetensors.index.json", idx.dump(2))) return "cannot write the index";
    }

    // config.json as the engine's HF writer makes it, with what the fixture varies on top.
    LlamaConfig written = c;
    written.tied_embeddings = o.tie != HfTie::Untied;
    ojson cfg = ojson::parse(model::hf_config_json(written, m.tokenizer, o.storage));
    if (o.phi3) {
        cfg["architectures"] = {"Phi3ForCausalLM"};
        cfg["model_type"] = "phi3";
    }
    cfg["eos_token_id"] = m.tokenizer.eos_id;
    cfg["rope_scaling"] = o.rope_scaling.empty() ? ojson(nullptr) : ojson::parse(o.rope_scaling);
    if (!o.extra_config.empty()) cfg.update(ojson::parse(o.extra_config));
    if (!write_text(dir / "config.json", cfg.dump(2))) return "cannot write config.json";
    if (o.tokenizer) {
        if (!write_text(dir / "tokenizer.json", make_llama_tokenizer_json(m.tokenizer)))
            return "cannot write tokenizer.json";
        ojson tc = {{"add_bos_token", true}, {"add_eos_token", false}, {"bos_token", "<s>"},
                    {"eos_token", "</s>"},   {"unk_token", "<unk>"},   {"tokenizer_class", "LlamaTokenizer"}};
        if (!write_text(dir / "tokenizer_config.json", tc.dump(2))) return "cannot write tokenizer_config.json";
    }
    return {};
}

}  // namespace edge::test
