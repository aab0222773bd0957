// Writes the fuzzers' seed corpora with our own writers (no third-party files):
//   <out>/gguf/        small llama models (F32, F16, tied, Q/K/V biases), the same weights as
//                      architectures qwen2 and phi3, every metadata value type (v2, v3), tensors
//                      of every block type with pseudo-random block bytes
//   <out>/safetensors/ F32/F16/BF16 tensors with metadata
// and, from the real files in ../shared and the source tree (nothing copied into the repository):
//   <out>/onnx/        mnist-8.onnx
//   <out>/edge/        stories260K compiled as stored (F32) and as INT8
//   <out>/edgeq/       stories260K quantized INT8 and INT4 (.edgeq)
//   <out>/hf_config/   config.json of stories260K as an HF folder (untied, tied, Phi-3) and variants
//   <out>/tokenizer_json/ the Llama-2-style tokenizer.json of stories260K's vocabulary, and small
//                      byte-level ones (GPT-2, Llama 3, Qwen2 + NFC, SmolLM pre-tokenizers)
//   <out>/plan/        plans (uniform, rules, keep, GPTQ/AWQ options)
//   <out>/workload/    tests/data/workloads/*.workload
//   <out>/protocol/    a handshake followed by one frame of every message type
//   <out>/llama2c/     tiny llama2.c checkpoints: v0 (shared and separate classifier), v1, v2 (int8)
//   <out>/llama2c_q80/ tiny llama2.c v2 exports (groups of 8 and 16, shared and separate classifier)
//   <out>/llama2c_tokenizer/ tok512.bin of stories260K (../shared), a byte-fallback vocabulary, a
//                      minimal one
//   <out>/kv_trace/    the first lines of tests/data/kv_traces/*.trace, a trace with frees
//   <out>/boards/      boards files (destinations, IPv6, options, quotes, aliases) and an ssh config
//   <out>/cost_model/  boards' cost-model files (one and two boards) and one board's model
//   <out>/known_hosts/ known_hosts with plain, [host]:port, hashed and marker lines
//   <out>/generation_config/ generation_config.json of Llama 3.x Instruct, Llama 2, Qwen2.5 shapes
//   <out>/chat_template/ the chat-template fixtures of tests/data/chat (*.jinja)
//   <out>/tokenizer_config/ tokenizer_config.json: a template string, named templates, bad shapes
// Usage: edge_fuzz_seed_writer <out-dir> <shared-dir> <source-dir>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <tuple>

#include "engine/compile/compile.h"
#include "engine/core/half.h"
#include "engine/model/edgeq.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/llama2c.h"
#include "engine/model/loader.h"
#include "engine/model/safetensors.h"
#include "engine/model/synth.h"
#include "engine/quant/apply.h"
#include "engine/runtime/cost_model.h"
#include "engine/tokenizer/regex_split.h"
#include "engine/tokenizer/text_util.h"
#include "hf_fixture.h"
#include "remote/protocol/frame.h"
#include "remote/protocol/handshake.h"

