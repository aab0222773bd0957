#include "scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <span>

#include "engine/kv/codec.h"
#include "engine/kv/paged_kv.h"
#include "engine/runtime/one_sequence.h"
#include "engine/telemetry/stopwatch.h"

using edge::model::LlamaConfig;
using edge::runtime::argmax;
using edge::runtime::PagedStep;
using edge::telemetry::Stopwatch;

namespace edge::sched {

std::string preempt_name(Preempt p) {
    switch (p) {
        case Preempt::Recompute: return "recompute";
        case Preempt::Swap: return "swap";
        case Preempt::SwapInt8: return "swap-int8";
    }
    return "?";
}

Result<Preempt> parse_preempt(const std::string& s) {
    if (s == "recompute") return Preempt::Recompute;
    if (s == "swap") return Preempt::Swap;
    if (s == "swap-int8") return Preempt::SwapInt8;
    return err("unknown preemption mode '", s, "' (recompute, swap, swap-int8)");
}

namespace {

int64_t blocks_for(int64_t tokens, int b) { return (tokens + b - 1) / b; }

enum class State { Pending, Queued, Running, Done };

struct Live {
    std::vector<int32_t> tokens;  // prompt + generated so far
    int prompt_len = 0;
    int generated = 0;
    int output_tokens = 0;
    State state = State::Pending;
    int admit_order = 0;
    // swapped out: the host copy of its blocks (compressed) and how many tokens they hold
    std::vector<std::vector<uint8_t>> host;
    int host_len = 0;
    bool lossy = false;  // once restored from a lossy tier, never shared
};

struct Sched {
    runtime::Executor& rt;
    const SchedConfig& cfg;
    kv::PagedKv kv;
    kv::SlabShape block_shape;
    std::vector<Live> live;
    std::deque<int> queue;  // admitted next: front first
    std::vector<int> running;
    ServeResult res;
    int admits = 0;
    double now = 0;
    double step_extra_ms = 0;  // swap work in this step (measured)

    kv::Codec codec() const { return cfg.preempt == Preempt::SwapInt8 ? kv::Codec::Int8DeltaLz4 : kv::Codec::Lz4; }

    void preempt(int id) {
        Live& r = live[size_t(id)];
        Stopwatch sw;
        if (cfg.preempt != Preempt::Recompute) {
            r.host.clear();
            r.host_len = kv.seq_len(id);
            for (kv::BlockId b : kv.block_table(id)) {
                auto c = kv::compress(kv.block_data(b), block_shape, codec());
                // compress() fails only on a bad shape, checked at start; keep the request correct anyway
                if (!c) {
                    r.host.clear();
                    r.host_len = 0;
                    break;
                }
                res.total.swap_out_bytes += c->size();
                r.host.push_back(std::move(c.value()));
            }
            step_extra_ms += sw.millis();
            res.total.swap_ms += sw.millis();
        } else {
            res.total.recomputed_tokens += kv.seq_len(id);
        }
        (void)kv.apply(kv::op::Remove{id});
        r.state = State::Queued;
        res.requests[size_t(id)].preemptions++;
        res.total.preemptions++;
        running.erase(std::find(running.begin(), running.end(), id));
        // back to the queue, ahead of requests admitted after it
        auto pos = queue.begin();
        while (pos != queue.end() && live[size_t(*pos)].admit_order >= 0 &&
               live[size_t(*pos)].admit_order < r.admit_order)
            ++pos;
        queue.insert(pos, id);
    }

