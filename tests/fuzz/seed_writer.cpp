// Writes the fuzzers' seed corpora with our own writers (no third-party files):
//   <out>/gguf/        small llama models (F32, F16, tied), every metadata value type (v2, v3),
//                      tensors of every block type with pseudo-random block bytes
//   <out>/safetensors/ F32/F16/BF16 tensors with metadata
// Usage: edge_fuzz_seed_writer <out-dir>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/core/half.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/safetensors.h"
#include "engine/model/synth.h"

namespace {

using edge::DType;
using edge::Status;
using edge::gguf::Value;
using edge::gguf::ValueType;

// A small config so that seeds stay a few tens of KB (libFuzzer mutates better on small inputs).
edge::LlamaConfig small_config() {
    auto c = edge::find_synth_shape("test-tiny")->config;
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
    edge::SynthOptions o;
    o.config = small_config();
    o.threads = 1;
    o.type = DType::F32;
    o.path = dir + "/llama-f32.gguf";
    EDGE_TRY(edge::write_synth_model(o));
    o.type = DType::F16;
    o.path = dir + "/llama-f16.gguf";
    EDGE_TRY(edge::write_synth_model(o));
    o.tied_embeddings = true;
    o.type = DType::BF16;
    o.path = dir + "/llama-tied-bf16.gguf";
    return edge::write_synth_model(o);
}

Status write_metadata(const std::string& dir, uint32_t version) {
    edge::gguf::Writer w(version, version == 2 ? 16 : 32);
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
    edge::gguf::Writer w;
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
    std::vector<edge::SafetensorsWriteItem> items;
    items.push_back({"a.weight", DType::F32, {2, 3}, edge::encode_f32_as(v, 6, DType::F32)});
    items.push_back({"b.weight", DType::F16, {6}, edge::encode_f32_as(v, 6, DType::F16)});
    items.push_back({"c.weight", DType::BF16, {3, 2}, edge::encode_f32_as(v, 6, DType::BF16)});
    EDGE_TRY(edge::write_safetensors(dir + "/three.safetensors", items, {{"format", "pt"}}));
    items.resize(1);
    return edge::write_safetensors(dir + "/one.safetensors", items);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <out-dir>\n", argv[0]);
        return 2;
    }
    const std::string out = argv[1];
    std::error_code ec;
    std::filesystem::create_directories(out + "/gguf", ec);
    std::filesystem::create_directories(out + "/safetensors", ec);
    for (Status s : {write_models(out + "/gguf"), write_metadata(out + "/gguf", 2), write_metadata(out + "/gguf", 3),
                     write_blocks(out + "/gguf"), write_safetensors(out + "/safetensors")}) {
        if (!s.ok()) {
            std::fprintf(stderr, "seed writer: %s\n", s.message().c_str());
            return 1;
        }
    }
    return 0;
}
