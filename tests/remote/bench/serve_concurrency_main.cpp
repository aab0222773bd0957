// edge-serve-bench-agent: aggregate throughput of the board agent by concurrency (issue 20,
// acceptance 3; a bench command, not in ctest). Starts edge-agent as a local process (the same
// binary deployed to a board), loads MODEL (a GGUF or a compiled .edge), and for each concurrency
// serves the same workload (N requests arriving at once, P prompt tokens and O output tokens each)
// through serve-workload on the measured clock, then prints a table: concurrency, steps, output
// tokens/s over the makespan (prefill included) and its ratio to concurrency 1, decode tokens/s
// (sequences decoding together x 1000 / TPOT p50) and its ratio, TTFT and TPOT p50/p99 over the
// requests of all rounds. Rounds interleave the levels; medians over rounds.
// docs/benchmarks.md has runs.
//
//   edge-serve-bench-agent MODEL [--threads 2] [--requests 8] [--prompt 64] [--output 64]
//                                [--concurrency 1,2,4,8] [--budget-blocks 0] [--rounds 3]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "remote/client/agent_link.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;

namespace {

double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(std::lround(p * double(v.size() - 1))))];
}

int usage() {
    std::fprintf(stderr,
                 "usage: edge-serve-bench-agent MODEL [--threads N] [--requests N] [--prompt N] [--output N]\n"
                 "                              [--concurrency 1,2,4,8] [--budget-blocks N] [--rounds N]\n");
    return 64;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    std::string model = argv[1];
    int threads = 2, requests = 8, prompt = 64, output = 64, rounds = 3;
    long long budget = 0;
    std::vector<int> levels = {1, 2, 4, 8};
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (i + 1 >= argc) return usage();
        std::string v = argv[++i];
        if (a == "--threads")
            threads = std::atoi(v.c_str());
        else if (a == "--requests")
            requests = std::atoi(v.c_str());
        else if (a == "--prompt")
            prompt = std::atoi(v.c_str());
        else if (a == "--output")
            output = std::atoi(v.c_str());
        else if (a == "--budget-blocks")
            budget = std::atoll(v.c_str());
        else if (a == "--rounds")
            rounds = std::max(1, std::atoi(v.c_str()));
        else if (a == "--concurrency") {
            levels.clear();
            std::stringstream ss(v);
            for (std::string x; std::getline(ss, x, ',');) levels.push_back(std::atoi(x.c_str()));
        } else {
            return usage();
        }
    }
    auto dir = test::temp_dir("serve-bench-agent");
    auto t = client::start_local_agent({EDGE_AGENT_PATH, "--lock", (dir / "agent.lock").string(), "--threads",
                                        std::to_string(threads), "--backend", "cpu"});
    if (!t.ok()) return std::fprintf(stderr, "%s\n", t.message().c_str()), 1;
    auto l = client::AgentLink::open(std::move(t).value());
    if (!l.ok()) return std::fprintf(stderr, "%s\n", l.message().c_str()), 1;
    client::AgentLink& link = *l.value();
    const uint32_t load_id = link.next_request_id();
    if (!link.send(protocol::LoadEngine{load_id, model, std::nullopt, "", ""}).ok()) return 1;
    auto lc = test::collect(link, load_id, 900000);
    if (!lc.ack) return std::fprintf(stderr, "load: %s\n", lc.error ? lc.error->message.c_str() : "no answer"), 1;
    std::printf("agent: %s\nload: %s\n", link.agent_hello().cpu_model.c_str(), lc.ack->detail.c_str());
    std::string text = "edge-workload 1\n";
    for (int i = 0; i < requests; ++i)
        text += "req 0 - " + std::to_string(prompt) + " " + std::to_string(output) + "\n";
    std::printf("workload: %d requests arriving at once, %d prompt + %d output tokens each; %d threads; median of %d\n",
                requests, prompt, output, threads, rounds);
    std::printf("%11s %6s %10s %8s %12s %8s %10s %10s %10s %10s\n", "concurrency", "steps", "tok/s", "x c=1",
                "decode tok/s", "x c=1", "ttft p50", "ttft p99", "tpot p50", "tpot p99");
    // Rounds interleave the levels (c=1, c=8, c=1, c=8, ...) so each meets the host in the same
    // states; the table gives each level's medians.
    std::vector<std::vector<protocol::ServeReport>> runs(levels.size());
    std::string backend;
    for (int r = 0; r < rounds; ++r)
        for (size_t k = 0; k < levels.size(); ++k) {
            protocol::ServeWorkload w;
            w.request_id = link.next_request_id();
            w.workload = text;
            w.concurrency = uint32_t(levels[k]);
            w.budget_blocks = uint64_t(budget);
            w.max_batch_tokens = uint32_t(std::max(64, levels[k]));
            if (!link.send(w).ok()) return 1;
            auto col = test::collect(link, w.request_id, 1800000);
            if (!col.serve) return std::fprintf(stderr, "serve: %s\n", col.error ? col.error->message.c_str() : "?"), 1;
            backend = col.serve->backend;
            runs[k].push_back(*col.serve);
        }
    double base_tps = 0, base_dec = 0;
    for (size_t k = 0; k < levels.size(); ++k) {
        std::vector<double> tps, dec, ttft, tpot;
        for (const auto& rep : runs[k]) {
            tps.push_back(rep.tokens_per_s);
            std::vector<double> tp;
            for (const auto& q : rep.requests) {
                ttft.push_back(q.ttft_ms);
                tpot.push_back(q.tpot_ms);
                tp.push_back(q.tpot_ms);
            }
            // Decode throughput: the sequences decoding together, each at one token per TPOT.
            const double running = double(std::min<size_t>(size_t(levels[k]), rep.requests.size()));
            dec.push_back(running * 1000.0 / std::max(1e-9, pct(tp, 0.5)));
        }
        const double t = pct(tps, 0.5), d = pct(dec, 0.5);
        if (k == 0) base_tps = t, base_dec = d;
        std::printf("%11d %6u %10.2f %8.2f %12.2f %8.2f %10.1f %10.1f %10.2f %10.2f\n", levels[k], runs[k].back().steps,
                    t, base_tps > 0 ? t / base_tps : 0, d, base_dec > 0 ? d / base_dec : 0, pct(ttft, 0.5),
                    pct(ttft, 0.99), pct(tpot, 0.5), pct(tpot, 0.99));
    }
    std::printf("backend: %s\n", backend.c_str());
    return 0;
}