namespace {

using edge::DType;
using edge::Status;
using edge::model::gguf::Value;
using edge::model::gguf::ValueType;

// A small config so that seeds stay a few tens of KB (libFuzzer mutates better on small inputs).
edge::model::LlamaConfig small_config() {
    auto c = edge::model::find_synth_shape("test-tiny")->config;
    c.dim = 8;
    c.n_heads = 2;
    c.n_kv_heads = 1;
    c.head_dim = 4;
    c.rope_dim = 4;
    c.hidden_dim = 32;
    c.n_layers = 1;
    c.vocab_size = 323;
    return c;
}

Status write_models(const std::string& dir) {
    edge::model::SynthOptions o;
    o.config = small_config();
    o.threads = 1;
    o.type = DType::F32;
    o.path = dir + "/llama-f32.gguf";
    EDGE_TRY(edge::model::write_synth_model(o));
    o.type = DType::F16;
    o.path = dir + "/llama-f16.gguf";
    EDGE_TRY(edge::model::write_synth_model(o));
    o.tied_embeddings = true;
    o.type = DType::BF16;
    o.path = dir + "/llama-tied-bf16.gguf";
    EDGE_TRY(edge::model::write_synth_model(o));
    // Q/K/V biases (Qwen2) in a llama file, then the same weights under the qwen2 and phi3
    // architectures' keys (their importers permute Q/K rows and biases out of the NEOX layout).
    o.tied_embeddings = false;
    o.type = DType::F32;
    o.config->attn_qkv_bias = true;
    o.path = dir + "/llama-qkv-bias.gguf";
    EDGE_TRY(edge::model::write_synth_model(o));
    auto m = edge::model::make_synth_model(o);
    if (!m.ok()) return m.error();
    for (const char* arch : {"qwen2", "phi3"}) {
        edge::model::gguf::Writer w;
        edge::model::gguf::set_architecture(w, arch, m->config);
        for (const edge::Tensor& t : m->tensors)
            if (std::string(arch) == "qwen2" || !t.name.ends_with(".bias"))
                EDGE_TRY(w.add_tensor(t.name, DType::F32, t.shape));
        EDGE_TRY(w.open(dir + "/" + arch + "-f32.gguf"));
        for (const edge::Tensor& t : m->tensors)
            if (std::string(arch) == "qwen2" || !t.name.ends_with(".bias")) EDGE_TRY(w.write_f32(t.f32(), t.numel()));
        EDGE_TRY(w.finish());
    }
    return {};
}

Status write_metadata(const std::string& dir, uint32_t version) {
    edge::model::gguf::Writer w(version, version == 2 ? 16 : 32);
    w.set("general.architecture", Value::of_string("llama"));
    w.set("k.u8", Value::of_u8(1));
    w.set("k.i8", Value::of_i8(-2));
    w.set("k.u16", Value::of_u16(3));
    w.set("k.i16", Value::of_i16(-4));
    w.set("k.u32", Value::of_u32(5));
    w.set("k.i32", Value::of_i32(-6));
    w.set("k.f32", Value::of_f32(0.5f));
    w.set("k.bool", Value::of_bool(true));
    w.set("k.string", Value::of_string("text"));
    w.set("k.u64", Value::of_u64(7));
    w.set("k.i64", Value::of_i64(-8));
    w.set("k.f64", Value::of_f64(0.25));
    w.set("k.strings", Value::array_of_strings({"a", "bc"}));
    w.set("k.floats", Value::array_of_f32({1.0f, 2.0f}));
    w.set("k.nested", Value::array_of_arrays({Value::array_of_i32({1}), Value::array_of_strings({"x"})}));
    EDGE_TRY(w.add_tensor("t.f32", DType::F32, {2, 3}));
    EDGE_TRY(w.open(dir + "/metadata-v" + std::to_string(version) + ".gguf"));
    const float v[6] = {1, 2, 3, 4, 5, 6};
    EDGE_TRY(w.write_f32(v, 6));
    return w.finish();
}

// One tensor of each block type; block bytes are random except the f16 scales, kept finite.
Status write_blocks(const std::string& dir) {
    edge::model::gguf::Writer w;
    const DType types[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                           DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K};
    for (DType t : types) EDGE_TRY(w.add_tensor(std::string("t.") + edge::dtype_name(t), t, {1, 256}));
    EDGE_TRY(w.open(dir + "/blocks.gguf"));
    std::mt19937 rng(7);
    for (DType t : types) {
        std::vector<uint8_t> b(edge::dtype_bytes(t, 256));
        for (auto& x : b) x = uint8_t(rng());
        // Make every 16-bit word a modest half so scales are finite wherever they sit.
        for (size_t i = 0; i + 1 < b.size(); i += 2) {
            const uint16_t h = edge::f32_to_f16(float(int(rng() % 200) - 100) / 1000.0f);
            if (i % 8 == 0) std::memcpy(&b[i], &h, 2);
        }
        EDGE_TRY(w.write_raw(b.data(), b.size()));
    }
    return w.finish();
}

Status write_safetensors(const std::string& dir) {
    const float v[6] = {0.5f, -1.0f, 2.0f, 0.0f, 3.5f, -0.25f};
    std::vector<edge::model::SafetensorsWriteItem> items;
    items.push_back({"a.weight", DType::F32, {2, 3}, edge::model::encode_f32_as(v, 6, DType::F32)});
    items.push_back({"b.weight", DType::F16, {6}, edge::model::encode_f32_as(v, 6, DType::F16)});
    items.push_back({"c.weight", DType::BF16, {3, 2}, edge::model::encode_f32_as(v, 6, DType::BF16)});
    EDGE_TRY(edge::model::write_safetensors(dir + "/three.safetensors", items, {{"format", "pt"}}));
    items.resize(1);
    return edge::model::write_safetensors(dir + "/one.safetensors", items);
}

Status write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
    if (!f) return edge::err(path, ": cannot write");
    return {};
}

Status copy_file(const std::string& from, const std::string& to) {
    std::error_code ec;
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return edge::err(from, ": cannot copy to ", to, ": ", ec.message(), " (see ../shared/ASSETS.md)");
    return {};
}