    // Tries to admit request id; false (and nothing changed) when the budget cannot take it now.
    Result<bool> admit(int id) {
        Live& r = live[size_t(id)];
        RequestMetrics& m = res.requests[size_t(id)];
        const int B = cfg.block_tokens;
        const bool swapped = !r.host.empty() || r.host_len > 0;
        const int ctx = swapped ? r.host_len : int(r.tokens.size()) - 1;  // the last token is computed, not attached
        EDGE_TRY(kv.apply(kv::op::AttachPrefix{id, std::span<const int32_t>(r.tokens.data(), size_t(ctx))}));
        const int shared = r.lossy ? 0 : kv.seq_len(id);
        if (r.lossy && kv.seq_len(id) > 0) {  // a lossy sequence restores everything itself
            (void)kv.apply(kv::op::Remove{id});
        }
        const int have = kv.seq_len(id);
        // blocks for what it brings in now (and its next token), plus one growth block per running request
        const int64_t upto = swapped ? int64_t(r.host_len) + 1
                                     : have + std::min<int64_t>(cfg.prefill_chunk, int64_t(r.tokens.size()) - have);
        const int64_t need = blocks_for(upto, B) - blocks_for(have, B);
        if (need + int64_t(running.size()) > kv.free_blocks()) {
            if (kv.has_seq(id)) (void)kv.apply(kv::op::Remove{id});
            return false;
        }
        if (swapped) {
            Stopwatch sw;
            const size_t L = size_t(rt.config().n_layers), KVD = size_t(rt.config().kv_dim());
            const int n = r.host_len - have;
            std::vector<float> k(size_t(n) * L * KVD), v(k.size()), blk(block_shape.floats());
            for (int p = have; p < r.host_len;) {
                const size_t bi = size_t(p / B);
                res.total.swap_in_bytes += r.host[bi].size();
                EDGE_TRY(kv::decompress(r.host[bi], block_shape, blk.data()));
                for (; p < r.host_len && size_t(p / B) == bi; ++p)
                    for (size_t l = 0; l < L; ++l) {  // block layout [layer][K|V][token][kv_dim]
                        const float* src = blk.data() + (l * 2 * size_t(B) + size_t(p % B)) * KVD;
                        const float* srcv = src + size_t(B) * KVD;
                        const size_t dst = (size_t(p - have) * L + l) * KVD;
                        std::copy(src, src + KVD, k.begin() + std::ptrdiff_t(dst));
                        std::copy(srcv, srcv + KVD, v.begin() + std::ptrdiff_t(dst));
                    }
            }
            const bool lossy = cfg.preempt == Preempt::SwapInt8;
            EDGE_TRY(kv.apply(kv::op::Append{id, std::span<const int32_t>(r.tokens.data() + have, size_t(n)), k.data(),
                                             v.data(), lossy}));
            r.lossy = r.lossy || lossy;
            r.host.clear();
            r.host_len = 0;
            const double ms = sw.millis();
            step_extra_ms += ms;
            res.total.swap_ms += ms;
        }
        m.context_tokens += ctx;
        m.shared_tokens += shared;
        r.state = State::Running;
        if (r.admit_order < 0) r.admit_order = admits++;
        running.push_back(id);
        return true;
    }
};

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(std::lround(q * double(v.size() - 1))))];
}

}  // namespace

