// edge-kv-capture: runs the FP32 executor over a text and writes the K/V of its one sequence as a KV dump
// (engine/kv/codec_table.h) for edge-kv-bench --kv-dump.
//   edge-kv-capture MODEL TEXT OUT [--tokens N]     (N: prefill length, default 512)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "engine/kv/codec_table.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/loader.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/one_sequence.h"
#include "engine/tokenizer/tokenizer.h"

using edge::model::LlamaConfig;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;

using namespace edge;

static int fail(const std::string& m) {
    std::fprintf(stderr, "edge-kv-capture: %s\n", m.c_str());
    return 1;
}

int main(int argc, char** argv) {
    if (argc < 4) return fail("usage: edge-kv-capture MODEL TEXT OUT [--tokens N]");
    int n = 512;
    if (argc >= 6 && std::string(argv[4]) == "--tokens") n = std::atoi(argv[5]);
    if (n <= 0 || n > 65536) return fail("--tokens must be in [1, 65536]");
    auto m = load_model(argv[1]);
    if (!m) return fail(m.message());
    auto model = std::make_shared<Model>(std::move(m).value());
    auto tok = make_tokenizer(model->tokenizer);
    if (!tok) return fail(tok.message());
    std::ifstream f(argv[2], std::ios::binary);
    if (!f) return fail(std::string(argv[2]) + ": cannot open the text");
    std::ostringstream text;
    text << f.rdbuf();
    std::vector<int32_t> ids = (*tok)->encode(text.str(), true);
    if (int(ids.size()) < n) n = int(ids.size());
    if (n < 16) return fail("the text has fewer than 16 tokens");
    ids.resize(size_t(n));
    auto rt = LlamaCpu::create(model, RuntimeOptions{2, n});
    if (!rt) return fail(rt.message());
    auto seq = runtime::OneSequence::create(**rt, n);
    if (!seq) return fail(seq.message());
    if (auto r = seq->next(ids); !r) return fail(r.message());
    const LlamaConfig& c = (*rt)->config();
    kv::KvCapture cap;
    cap.shape = kv::KvShape{c.n_layers, c.n_kv_heads, c.head_dim, 16};
    cap.n_tokens = n;
    // [layer][token][kv_dim], read through the sequence's block table.
    const kv::PagedKv& kv = seq->kv();
    const size_t KV = size_t(c.kv_dim());
    for (int l = 0; l < c.n_layers; ++l)
        for (int p = 0; p < n; ++p) {
            cap.k.insert(cap.k.end(), kv.key_row(seq->kSeq, l, p), kv.key_row(seq->kSeq, l, p) + KV);
            cap.v.insert(cap.v.end(), kv.value_row(seq->kSeq, l, p), kv.value_row(seq->kSeq, l, p) + KV);
        }
    auto s = kv::write_kv_dump(argv[3], cap);
    if (!s) return fail(s.message());
    std::printf("wrote K/V of %d tokens, %d layers, %d KV heads x %d to %s\n", n, c.n_layers, c.n_kv_heads, c.head_dim,
                argv[3]);
    return 0;
}
