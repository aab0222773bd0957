// KV cache and serving commands (docs/kv.md):
//   kv-sim [--traces DIR | --trace FILE] [--budget N] [--policy NAME]... [--json]
//       the eviction-policy table of the trace-driven tier simulator (engine/kv/tier_sim.h)
//   serve-bench MODEL --workload FILE [--budget-blocks N] [--block-tokens N]
//       [--preempt recompute|swap|swap-int8] [--batch-tokens N] [--prefill-chunk N]
//       [--step-ms MS] [--compare-alone] [--threads N] [--json]
//       replays a workload through the scheduler (engine/sched) on the paged CPU executor and
//       prints the per-request and aggregate tables
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/cli/common.h"
#include "engine/kv/tier_sim.h"
#include "engine/kv/trace_gen.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/sched/scheduler.h"
#include "engine/sched/workload.h"

using edge::model::LlamaConfig;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

namespace edge::cli {

namespace {

// The simulator's block geometry: TinyLlama-1.1B (22 layers, 4 KV heads x 64, blocks of 16);
// host blocks are INT8 + delta + LZ4 at the measured ~3.98x (docs/kv.md).
constexpr kv::KvShape kSimShape{22, 4, 64, 16};
constexpr double kHostRatio = 3.98;

struct KvSimArgs {
    std::string traces_dir, trace_file;
    int64_t budget = -1;
    std::vector<std::string> policies;
    double device_fraction = 0.15;
    bool json = false;
};

int run_kv_sim(const KvSimArgs& a) {
    std::vector<kv::Trace> traces;
    if (!a.trace_file.empty()) {
        auto t = kv::read_trace(a.trace_file);
        if (!t) return fail(t.error());
        traces.push_back(std::move(t).value());
    } else if (!a.traces_dir.empty()) {
        std::error_code ec;
        std::vector<std::string> files;
        for (const auto& e : std::filesystem::directory_iterator(a.traces_dir, ec))
            if (e.path().extension() == ".trace") files.push_back(e.path().string());
        if (ec) return fail(a.traces_dir + ": cannot list the folder (" + ec.message() + ")");
        if (files.empty()) return fail(a.traces_dir + ": no .trace files");
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            auto t = kv::read_trace(f);
            if (!t) return fail(t.error());
            traces.push_back(std::move(t).value());
        }
    } else {
        traces = kv::all_generated_traces();
    }
    if (a.budget != -1) {
        auto st = kv::validate_budget(kSimShape, a.budget, "--budget: KV device tier");
        if (!st) return fail(st.error());
    }
    std::vector<std::string> names = a.policies.empty() ? kv::policy_names() : a.policies;
    const uint64_t bb = kSimShape.block_bytes(), hb = uint64_t(double(bb) / kHostRatio);
    std::vector<kv::SimMetrics> rows;
    for (const kv::Trace& t : traces) {
        kv::SimConfig cfg = kv::default_sim_config(t, bb, hb, a.device_fraction);
        if (a.budget != -1) cfg.device_blocks = a.budget;
        for (const std::string& n : names) {
            auto p = kv::make_policy(n, cfg.device_blocks);
            if (!p) return fail(p.error());
            auto m = kv::simulate(t, **p, cfg);
            if (!m) return fail(m.error());
            rows.push_back(std::move(m).value());
        }
    }
    if (a.json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& m : rows)
            j.push_back({{"trace", m.trace},
                         {"policy", m.policy},
                         {"device_blocks", m.device_blocks},
                         {"hit_rate", m.hit_rate()},
                         {"hits", m.hits},
                         {"misses", m.misses},
                         {"evictions", m.evictions},
                         {"recomputes", m.recomputes},
                         {"bytes_moved", m.bytes_moved},
                         {"prefetches", m.prefetches},
                         {"prefetch_accuracy", m.prefetch_accuracy()}});
        print_json(j);
    } else {
        std::printf("KV tier simulation: 1.1B-shape blocks (%s), host tier INT8+delta+LZ4 (%s per block)\n\n%s",
                    human_bytes(double(bb)).c_str(), human_bytes(double(hb)).c_str(),
                    kv::format_policy_table(rows).c_str());
    }
    return kOk;
}