Result<ServeResult> serve(runtime::Executor& rt, const std::vector<ServeRequest>& requests, const SchedConfig& cfg,
                          const ServeHooks& hooks) {
    const LlamaConfig& c = rt.config();
    const int max_seq = rt.capabilities().max_seq;
    if (max_seq <= 0) return err("scheduler: ", rt.capabilities().name, " cannot run batch steps");
    if (cfg.block_tokens <= 0) return err("KV block size must be at least 1 token, got ", cfg.block_tokens);
    if (cfg.max_batch_tokens <= 0 || cfg.prefill_chunk <= 0 || cfg.max_running <= 0)
        return err("scheduler: batch tokens, prefill chunk and running requests must be positive");
    const runtime::ExecutorCaps caps = rt.capabilities();
    if (caps.kv_on_device && cfg.preempt != Preempt::Recompute)
        return err("scheduler: ", caps.name, " keeps K/V rows in device memory: preemption by ",
                   preempt_name(cfg.preempt), " needs them on the host tier; use recompute");
    // An executor that keeps the rows itself gets a PagedKv that only keeps the books.
    kv::KvConfig kc{kv::KvShape{c.n_layers, c.n_kv_heads, c.head_dim, cfg.block_tokens}, cfg.budget_blocks,
                    !caps.kv_on_device, true};
    auto kvr = kv::PagedKv::create(kc);
    if (!kvr) return kvr.error();
    if (requests.empty()) return err("scheduler: no requests");
    Sched s{rt,
            cfg,
            std::move(kvr.value()),
            kv::SlabShape{2 * c.n_layers, cfg.block_tokens, c.n_kv_heads, c.head_dim},
            {},
            {},
            {},
            {},
            0,
            0,
            0};
    EDGE_TRY(kv::validate_slab_shape(s.block_shape));
    const int B = cfg.block_tokens;
    s.live.resize(requests.size());
    s.res.requests.resize(requests.size());
    s.res.outputs.resize(requests.size());
    if (cfg.record_logits) s.res.logits.resize(requests.size());
    std::vector<int> order(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        const ServeRequest& q = requests[i];
        if (q.prompt.empty()) return err("request ", i, ": empty prompt");
        if (q.output_tokens < 1) return err("request ", i, ": needs at least one output token");
        const int64_t len = int64_t(q.prompt.size()) + q.output_tokens;
        if (len > max_seq)
            return err("request ", i, ": ", len, " tokens (prompt + output) exceed the executor's maximum length ",
                       max_seq);
        const int64_t blocks = blocks_for(len, B);
        if (blocks > cfg.budget_blocks)
            return err("request ", i, ": needs ", blocks, " KV blocks of ", B, " tokens (", len,
                       " tokens) but the budget is ", cfg.budget_blocks, " blocks; it could never run");
        s.res.total.demand_blocks += blocks;
        Live& r = s.live[i];
        r.tokens = q.prompt;
        r.prompt_len = int(q.prompt.size());
        r.output_tokens = q.output_tokens;
        r.admit_order = -1;
        RequestMetrics& m = s.res.requests[i];
        m.arrival_ms = q.arrival_ms;
        m.prompt_tokens = r.prompt_len;
        m.output_tokens = q.output_tokens;
        s.res.total.prompt_tokens += r.prompt_len;
        order[i] = int(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return requests[size_t(a)].arrival_ms < requests[size_t(b)].arrival_ms; });
    size_t next_arrival = 0;
    size_t done = 0;
    double queue_sum = 0;
    const int vocab = c.vocab_size;
    std::vector<PagedStep> batch;
    std::vector<int> batch_ids;

    StepReport report;
    while (done < requests.size()) {
        if (hooks.cancelled && hooks.cancelled())
            return err("serve: cancelled after ", s.res.total.steps, " steps (", done, " of ", requests.size(),
                       " requests finished)");
        while (next_arrival < order.size() && requests[size_t(order[next_arrival])].arrival_ms <= s.now) {
            s.live[size_t(order[next_arrival])].state = State::Queued;
            s.queue.push_back(order[next_arrival++]);
        }
        if (s.running.empty() && s.queue.empty()) {
            if (next_arrival >= order.size()) return err("scheduler: internal error, requests left but none pending");
            s.now = requests[size_t(order[next_arrival])].arrival_ms;  // idle: jump to the next arrival
            continue;
        }
        s.step_extra_ms = 0;
        // admission, FIFO (preempted requests sit at the front)
        while (!s.queue.empty() && int(s.running.size()) < cfg.max_running) {
            auto ok = s.admit(s.queue.front());
            if (!ok) return ok.error();
            if (!*ok) break;
            s.queue.pop_front();
        }
        if (s.running.empty())
            return err("scheduler: request ", s.queue.front(), " cannot be admitted into an empty KV cache of ",
                       cfg.budget_blocks, " blocks");
        queue_sum += double(s.queue.size());
        s.res.total.queue_max = std::max(s.res.total.queue_max, int(s.queue.size()));

        // the batch: decode tokens first, then prefill chunks; preempt the newest while it does not fit
        for (;;) {
            batch.clear();
            batch_ids.clear();
            int budget = cfg.max_batch_tokens;
            for (int pass = 0; pass < 2; ++pass)
                for (int id : s.running) {
                    const Live& r = s.live[size_t(id)];
                    const int have = s.kv.seq_len(id);
                    const int left = int(r.tokens.size()) - have;
                    const bool decode = left == 1;
                    if ((pass == 0) != decode || budget <= 0) continue;
                    const int n = std::min({left, cfg.prefill_chunk, budget});
                    batch.push_back(PagedStep{id, std::span<const int32_t>(r.tokens.data() + have, size_t(n))});
                    batch_ids.push_back(id);
                    budget -= n;
                }
            int64_t need = 0;
            for (const PagedStep& st : batch) need += s.kv.blocks_needed(st.seq, int64_t(st.tokens.size()));
            if (need <= s.kv.free_blocks()) break;
            int victim = s.running.front();
            for (int id : s.running)
                if (s.live[size_t(id)].admit_order > s.live[size_t(victim)].admit_order) victim = id;
            if (s.running.size() == 1 && batch.size() <= 1)
                return err("scheduler: request ", victim, " does not fit the KV budget of ", cfg.budget_blocks,
                           " blocks alone");
            s.preempt(victim);
        }
        if (batch.empty()) continue;
        Stopwatch sw;
        auto logits = rt.step(s.kv, batch);
        if (!logits) return logits.error();
        const double step = cfg.step_ms > 0 ? cfg.step_ms : sw.millis() + s.step_extra_ms;
        s.now += step;
        s.res.total.steps++;
        s.res.total.peak_blocks = std::max(s.res.total.peak_blocks, s.kv.total_blocks() - s.kv.free_blocks());
        report.emitted.clear();
        report.batch_sequences = int(batch.size());
        report.batch_tokens = 0;
        for (const PagedStep& st : batch) report.batch_tokens += int(st.tokens.size());
        for (size_t i = 0; i < batch.size(); ++i) {
            const int id = batch_ids[i];
            Live& r = s.live[size_t(id)];
            if (s.kv.seq_len(id) != int(r.tokens.size())) continue;  // prefill chunk not at the end yet
            const float* row = *logits + i * size_t(vocab);
            const int32_t next = argmax(row, vocab);
            if (cfg.record_logits) s.res.logits[size_t(id)].insert(s.res.logits[size_t(id)].end(), row, row + vocab);
            r.tokens.push_back(next);
            s.res.outputs[size_t(id)].push_back(next);
            RequestMetrics& m = s.res.requests[size_t(id)];
            if (++r.generated == 1) m.first_token_ms = s.now;
            report.emitted.emplace_back(id, r.generated);
            ++report.output_tokens;
            if (r.generated == r.output_tokens) {
                m.finish_ms = s.now;
                m.ttft_ms = m.first_token_ms - m.arrival_ms;
                m.tpot_ms = r.output_tokens > 1 ? (m.finish_ms - m.first_token_ms) / (r.output_tokens - 1) : 0.0;
                (void)s.kv.apply(kv::op::Remove{id});
                s.running.erase(std::find(s.running.begin(), s.running.end(), id));
                r.state = State::Done;
                ++done;
            }
        }
        if (hooks.on_step) {
            report.step = s.res.total.steps;
            report.now_ms = s.now;
            report.step_ms = step;
            report.running = int(s.running.size());
            report.queued = int(s.queue.size());
            report.blocks_free = s.kv.free_blocks();
            report.blocks_used = s.kv.total_blocks() - report.blocks_free;
            report.preemptions = s.res.total.preemptions;
            report.context_tokens = report.shared_tokens = 0;
            for (const RequestMetrics& m : s.res.requests) {
                report.context_tokens += m.context_tokens;
                report.shared_tokens += m.shared_tokens;
            }
            report.finished = int(done);
            report.swap_out_bytes = s.res.total.swap_out_bytes;
            report.swap_in_bytes = s.res.total.swap_in_bytes;
            hooks.on_step(report);
        }
    }

    Aggregate& a = s.res.total;
    a.requests = int(requests.size());
    a.budget_blocks = cfg.budget_blocks;
    double first = 1e300;
    std::vector<double> ttft;
    int64_t ctx = 0, shared = 0;
    for (const RequestMetrics& m : s.res.requests) {
        first = std::min(first, m.arrival_ms);
        a.makespan_ms = std::max(a.makespan_ms, m.finish_ms);
        a.output_tokens += m.output_tokens;
        ttft.push_back(m.ttft_ms);
        a.ttft_mean_ms += m.ttft_ms / double(requests.size());
        a.tpot_mean_ms += m.tpot_ms / double(requests.size());
        ctx += m.context_tokens;
        shared += m.shared_tokens;
    }
    a.makespan_ms -= first;
    a.ttft_p95_ms = percentile(ttft, 0.95);
    a.tokens_per_s = a.makespan_ms > 0 ? double(a.output_tokens) / (a.makespan_ms / 1e3) : 0.0;
    a.kv_hit_rate = ctx > 0 ? double(shared) / double(ctx) : 0.0;
    a.queue_mean = a.steps > 0 ? queue_sum / double(a.steps) : 0.0;
    return std::move(s.res);
}

