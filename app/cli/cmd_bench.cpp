// `bench MODEL`: prefill and decode throughput at 1 and 2 threads (medians of a few runs), and the
// process's peak RSS, through the executor interface as generate runs: a .edge engine on its
// backend (--backend cpu|cuda|auto, docs/backends.md: its plan's one arena, weights in place),
// other formats on the CPU executor over their weights, each the prompt then every token as batch
// steps of one PagedKv sequence.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>

#include "app/cli/common.h"
#include "engine/compile/compile.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/one_sequence.h"
#include "engine/telemetry/memory.h"
#include "engine/telemetry/stats.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/telemetry/system_info.h"

using edge::model::LlamaConfig;
using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::BackendOptions;
using edge::runtime::LlamaCpu;
using edge::runtime::make_backend;
using edge::runtime::RuntimeOptions;
using edge::telemetry::cpu_count;
using edge::telemetry::cpu_model;
using edge::telemetry::MemoryUsage;
using edge::telemetry::process_memory;
using edge::telemetry::stat_median;
using edge::telemetry::Stopwatch;

namespace edge::cli {

namespace {

struct BenchArgs {
    std::string model, tokenizer;
    std::vector<int> threads{1, 2};
    int prompt_tokens = 64;
    int gen_tokens = 32;
    int runs = 3;
    bool json = false;
    std::string backend = "auto";  // .edge engines only
};

struct Row {
    int threads = 0;
    double prefill_tps = 0, decode_tps = 0;  // medians
    std::vector<double> prefill_runs, decode_runs;
};

int run_bench(const BenchArgs& a) {
    Stopwatch load_sw;
    // A .edge engine is mapped and verified once: its model (tensors alias the mapping) and its
    // plan, run through a backend. Other formats run on LlamaCpu.
    std::optional<runtime::ExecProgram> plan;
    std::shared_ptr<const Model> model;
    std::string backend_name, why;
    if (a.model.size() > 5 && a.model.compare(a.model.size() - 5, 5, ".edge") == 0) {
        auto eng = compile::load_engine(a.model);
        if (!eng.ok()) return fail(eng.error());
        plan = std::move(eng->program);
        model = std::make_shared<const Model>(std::move(eng->file.model));
    } else {
        auto loaded = load(a.model, a.tokenizer, false, Weights::AsStored);
        if (!loaded.ok()) return fail(loaded.error());
        model = loaded->model;
    }
    const double load_s = load_sw.seconds();
    const LlamaConfig& c = model->config;
    const int total = a.prompt_tokens + a.gen_tokens;
    if (c.context_length > 0 && total > c.context_length)
        return fail("--prompt-tokens + --gen-tokens = " + std::to_string(total) + " exceeds the model context of " +
                    std::to_string(c.context_length));
    // A fixed, model-independent token stream (ids spread over the vocabulary).
    std::vector<int32_t> prompt(size_t(a.prompt_tokens));
    for (int i = 0; i < a.prompt_tokens; ++i) prompt[size_t(i)] = int32_t((int64_t(i) * 7919 + 3) % c.vocab_size);

    std::vector<Row> rows;
    ProgressBar bar;
    const int steps = int(a.threads.size()) * a.runs;
    int done = 0;
    for (int th : a.threads) {
        RuntimeOptions ro;
        ro.threads = th;
        ro.max_seq = total;
        // Both kinds through the one executor interface: batch steps of one PagedKv sequence.
        std::unique_ptr<runtime::Executor> exe;
        if (plan) {
            auto b = make_backend(a.backend, &why);
            if (!b.ok()) return fail(b.error());
            if (auto st = (*b)->load(model, *plan, BackendOptions{th, total}); !st.ok()) return fail(st.error());
            exe = std::move(b).value();
        } else {
            auto r = LlamaCpu::create(model, ro);
            if (!r.ok()) return fail(r.error());
            exe = std::move(r).value();
        }
        backend_name = exe->capabilities().name;
        auto seq = runtime::OneSequence::create(*exe, total);
        if (!seq.ok()) return fail(seq.error());
        Row row;
        row.threads = th;
        for (int r = 0; r < a.runs; ++r) {
            bar.progress()->report(double(done) / steps,
                                   "run " + std::to_string(r + 1) + ", " + std::to_string(th) + " thread(s)");
            seq->reset();
            Stopwatch sw;
            auto pl = seq->next(prompt);
            if (!pl.ok()) return fail(pl.error());
            const float* logits = *pl;
            row.prefill_runs.push_back(double(a.prompt_tokens) / sw.seconds());
            int32_t next = argmax(logits, c.vocab_size);
            sw.restart();
            for (int i = 0; i < a.gen_tokens; ++i) {
                auto dl = seq->next(std::span(&next, 1));
                if (!dl.ok()) return fail(dl.error());
                logits = *dl;
                next = argmax(logits, c.vocab_size);
            }
            row.decode_runs.push_back(a.gen_tokens > 0 ? double(a.gen_tokens) / sw.seconds() : 0.0);
            ++done;
        }
        row.prefill_tps = stat_median(row.prefill_runs);
        row.decode_tps = stat_median(row.decode_runs);
        rows.push_back(std::move(row));
    }
    bar.finish();
    const MemoryUsage mem = process_memory();

    if (a.json) {
        nlohmann::json j;
        j["model"] = a.model;
        j["cpu"] = cpu_model();
        j["cpus"] = cpu_count();
        j["parameters"] = model->parameter_count();
        j["load_seconds"] = load_s;
        j["prompt_tokens"] = a.prompt_tokens;
        j["gen_tokens"] = a.gen_tokens;
        j["runs"] = a.runs;
        j["backend"] = backend_name;
        if (!why.empty()) j["backend_note"] = why;
        nlohmann::json rs = nlohmann::json::array();
        for (const Row& r : rows)
            rs.push_back({{"threads", r.threads},
                          {"prefill_tokens_per_second", r.prefill_tps},
                          {"decode_tokens_per_second", r.decode_tps},
                          {"prefill_runs", r.prefill_runs},
                          {"decode_runs", r.decode_runs}});
        j["results"] = rs;
        j["peak_rss_bytes"] = mem.peak_rss_bytes;
        j["rss_bytes"] = mem.rss_bytes;
        j["rss_anon_bytes"] = mem.rss_anon_bytes;
        j["rss_file_bytes"] = mem.rss_file_bytes;
        print_json(j);
        return kOk;
    }
    std::printf("%s: %s parameters, loaded in %.2f s\n", a.model.c_str(),
                group_digits(model->parameter_count()).c_str(), load_s);
    std::printf("CPU: %s (%d available)\n", cpu_model().c_str(), cpu_count());
    std::printf("executor: %s%s%s\n", backend_name.c_str(), why.empty() ? "" : " — ", why.c_str());
    std::printf("prefill %d tokens, decode %d tokens, median of %d runs\n\n", a.prompt_tokens, a.gen_tokens, a.runs);
    std::printf("| threads | prefill tok/s | decode tok/s |\n|--------:|--------------:|-------------:|\n");
    for (const Row& r : rows) std::printf("| %7d | %13.2f | %12.2f |\n", r.threads, r.prefill_tps, r.decode_tps);
    std::printf("\npeak RSS %s (now %s: anonymous %s, file-backed %s)\n",
                human_bytes(double(mem.peak_rss_bytes)).c_str(), human_bytes(double(mem.rss_bytes)).c_str(),
                human_bytes(double(mem.rss_anon_bytes)).c_str(), human_bytes(double(mem.rss_file_bytes)).c_str());
    return kOk;
}

}  // namespace

void add_bench_command(CLI::App& app, int& rc) {
    auto a = std::make_shared<BenchArgs>();
    CLI::App* sub = app.add_subcommand("bench", "Prefill/decode throughput at 1 and 2 threads, and peak memory");
    sub->add_option("model", a->model, "Model file or folder")->required();
    sub->add_option("--threads", a->threads, "Thread counts to measure")->check(CLI::PositiveNumber);
    sub->add_option("--prompt-tokens", a->prompt_tokens, "Tokens in the prefill")->check(CLI::Range(1, 1 << 16));
    sub->add_option("--gen-tokens", a->gen_tokens, "Tokens decoded one by one")->check(CLI::Range(0, 1 << 16));
    sub->add_option("--runs", a->runs, "Runs per thread count (the median is reported)")->check(CLI::Range(1, 1000));
    sub->add_option("--tokenizer", a->tokenizer, "Tokenizer file for formats without one (llama2.c)");
    sub->add_flag("--json", a->json, "Print JSON");
    sub->add_option("--backend", a->backend, "Backend for a .edge engine: cpu, cuda or auto")
        ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
    sub->callback([a, &rc] { rc = run_bench(*a); });
}

}  // namespace edge::cli
