#include "remote/client/profile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "remote/client/agent_link.h"
#include "remote/client/ssh_session.h"
#include "remote/protocol/trace.h"

namespace edge::client {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t unix_now_ns() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

struct SshStarterState {
    Connector connect;
    std::string command;
    std::unique_ptr<SshSession> session;
};

// Why a run attempt ended without finishing: the agent or link died (retry) or the request failed
// for a reason a restart cannot fix (fatal).
struct Failure {
    bool fatal = false;
    std::string message;
};

}  // namespace

AgentStarter ssh_agent_starter(Connector connect, std::string command) {
    auto st = std::make_shared<SshStarterState>();
    st->connect = std::move(connect);
    st->command = std::move(command);
    return [st]() -> Result<std::unique_ptr<Transport>> {
        if (!st->session || !st->session->alive()) {
            st->session.reset();
            auto s = st->connect();
            if (!s.ok()) return s.error();
            st->session = std::move(s).value();
        }
        auto t = start_ssh_agent(*st->session, st->command);
        if (t.ok()) return t;
        // The session looked alive but could not open a channel: the link is gone; reconnect once.
        st->session.reset();
        auto s = st->connect();
        if (!s.ok()) return err(t.message(), "; reconnecting: ", s.message());
        st->session = std::move(s).value();
        return start_ssh_agent(*st->session, st->command);
    };
}

AgentStarter local_agent_starter(std::vector<std::string> argv) {
    return [argv = std::move(argv)]() { return start_local_agent(argv); };
}