// Real files: the ONNX model, engines, quantized models, HF configs, tokenizer.json and the llama2.c
// tokenizer of stories260K.
Status write_real(const std::string& out, const std::string& shared) {
    EDGE_TRY(copy_file(shared + "/models/cnn/mnist-8.onnx", out + "/onnx/mnist-8.onnx"));
    EDGE_TRY(copy_file(shared + "/models/stories260K/tok512.bin", out + "/llama2c_tokenizer/tok512.bin"));
    auto m = edge::model::load_model(shared + "/models/stories260K/stories260K.gguf");
    if (!m.ok()) return m.error();
    for (auto p : {edge::quant::Precision::FP16, edge::quant::Precision::INT8}) {  // FP16 here: as stored (F32)
        edge::compile::CompileOptions o;
        o.out_path = out + "/edge/stories-" +
                     (p == edge::quant::Precision::FP16 ? std::string("stored") : edge::quant::precision_name(p)) +
                     ".edge";
        if (p != edge::quant::Precision::FP16) o.plan = edge::quant::uniform_plan(p);
        o.max_seq = 64;
        o.prefill_batch = 4;
        if (auto r = edge::compile::compile(*m, o); !r.ok()) return r.error();
    }
    for (auto p : {edge::quant::Precision::INT8, edge::quant::Precision::INT4}) {
        auto q = edge::quant::apply_plan(*m, edge::quant::uniform_plan(p), nullptr);
        if (!q.ok()) return q.error();
        EDGE_TRY(
            edge::model::save_edgeq(q->model, out + "/edgeq/stories-" + edge::quant::precision_name(p) + ".edgeq"));
    }
    int k = 0;
    for (auto tie : {edge::test::HfTie::Untied, edge::test::HfTie::EmbedOnly}) {
        for (bool phi3 : {false, true}) {
            const auto dir = std::filesystem::path(out) / "hf-work" / std::to_string(k);
            edge::test::HfFixtureOptions o;
            o.tie = tie;
            o.phi3 = phi3;
            if (auto why = edge::test::write_hf_folder(*m, dir, o); !why.empty()) return edge::err("hf fixture: ", why);
            EDGE_TRY(
                copy_file((dir / "config.json").string(), out + "/hf_config/config-" + std::to_string(k) + ".json"));
            if (k == 0)
                EDGE_TRY(copy_file((dir / "tokenizer.json").string(), out + "/tokenizer_json/stories260K.json"));
            ++k;
        }
    }
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(out) / "hf-work", ec);
    EDGE_TRY(
        write_bytes(out + "/hf_config/rope-llama3.json",
                    R"({"architectures":["LlamaForCausalLM"],"hidden_size":64,"intermediate_size":172,)"
                    R"("num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":4,"vocab_size":512,)"
                    R"("max_position_embeddings":2048,"rms_norm_eps":1e-5,"rope_theta":500000.0,)"
                    R"("rope_scaling":{"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,)"
                    R"("high_freq_factor":4.0,"original_max_position_embeddings":8192},"tie_word_embeddings":true})"));
    return {};
}

Status write_plans(const std::string& dir) {
    const char* plans[] = {
        R"({"version": 1, "default": {"precision": "int4", "method": "rtn", "group_size": 32}})",
        (R"({"version": 1, "default": {"precision": "int8", "grouping": "channel"},)"
         R"( "layers": {"blk.*.ffn_down": {"precision": "fp16"}, "blk.0.attn_q": {"precision": "int4",)"
         R"( "method": "gptq", "group_size": 64, "symmetric": false}}, "keep": ["output"], "keep_precision": "fp16"})"),
        (R"({"version": 1, "default": {"precision": "int4", "method": "awq", "scales": "fp16"}, "awq": {"grid": 20},)"
         R"( "gptq": {"damp": 0.01, "block": 128, "act_order": true}, "prune": {"blk.*.ffn": 0.25}})"),
    };
    int i = 0;
    for (const char* p : plans) EDGE_TRY(write_bytes(dir + "/plan-" + std::to_string(i++) + ".plan.json", p));
    return {};
}

Status write_chat_templates(const std::string& dir, const std::string& source) {
    for (const auto& e : std::filesystem::directory_iterator(source + "/tests/data/chat"))
        if (e.path().extension() == ".jinja")
            EDGE_TRY(copy_file(e.path().string(), dir + "/" + e.path().filename().string()));
    return {};
}

Status write_workloads(const std::string& dir, const std::string& source) {
    for (const auto& e : std::filesystem::directory_iterator(source + "/tests/data/workloads"))
        EDGE_TRY(copy_file(e.path().string(), dir + "/" + e.path().filename().string()));
    return {};
}

