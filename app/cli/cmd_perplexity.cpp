// `perplexity MODEL --text FILE --protocol story|para|stream [--max-parts N]`.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/cli/common.h"
#include "engine/core/mapped_file.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/validate/perplexity.h"

using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::telemetry::Stopwatch;
using edge::validate::evaluate_perplexity;
using edge::validate::parse_ppl_protocol;
using edge::validate::ppl_protocol_name;
using edge::validate::PplOptions;
using edge::validate::PplResult;

namespace edge::cli {

namespace {

struct PplArgs {
    std::string model, tokenizer, text_path, protocol = "story";
    int max_parts = -1;
    int threads = 0;
    NumericsArgs numerics;
    bool json = false;
};

int run_perplexity(const PplArgs& a) {
    auto proto = parse_ppl_protocol(a.protocol);
    if (!proto.ok()) return fail(proto.error());
    auto text = read_text_file(a.text_path);
    if (!text.ok()) return fail(text.error());
    auto loaded = load(a.model, a.tokenizer, true, a.numerics.llamacpp() ? Weights::F32 : Weights::AsStored);
    if (!loaded.ok()) return fail(loaded.error());

    PplOptions po;
    po.protocol = *proto;
    po.max_parts = a.max_parts;
    RuntimeOptions ro;
    ro.threads = a.threads;
    if (auto st = a.numerics.apply(ro); !st.ok()) return fail(st.error());
    ro.max_seq = std::max(
        1, std::min(po.max_tokens,
                    loaded->model->config.context_length > 0 ? loaded->model->config.context_length : po.max_tokens));
    // FP32 scores through batch steps (the K/V in the scorer's PagedKv); llama.cpp numerics keeps
    // its own F16 cache and prefill.
    auto rt = LlamaCpu::create(loaded->model, ro);
    if (!rt.ok()) return fail(rt.error());
    Stopwatch sw;
    Result<PplResult> r = [&] {
        ProgressBar bar;
        return evaluate_perplexity(**rt, *loaded->tokenizer, *text, po, bar.progress());
    }();
    if (!r.ok()) return fail(a.text_path + ": " + r.message());
    const double secs = sw.seconds();
    if (a.json) {
        nlohmann::json j;
        j["model"] = a.model;
        j["text"] = a.text_path;
        j["protocol"] = ppl_protocol_name(*proto);
        j["perplexity"] = r->perplexity;
        j["tokens"] = r->tokens;
        j["parts"] = r->parts;
        j["nll_sum"] = r->nll_sum;
        j["seconds"] = secs;
        print_json(j);
    } else {
        std::printf("perplexity %.4f over %lld tokens in %d parts (%s protocol, %.1f s)\n", r->perplexity,
                    static_cast<long long>(r->tokens), r->parts, ppl_protocol_name(*proto), secs);
    }
    return kOk;
}

}  // namespace

void add_perplexity_command(CLI::App& app, int& rc) {
    auto a = std::make_shared<PplArgs>();
    CLI::App* sub = app.add_subcommand(
        "perplexity", "Perplexity of a text file under a model (FP32 executor, or --numerics llamacpp)");
    sub->add_option("model", a->model, "Model file or folder")->required();
    sub->add_option("--text", a->text_path, "Text file to score")->required();
    sub->add_option("--protocol", a->protocol, "story (split on <|endoftext|>), para (blank lines) or stream")
        ->check(CLI::IsMember({"story", "para", "stream"}));
    sub->add_option("--max-parts", a->max_parts, "Score only the first N parts (-1 = all)");
    sub->add_option("--threads,-t", a->threads, "Threads (0 = all)")->check(CLI::NonNegativeNumber);
    sub->add_option("--tokenizer", a->tokenizer, "Tokenizer file for formats without one (llama2.c)");
    sub->add_flag("--json", a->json, "Print JSON (keys perplexity, tokens, parts, ...)");
    a->numerics.add_options(sub);
    sub->callback([a, &rc] { rc = run_perplexity(*a); });
}

}  // namespace edge::cli