struct ServeArgs {
    std::string model, workload, preempt = "recompute";
    int64_t budget = 256;
    int block_tokens = 16, batch_tokens = 64, prefill_chunk = 32, threads = 0;
    int concurrency = 32;  // most requests running at once
    double step_ms = 0;
    bool compare = false, json = false;
};

nlohmann::json to_json(const sched::ServeResult& r) {
    const sched::Aggregate& a = r.total;
    nlohmann::json req = nlohmann::json::array();
    for (const auto& m : r.requests)
        req.push_back({{"arrival_ms", m.arrival_ms},
                       {"prompt_tokens", m.prompt_tokens},
                       {"output_tokens", m.output_tokens},
                       {"ttft_ms", m.ttft_ms},
                       {"tpot_ms", m.tpot_ms},
                       {"finish_ms", m.finish_ms},
                       {"preemptions", m.preemptions},
                       {"context_tokens", m.context_tokens},
                       {"shared_tokens", m.shared_tokens}});
    return {{"requests", req},
            {"aggregate",
             {{"requests", a.requests},
              {"output_tokens", a.output_tokens},
              {"prompt_tokens", a.prompt_tokens},
              {"makespan_ms", a.makespan_ms},
              {"tokens_per_s", a.tokens_per_s},
              {"ttft_mean_ms", a.ttft_mean_ms},
              {"ttft_p95_ms", a.ttft_p95_ms},
              {"tpot_mean_ms", a.tpot_mean_ms},
              {"kv_hit_rate", a.kv_hit_rate},
              {"queue_mean", a.queue_mean},
              {"queue_max", a.queue_max},
              {"steps", a.steps},
              {"preemptions", a.preemptions},
              {"recomputed_tokens", a.recomputed_tokens},
              {"swap_out_bytes", a.swap_out_bytes},
              {"swap_in_bytes", a.swap_in_bytes},
              {"swap_ms", a.swap_ms},
              {"peak_blocks", a.peak_blocks},
              {"budget_blocks", a.budget_blocks},
              {"demand_blocks", a.demand_blocks}}}};
}

int run_serve_bench(const ServeArgs& a) {
    auto mode = sched::parse_preempt(a.preempt);
    if (!mode) return fail(mode.error());
    if (a.block_tokens <= 0)
        return fail("--block-tokens: KV block size must be at least 1 token (got " + std::to_string(a.block_tokens) +
                    ")");
    auto st = kv::validate_budget(kv::KvShape{1, 1, 1, a.block_tokens}, a.budget, "--budget-blocks: KV device tier");
    if (!st) return fail(st.error());
    auto w = sched::read_workload(a.workload);
    if (!w) return fail(w.error());
    auto lm = load(a.model, "", false, Weights::AsStored);
    if (!lm) return fail(lm.error());
    const LlamaConfig& c = lm->model->config;
    const int max_seq = std::min(c.context_length > 0 ? c.context_length : 2048, 1 << 16);
    auto rt = LlamaCpu::create(lm->model, RuntimeOptions{a.threads, max_seq});
    if (!rt) return fail(rt.error());
    std::vector<sched::ServeRequest> reqs;
    for (size_t i = 0; i < w->requests.size(); ++i) {
        sched::ServeRequest q{w->requests[i].arrival_ms, sched::prompt_tokens(*w, i, c.vocab_size),
                              w->requests[i].output_tokens};
        if (int64_t(q.prompt.size()) + q.output_tokens > max_seq)
            return fail(a.workload + ":" + std::to_string(w->requests[i].line) + ": request of " +
                        std::to_string(q.prompt.size() + size_t(q.output_tokens)) +
                        " tokens exceeds the model's context of " + std::to_string(max_seq));
        reqs.push_back(std::move(q));
    }
    sched::SchedConfig cfg;
    cfg.budget_blocks = a.budget;
    cfg.block_tokens = a.block_tokens;
    cfg.preempt = *mode;
    cfg.max_batch_tokens = a.batch_tokens;
    cfg.prefill_chunk = a.prefill_chunk;
    cfg.max_running = a.concurrency;
    cfg.step_ms = a.step_ms;
    cfg.record_logits = a.compare;
    auto r = sched::serve(**rt, reqs, cfg);
    if (!r) return fail(a.workload + ": " + r.message());
    sched::Agreement g;
    if (a.compare) {
        auto ref_rt = LlamaCpu::create(lm->model, RuntimeOptions{a.threads, max_seq});
        if (!ref_rt) return fail(ref_rt.error());
        auto ref = sched::run_alone(**ref_rt, reqs, true);
        if (!ref) return fail(ref.error());
        g = sched::compare(*ref, *r);
    }
    const std::string label = sched::preempt_name(*mode);
    if (a.json) {
        nlohmann::json j = to_json(*r);
        j["model"] = a.model;
        j["workload"] = a.workload;
        j["preempt"] = label;
        j["block_tokens"] = a.block_tokens;
        if (a.compare)
            j["vs_alone"] = {{"token_agreement", g.token_agreement},
                             {"mean_kl", g.mean_kl},
                             {"max_kl", g.max_kl},
                             {"kl_steps", g.kl_steps},
                             {"identical_requests", g.identical_requests}};
        print_json(j);
        return kOk;
    }
    std::printf(
        "serve-bench: %s, %s (%zu requests), budget %lld blocks of %d tokens, preempt %s, batch %d tokens, prefill "
        "chunk %d\n\n",
        a.model.c_str(), a.workload.c_str(), reqs.size(), (long long)a.budget, a.block_tokens, label.c_str(),
        a.batch_tokens, a.prefill_chunk);
    std::printf("%s\n%s", sched::format_requests(*r).c_str(), sched::format_aggregate(*r, label).c_str());
    if (a.compare)
        std::printf(
            "\nvs running each request alone: %d/%zu outputs identical, token agreement %.2f%%, KL mean %.3g max %.3g "
            "over %lld steps\n",
            g.identical_requests, reqs.size(), 100 * g.token_agreement, g.mean_kl, g.max_kl, (long long)g.kl_steps);
    return kOk;
}

}  // namespace