Result<ProfileReport> run_profile(const AgentStarter& start, const ProfileRequest& req, const SupervisorOptions& o) {
    auto t0 = Clock::now();
    if (req.prompts.empty() && !req.serve) return err("profile: no prompts");
    ProfileReport rep;
    rep.start_unix_ns = unix_now_ns();
    // The client's span: a child of the caller's when a traceparent was given, else a fresh trace's
    // root. The requests carry it as their parent, so the agent's spans hang under it.
    protocol::TraceContext ctx = protocol::new_trace();
    if (!req.traceparent.empty()) {
        auto given = protocol::parse_traceparent(req.traceparent);
        if (!given.ok()) return err("profile: ", given.message());
        ctx = given.value();
        rep.caller_span_id = protocol::to_hex(ctx.span_id.data(), ctx.span_id.size());
        ctx.span_id = protocol::new_span_id();
    }
    std::string traceparent = protocol::format_traceparent(ctx);
    rep.traceparent = traceparent;
    std::vector<bool> done(req.prompts.size(), false);
    int delay = o.restart_delay_ms;
    std::string where = "the board";
    for (;;) {
        std::vector<size_t> pending;
        for (size_t i = 0; i < done.size(); ++i)
            if (!done[i]) pending.push_back(i);

        // One attempt: start, load, run what is pending. Returns a failure or nothing (finished).
        auto attempt = [&]() -> std::optional<Failure> {
            auto t = start();
            if (!t.ok()) return Failure{rep.restarts == 0, "starting the agent: " + t.message()};
            where = t.value()->describe();
            rep.board = where;
            auto link = AgentLink::open(std::move(t).value());
            // An agent of another protocol version answers the same after a restart: no retry.
            if (!link.ok())
                return Failure{link.message().find("protocol version mismatch") != std::string::npos, link.message()};
            AgentLink& l = *link.value();
            rep.agent = l.agent_hello();

            uint32_t load_id = l.next_request_id();
            protocol::LoadEngine load{load_id, req.engine_path, req.engine_sha256, req.tokenizer_path, traceparent};
            if (auto s = l.send(load); !s.ok()) return Failure{false, s.message()};
            auto deadline = Clock::now() + std::chrono::milliseconds(o.load_timeout_ms);
            for (bool loaded = false; !loaded;) {
                auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
                if (left <= 0)
                    return Failure{false, where + ": no answer to loading " + req.engine_path + " within " +
                                              std::to_string(o.load_timeout_ms) + " ms"};
                if (o.cancelled && o.cancelled()) {
                    (void)l.stop(2000);
                    return Failure{true, "profile cancelled while " + where + " was loading " + req.engine_path};
                }
                auto m = l.receive(static_cast<int>(std::min<long long>(left, o.cancelled ? 250 : 1000)));
                if (!m.ok()) return Failure{false, m.message()};
                if (!m.value()) continue;
                if (auto* a = std::get_if<protocol::Ack>(&*m.value()); a && a->request_id == load_id) {
                    rep.load_detail = a->detail;
                    loaded = true;
                } else if (auto* e = std::get_if<protocol::ErrorMsg>(&*m.value());
                           e && (e->request_id == load_id || e->request_id == 0)) {
                    return Failure{true, where + ": loading " + req.engine_path + ": " + e->message};
                } else if (auto* lg = std::get_if<protocol::LogLine>(&*m.value())) {
                    rep.logs.push_back(*lg);
                    if (o.on_log) o.on_log(*lg);
                }
            }

            const uint32_t run_id = l.next_request_id();
            if (req.serve) {
                protocol::ServeWorkload sw = *req.serve;
                sw.request_id = run_id;
                sw.traceparent = traceparent;
                if (auto s = l.send(sw); !s.ok()) return Failure{false, s.message()};
            } else {
                protocol::RunWorkload run;
                run.request_id = run_id;
                for (size_t i : pending) run.prompts.push_back(req.prompts[i]);
                run.max_tokens = req.max_tokens;
                run.temperature = req.temperature;
                run.top_k = req.top_k;
                run.top_p = req.top_p;
                run.seed = req.seed;
                run.telemetry_hz = req.telemetry_hz;
                run.traceparent = traceparent;
                run.chat = req.chat;
                if (auto s = l.send(run); !s.ok()) return Failure{false, s.message()};
            }
            auto remap = [&](uint32_t idx) { return idx < pending.size() ? static_cast<uint32_t>(pending[idx]) : idx; };
            auto last_frame = Clock::now();
            for (;;) {
                if (o.cancelled && o.cancelled()) {
                    (void)l.stop(2000);
                    return Failure{true, "profile cancelled on " + where};
                }
                auto m = l.receive(o.cancelled ? std::min(o.silence_timeout_ms, 250) : o.silence_timeout_ms);
                if (!m.ok()) return Failure{false, m.message()};
                if (!m.value() && Clock::now() - last_frame < std::chrono::milliseconds(o.silence_timeout_ms)) continue;
                last_frame = Clock::now();
                if (!m.value()) {
                    std::string status = std::to_string(l.transport().close(1000));
                    std::string why = where;
                    why += ": no frame for " + std::to_string(o.silence_timeout_ms);
                    why += " ms mid-run: the agent is hung (closed it; exit status " + status + ")";
                    return Failure{false, why};
                }
                protocol::Message& msg = *m.value();
                if (auto* b = std::get_if<protocol::TelemetryBatch>(&msg)) {
                    for (auto& s : b->samples) s.prompt_index = remap(s.prompt_index);
                    rep.dropped_samples += b->dropped;
                    rep.samples.insert(rep.samples.end(), b->samples.begin(), b->samples.end());
                    if (o.on_telemetry) o.on_telemetry(*b);
                } else if (auto* r = std::get_if<protocol::RunResult>(&msg)) {
                    r->prompt_index = remap(r->prompt_index);
                    if (r->prompt_index < done.size() && !done[r->prompt_index]) {
                        done[r->prompt_index] = true;
                        rep.results.push_back(*r);
                        if (o.on_result) o.on_result(*r);
                    }
                } else if (auto* sr = std::get_if<protocol::ServeReport>(&msg); sr && sr->request_id == run_id) {
                    rep.serve_report = *sr;
                } else if (auto* lg = std::get_if<protocol::LogLine>(&msg)) {
                    rep.logs.push_back(*lg);
                    if (o.on_log) o.on_log(*lg);
                } else if (auto* a = std::get_if<protocol::Ack>(&msg); a && a->request_id == run_id) {
                    if (req.fetch_metrics) {
                        uint32_t id = l.next_request_id();
                        if (auto s = l.send(protocol::MetricsRequest{id}); !s.ok()) return Failure{false, s.message()};
                        for (;;) {
                            auto mm = l.receive(o.silence_timeout_ms);
                            if (!mm.ok()) return Failure{false, mm.message()};
                            if (!mm.value())
                                return Failure{false, where + ": no answer to the metrics request within " +
                                                          std::to_string(o.silence_timeout_ms) + " ms"};
                            if (auto* x = std::get_if<protocol::Metrics>(&*mm.value()); x && x->request_id == id) {
                                rep.prometheus_text = x->text;
                                break;
                            }
                            if (auto* e = std::get_if<protocol::ErrorMsg>(&*mm.value()))
                                return Failure{true, where + ": metrics request: " + e->message};
                            if (auto* lg = std::get_if<protocol::LogLine>(&*mm.value())) rep.logs.push_back(*lg);
                        }
                    }
                    (void)l.stop(5000);
                    return std::nullopt;
                } else if (auto* e = std::get_if<protocol::ErrorMsg>(&msg);
                           e && (e->request_id == run_id || e->request_id == 0)) {
                    return Failure{true, where + ": running the workload: " + e->message};
                }
            }
        };

        auto failure = attempt();
        if (!failure) break;
        if (failure->fatal) return err(failure->message);
        rep.incidents.push_back(failure->message);
        if (rep.restarts >= o.max_restarts) {
            std::string all;
            for (size_t i = 0; i < rep.incidents.size(); ++i)
                all += "\n  " + std::to_string(i + 1) + ". " + rep.incidents[i];
            return err("profile on ", where, ": the agent died or the link dropped ", rep.incidents.size(), " time(s)",
                       o.max_restarts > 0 ? "; gave up after " + std::to_string(o.max_restarts) + " restart(s)"
                                          : std::string(),
                       ":", all);
        }
        ++rep.restarts;
        if (o.on_event)
            o.on_event("agent died or link dropped: " + failure->message + "; restarting (" +
                       std::to_string(rep.restarts) + " of " + std::to_string(o.max_restarts) + ")");
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        delay *= 2;
    }
    std::sort(rep.results.begin(), rep.results.end(),
              [](const auto& a, const auto& b) { return a.prompt_index < b.prompt_index; });
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    rep.end_unix_ns = unix_now_ns();
    return rep;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0.0;
    const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::lround(p * double(v.size() - 1))));
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(i), v.end());
    return v[i];
}