Result<ServeResult> run_alone(runtime::Executor& rt, const std::vector<ServeRequest>& requests, bool logits) {
    ServeResult res;
    const int V = rt.config().vocab_size;
    auto seq = runtime::OneSequence::create(rt);
    if (!seq) return seq.error();
    res.outputs.resize(requests.size());
    if (logits) res.logits.resize(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        const ServeRequest& q = requests[i];
        const int64_t len = int64_t(q.prompt.size()) + q.output_tokens;
        if (q.prompt.empty() || q.output_tokens < 1 || len > seq->max_seq())
            return err("request ", i, ": ", len, " tokens do not fit the reference executor (maximum ", seq->max_seq(),
                       ")");
        seq->reset();
        auto l = seq->next(q.prompt);
        for (int t = 0; l && t < q.output_tokens; ++t) {
            if (logits) res.logits[i].insert(res.logits[i].end(), *l, *l + V);
            const int32_t next = argmax(*l, V);
            res.outputs[i].push_back(next);
            if (t + 1 < q.output_tokens) l = seq->next(std::span(&next, 1));
        }
        if (!l) return err("request ", i, ": ", l.message());
    }
    return res;
}

namespace {
void log_softmax(const float* x, int n, std::vector<double>& out) {
    out.resize(size_t(n));
    double mx = x[0];
    for (int i = 1; i < n; ++i) mx = std::max(mx, double(x[i]));
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += std::exp(double(x[i]) - mx);
    const double lse = mx + std::log(sum);
    for (int i = 0; i < n; ++i) out[size_t(i)] = double(x[i]) - lse;
}
}  // namespace