void add_kv_commands(CLI::App& app, int& rc) {
    auto k = std::make_shared<KvSimArgs>();
    CLI::App* sim = app.add_subcommand("kv-sim", "KV tier simulation: hit rate and bytes moved per eviction policy");
    sim->add_option("--traces", k->traces_dir, "Folder of .trace files (default: the built-in generators)");
    sim->add_option("--trace", k->trace_file, "One .trace file");
    sim->add_option("--budget", k->budget, "Device-tier blocks (default: per trace, see docs/kv.md)");
    sim->add_option("--policy", k->policies, "lru, lru2, arc, locality (repeatable; default all)");
    sim->add_option("--device-fraction", k->device_fraction, "Device tier as a share of a trace's distinct blocks");
    sim->add_flag("--json", k->json, "Print JSON");
    sim->callback([k, &rc] { rc = run_kv_sim(*k); });

    auto s = std::make_shared<ServeArgs>();
    CLI::App* sb =
        app.add_subcommand("serve-bench", "Replay a serving workload through the scheduler on the paged CPU executor");
    sb->add_option("model", s->model, "Model file")->required();
    sb->add_option("--workload", s->workload, "Workload file (docs/kv.md)")->required();
    sb->add_option("--budget-blocks", s->budget, "KV budget in blocks");
    sb->add_option("--block-tokens", s->block_tokens, "Tokens per KV block");
    sb->add_option("--preempt", s->preempt, "recompute, swap (LZ4, lossless) or swap-int8 (INT8+delta+LZ4)");
    sb->add_option("--batch-tokens", s->batch_tokens, "Tokens per step (decode first, then prefill chunks)");
    sb->add_option("--prefill-chunk", s->prefill_chunk, "Prompt tokens of one request per step");
    sb->add_option("--step-ms", s->step_ms, "Fixed virtual time per step (0: measured)");
    sb->add_option("--concurrency", s->concurrency, "Most requests running at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    sb->add_option("--threads", s->threads, "Executor threads (0: all)");
    sb->add_flag("--compare-alone", s->compare, "Also run each request alone and report agreement and KL");
    sb->add_flag("--json", s->json, "Print JSON");
    sb->callback([s, &rc] { rc = run_serve_bench(*s); });
}

}  // namespace edge::cli