// A client's and an agent's opening bytes, then one frame of every type.
Status write_protocol(const std::string& dir) {
    using namespace edge::protocol;
    edge::protocol::TelemetrySample s;
    s.timestamp_ns = 1, s.request_id = 2, s.token_latency_ms = 3.5, s.kv_blocks_used = 4, s.kv_blocks_free = 5;
    s.kv_hit_rate = 0.5, s.batch_size = 8, s.queue_length = 1, s.preemptions = 2;
    ServeReport rep;
    rep.request_id = 7;
    rep.backend = "cpu";
    rep.requests.push_back({10, 5, 1, 0.0, 3.5, 1.25, 12.0, 9, 0, 42});
    const std::vector<Message> all = {
        Hello{"agent", "0.1.0", "orin", "Cortex-A78AE", 12, 64ull << 30, "cpu"},
        LoadEngine{1, "current/model.edge", Sha256{}, "", ""},
        RunWorkload{2, {"Once upon a time"}, 16, 0.0f, 0, 1.0f, 42, 20, ""},
        TelemetryBatch{0, {s}},
        LogLine{1, LogLevel::Info, {}, {}, "ready"},
        ErrorMsg{3, ErrorCode::RunFailed, "bad"},
        Stop{4, StopScope::Cancel},
        Stop{5, StopScope::Request, 3},
        Ack{5, MsgType::RunWorkload, "done"},
        RunResult{2, 0, 5, 16, 3.5, 100.0, "text"},
        MetricsRequest{6},
        Metrics{6, "x_total 1\n"},
        ServeWorkload{7, "edge-workload 1\nreq 0 - 10 5\n", 8, 72, 16, 64, 32, PreemptMode::Swap, 1.0, 20, "", true},
        rep,
    };
    const auto hs = encode_handshake_request(kProtocolVersion);
    std::string head(hs.begin(), hs.end());
    const auto reply =
        encode_handshake_reply(HandshakeReply{HandshakeStatus::Welcome, kProtocolVersion, kProtocolVersion});
    std::string reply_head(reply.begin(), reply.end());
    std::string stream = head;
    for (size_t i = 0; i < all.size(); ++i) {
        auto f = encode_frame(all[i]);
        if (!f.ok()) return f.error();
        const std::string frame(f->begin(), f->end());
        EDGE_TRY(write_bytes(dir + "/frame-" + std::to_string(i + 1), (i % 2 ? reply_head : head) + frame));
        stream += frame;
    }
    return write_bytes(dir + "/stream", stream);
}

// ---- llama2.c checkpoints and exports (layouts: engine/model/llama2c.h) ----

struct L2cDims {
    int32_t dim = 8, hidden = 16, layers = 1, heads = 2, kv_heads = 1, vocab = 16, seq = 4;
};

struct ByteWriter {
    std::string b;
    std::mt19937 rng{11};
    void i32(int32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); }
    void f32(float v) { b.append(reinterpret_cast<const char*>(&v), 4); }
    void floats(int64_t n) {
        for (int64_t i = 0; i < n; ++i) f32(float(int(rng() % 2001) - 1000) / 4000.0f);
    }
    // int8 codes, then one float32 scale per group of the flattened tensor.
    void q8(int64_t n, int group) {
        for (int64_t i = 0; i < n; ++i) b.push_back(char(int(rng() % 255) - 127));
        for (int64_t g = 0; g < n / group; ++g) f32(float(1 + rng() % 100) / 10000.0f);
    }
};

// version 0: 7-int header, fp32 in llama2.c order, RoPE tables; 1: 256-byte header, fp32 norms
// first; 2: the same with int8 matrices in groups of `group`.
std::string llama2c_checkpoint(const L2cDims& d, int version, bool shared, int group) {
    ByteWriter w;
    const int64_t D = d.dim, F = d.hidden, L = d.layers, V = d.vocab, hs = d.dim / d.heads, KV = d.kv_heads * hs;
    if (version == 0) {
        for (int32_t v : {d.dim, d.hidden, d.layers, d.heads, d.kv_heads, shared ? d.vocab : -d.vocab, d.seq}) w.i32(v);
        w.floats(V * D);
        w.floats(L * D);  // attention norms
        w.floats(L * D * D);
        w.floats(2 * L * KV * D);
        w.floats(L * D * D);
        w.floats(L * D);  // FFN norms
        w.floats(3 * L * F * D);
        w.floats(D);
        w.floats(2 * int64_t(d.seq) * hs / 2);  // freq_cis_real, freq_cis_imag
        if (!shared) w.floats(V * D);
        return w.b;
    }
    w.i32(int32_t(edge::model::kLlama2cMagic));
    w.i32(version);
    for (int32_t v : {d.dim, d.hidden, d.layers, d.heads, d.kv_heads, d.vocab, d.seq}) w.i32(v);
    w.b.push_back(shared ? 1 : 0);
    if (version == 2) w.i32(group);
    w.b.resize(256, '\0');
    w.floats(2 * L * D + D);  // attention norms, FFN norms, final norm
    auto matrix = [&](int64_t n) {
        if (version == 2)
            w.q8(n, group);
        else
            w.floats(n);
    };
    matrix(V * D);
    for (int l = 0; l < L; ++l) matrix(D * D);
    for (int l = 0; l < 2 * L; ++l) matrix(KV * D);
    for (int l = 0; l < L; ++l) matrix(D * D);
    for (int l = 0; l < 3 * L; ++l) matrix(F * D);
    if (!shared) matrix(V * D);
    return w.b;
}