ProfileSummary summarize(const ProfileReport& r) {
    ProfileSummary s;
    s.prompts = r.results.size();
    s.samples = r.samples.size();
    std::vector<double> lat, ttft, tpot, power;
    for (const auto& x : r.samples) {
        if (x.token_latency_ms) lat.push_back(*x.token_latency_ms);
        if (x.tpot_ms) tpot.push_back(*x.tpot_ms);
        if (x.rss_bytes) s.rss_max_bytes = std::max(s.rss_max_bytes.value_or(0), *x.rss_bytes);
        if (x.mem_available_bytes)
            s.mem_available_min_bytes =
                std::min(s.mem_available_min_bytes.value_or(UINT64_MAX), *x.mem_available_bytes);
        if (x.device_mem_used_bytes)
            s.device_mem_used_max_bytes = std::max(s.device_mem_used_max_bytes.value_or(0), *x.device_mem_used_bytes);
        if (x.kv_blocks_used) s.kv_blocks_used_max = std::max(s.kv_blocks_used_max.value_or(0), *x.kv_blocks_used);
        if (x.kv_hit_rate) s.kv_hit_rate = *x.kv_hit_rate;  // cumulative on the board: the last one
        if (x.kv_evictions) s.kv_evictions = *x.kv_evictions;
        if (x.power_w) power.push_back(*x.power_w);
        if (x.temperature_c) s.temperature_max_c = std::max(s.temperature_max_c.value_or(-1e9), *x.temperature_c);
    }
    double gen_ms = 0;
    for (const auto& x : r.results) {
        s.tokens += x.generated_tokens;
        ttft.push_back(x.ttft_ms);
        if (x.tokens_per_s > 0) gen_ms += 1000.0 * x.generated_tokens / x.tokens_per_s;
    }
    if (!lat.empty()) s.latency_p50_ms = percentile(lat, 0.5), s.latency_p99_ms = percentile(lat, 0.99);
    if (!ttft.empty()) s.ttft_p50_ms = percentile(ttft, 0.5);
    if (!tpot.empty()) {
        double sum = 0;
        for (double v : tpot) sum += v;
        s.tpot_mean_ms = sum / double(tpot.size());
    }
    if (gen_ms > 0) s.tokens_per_s = 1000.0 * double(s.tokens) / gen_ms;
    if (!power.empty()) {
        double sum = 0;
        for (double v : power) sum += v;
        s.power_mean_w = sum / double(power.size());
    }
    return s;
}

}  // namespace edge::client
