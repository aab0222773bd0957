// edge-demo-gen: builds the project's demo model at build time, from nothing but code.
//   1. a children's-story corpus from a small seeded grammar (corpus.cpp),
//   2. a SentencePiece-style BPE tokenizer trained on it,
//   3. a small Llama-shaped model initialised with seeded random weights and trained with
//      LibTorch for a fixed number of steps (deterministic for a given thread count),
//   4. demo.gguf (F32, tokenizer embedded), demo-train.txt, demo-heldout.txt and
//      demo-report.json (sizes, losses, held-out perplexity through the FP32 runtime).
// Usage: edge-demo-gen OUT_DIR [--steps N] [--threads N] [--batch N] [--seq-len N] [--lr X] [--seed N]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/analysis/torch_llama.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/synth.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/tokenizer/bpe_trainer.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/validate/perplexity.h"
#include "resources/demo/corpus.h"

using edge::analysis::train_llama;
using edge::analysis::TrainOptions;
using edge::analysis::TrainReport;
using edge::model::LlamaConfig;
using edge::model::make_synth_model;
using edge::model::Model;
using edge::model::SynthOptions;
using edge::model::write_gguf_model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::telemetry::Stopwatch;
using edge::tokenizer::BpeTrainOptions;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::train_bpe;
using edge::validate::evaluate_perplexity;
using edge::validate::PplOptions;
using edge::validate::PplProtocol;