Agreement compare(const ServeResult& ref, const ServeResult& run) {
    Agreement a;
    int64_t same = 0, total = 0;
    double kl_sum = 0;
    std::vector<double> lp, lq;
    for (size_t i = 0; i < ref.outputs.size() && i < run.outputs.size(); ++i) {
        const auto& x = ref.outputs[i];
        const auto& y = run.outputs[i];
        const size_t n = std::min(x.size(), y.size());
        for (size_t t = 0; t < n; ++t) same += x[t] == y[t];
        total += int64_t(std::max(x.size(), y.size()));
        if (x == y) a.identical_requests++;
        if (i >= ref.logits.size() || i >= run.logits.size() || n == 0) continue;
        const size_t V = ref.logits[i].size() / x.size();
        for (size_t t = 0; t < n; ++t) {
            log_softmax(&ref.logits[i][t * V], int(V), lp);
            log_softmax(&run.logits[i][t * V], int(V), lq);
            double kl = 0;
            for (size_t v = 0; v < V; ++v) kl += std::exp(lp[v]) * (lp[v] - lq[v]);
            kl = std::max(0.0, kl);
            kl_sum += kl;
            a.max_kl = std::max(a.max_kl, kl);
            a.kl_steps++;
            if (x[t] != y[t]) break;  // contexts differ from here on
        }
    }
    a.token_agreement = total ? double(same) / double(total) : 1.0;
    a.mean_kl = a.kl_steps ? kl_sum / double(a.kl_steps) : 0.0;
    return a;
}

std::string format_requests(const ServeResult& r) {
    std::string out =
        "| req | arrival ms | prompt | output | TTFT ms | TPOT ms | finish ms | preemptions | KV hit |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    char buf[256];
    for (size_t i = 0; i < r.requests.size(); ++i) {
        const RequestMetrics& m = r.requests[i];
        std::snprintf(buf, sizeof buf, "| %zu | %.1f | %d | %d | %.2f | %.3f | %.1f | %d | %.1f%% |\n", i, m.arrival_ms,
                      m.prompt_tokens, m.output_tokens, m.ttft_ms, m.tpot_ms, m.finish_ms, m.preemptions,
                      m.context_tokens ? 100.0 * double(m.shared_tokens) / double(m.context_tokens) : 0.0);
        out += buf;
    }
    return out;
}

std::string format_aggregate(const ServeResult& r, const std::string& label) {
    const Aggregate& a = r.total;
    std::string out =
        "| run | requests | KV demand / budget (blocks) | peak blocks | tokens/s | TTFT mean ms | TTFT p95 ms | TPOT "
        "mean ms "
        "| KV hit | queue mean / max | steps | preemptions | recomputed tokens | swap out / in KiB | swap ms |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "| %s | %d | %lld / %lld | %lld | %.1f | %.2f | %.2f | %.3f | %.1f%% | %.2f / %d | %d | %d | %lld | "
                  "%.1f / %.1f | %.2f |\n",
                  label.c_str(), a.requests, (long long)a.demand_blocks, (long long)a.budget_blocks,
                  (long long)a.peak_blocks, a.tokens_per_s, a.ttft_mean_ms, a.ttft_p95_ms, a.tpot_mean_ms,
                  100 * a.kv_hit_rate, a.queue_mean, a.queue_max, a.steps, a.preemptions,
                  (long long)a.recomputed_tokens, double(a.swap_out_bytes) / 1024, double(a.swap_in_bytes) / 1024,
                  a.swap_ms);
    out += buf;
    return out;
}

}  // namespace edge::sched