Status write_llama2c(const std::string& out) {
    const L2cDims d;
    EDGE_TRY(write_bytes(out + "/llama2c/v0-shared.bin", llama2c_checkpoint(d, 0, true, 0)));
    EDGE_TRY(write_bytes(out + "/llama2c/v0-separate.bin", llama2c_checkpoint(d, 0, false, 0)));
    EDGE_TRY(write_bytes(out + "/llama2c/v1-shared.bin", llama2c_checkpoint(d, 1, true, 0)));
    EDGE_TRY(write_bytes(out + "/llama2c/v2-separate-g8.bin", llama2c_checkpoint(d, 2, false, 8)));
    L2cDims two = d;
    two.layers = 2;
    two.kv_heads = 2;
    EDGE_TRY(write_bytes(out + "/llama2c/v0-two-layers.bin", llama2c_checkpoint(two, 0, true, 0)));
    EDGE_TRY(write_bytes(out + "/llama2c_q80/shared-g8.bin", llama2c_checkpoint(d, 2, true, 8)));
    EDGE_TRY(write_bytes(out + "/llama2c_q80/separate-g16.bin", llama2c_checkpoint(d, 2, false, 16)));
    return write_bytes(out + "/llama2c_q80/two-layers-g8.bin", llama2c_checkpoint(two, 2, true, 8));
}

// tokenizer.bin: int32 max_token_len, then per token f32 score, int32 length, bytes.
std::string llama2c_tokenizer(const std::vector<std::pair<std::string, float>>& tokens) {
    ByteWriter w;
    int32_t longest = 1;
    for (const auto& [text, score] : tokens) longest = std::max(longest, int32_t(text.size()));
    w.i32(longest);
    for (const auto& [text, score] : tokens) {
        w.f32(score);
        w.i32(int32_t(text.size()));
        w.b += text;
    }
    return w.b;
}