namespace {

using namespace edge;

struct Args {
    std::string out_dir;
    int steps = 80;
    int threads = 1;  // one thread: deterministic, and no OpenMP spinning beside parallel build jobs
    int batch = 16;
    int seq_len = 128;
    float lr = 6e-3f;
    uint64_t seed = 20240601;
};

constexpr size_t kTrainBytes = 300 * 1024;
constexpr size_t kHeldoutBytes = 40 * 1024;
constexpr int kVocab = 512;

LlamaConfig demo_config(int vocab) {
    LlamaConfig c;
    c.dim = 96;
    c.hidden_dim = 256;
    c.n_layers = 4;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = c.dim / c.n_heads;
    c.rope_dim = c.head_dim;
    c.vocab_size = vocab;
    c.context_length = 256;
    c.rope_theta = 10000.0f;
    c.norm_eps = 1e-5f;
    c.tied_embeddings = true;
    return c;
}

Status write_text(const std::filesystem::path& p, const std::string& text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
    f.close();
    if (!f) return err(p.string(), ": cannot write");
    return {};
}

Status run(const Args& a) {
    namespace fs = std::filesystem;
    Stopwatch total;
    std::error_code ec;
    fs::create_directories(a.out_dir, ec);
    if (ec) return err(a.out_dir, ": cannot create the folder: ", ec.message());
    const fs::path dir(a.out_dir);

    // 1. corpus: training text and held-back text from the same grammar, different seeds
    const std::string train_text = demo::make_corpus(a.seed, kTrainBytes);
    const std::string heldout_text = demo::make_corpus(a.seed + 7919, kHeldoutBytes);
    EDGE_TRY(write_text(dir / "demo-train.txt", train_text));
    EDGE_TRY(write_text(dir / "demo-heldout.txt", heldout_text));
    const auto stories = demo::split_stories(train_text);

    // 2. tokenizer, trained on the stories only (not on the separators)
    std::string tok_text;
    for (const auto& s : stories) tok_text += s + "\n";
    BpeTrainOptions bo;
    bo.vocab_size = kVocab;
    auto spec = train_bpe(tok_text, bo);
    if (!spec) return err("demo tokenizer: ", spec.message());
    spec->source = "EdgeStudio demo BPE";
    auto tok = make_tokenizer(*spec);
    if (!tok) return err("demo tokenizer: ", tok.message());
    const int vocab = (*tok)->vocab_size();

    std::vector<std::vector<int32_t>> seqs;
    size_t max_len = 0, sum_len = 0;
    for (const auto& s : stories) {
        auto ids = (*tok)->encode(s, true);
        if ((*tok)->eos_id() >= 0) ids.push_back((*tok)->eos_id());
        max_len = std::max(max_len, ids.size());
        sum_len += ids.size();
        seqs.push_back(std::move(ids));
    }
    std::printf("demo: corpus %zu bytes, %zu stories, vocabulary %d, %zu tokens (story up to %zu)\n", train_text.size(),
                stories.size(), vocab, sum_len, max_len);

    // 3. model: seeded random init, then training
    SynthOptions so;
    so.config = demo_config(vocab);
    so.tied_embeddings = true;
    so.type = DType::F32;
    so.seed = a.seed;
    so.stddev = 0.05f;
    so.threads = 1;
    auto model = make_synth_model(so);
    if (!model) return err("demo model: ", model.message());
    Model& m = *model;
    m.name = "EdgeStudio demo";
    m.tokenizer = *spec;
    m.source_format = "demo";
    m.source_path = (dir / "demo.gguf").string();

    TrainOptions to;
    to.steps = a.steps;
    to.lr = a.lr;
    to.batch = a.batch;
    to.seq_len = std::min(a.seq_len, m.config.context_length);
    to.seed = a.seed;
    to.threads = a.threads;
    TrainReport rep;
    Progress progress([&](double f, const std::string&) {
        const int step = int(std::lround(f * a.steps));
        if (step % 25 == 0) std::printf("demo: training step %d/%d\n", step, a.steps), std::fflush(stdout);
    });
    EDGE_TRY(train_llama(m, seqs, to, &progress, &rep));
    std::printf("demo: %d steps in %.1f s, loss %.3f -> %.3f nats/token\n", rep.steps, rep.seconds, rep.first_loss,
                rep.last_loss);

    // 4. the model file, then the held-out perplexity through the FP32 runtime
    const std::string gguf = (dir / "demo.gguf").string();
    EDGE_TRY(write_gguf_model(m, gguf, DType::F32));
    auto shared = std::make_shared<const Model>(std::move(m));
    RuntimeOptions ro;
    ro.threads = a.threads;
    auto rt = LlamaCpu::create(shared, ro);
    if (!rt) return err("demo runtime: ", rt.message());
    PplOptions po;
    po.protocol = PplProtocol::Story;
    auto ppl = evaluate_perplexity(**rt, **tok, heldout_text, po);
    if (!ppl) return err("demo perplexity: ", ppl.message());
    std::printf("demo: held-out perplexity %.3f over %lld tokens (vocabulary %d, uniform guess %d)\n", ppl->perplexity,
                static_cast<long long>(ppl->tokens), vocab, vocab);

    nlohmann::json j;
    j["name"] = shared->name;
    j["vocab_size"] = vocab;
    j["parameters"] = shared->parameter_count();
    j["train_bytes"] = train_text.size();
    j["train_tokens"] = sum_len;
    j["steps"] = rep.steps;
    j["batch"] = to.batch;
    j["seq_len"] = to.seq_len;
    j["threads"] = a.threads;
    j["train_seconds"] = rep.seconds;
    j["first_loss"] = rep.first_loss;
    j["last_loss"] = rep.last_loss;
    j["heldout_perplexity"] = ppl->perplexity;
    j["heldout_tokens"] = ppl->tokens;
    j["total_seconds"] = total.seconds();
    EDGE_TRY(write_text(dir / "demo-report.json", j.dump(2) + "\n"));
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines show up in build logs as they happen
    try {
        Args a;
        for (int i = 1; i < argc; ++i) {
            const std::string s = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) {
                    std::fprintf(stderr, "edge-demo-gen: %s needs a value\n", s.c_str());
                    std::exit(2);
                }
                return argv[++i];
            };
            if (s == "--steps")
                a.steps = std::atoi(value().c_str());
            else if (s == "--threads")
                a.threads = std::atoi(value().c_str());
            else if (s == "--batch")
                a.batch = std::atoi(value().c_str());
            else if (s == "--seq-len")
                a.seq_len = std::atoi(value().c_str());
            else if (s == "--lr")
                a.lr = std::strtof(value().c_str(), nullptr);
            else if (s == "--seed")
                a.seed = std::strtoull(value().c_str(), nullptr, 10);
            else if (!s.empty() && s[0] != '-' && a.out_dir.empty())
                a.out_dir = s;
            else {
                std::fprintf(stderr,
                             "usage: edge-demo-gen OUT_DIR [--steps N] [--threads N] [--batch N] [--seq-len N] [--lr "
                             "X] [--seed N]\n");
                return 2;
            }
        }
        if (a.out_dir.empty() || a.steps <= 0 || a.threads <= 0 || a.batch <= 0 || a.seq_len < 8 || !(a.lr > 0)) {
            std::fprintf(stderr,
                         "usage: edge-demo-gen OUT_DIR [--steps N] [--threads N] [--batch N] [--seq-len N] [--lr X] "
                         "[--seed N]\n");
            return 2;
        }
        Status st = run(a);
        if (!st.ok()) {
            std::fprintf(stderr, "edge-demo-gen: %s\n", st.message().c_str());
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "edge-demo-gen: unexpected error: %s\n", e.what());
        return 1;
    }
}
