// Boards: `deploy ENGINE`, `profile` (with OTLP/JSON, CSV and Prometheus exports), `boards` (and
// `boards export-ansible`), over remote/client (libssh). A board is a name from
// --boards FILE or ~/.ssh/config, or user@host[:port]; --boards FILE without --board addresses the
// whole fleet, in parallel (one SSH session per board). Exit 1 when any board failed.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "app/cli/board_targets.h"
#include "app/cli/common.h"
#include "engine/core/mapped_file.h"
#include "engine/runtime/cost_model.h"
#include "engine/sched/workload.h"
#include "remote/client/ansible_export.h"
#include "remote/client/board_agent.h"
#include "remote/client/boards.h"
#include "remote/client/deploy.h"
#include "remote/client/profile.h"
#include "remote/client/sha256_file.h"
#include "remote/client/ssh_session.h"
#include "remote/client/telemetry_export.h"
#include "remote/protocol/trace.h"

namespace edge::cli {
namespace {

namespace fs = std::filesystem;
using client::Board;

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json opt_json(const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json opt_json(const std::optional<uint32_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
std::string opt_text(const std::optional<double>& v, const char* fmt) {
    if (!v) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, *v);
    return buf;
}

// ---- deploy ----------------------------------------------------------------------------------

struct DeployArgs {
    BoardArgs b;
    std::string engine, agent, version;
    std::string cost_models;  // measure each board's cost model after the deploy, kept in this file
    int threads = 0;          // the micro-profile's threads (0: the agent's default)
    int retries = 3;
    std::string project, config, target = "cpu";  // --project/--config: that configuration's engine
};

// The board's cost model, measured by the agent just deployed on the engine just deployed.
Result<runtime::BoardCostModel> measure_cost_model(const DeployArgs& a, const Board& b) {
    auto s = connector(a.b, b)();
    if (!s.ok()) return s.error();
    client::AgentCommand c;
    c.root = root_of(a.b, b);
    c.launcher = b.launcher;
    c.threads = a.threads;
    return client::measure_cost_model(**s, c, fs::path(a.engine).filename().string(), b.name);
}

int run_deploy(const DeployArgs& given) {
    DeployArgs a = given;
#ifdef EDGE_CLI_CONFIGS
    if (!a.project.empty() || !a.config.empty()) {
        if (a.project.empty() || a.config.empty() || !a.engine.empty())
            return fail("deploy: give ENGINE, or --project P with --config NAME (its engine for --target)");
        auto e = configuration_engine(a.project, a.config, a.target);
        if (!e.ok()) return fail(e.error());
        a.engine = *e;
    }
#endif
    if (a.engine.empty()) return fail("deploy: no engine given (ENGINE, or --project P --config NAME)");
    auto boards = target_boards(a.b);
    if (!boards.ok()) return fail(boards.error());
    if (!fs::is_regular_file(a.engine)) return fail(a.engine + ": no such engine file");
    std::mutex print;
    std::map<std::string, runtime::BoardCostModel> cost_models;
    auto results =
        for_each_board<client::DeployReport>(boards.value(), [&](const Board& b) -> Result<client::DeployReport> {
            client::DeployOptions d;
            d.board_root = root_of(a.b, b);
            d.version = a.version;
            d.files = {{a.engine, "", false}};
            d.board_files = client::agent_file(a.agent, client::self_dir());  // built for the board's architecture
            client::RetryPolicy p;
            p.attempts = a.retries + 1;
            p.on_retry = [&](int attempt, const std::string& e, int ms) {
                std::lock_guard<std::mutex> g(print);
                std::fprintf(stderr, "edgestudio-cli: %s: attempt %d failed: %s; retrying in %d ms\n", b.name.c_str(),
                             attempt, e.c_str(), ms);
            };
            auto r = client::deploy_with_retry(connector(a.b, b), d, p);
            if (!r.ok()) return err("board ", b.name, ": ", r.message());
            if (!a.cost_models.empty()) {
                auto cm = measure_cost_model(a, b);
                if (!cm.ok()) return err("board ", b.name, ": deployed ", r->version, ", then ", cm.message());
                std::lock_guard<std::mutex> g(print);
                cost_models[b.name] = std::move(cm).value();
            }
            return r;
        });
    if (!a.cost_models.empty() && !cost_models.empty()) {
        std::string text;
        if (fs::exists(a.cost_models)) {
            auto t = read_text_file(a.cost_models);
            if (!t.ok()) return fail(t.error());
            text = std::move(t).value();
        }
        for (const auto& [name, cm] : cost_models) {
            auto next = runtime::with_board_cost_model(text, a.cost_models, name, cm);
            if (!next.ok()) return fail(next.error());
            text = std::move(next).value();
        }
        if (auto st = write_text_file(a.cost_models, text); !st.ok()) return fail(st.error());
        if (!a.b.json)
            for (const auto& [name, cm] : cost_models)
                std::printf("%s: cost model in %s: %.3f ms per token for %s (%.3f ms in its products), %zu timings\n",
                            name.c_str(), a.cost_models.c_str(), cm.engine_tpot_ms, cm.engine.c_str(),
                            cm.engine_linear_ms, cm.linears.size());
    }
    int rc = kOk;
    nlohmann::json j = nlohmann::json::array();
    if (!a.b.json)
        std::printf("%-16s %-22s %-18s %10s %10s %8s %s\n", "board", "destination", "version", "sent", "resumed",
                    "seconds", "status");
    for (size_t i = 0; i < results.size(); ++i) {
        const Board& b = boards.value()[i];
        const auto& r = results[i];
        if (!r.ok()) {
            rc = kFailed;
            std::fprintf(stderr, "edgestudio-cli: %s\n", r.message().c_str());
            if (a.b.json)
                j.push_back({{"board", b.name}, {"ok", false}, {"error", r.message()}});
            else
                std::printf("%-16s %-22s %-18s %10s %10s %8s %s\n", b.name.c_str(), destination(b).c_str(), "-", "-",
                            "-", "-", "FAILED");
            continue;
        }
        uint64_t resumed = 0;
        nlohmann::json files = nlohmann::json::array();
        for (const auto& f : r->files) {
            resumed += f.resumed_from;
            files.push_back({{"path", f.remote_path},
                             {"sha256", client::digest_hex(f.sha256)},
                             {"bytes", f.bytes},
                             {"resumed_from", f.resumed_from}});
        }
        if (a.b.json) {
            j.push_back({{"board", b.name},
                         {"ok", true},
                         {"root", root_of(a.b, b)},
                         {"version", r->version},
                         {"previous_version", r->previous_version},
                         {"attempts", r->attempts},
                         {"bytes_sent", r->bytes_sent},
                         {"seconds", r->seconds},
                         {"files", files}});
        } else {
            std::printf("%-16s %-22s %-18s %10s %10s %8.2f ok (current -> %s%s)\n", b.name.c_str(),
                        destination(b).c_str(), r->version.c_str(), human_bytes(double(r->bytes_sent)).c_str(),
                        human_bytes(double(resumed)).c_str(), r->seconds, r->version.c_str(),
                        r->previous_version.empty() ? "" : (", previous " + r->previous_version).c_str());
        }
    }
    if (a.b.json) print_json(j);
    return rc;
}

// ---- profile ---------------------------------------------------------------------------------

struct ProfileArgs {
    BoardArgs b;
    std::string engine;
    std::vector<std::string> prompts;
    bool chat = false;
    uint32_t max_tokens = 64;
    int restarts = 3;
    int threads = 0;
    std::string backend;  // the agent's --backend (empty: its default, auto)
    std::string otlp, csv, traceparent, prometheus;
    std::string project;  // record the measurements in the studio's project file
    // --workload: a serving workload replayed through the board's scheduler (protocol 3).
    std::string workload;
    uint32_t concurrency = 8;
    uint64_t budget_blocks = 0;  // 0: the agent's --kv-budget
    std::string kv_budget;       // the agent's --kv-budget
    uint32_t block_tokens = 16, max_batch_tokens = 64, prefill_chunk = 32;
    std::string preempt = "recompute";
    double step_ms = 0;
    bool digest_logits = false;
};

// The per-request rows and the aggregate of a served workload, as the board's scheduler
// measured them (the same columns serve-bench prints for a local run).
void print_serve_report(const std::string& board, const protocol::ServeReport& r) {
    std::printf("%s: %s\n", board.c_str(), r.backend.c_str());
    std::printf("%4s %8s %8s %10s %10s %10s %8s %8s %6s\n", "req", "prompt", "output", "arrive ms", "ttft ms",
                "tpot ms", "context", "shared", "preempt");
    for (size_t i = 0; i < r.requests.size(); ++i) {
        const protocol::ServedRequest& q = r.requests[i];
        std::printf("%4zu %8u %8u %10.1f %10.2f %10.3f %8llu %8llu %6u\n", i, q.prompt_tokens, q.output_tokens,
                    q.arrival_ms, q.ttft_ms, q.tpot_ms, static_cast<unsigned long long>(q.context_tokens),
                    static_cast<unsigned long long>(q.shared_tokens), q.preemptions);
    }
    std::printf(
        "%zu requests, %llu output tokens in %u steps, makespan %.1f ms: %.1f tokens/s; ttft mean %.2f ms, p95 %.2f "
        "ms; tpot mean %.3f ms; prefix-cache hit rate %.3f; %u preemptions (%llu tokens recomputed, %llu B swapped "
        "out); queue mean %.2f, max %u; peak %llu of %llu blocks\n",
        r.requests.size(), static_cast<unsigned long long>(r.output_tokens), r.steps, r.makespan_ms, r.tokens_per_s,
        r.ttft_mean_ms, r.ttft_p95_ms, r.tpot_mean_ms, r.kv_hit_rate, r.preemptions,
        static_cast<unsigned long long>(r.recomputed_tokens), static_cast<unsigned long long>(r.swap_out_bytes),
        r.queue_mean, r.queue_max, static_cast<unsigned long long>(r.peak_blocks),
        static_cast<unsigned long long>(r.budget_blocks));
}

nlohmann::json serve_report_json(const protocol::ServeReport& r) {
    nlohmann::json reqs = nlohmann::json::array();
    for (const protocol::ServedRequest& q : r.requests)
        reqs.push_back({{"prompt_tokens", q.prompt_tokens},
                        {"output_tokens", q.output_tokens},
                        {"arrival_ms", q.arrival_ms},
                        {"ttft_ms", q.ttft_ms},
                        {"tpot_ms", q.tpot_ms},
                        {"finish_ms", q.finish_ms},
                        {"context_tokens", q.context_tokens},
                        {"shared_tokens", q.shared_tokens},
                        {"preemptions", q.preemptions},
                        {"logits_digest", q.logits_digest}});
    return {{"backend", r.backend},
            {"requests", reqs},
            {"steps", r.steps},
            {"output_tokens", r.output_tokens},
            {"prompt_tokens", r.prompt_tokens},
            {"makespan_ms", r.makespan_ms},
            {"tokens_per_s", r.tokens_per_s},
            {"ttft_mean_ms", r.ttft_mean_ms},
            {"ttft_p95_ms", r.ttft_p95_ms},
            {"tpot_mean_ms", r.tpot_mean_ms},
            {"kv_hit_rate", r.kv_hit_rate},
            {"preemptions", r.preemptions},
            {"recomputed_tokens", r.recomputed_tokens},
            {"swap_out_bytes", r.swap_out_bytes},
            {"swap_in_bytes", r.swap_in_bytes},
            {"queue_mean", r.queue_mean},
            {"queue_max", r.queue_max},
            {"peak_blocks", r.peak_blocks},
            {"budget_blocks", r.budget_blocks}};
}

Status write_file(const std::string& path, const std::string& text) {
    std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return err(path, ": cannot create");
        f << text;
        if (!f.flush()) return err(path, ": write failed");
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) return err(path, ": ", ec.message());
    return {};
}

nlohmann::json log_json(const protocol::LogLine& l) {
    static const char* levels[] = {"debug", "info", "warn", "error"};
    return {{"timestamp_ns", l.timestamp_ns},
            {"level", levels[static_cast<int>(l.level) & 3]},
            {"trace_id", protocol::to_hex(l.trace_id.data(), l.trace_id.size())},
            {"span_id", protocol::to_hex(l.span_id.data(), l.span_id.size())},
            {"text", l.text}};
}

nlohmann::json summary_json(const client::ProfileSummary& s) {
    return {{"prompts", s.prompts},
            {"tokens", s.tokens},
            {"samples", s.samples},
            {"latency_p50_ms", opt_json(s.latency_p50_ms)},
            {"latency_p99_ms", opt_json(s.latency_p99_ms)},
            {"ttft_p50_ms", opt_json(s.ttft_p50_ms)},
            {"tpot_mean_ms", opt_json(s.tpot_mean_ms)},
            {"tokens_per_s", opt_json(s.tokens_per_s)},
            {"rss_max_bytes", opt_json(s.rss_max_bytes)},
            {"mem_available_min_bytes", opt_json(s.mem_available_min_bytes)},
            {"device_mem_used_max_bytes", opt_json(s.device_mem_used_max_bytes)},
            {"kv_blocks_used_max", opt_json(s.kv_blocks_used_max)},
            {"kv_hit_rate", opt_json(s.kv_hit_rate)},
            {"kv_evictions", opt_json(s.kv_evictions)},
            {"power_mean_w", opt_json(s.power_mean_w)},
            {"temperature_max_c", opt_json(s.temperature_max_c)}};
}

int run_profile_cmd(const ProfileArgs& given) {
    ProfileArgs a = given;
    // The workload's name in the measurement: a project's named workload, or the file's name.
    std::string workload_name, serve_text;
#ifdef EDGE_CLI_CONFIGS
    if (!a.workload.empty() && !a.project.empty() && !fs::exists(a.workload)) {
        auto w = project_workload(a.project, a.workload);
        if (!w.ok()) return fail(w.error());
        if (!a.prompts.empty()) return fail("profile: give --workload or --prompt, not both");
        workload_name = a.workload;
        if (w->serve.empty()) {
            a.prompts = w->prompts;
            a.max_tokens = uint32_t(w->max_tokens);
            a.chat = w->chat;
            a.workload.clear();
        } else {
            serve_text = w->serve;
            a.concurrency = uint32_t(w->concurrency);
        }
    }
#endif
    if (!a.traceparent.empty())
        if (auto t = protocol::parse_traceparent(a.traceparent); !t.ok()) return fail("--traceparent: " + t.message());
    auto boards = target_boards(a.b);
    if (!boards.ok()) return fail(boards.error());
    std::vector<std::string> prompts = a.prompts.empty() ? std::vector<std::string>{"Once upon a time"} : a.prompts;
    std::optional<protocol::ServeWorkload> serve;
    if (!a.workload.empty()) {
        if (!a.prompts.empty()) return fail("profile: give --workload or --prompt, not both");
        if (a.chat) return fail("profile: --chat applies to --prompt texts, not to a --workload");
        std::string text = serve_text;
        if (workload_name.empty()) {
            std::ifstream f(a.workload, std::ios::binary);
            if (!f) return fail(a.workload + ": cannot open the workload file");
            text.assign(std::istreambuf_iterator<char>(f), {});
            workload_name = fs::path(a.workload).filename().string();
        }
        // Checked here too, so a bad line is reported before any board is touched.
        if (auto w = sched::parse_workload(text, a.workload); !w.ok()) return fail(w.error());
        protocol::ServeWorkload sw;
        sw.workload = std::move(text);
        sw.concurrency = a.concurrency;
        sw.budget_blocks = a.budget_blocks;
        sw.block_tokens = a.block_tokens;
        sw.max_batch_tokens = a.max_batch_tokens;
        sw.prefill_chunk = a.prefill_chunk;
        sw.preempt = a.preempt == "swap"        ? protocol::PreemptMode::Swap
                     : a.preempt == "swap-int8" ? protocol::PreemptMode::SwapInt8
                                                : protocol::PreemptMode::Recompute;
        sw.step_ms = a.step_ms;
        sw.digest_logits = a.digest_logits;
        serve = std::move(sw);
        prompts.clear();
    }
    bool live = !a.b.json && boards->size() == 1 && isatty(STDERR_FILENO);
    std::mutex print;
    std::vector<std::string> engine_sha(boards->size());  // per board: the live engine's, when checked
    auto results =
        for_each_board<client::ProfileReport>(boards.value(), [&](const Board& b) -> Result<client::ProfileReport> {
            std::string root = root_of(a.b, b);
            auto connect = connector(a.b, b);
            client::ProfileRequest req;
            req.prompts = prompts;
            req.chat = a.chat;
            req.max_tokens = a.max_tokens;
            req.traceparent = a.traceparent;
            req.fetch_metrics = !a.prometheus.empty();
            req.serve = serve;
            {
                auto s = connect();
                if (!s.ok()) return err("board ", b.name, ": ", s.message());
                if (a.engine.empty()) {
                    auto e = client::live_engine(*s.value(), root);
                    if (!e.ok()) return err("board ", b.name, ": ", e.message());
                    req.engine_path = e->first;
                    req.engine_sha256 = e->second;
                    engine_sha[size_t(&b - boards->data())] = client::digest_hex(e->second);
                } else {
                    req.engine_path = a.engine;
                }
            }
            const std::string cmd = client::agent_command_line({root, b.launcher, a.threads, a.backend, a.kv_budget});
            client::SupervisorOptions o;
            o.max_restarts = a.restarts;
            o.on_event = [&](const std::string& e) {
                std::lock_guard<std::mutex> g(print);
                std::fprintf(stderr, "%sedgestudio-cli: %s: %s\n", live ? "\r\033[K" : "", b.name.c_str(), e.c_str());
            };
            size_t tokens = 0;
            o.on_telemetry = [&](const protocol::TelemetryBatch& batch) {
                if (!live || batch.samples.empty()) return;
                const auto& s = batch.samples.back();
                tokens += batch.samples.size();
                if (serve) {
                    std::fprintf(stderr, "\r\033[K%s  step %zu  batch %s  queue %s  tokens %u  %s tok/s  kv hit %s",
                                 b.name.c_str(), tokens, opt_text(s.batch_size, "%u").c_str(),
                                 opt_text(s.queue_length, "%u").c_str(), s.tokens_generated,
                                 opt_text(s.tokens_per_s, "%.0f").c_str(), opt_text(s.kv_hit_rate, "%.3f").c_str());
                    return;
                }
                std::fprintf(stderr, "\r\033[K%s  prompt %u/%zu  tokens %zu  latency %s ms  %s tok/s  rss %s",
                             b.name.c_str(), s.prompt_index + 1, prompts.size(), tokens,
                             opt_text(s.token_latency_ms, "%.2f").c_str(), opt_text(s.tokens_per_s, "%.0f").c_str(),
                             s.rss_bytes ? human_bytes(double(*s.rss_bytes)).c_str() : "-");
            };
            auto r = client::run_profile(client::ssh_agent_starter(connect, cmd), req, o);
            if (live) std::fprintf(stderr, "\r\033[K");
            if (!r.ok()) return err("board ", b.name, ": ", r.message());
            return r;
        });
    int rc = kOk;
    std::vector<client::BoardRun> runs;
    for (size_t i = 0; i < results.size(); ++i)
        if (results[i].ok()) runs.push_back({boards.value()[i].name, &results[i].value()});
    if (!a.otlp.empty())
        if (auto s = write_file(a.otlp, client::otlp_json_lines(runs)); !s.ok()) rc = fail(s.error());
    if (!a.csv.empty())
        if (auto s = write_file(a.csv, client::telemetry_csv(runs)); !s.ok()) rc = fail(s.error());
    // Prometheus text has one sample set per scrape target: a file per board when there are several.
    for (const auto& r : runs) {
        if (a.prometheus.empty()) break;
        std::string path = runs.size() == 1 && boards->size() == 1 ? a.prometheus : a.prometheus + "." + r.board;
        if (auto s = write_file(path, r.report->prometheus_text); !s.ok()) rc = fail(s.error());
    }
    nlohmann::json j = nlohmann::json::array();
    if (!a.b.json)
        std::printf("%-16s %8s %8s %10s %10s %10s %10s %10s %8s %s\n", "board", "prompts", "tokens", "p50 ms", "p99 ms",
                    "ttft ms", "tok/s", "rss max", "kv hit", "restarts");
    for (size_t i = 0; i < results.size(); ++i) {
        const Board& b = boards.value()[i];
        const auto& r = results[i];
        if (!r.ok()) {
            rc = kFailed;
            std::fprintf(stderr, "edgestudio-cli: %s\n", r.message().c_str());
            if (a.b.json) j.push_back({{"board", b.name}, {"ok", false}, {"error", r.message()}});
            continue;
        }
        if (serve) {
            if (!r->serve_report) {
                rc = fail("board " + b.name + ": the agent finished without a serve report");
                continue;
            }
            if (a.b.json)
                j.push_back({{"board", b.name},
                             {"ok", true},
                             {"engine", r->load_detail},
                             {"restarts", r->restarts},
                             {"serve", serve_report_json(*r->serve_report)}});
            else
                print_serve_report(b.name, *r->serve_report);
            continue;
        }
        auto s = client::summarize(r.value());
        if (a.b.json) {
            nlohmann::json res = nlohmann::json::array();
            for (const auto& x : r->results)
                res.push_back({{"prompt", prompts[x.prompt_index]},
                               {"prompt_tokens", x.prompt_tokens},
                               {"generated_tokens", x.generated_tokens},
                               {"ttft_ms", x.ttft_ms},
                               {"tokens_per_s", x.tokens_per_s},
                               {"text", x.text}});
            nlohmann::json logs = nlohmann::json::array();
            for (const auto& l : r->logs) logs.push_back(log_json(l));
            j.push_back({{"board", b.name},
                         {"ok", true},
                         {"traceparent", r->traceparent},
                         {"logs", logs},
                         {"agent",
                          {{"hostname", r->agent.hostname},
                           {"cpu", r->agent.cpu_model},
                           {"threads", r->agent.cpu_threads},
                           {"backend", r->agent.backend},
                           {"version", r->agent.software_version}}},
                         {"engine", r->load_detail},
                         {"restarts", r->restarts},
                         {"incidents", r->incidents},
                         {"dropped_samples", r->dropped_samples},
                         {"seconds", r->seconds},
                         {"summary", summary_json(s)},
                         {"results", res}});
        } else {
            std::printf("%-16s %8zu %8zu %10s %10s %10s %10s %10s %8s %d\n", b.name.c_str(), s.prompts, s.tokens,
                        opt_text(s.latency_p50_ms, "%.3f").c_str(), opt_text(s.latency_p99_ms, "%.3f").c_str(),
                        opt_text(s.ttft_p50_ms, "%.2f").c_str(), opt_text(s.tokens_per_s, "%.1f").c_str(),
                        s.rss_max_bytes ? human_bytes(double(*s.rss_max_bytes)).c_str() : "-",
                        s.kv_hit_rate ? opt_text(*s.kv_hit_rate * 100.0, "%.1f%%").c_str() : "absent", r->restarts);
        }
    }
#ifdef EDGE_CLI_CONFIGS
    if (!a.project.empty()) {
        std::vector<BoardProfile> runs;
        for (size_t i = 0; i < results.size(); ++i)
            if (results[i].ok())
                runs.push_back({boards.value()[i].name, &results[i].value(), engine_sha[i], workload_name});
        auto lines = record_profiles(a.project, runs);
        if (!lines.ok()) return fail(lines.error());
        for (const std::string& l : *lines) std::fprintf(stderr, "edgestudio-cli: %s\n", l.c_str());
    }
#endif
    if (a.b.json) print_json(j);
    return rc;
}

// ---- boards ----------------------------------------------------------------------------------

struct BoardsArgs {
    BoardArgs b;
    bool check = false;
};

struct ExportAnsibleArgs {
    BoardArgs b;
    std::string engine, agent, version, out;
    std::string arch = client::host_arch();  // the fleet's architecture: which agent goes in the playbook
};

// The same verified deploy as `deploy`, as an Ansible inventory + playbook for larger fleets.
int run_export_ansible(const ExportAnsibleArgs& a) {
    auto boards = target_boards(a.b);
    if (!boards.ok()) return fail(boards.error());
    auto agent = client::find_agent(a.arch, a.agent, client::self_dir());
    if (!agent.ok()) return fail(agent.error());
    if (!fs::is_regular_file(a.engine)) return fail(a.engine + ": no such engine file");
    client::AnsibleExportOptions o;
    o.out_dir = a.out;
    o.version = a.version;
    o.files = {{agent.value(), "edge-agent", true}, {a.engine, "", false}};
    o.known_hosts = a.b.known_hosts;
    o.ssh_config = a.b.ssh_config;
    o.accept_new_host_key = a.b.accept_new;
    for (Board b : boards.value()) {
        b.root = root_of(a.b, b);
        if (!a.b.identity.empty()) b.identity = a.b.identity;
        o.boards.push_back(b);
    }
    auto r = client::export_ansible(o);
    if (!r.ok()) return fail(r.error());
    if (a.b.json) {
        nlohmann::json files = nlohmann::json::array();
        for (const auto& [name, d] : r->files) files.push_back({{"name", name}, {"sha256", client::digest_hex(d)}});
        nlohmann::json names = nlohmann::json::array();
        for (const auto& b : o.boards) names.push_back(b.name);
        print_json({{"version", r->version},
                    {"inventory", r->inventory},
                    {"playbook", r->playbook},
                    {"vars", r->vars},
                    {"boards", names},
                    {"files", files}});
    } else {
        std::printf("wrote %s for %zu board(s), version %s\n", a.out.c_str(), o.boards.size(), r->version.c_str());
        for (const auto& [name, d] : r->files)
            std::printf("  %-24s sha256 %s\n", name.c_str(), client::digest_hex(d).c_str());
        std::printf("run: ansible-playbook -i %s %s\n", r->inventory.c_str(), r->playbook.c_str());
    }
    return kOk;
}

int run_boards(const BoardsArgs& a) {
    std::vector<Board> all;
    if (!a.b.boards_file.empty()) {
        auto f = client::read_boards_file(a.b.boards_file);
        if (!f.ok()) return fail(f.error());
        all = f.value();
    }
    if (!a.b.board.empty()) {
        auto t = target_boards(a.b);
        if (!t.ok()) return fail(t.error());
        all = t.value();
    } else {
        for (auto& b : client::ssh_config_boards(a.b.ssh_config)) all.push_back(b);
    }
    struct Check {
        std::string machine, current;
    };
    std::vector<Result<Check>> checks;
    if (a.check)
        checks = for_each_board<Check>(all, [&](const Board& b) -> Result<Check> {
            auto s = connector(a.b, b)();
            if (!s.ok()) return err("board ", b.name, ": ", s.message());
            std::string root = root_of(a.b, b);
            auto out = s.value()->exec_checked(
                "uname -srm; readlink " + client::shell_quote(root + "/current") + " || true", "checking the board");
            if (!out.ok()) return err("board ", b.name, ": ", out.message());
            Check c;
            std::istringstream in(out.value());
            std::getline(in, c.machine);
            std::getline(in, c.current);
            if (c.current.rfind("versions/", 0) == 0) c.current.erase(0, 9);
            return c;
        });
    int rc = kOk;
    nlohmann::json j = nlohmann::json::array();
    if (!a.b.json) {
        std::printf("%-16s %-28s %-18s %s\n", "board", "destination", "root", a.check ? "status" : "source");
    }
    for (size_t i = 0; i < all.size(); ++i) {
        const Board& b = all[i];
        nlohmann::json e = {{"name", b.name}, {"host", b.host},          {"user", b.user},
                            {"port", b.port}, {"root", root_of(a.b, b)}, {"source", b.source}};
        std::string status = b.source;
        if (a.check) {
            if (checks[i].ok()) {
                e["reachable"] = true;
                e["machine"] = checks[i]->machine;
                e["current"] = checks[i]->current;
                status = "ok  " + checks[i]->machine +
                         (checks[i]->current.empty() ? "  (nothing deployed)" : "  current " + checks[i]->current);
            } else {
                rc = kFailed;
                e["reachable"] = false;
                e["error"] = checks[i].message();
                status = "UNREACHABLE";
                std::fprintf(stderr, "edgestudio-cli: %s\n", checks[i].message().c_str());
            }
        }
        if (a.b.json)
            j.push_back(e);
        else
            std::printf("%-16s %-28s %-18s %s\n", b.name.c_str(), destination(b).c_str(), root_of(a.b, b).c_str(),
                        status.c_str());
    }
    if (a.b.json) print_json(j);
    return rc;
}

}  // namespace

void add_remote_commands(CLI::App& app, int& rc) {
    auto deploy = std::make_shared<DeployArgs>();
    CLI::App* d = app.add_subcommand(
        "deploy", "push an engine and edge-agent to a board (or a fleet): verified, resumable, atomic switch");
    d->add_option("engine", deploy->engine, "engine or model file to deploy");
#ifdef EDGE_CLI_CONFIGS
    d->add_option("--project", deploy->project, "the studio's project file: deploy a configuration's engine");
    d->add_option("--config", deploy->config, "with --project: the configuration (compiled by `configs compile`)");
    d->add_option("--target", deploy->target, "with --project: which of its engines (cpu, cuda-sm87, cuda-sm90)")
        ->capture_default_str();
#endif
    add_board_options(d, deploy->b);
    d->add_option("--agent", deploy->agent,
                  "edge-agent binary for the board (default: the one built for the board's architecture, "
                  "asked with uname -m, found next to this CLI)");
    d->add_option("--version", deploy->version, "version folder name (default: UTC time)");
    d->add_option("--cost-models", deploy->cost_models,
                  "after deploying, measure each board's decode cost model (edge-agent --micro-profile) into this "
                  "file, for autoplan --board");
    d->add_option("--threads", deploy->threads, "threads of the micro-profile (0: the agent's default)")
        ->check(CLI::NonNegativeNumber);
    d->add_option("--retries", deploy->retries, "reconnect and resume this many times after a failure")
        ->check(CLI::Range(0, 20));
    d->callback([deploy, &rc] { rc = run_deploy(*deploy); });

    auto prof = std::make_shared<ProfileArgs>();
    CLI::App* p =
        app.add_subcommand("profile", "run the deployed engine on a board through edge-agent and stream telemetry");
    add_board_options(p, prof->b);
    p->add_option("--engine", prof->engine,
                  "engine file in the board's current version (default: the deployed one, SHA-256 checked)");
    p->add_option("--prompt,-p", prof->prompts, "prompt (repeatable)");
#ifdef EDGE_CLI_CONFIGS
    p->add_option("--project", prof->project,
                  "the studio's project file: record each board's figures for the configuration whose engine ran");
#endif
    p->add_flag("--chat", prof->chat, "each prompt a user message in the engine's chat template (instruct models)");
    p->add_option("--max-tokens,-n", prof->max_tokens, "tokens to generate per prompt")->check(CLI::Range(1, 1 << 20));
    p->add_option("--restarts", prof->restarts, "restart a dead agent this many times")->check(CLI::Range(0, 100));
    p->add_option("--threads", prof->threads, "agent threads (0: the board's cores)")->check(CLI::Range(0, 1024));
    p->add_option("--backend", prof->backend,
                  "what runs a compiled engine (.edge) on the board: auto (CUDA when a device "
                  "answers, else the CPU; the default), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    p->add_option("--otlp", prof->otlp, "write the telemetry as OTLP/JSON (JSON Lines: metrics, then spans) to FILE");
    p->add_option("--csv", prof->csv, "write every telemetry sample as CSV to FILE");
    p->add_option("--prometheus", prof->prometheus,
                  "after the run, ask the agent for its counters and write them in the Prometheus text format to FILE "
                  "(FILE.BOARD for a fleet)");
    p->add_option("--workload", prof->workload,
                  "replay a serving workload (edge-workload text, as serve-bench reads) through the board's "
                  "scheduler: continuous batching, paged KV pool, prefix caching, preemption");
    p->add_option("--concurrency", prof->concurrency, "with --workload: most requests running at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    p->add_option("--budget-blocks", prof->budget_blocks,
                  "with --workload: KV pool in blocks (default: the agent's --kv-budget)");
    p->add_option("--kv-budget", prof->kv_budget, "the agent's --kv-budget (\"4096\" blocks or \"512MiB\")");
    p->add_option("--block-tokens", prof->block_tokens, "with --workload: tokens per KV block")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    p->add_option("--max-batch-tokens", prof->max_batch_tokens, "with --workload: new tokens per step")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    p->add_option("--prefill-chunk", prof->prefill_chunk, "with --workload: prompt tokens of one request per step")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    p->add_option("--preempt", prof->preempt, "with --workload: recompute, swap (LZ4) or swap-int8")
        ->capture_default_str()
        ->check(CLI::IsMember({"recompute", "swap", "swap-int8"}));
    p->add_option("--step-ms", prof->step_ms,
                  "with --workload: a virtual clock of this many ms per step (figures reproducible and comparable "
                  "with serve-bench's); 0: measured")
        ->check(CLI::NonNegativeNumber);
    p->add_flag("--digest-logits", prof->digest_logits,
                "with --workload: the agent reports an XXH64 of each request's logits (JSON: logits_digest), to "
                "check that batching, preemption and swap leave every request's numbers bit-identical");
    p->add_option("--traceparent", prof->traceparent,
                  "W3C traceparent of the caller (00-<trace id>-<parent id>-<flags>); default: a fresh trace");
    p->callback([prof, &rc] { rc = run_profile_cmd(*prof); });

    auto boards = std::make_shared<BoardsArgs>();
    CLI::App* b =
        app.add_subcommand("boards", "list boards (~/.ssh/config and --boards FILE); --check connects to each");
    add_board_options(b, boards->b);
    b->add_flag("--check", boards->check,
                "connect to every board (in parallel) and report its machine and deployed version");
    auto ea = std::make_shared<ExportAnsibleArgs>();
    CLI::App* e =
        b->add_subcommand("export-ansible",
                          "write an Ansible inventory + playbook performing the same verified deploy (SHA-256 on "
                          "the board, atomic switch, previous kept) for --boards FILE or --board");
    e->add_option("engine", ea->engine, "engine or model file to deploy")->required();
    add_board_options(e, ea->b);
    e->add_option("--agent", ea->agent, "edge-agent binary for the boards (default: the one built for --arch)");
    e->add_option("--arch", ea->arch, "the boards' architecture (uname -m: x86_64, aarch64; default: this host's)");
    e->add_option("--version", ea->version, "version folder name (default: UTC time of the export)");
    e->add_option("--out,-o", ea->out, "output folder (inventory.json, deploy.yml, deploy-vars.json, files/)")
        ->required();
    b->callback([boards, ea, e, &rc] { rc = e->parsed() ? run_export_ansible(*ea) : run_boards(*boards); });
}

}  // namespace edge::cli