Status write_llama2c_tokenizers(const std::string& dir) {
    std::vector<std::pair<std::string, float>> t = {{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
    for (int b = 0; b < 256; ++b) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", b);
        t.emplace_back(hex, 0.0f);
    }
    float score = -1;
    for (const char* piece : {"\xe2\x96\x81", "e", "t", "h", "th", "\xe2\x96\x81t", "he", "\xe2\x96\x81the", "on", "ce",
                              "\xe2\x96\x81\x61" /* ▁a */, "\xe2\x96\x81time", "\xe2\x96\x81up", "\xe2\x96\x81upon"})
        t.emplace_back(piece, score--);
    EDGE_TRY(write_bytes(dir + "/byte-fallback.bin", llama2c_tokenizer(t)));
    t.resize(3);
    t.emplace_back("a", -1.0f);
    t.emplace_back("b", -2.0f);
    t.emplace_back("ab", -0.5f);
    return write_bytes(dir + "/minimal.bin", llama2c_tokenizer(t));
}

// The first lines (about 1 KB) of each committed trace, and one with frees and single blocks.
Status write_kv_traces(const std::string& dir, const std::string& source) {
    for (const auto& e : std::filesystem::directory_iterator(source + "/tests/data/kv_traces")) {
        std::ifstream in(e.path(), std::ios::binary);
        std::string head, line;
        while (head.size() < 1024 && std::getline(in, line)) head += line + "\n";
        if (head.empty()) return edge::err(e.path().string(), ": empty trace");
        EDGE_TRY(write_bytes(dir + "/" + e.path().filename().string(), head));
    }
    return write_bytes(dir + "/frees.trace",
                       "edge-kv-trace 1\r\nname frees\nblock_tokens 32\n# a comment\ns 0 1 7 9-12 100\n"
                       "s 1 3 0-3\nf 7 9-12\nf 100\ns 4294967294 1000000 18446744073709551614-18446744073709551615\n");
}

// Hand-written text seeds: {file name, contents} into dir.
Status write_texts(const std::string& dir, const std::vector<std::pair<const char*, const char*>>& files) {
    for (const auto& [name, text] : files) EDGE_TRY(write_bytes(dir + "/" + name, text));
    return {};
}

// Boards' cost-model files as deploy --cost-models writes them: one board, two boards (the second
// with every precision of two shapes), and one board's model alone.
Status write_cost_models(const std::string& dir) {
    edge::runtime::BoardCostModel a;
    a.cpu = "AMD EPYC";
    a.kernels = "avx512-vnni-gfni kernels, 2 threads";
    a.threads = 2;
    a.engine = "int4.edge";
    a.engine_tpot_ms = 1.966;
    a.engine_linear_ms = 1.817;
    a.rest_ms = 0.149;
    a.linears = {{768, 768, "int4", 38.5}, {2048, 768, "int8", 151.25}};
    edge::runtime::BoardCostModel b = a;
    b.cpu = "ARMv8 Processor rev 1 (v8l)";
    b.kernels = "neon-dotprod kernels, 6 threads";
    b.threads = 6;
    b.linears.clear();
    for (const char* p : edge::runtime::kCostPrecisions) {
        b.linears.push_back({64, 64, p, 1.5});
        b.linears.push_back({512, 64, p, 9.25});
    }
    auto one = edge::runtime::with_board_cost_model("", "seed", "orin", a);
    if (!one.ok()) return one.error();
    auto two = edge::runtime::with_board_cost_model(*one, "seed", "b", b);
    if (!two.ok()) return two.error();
    const std::string model = edge::runtime::cost_model_to_json(b);
    return write_texts(
        dir, {{"one-board.json", one->c_str()}, {"two-boards.json", two->c_str()}, {"model.json", model.c_str()}});
}

Status write_boards(const std::string& dir) {
    return write_texts(dir, {{"fleet.boards",
                              "# name      destination              options (all optional)\n"
                              "orin-01     nvidia@10.0.0.21         root=/opt/edgestudio identity=~/.ssh/orin\n"
                              "orin-02     nvidia@10.0.0.22:2222    launcher=\"nice -n -5\"\n"
                              "lab-alias                            # an ~/.ssh/config alias\n"
                              "v6          root@[fe80::1]:2022      root=/r\n"
                              "emu u@127.0.0.1:2222 launcher=\"qemu-aarch64 -L /usr/aarch64-linux-gnu\" root=/r\r\n"
                              "bare        10.0.0.30\n"},
                             {"ssh_config",
                              "Host *\n  ServerAliveInterval 5\nHost orin jetson\n  HostName 10.1.1.1\n"
                              "  User nv\n  Port 2200\n  IdentityFile ~/.ssh/orin\nHost pi?\n  User pi\n"
                              "Match host foo\n  User bar\nHost=lab\n\tPort=2022 # tabs and '='\n"}});
}

// The studio's project files (views/models/project.h) as projectToJson writes them: a plan with
// pruning, two configurations (one with an engine and a board measurement, one failed), the
// thresholds, a sensitivity list and two profile workloads (prompts, a serving workload); and the
// smallest document the reader accepts.
Status write_projects(const std::string& dir) {
    const std::string layer = R"({"group": 32, "layer": "blk.0.attn_q", "method": "rtn", "precision": "int4",
                                  "pruning": 0.25, "symmetric": true})";
    const std::string plan = R"({"layers": [)" + layer +
                             R"(, {"group": 0, "layer": "output", "method": "none", "precision": "fp16",
                                   "pruning": 0, "symmetric": true}]})";
    const std::string full = R"({"format": "edgeproj", "version": 1, "model": "/m/stories260K.gguf",
        "tokenizer": "", "page": "pareto", "plan": )" +
                             plan + R"(,
        "evaluation": {"text": "/d/tinystories_sample.txt", "thresholds": {"kl_mean_max": 0.08,
            "jitter_ms_max": 2.5, "bitflip_conf_drop_max": 0.1, "scale_ratio_warn": 1000}},
        "configurations": [
          {"name": "C1", "ppl": 3.65, "ppl_ref": 3.64, "kl_mean": 0.0008, "top1": 0.976, "bytes": 432832,
           "fp32_bytes": 1171200, "passed": true, "failures": [], "decode_ms": 0.04, "tokens_per_s": 24000,
           "when": "2026-12-06T09:21:48Z", "plan": )" +
                             plan + R"(,
           "calibration": {"file": "", "note": "kept 40 of 46 paragraphs", "evaluation": "/d/t.txt",
                           "protocol": "story", "parts": 2, "tokens": 128, "sequences": 8, "length": 64,
                           "select": "kmeans", "samples": 16, "seed": 7},
           "engines": [{"target": "cpu", "path": "/p/C1-cpu.edge", "bytes": 311296, "when": "2026-12-06T09:21:48Z",
                        "sha256": "a92520f0556aebc2307d7823a1706d4f2bab027790dfe915d8d46c520021016d"}],
           "measurements": [{"board": "orin", "machine": "orin · cpu · cpu", "engine_sha256":
                "a92520f0556aebc2307d7823a1706d4f2bab027790dfe915d8d46c520021016d", "prompts": 1, "tokens": 24,
                "tpot_p50_ms": 0.8, "tpot_p99_ms": 1.9, "ttft_ms": 2.5, "tokens_per_s": 900, "peak_rss_mib": 12,
                "kv_hit_rate": -1, "workload": "two stories", "when": "2026-12-06T09:22:00Z"}]},
          {"name": "C2", "ppl": 24.0, "ppl_ref": 3.64, "kl_mean": 1.8, "top1": 0.4, "bytes": 256000,
           "fp32_bytes": 1171200, "passed": false, "failures": ["mean KL 1.8098 ≥ 0.0800"], "plan": )" +
                             plan + R"(}],
        "sensitivity": [{"layer": "blk.0.attn_q", "kind": "attn_q", "block": 0, "shape": [64, 64],
                         "kl_mean": 0.01, "kl_max": 0.2, "nll_delta": 0.003, "bytes": 2304}],
        "boards": ["orin"],
        "workloads": [{"name": "two stories", "prompts": ["Once upon a time", "Lily"], "max_tokens": 24,
                       "chat": false},
                      {"name": "mixed", "serve": "edge-workload 1\nprefix sys 48\nreq 0 - 96 64\nreq 1 sys 20 48\n",
                       "source": "mixed.workload", "concurrency": 8}]})";
    return write_texts(dir, {{"full.edgeproj", full.c_str()},
                             {"minimal.edgeproj", R"({"format": "edgeproj", "version": 1, "model": "m.gguf"})"}});
}

