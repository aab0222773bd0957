// edge-remote-soak: the telemetry soak of issue 7, acceptance 2 (a bench command, not in ctest).
// Starts the loopback sshd of the tests, runs edge-agent over an SSH exec channel, keeps it
// generating (stories260K, one run-workload after another) with telemetry at 20 batches/s for N
// minutes, and prints per interval: frames received, frame rate, frame latency (board timestamp of
// the newest sample in a batch -> decoded on the client; both clocks are this machine's
// CLOCK_REALTIME) p50 / p99 / max, and the RSS of both sides (client: /proc/self; agent: the
// rss_bytes its samples carry). Ends with the totals and RSS growth. docs/remote.md has a run.
//
//   edge-remote-soak [--minutes 10] [--interval 60] [--model PATH] [--threads 1]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/telemetry/memory.h"
#include "remote/client/agent_link.h"
#include "remote/client/ssh_session.h"
#include "remote/protocol/trace.h"
#include "remote_test_util.h"
#include "test_support.h"

using edge::telemetry::process_memory;

using namespace edge;

namespace {

double realtime_ms() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t i = static_cast<size_t>(std::lround(p * double(v.size() - 1)));
    return v[std::min(i, v.size() - 1)];
}

double mib(uint64_t b) { return double(b) / (1024.0 * 1024.0); }

int usage() {
    std::fprintf(stderr, "usage: edge-remote-soak [--minutes N] [--interval S] [--model PATH] [--threads N]\n");
    return 64;
}

}  // namespace