// Byte-level BPE tokenizer.json in the shapes GGUF export translates: GPT-2's ByteLevel regex,
// a Split regex (Llama 3's, Qwen2's with NFC) then ByteLevel, Digits then ByteLevel (SmolLM).
Status write_tokenizer_jsons(const std::string& dir) {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[edge::tokenizer::byte_to_unicode(uint8_t(b))] = b;
    const std::string sp = edge::tokenizer::byte_to_unicode(uint8_t(' '));
    vocab["he"] = 256;
    vocab[sp + "t"] = 257;
    vocab[sp + "the"] = 258;
    const nlohmann::json merges = {"h e", sp + " t", sp + "t he"};
    const nlohmann::json added = {{{"id", 259}, {"content", "<|endoftext|>"}, {"special", true}},
                                  {{"id", 260}, {"content", "<|im_start|>"}, {"special", true}},
                                  {{"id", 262}, {"content", "<extra>"}, {"special", false}}};
    auto byte_level = [](bool regex) {
        return nlohmann::json{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", regex}};
    };
    auto split = [&](const char* pattern) {
        return nlohmann::json{
            {"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
              byte_level(false)}}};
    };
    const std::vector<std::tuple<const char*, nlohmann::json, nlohmann::json>> shapes = {
        {"gpt2.json", byte_level(true), nullptr},
        {"llama3.json", split(edge::tokenizer::kLlama3Pattern), nullptr},
        {"qwen2.json", split(edge::tokenizer::find_pre_tokenizer("qwen2")->patterns[0]), {{"type", "NFC"}}},
        {"smollm.json",
         {{"type", "Sequence"},
          {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}, byte_level(true)}}},
         nullptr}};
    for (const auto& [file, pre, norm] : shapes) {
        const nlohmann::json j = {{"version", "1.0"},
                                  {"added_tokens", added},
                                  {"normalizer", norm},
                                  {"pre_tokenizer", pre},
                                  {"decoder", {{"type", "ByteLevel"}}},
                                  {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
        EDGE_TRY(write_bytes(dir + "/" + file, j.dump()));
    }
    return {};
}

// tokenizer_config.json: a template string, a list of named templates with and without
// "default", add_bos_token, and the shapes the reader must refuse.
Status write_tokenizer_configs(const std::string& dir, const std::string& source) {
    std::ifstream in(source + "/tests/data/chat/chatml_system_default.jinja");
    std::stringstream tpl;
    tpl << in.rdbuf();
    const nlohmann::json chatml = {{"add_bos_token", false}, {"chat_template", tpl.str()}, {"eos_token", "<|im_end|>"}};
    const nlohmann::json named = {
        {"add_bos_token", true},
        {"chat_template",
         {{{"name", "tool_use"}, {"template", "{{ tools }}"}}, {{"name", "default"}, {"template", tpl.str()}}}}};
    EDGE_TRY(write_bytes(dir + "/chatml.json", chatml.dump(2)));
    EDGE_TRY(write_bytes(dir + "/named.json", named.dump()));
    return write_texts(dir, {{"no-default.json", "{\"chat_template\": [{\"name\": \"a\", \"template\": \"x\"}]}"},
                             {"nulls.json", "{\"add_bos_token\": null, \"chat_template\": null}"},
                             {"bad-entry.json", "{\"chat_template\": [{\"name\": 3}]}"},
                             {"empty-list.json", "{\"chat_template\": []}"}});
}

// generation_config.json as Llama 3.x Instruct, Llama 2 and Qwen2.5 ship it, and edge cases.
Status write_generation_configs(const std::string& dir) {
    return write_texts(
        dir, {{"llama3-instruct.json",
               "{\n  \"bos_token_id\": 128000,\n  \"do_sample\": true,\n  \"eos_token_id\": [128001, 128008, "
               "128009],\n  \"temperature\": 0.6,\n  \"top_p\": 0.9,\n  \"transformers_version\": \"4.45.0\"\n}\n"},
              {"llama2.json",
               "{\"bos_token_id\": 1, \"eos_token_id\": 2, \"pad_token_id\": 0, \"temperature\": 0.6, "
               "\"max_length\": 4096, \"top_p\": 0.9}"},
              {"qwen2.json",
               "{\"bos_token_id\": 151643, \"pad_token_id\": 151643, \"do_sample\": true, "
               "\"eos_token_id\": [151645, 151643], \"repetition_penalty\": 1.05, \"temperature\": 0.7, "
               "\"top_p\": 0.8, \"top_k\": 20}"},
              {"nulls.json", "{\"eos_token_id\": null, \"do_sample\": false, \"top_k\": 0}"}});
}

Status write_known_hosts(const std::string& dir) {
    const std::string ed = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOowF/45KZkPcN14OFZjH7lfr6bIz5zUObVBFr+ou7DM";
    const std::string ec =
        "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBFwZu0fAyAooyTZl/RZaaNWIhSTMlbbs4/"
        "aKZRjcUO5bZ81W3BzEaK9cXDq2qdbEgTIUUPuQUdfJdIOfCB3/Jj8=";
    EDGE_TRY(write_bytes(dir + "/plain", "# plain host fields\norin.local " + ed + "\n10.0.0.21,orin.local " + ec +
                                             " comment\n[orin.local]:2222 " + ed + "\n"));
    // Hashed: |1|base64(salt)|base64(HMAC-SHA1(salt, name)) for "orin.local" and "[orin.local]:2222".
    EDGE_TRY(write_bytes(dir + "/hashed", "|1|AQIDBAUGBwgJCgsMDQ4PEBESExQ=|3W0FSNSIfbvlMyF+hzPdYe6cUFw= " + ed +
                                              "\n|1|AQIDBAUGBwgJCgsMDQ4PEBESExQ=|jOfm0ETqakrkQQ88aOfWuM+MV3Q= " + ec +
                                              "\n"));
    return write_bytes(dir + "/markers", "@cert-authority *.local " + ed + "\n@revoked orin.local " + ec +
                                             "\n\n   \norin.local\norin.local ssh-ed25519\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s <out-dir> <shared-dir> <source-dir>\n", argv[0]);
        return 2;
    }
    const std::string out = argv[1], shared = argv[2], source = argv[3];
    std::error_code ec;
    for (const char* d : {"gguf",
                          "safetensors",
                          "onnx",
                          "edge",
                          "edgeq",
                          "hf_config",
                          "tokenizer_json",
                          "plan",
                          "workload",
                          "protocol",
                          "llama2c",
                          "llama2c_q80",
                          "llama2c_tokenizer",
                          "kv_trace",
                          "boards",
                          "cost_model",
                          "known_hosts",
                          "generation_config",
                          "chat_template",
                          "tokenizer_config",
                          "project"})
        std::filesystem::create_directories(out + "/" + d, ec);
    for (const Status& s :
         {write_models(out + "/gguf"), write_metadata(out + "/gguf", 2), write_metadata(out + "/gguf", 3),
          write_blocks(out + "/gguf"), write_safetensors(out + "/safetensors"), write_plans(out + "/plan"),
          write_workloads(out + "/workload", source), write_protocol(out + "/protocol"), write_llama2c(out),
          write_llama2c_tokenizers(out + "/llama2c_tokenizer"), write_kv_traces(out + "/kv_trace", source),
          write_boards(out + "/boards"), write_cost_models(out + "/cost_model"),
          write_known_hosts(out + "/known_hosts"), write_generation_configs(out + "/generation_config"),
          write_chat_templates(out + "/chat_template", source),
          write_tokenizer_configs(out + "/tokenizer_config", source), write_tokenizer_jsons(out + "/tokenizer_json"),
          write_projects(out + "/project")}) {
        if (!s.ok()) {
            std::fprintf(stderr, "seed writer: %s\n", s.message().c_str());
            return 1;
        }
    }
    // The real files' corpora need ../shared: without it the build goes on and says so, and those
    // fuzzers start from an empty corpus.
    if (Status s = write_real(out, shared); !s.ok())
        std::fprintf(stderr,
                     "seed writer: WARNING: %s; the onnx, llama2c_tokenizer, edge, edgeq, hf_config and "
                     "tokenizer_json corpora "
                     "are incomplete\n",
                     s.message().c_str());
    return 0;
}