int main(int argc, char** argv) {
    double minutes = 10, interval_s = 60;
    int threads = 1;
    std::string model = test::shared("models/stories260K/stories260K.gguf");
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (i + 1 >= argc) return usage();
        if (a == "--minutes")
            minutes = std::atof(argv[++i]);
        else if (a == "--interval")
            interval_s = std::atof(argv[++i]);
        else if (a == "--model")
            model = argv[++i];
        else if (a == "--threads")
            threads = std::atoi(argv[++i]);
        else
            return usage();
    }
    if (minutes <= 0 || interval_s <= 0) return usage();
    if (!std::ifstream(model)) {
        std::fprintf(stderr, "edge-remote-soak: %s: no such model (see ../shared/ASSETS.md)\n", model.c_str());
        return 1;
    }
    std::string why;
    auto sshd = test::Sshd::start(&why);
    if (!sshd) {
        std::fprintf(stderr, "edge-remote-soak: %s\n", why.c_str());
        return 1;
    }
    std::string kh = (sshd->dir / "known_hosts").string();
    std::ofstream(kh) << sshd->known_hosts_line() << "\n";
    client::SshOptions o;
    o.host = "127.0.0.1";
    o.port = sshd->port;
    o.user = sshd->user;
    o.identity_file = sshd->client_key;
    o.known_hosts = kh;
    o.read_ssh_config = false;
    auto s = client::SshSession::connect(o);
    if (!s.ok()) {
        std::fprintf(stderr, "edge-remote-soak: %s\n", s.message().c_str());
        return 1;
    }
    std::string cmd = client::shell_quote(EDGE_AGENT_PATH) + " --threads " + std::to_string(threads) + " --lock " +
                      client::shell_quote((sshd->dir / "agent.lock").string());
    auto t = client::start_ssh_agent(*s.value(), cmd);
    if (!t.ok()) {
        std::fprintf(stderr, "edge-remote-soak: %s\n", t.message().c_str());
        return 1;
    }
    auto link = client::AgentLink::open(std::move(t).value());
    if (!link.ok()) {
        std::fprintf(stderr, "edge-remote-soak: %s\n", link.message().c_str());
        return 1;
    }
    client::AgentLink& l = *link.value();
    std::string tp = protocol::format_traceparent(protocol::new_trace());
    uint32_t load_id = l.next_request_id();
    (void)l.send(protocol::LoadEngine{load_id, model, std::nullopt, "", tp});
    for (;;) {
        auto m = l.receive(60000);
        if (!m.ok() || !m.value()) {
            std::fprintf(stderr, "edge-remote-soak: loading %s: %s\n", model.c_str(),
                         m.ok() ? "timeout" : m.message().c_str());
            return 1;
        }
        if (auto* a = std::get_if<protocol::Ack>(&*m.value()); a && a->request_id == load_id) break;
        if (auto* e = std::get_if<protocol::ErrorMsg>(&*m.value())) {
            std::fprintf(stderr, "edge-remote-soak: %s\n", e->message.c_str());
            return 1;
        }
    }
    auto new_run = [&]() {
        protocol::RunWorkload w;
        w.request_id = l.next_request_id();
        w.prompts = {"Once upon a time", "Lily wanted to play", "The little dog", "Tom had a red ball"};
        w.max_tokens = 200;
        w.telemetry_hz = 20;
        w.traceparent = tp;
        (void)l.send(w);
        return w.request_id;
    };

    std::printf("edge-remote-soak: %.1f min over ssh %s, agent %s, model %s, 20 batches/s requested\n", minutes,
                s.value()->where().c_str(), l.agent_hello().software_version.c_str(), model.c_str());
    std::printf("%7s %8s %8s %9s %9s %9s %12s %12s %8s\n", "t (s)", "frames", "fr/s", "p50 ms", "p99 ms", "max ms",
                "client RSS", "agent RSS", "tokens");
    uint32_t run_id = new_run();
    using Clock = std::chrono::steady_clock;
    auto t0 = Clock::now(),
         next_report = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s));
    auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(minutes * 60));
    std::vector<double> all, win;
    uint64_t frames = 0, win_frames = 0, tokens = 0, win_tokens = 0, dropped = 0;
    uint64_t agent_rss = 0, agent_rss_first = 0, client_rss_first = 0, client_rss = 0;
    auto win_start = t0;
    bool over = false;
    while (!over) {
        auto m = l.receive(5000);
        if (!m.ok()) {
            std::fprintf(stderr, "edge-remote-soak: %s\n", m.message().c_str());
            return 1;
        }
        if (m.value()) {
            if (auto* b = std::get_if<protocol::TelemetryBatch>(&*m.value())) {
                double now = realtime_ms();
                if (!b->samples.empty()) {
                    double age = now - double(b->samples.back().timestamp_ns) / 1e6;
                    all.push_back(age), win.push_back(age);
                    if (b->samples.back().rss_bytes) agent_rss = *b->samples.back().rss_bytes;
                    if (!agent_rss_first) agent_rss_first = agent_rss;
                }
                ++frames, ++win_frames;
                tokens += b->samples.size(), win_tokens += b->samples.size();
                dropped += b->dropped;
            } else if (auto* a = std::get_if<protocol::Ack>(&*m.value()); a && a->request_id == run_id) {
                if (Clock::now() < end)
                    run_id = new_run();
                else
                    over = true;
            } else if (auto* e = std::get_if<protocol::ErrorMsg>(&*m.value())) {
                std::fprintf(stderr, "edge-remote-soak: agent error: %s\n", e->message.c_str());
                return 1;
            }
        }
        auto now = Clock::now();
        // The last run's tail (after the deadline) goes into the totals, not into a row of its own.
        if (now >= next_report) {
            auto mem = process_memory();
            client_rss = mem.ok ? static_cast<uint64_t>(mem.rss_bytes) : 0;
            if (!client_rss_first) client_rss_first = client_rss;
            double secs = std::chrono::duration<double>(now - win_start).count();
            std::printf("%7.0f %8llu %8.1f %9.2f %9.2f %9.2f %8.1f MiB %8.1f MiB %8llu\n",
                        std::chrono::duration<double>(now - t0).count(), (unsigned long long)win_frames,
                        double(win_frames) / secs, pct(win, 0.5), pct(win, 0.99),
                        win.empty() ? 0.0 : *std::max_element(win.begin(), win.end()), mib(client_rss), mib(agent_rss),
                        (unsigned long long)win_tokens);
            std::fflush(stdout);
            win.clear(), win_frames = 0, win_tokens = 0, win_start = now;
            next_report += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s));
        }
    }
    auto st = l.stop(10000);
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    double mx = all.empty() ? 0.0 : *std::max_element(all.begin(), all.end());
    size_t over100 = static_cast<size_t>(std::count_if(all.begin(), all.end(), [](double v) { return v >= 100.0; }));
    std::printf(
        "total: %.0f s, %llu frames (%.2f/s), %llu samples, %llu dropped; frame latency p50 %.2f ms, p99 %.2f ms, max "
        "%.2f ms, "
        "%zu frame(s) >= 100 ms\n",
        secs, (unsigned long long)frames, double(frames) / secs, (unsigned long long)tokens,
        (unsigned long long)dropped, pct(all, 0.5), pct(all, 0.99), mx, over100);
    std::printf("RSS: client %.1f -> %.1f MiB (%+.1f), agent %.1f -> %.1f MiB (%+.1f); agent exit status %d\n",
                mib(client_rss_first), mib(client_rss), mib(client_rss) - mib(client_rss_first), mib(agent_rss_first),
                mib(agent_rss), mib(agent_rss) - mib(agent_rss_first), st.ok() ? st.value() : -1);
    return mx < 100.0 ? 0 : 2;
}
