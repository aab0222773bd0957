#include "remote/agent/worker.h"

#include <time.h>
#include <filesystem>
#include <optional>

#include "engine/core/memory_budget.h"
#include "engine/kv/paged_kv.h"
#include "engine/model/xxh64.h"
#include "engine/runtime/cpu/llama_cpu.h"  // Sampler
#include "engine/runtime/executor.h"
#include "engine/runtime/one_sequence.h"
#include "engine/sched/scheduler.h"
#include "engine/sched/workload.h"
#include "engine/telemetry/memory.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/tokenizer/chat.h"
#include "engine/tokenizer/tokenizer.h"
#include "remote/agent/sha256.h"

using edge::model::LlamaConfig;
using edge::model::Model;
using edge::model::xxh64;
using edge::runtime::Sampler;
using edge::runtime::SamplingParams;
using edge::telemetry::process_memory;
using edge::telemetry::Stopwatch;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::Tokenizer;
using edge::tokenizer::TokenizerSpec;

namespace edge::agent {

struct Worker::Loaded {
    runtime::OpenedExecutor opened;  // the model and what runs it
    std::unique_ptr<Tokenizer> tokenizer;
    std::string path;
    // run-workload's KV memory: one sequence (kPromptSeq) of up to max_seq tokens. `cached` are
    // its tokens. A prompt that starts with some of them (a shared system prompt, a follow-up
    // turn) truncates the sequence to that prefix and runs only the rest: that reuse is the KV
    // hit rate the agent reports for run-workload.
    std::optional<kv::PagedKv> kv;
    std::vector<int32_t> cached;
    uint64_t prompt_tokens = 0, reused_tokens = 0;
    runtime::Executor& exe() const { return *opened.exe; }
    void forget() {  // after a failed step what the sequence holds is unknown
        if (kv && kv->has_seq(kPromptSeq)) (void)kv->apply(kv::op::Remove{kPromptSeq});
        cached.clear();
    }
    static constexpr kv::SeqId kPromptSeq = 0;
};

namespace {

uint64_t realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string hex(const protocol::Sha256& h) { return protocol::to_hex(h.data(), h.size()); }

// Process, device and board readings change slowly; refreshed at most every 50 ms while tokens
// stream.
class SystemCache {
public:
    SystemCache(const BoardSensors& s, const runtime::Executor& exe) : sensors_(s), exe_(exe) {}
    void fill(protocol::TelemetrySample& t) {
        if (!fresh_ || age_.millis() > 50) {
            auto m = process_memory();
            rss_ = m.ok ? std::optional<uint64_t>(static_cast<uint64_t>(m.rss_bytes)) : std::nullopt;
            const runtime::ExecutorMemory d = exe_.held_memory();  // device figures: CUDA only
            device_used_ = d.device_total ? std::optional<uint64_t>(d.device_total - d.device_free) : std::nullopt;
            device_total_ = d.device_total ? std::optional<uint64_t>(d.device_total) : std::nullopt;
            board_ = sensors_.read();
            age_.restart();
            fresh_ = true;
        }
        t.rss_bytes = rss_;
        t.device_mem_used_bytes = device_used_;
        t.device_mem_total_bytes = device_total_;
        t.mem_available_bytes = board_.mem_available_bytes;
        t.power_w = board_.power_w;
        t.temperature_c = board_.temperature_c;
    }

private:
    const BoardSensors& sensors_;
    const runtime::Executor& exe_;
    Stopwatch age_;
    bool fresh_ = false;
    std::optional<uint64_t> rss_;
    std::optional<uint64_t> device_used_, device_total_;
    BoardReading board_;
};

}  // namespace

Worker::Worker(FrameWriter& out, TelemetryPump& pump, const BoardSensors& sensors, WorkerOptions opts)
    : out_(out), pump_(pump), sensors_(sensors), opts_(std::move(opts)) {
    thread_ = std::thread([this] { loop(); });
}

Worker::~Worker() {
    cancel();
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void Worker::submit(Request r) {
    {
        std::lock_guard lk(mu_);
        queue_.push_back(std::move(r));
    }
    cv_.notify_all();
}

size_t Worker::cancel() {
    std::lock_guard lk(mu_);
    size_t n = queue_.size() + (busy_ ? 1 : 0);
    queue_.clear();
    if (busy_) cancel_ = true;
    return n;
}

std::pair<Worker::Cancelled, protocol::MsgType> Worker::cancel_request(uint32_t id) {
    std::lock_guard lk(mu_);
    auto id_of = [](const Request& r) { return std::visit([](const auto& q) { return q.request_id; }, r); };
    if (busy_ && running_id_ == id) {
        cancel_ = true;
        return {Cancelled::Running, protocol::MsgType::Stop};
    }
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
        if (id_of(*it) == id) {
            const protocol::MsgType type =
                std::visit([](const auto& q) { return protocol::type_of(protocol::Message(q)); }, *it);
            queue_.erase(it);
            cv_.notify_all();
            return {Cancelled::Queued, type};
        }
    return {Cancelled::NotFound, protocol::MsgType::Stop};
}

void Worker::wait_idle() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return queue_.empty() && !busy_; });
}

void Worker::loop() {
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        Request r = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
        cancel_ = false;
        running_id_ = std::visit([](const auto& q) { return q.request_id; }, r);
        lk.unlock();
        const std::string& tp = std::visit([](const auto& q) -> const std::string& { return q.traceparent; }, r);
        auto ctx = protocol::parse_traceparent(tp);
        trace_ = ctx.ok() ? ctx.value() : protocol::TraceContext{};
        trace_.span_id = protocol::new_span_id();  // this operation's span, child of the caller's
        if (!tp.empty() && !ctx.ok()) log(protocol::LogLevel::Warn, ctx.message() + " (ignored)");
        if (auto* l = std::get_if<protocol::LoadEngine>(&r)) load(*l);
        if (auto* w = std::get_if<protocol::RunWorkload>(&r)) run(*w);
        if (auto* sw = std::get_if<protocol::ServeWorkload>(&r)) serve(*sw);
        lk.lock();
        busy_ = false;
        cv_.notify_all();
    }
}

Result<std::pair<int64_t, double>> parse_kv_budget(const std::string& s) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::string unit = s.substr(used);
    while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
    if (used == 0 || !(v > 0) || v > 1e12)
        return err("--kv-budget '", s, "': expected a positive number of blocks, or of MiB (\"512MiB\")");
    if (unit.empty() || unit == "blocks") {
        if (v != double(int64_t(v))) return err("--kv-budget '", s, "': a number of blocks is a whole number");
        return std::pair<int64_t, double>{int64_t(v), 0.0};
    }
    if (unit == "MiB" || unit == "M" || unit == "MB") return std::pair<int64_t, double>{0, v};
    return err("--kv-budget '", s, "': unknown unit '", unit, "' (blocks or MiB)");
}

void Worker::serve(const protocol::ServeWorkload& r) {
    if (!loaded_)
        return fail(r.request_id, protocol::ErrorCode::NotLoaded,
                    "serve-workload: no engine is loaded (send load-engine first)");
    runtime::Executor* ex = loaded_->opened.exe.get();
    // The scheduler brings its own pool. An executor that keeps rows on its device holds one
    // pool's rows at a time, so the prompt sequence is dropped here (the next prompt prefills
    // again) rather than left in a pool whose rows the device no longer has.
    if (ex->capabilities().kv_on_device) loaded_->forget();
    auto w = sched::parse_workload(r.workload, "serve-workload");
    if (!w.ok()) return fail(r.request_id, protocol::ErrorCode::BadRequest, w.message());
    if (w->requests.empty()) return fail(r.request_id, protocol::ErrorCode::BadRequest, "serve-workload: no requests");
    if (r.concurrency == 0 || r.block_tokens == 0 || r.max_batch_tokens == 0 || r.prefill_chunk == 0)
        return fail(r.request_id, protocol::ErrorCode::BadRequest,
                    "serve-workload: concurrency, block tokens, batch tokens and prefill chunk must be positive");
    const LlamaConfig& c = ex->config();
    const uint64_t block_bytes =
        2ull * uint64_t(c.n_layers) * uint64_t(r.block_tokens) * uint64_t(c.kv_dim()) * sizeof(float);
    int64_t budget = int64_t(r.budget_blocks);
    if (budget == 0) budget = opts_.kv_budget_blocks;
    if (budget == 0) {
        double mib = opts_.kv_budget_mib;
        if (mib <= 0) {
            const auto avail = sensors_.read().mem_available_bytes;
            mib = std::min(1024.0, double(avail.value_or(1ull << 30)) / 4.0 / double(1 << 20));
        }
        budget = int64_t(mib * double(1 << 20) / double(block_bytes));
    }
    if (budget < 1)
        return fail(r.request_id, protocol::ErrorCode::BadRequest,
                    "serve-workload: a KV budget of " + std::to_string(budget) + " blocks holds nothing (a block of " +
                        std::to_string(r.block_tokens) + " tokens takes " + format_memory_size(block_bytes) + ")");
    std::vector<sched::ServeRequest> reqs;
    for (size_t i = 0; i < w->requests.size(); ++i)
        reqs.push_back(
            {w->requests[i].arrival_ms, sched::prompt_tokens(*w, i, c.vocab_size), w->requests[i].output_tokens});
    sched::SchedConfig cfg;
    cfg.budget_blocks = budget;
    cfg.block_tokens = int(r.block_tokens);
    cfg.preempt = r.preempt == protocol::PreemptMode::Swap       ? sched::Preempt::Swap
                  : r.preempt == protocol::PreemptMode::SwapInt8 ? sched::Preempt::SwapInt8
                                                                 : sched::Preempt::Recompute;
    cfg.max_batch_tokens = int(r.max_batch_tokens);
    cfg.prefill_chunk = int(r.prefill_chunk);
    cfg.max_running = int(r.concurrency);
    cfg.step_ms = r.step_ms;
    cfg.record_logits = r.digest_logits;
    pump_.set_rate_hz(r.telemetry_hz == 0 ? kMaxTelemetryHz : r.telemetry_hz);
    const std::string backend = ex->capabilities().name;
    log(protocol::LogLevel::Info, "serve " + std::to_string(r.request_id) + ": " + std::to_string(reqs.size()) +
                                      " requests, concurrency " + std::to_string(r.concurrency) + ", KV pool " +
                                      std::to_string(budget) + " blocks of " + std::to_string(r.block_tokens) +
                                      " tokens (" + format_memory_size(uint64_t(budget) * block_bytes) + "), " +
                                      sched::preempt_name(cfg.preempt) + " on preemption; " + backend);
    SystemCache sys(sensors_, *ex);
    Stopwatch wall;
    uint64_t preempt_base = 0, context_base = 0, shared_base = 0;  // counters before this workload
    {
        std::lock_guard lk(stats_mu_);
        preempt_base = stats_.preemptions;
        context_base = stats_.context_tokens;
        shared_base = stats_.shared_tokens;
    }
    sched::ServeHooks hooks;
    hooks.cancelled = [this] { return cancel_.load(); };
    hooks.on_step = [&](const sched::StepReport& st) {
        protocol::TelemetrySample s;
        s.timestamp_ns = realtime_ns();
        s.request_id = r.request_id;
        s.prompt_index = st.emitted.empty() ? 0 : uint32_t(st.emitted.back().first);
        s.tokens_generated = uint32_t(st.output_tokens);
        s.token_latency_ms = st.step_ms;
        s.tokens_per_s = st.now_ms > 0 ? double(st.output_tokens) * 1000.0 / st.now_ms : 0.0;
        s.kv_blocks_used = uint32_t(st.blocks_used);
        s.kv_blocks_free = uint32_t(st.blocks_free);
        if (st.context_tokens > 0) s.kv_hit_rate = double(st.shared_tokens) / double(st.context_tokens);
        s.batch_size = uint32_t(st.batch_sequences);
        s.queue_length = uint32_t(st.queued);
        s.preemptions = uint64_t(st.preemptions);
        sys.fill(s);
        {
            std::lock_guard lk(stats_mu_);
            stats_.tokens += st.emitted.size();
            stats_.kv_blocks_used = *s.kv_blocks_used;
            stats_.kv_blocks_free = *s.kv_blocks_free;
            stats_.batch_size = s.batch_size;
            stats_.queue_length = s.queue_length;
            stats_.preemptions = preempt_base + uint64_t(st.preemptions);
            stats_.context_tokens = context_base + uint64_t(st.context_tokens);
            stats_.shared_tokens = shared_base + uint64_t(st.shared_tokens);
        }
        pump_.push(s);
    };
    auto res = sched::serve(*ex, reqs, cfg, hooks);
    pump_.flush();
    if (!res.ok()) return fail(r.request_id, protocol::ErrorCode::RunFailed, res.message());
    protocol::ServeReport rep;
    rep.request_id = r.request_id;
    rep.backend = backend;
    for (size_t i = 0; i < res->requests.size(); ++i) {
        const sched::RequestMetrics& m = res->requests[i];
        const uint64_t digest =
            r.digest_logits ? xxh64(res->logits[i].data(), res->logits[i].size() * sizeof(float)) : 0;
        rep.requests.push_back({uint32_t(m.prompt_tokens), uint32_t(m.output_tokens), uint32_t(m.preemptions),
                                m.arrival_ms, m.ttft_ms, m.tpot_ms, m.finish_ms, uint64_t(m.context_tokens),
                                uint64_t(m.shared_tokens), digest});
    }
    const sched::Aggregate& a = res->total;
    rep.steps = uint32_t(a.steps);
    rep.preemptions = uint32_t(a.preemptions);
    rep.queue_max = uint32_t(a.queue_max);
    rep.output_tokens = uint64_t(a.output_tokens);
    rep.prompt_tokens = uint64_t(a.prompt_tokens);
    rep.recomputed_tokens = uint64_t(a.recomputed_tokens);
    rep.swap_out_bytes = a.swap_out_bytes;
    rep.swap_in_bytes = a.swap_in_bytes;
    rep.peak_blocks = uint64_t(a.peak_blocks);
    rep.budget_blocks = uint64_t(a.budget_blocks);
    rep.makespan_ms = a.makespan_ms;
    rep.tokens_per_s = a.tokens_per_s;
    rep.ttft_mean_ms = a.ttft_mean_ms;
    rep.ttft_p95_ms = a.ttft_p95_ms;
    rep.tpot_mean_ms = a.tpot_mean_ms;
    rep.kv_hit_rate = a.kv_hit_rate;
    rep.queue_mean = a.queue_mean;
    {
        std::lock_guard lk(stats_mu_);
        ++stats_.runs;
        stats_.prompts += reqs.size();
    }
    (void)out_.send(rep);
    char detail[256];
    std::snprintf(detail, sizeof detail,
                  "%zu requests, %lld tokens in %d steps (%.0f ms on the %s clock, %.0f ms wall): %.1f tokens/s, "
                  "prefix-cache hit rate %.3f, %d preemptions",
                  reqs.size(), static_cast<long long>(a.output_tokens), a.steps, a.makespan_ms,
                  r.step_ms > 0 ? "virtual" : "measured", wall.millis(), a.tokens_per_s, a.kv_hit_rate, a.preemptions);
    log(protocol::LogLevel::Info, "serve " + std::to_string(r.request_id) + ": " + detail);
    (void)out_.send(protocol::Ack{r.request_id, protocol::MsgType::ServeWorkload, detail});
}

WorkerStats Worker::stats() const {
    std::lock_guard lk(stats_mu_);
    return stats_;
}

void Worker::log(protocol::LogLevel level, const std::string& text) {
    protocol::LogLine l;
    l.timestamp_ns = realtime_ns();
    l.level = level;
    l.trace_id = trace_.trace_id;
    l.span_id = trace_.span_id;
    l.text = text;
    (void)out_.send(l);
}

void Worker::fail(uint32_t request_id, protocol::ErrorCode code, const std::string& message) {
    {
        std::lock_guard lk(stats_mu_);
        if (code == protocol::ErrorCode::LoadFailed) {
            ++stats_.loads_failed;
            stats_.engine.clear();  // the previous engine was released before loading
            stats_.backend.clear();
        } else {
            ++stats_.runs_failed;
        }
    }
    log(protocol::LogLevel::Error, message);
    (void)out_.send(protocol::ErrorMsg{request_id, code, message});
}

void Worker::load(const protocol::LoadEngine& r) {
    namespace fs = std::filesystem;
    fs::path path = r.path;
    if (path.is_relative()) path = fs::path(opts_.root) / path;
    std::string p = path.string();
    Stopwatch sw;
    if (r.expected_sha256) {
        std::error_code ec;
        if (!fs::is_regular_file(path, ec))
            return fail(r.request_id, protocol::ErrorCode::LoadFailed,
                        p + ": expected a file to verify its SHA-256 (folders cannot be verified)");
        auto h = sha256_file(p);
        if (!h.ok()) return fail(r.request_id, protocol::ErrorCode::LoadFailed, h.message());
        if (h.value() != *r.expected_sha256)
            return fail(r.request_id, protocol::ErrorCode::LoadFailed,
                        p + ": SHA-256 mismatch: expected " + hex(*r.expected_sha256) + ", found " + hex(h.value()) +
                            " (the file on the board is not the one deployed)");
        log(protocol::LogLevel::Info, p + ": SHA-256 verified");
    }
    loaded_.reset();  // free the previous model before loading the next
    runtime::OpenOptions eo{opts_.threads, opts_.max_seq, opts_.backend, {}};
    if (!r.tokenizer_path.empty()) {
        fs::path t = r.tokenizer_path;
        eo.tokenizer_path = (t.is_relative() ? fs::path(opts_.root) / t : t).string();
    }
    if (!eo.tokenizer_path.empty() && runtime::is_compiled_engine(p))
        log(protocol::LogLevel::Warn, p + ": the engine embeds its tokenizer; " + eo.tokenizer_path + " is not used");
    auto opened = runtime::open_executor(p, eo);
    if (!opened.ok()) return fail(r.request_id, protocol::ErrorCode::LoadFailed, opened.message());
    auto l = std::make_unique<Loaded>();
    l->opened = std::move(opened).value();
    l->path = p;
    const Model& model = *l->opened.model;
    auto tok = make_tokenizer(model.tokenizer);
    if (!tok.ok()) return fail(r.request_id, protocol::ErrorCode::LoadFailed, p + ": tokenizer: " + tok.message());
    l->tokenizer = std::move(tok).value();
    const runtime::ExecutorCaps caps = l->exe().capabilities();
    // One sequence of max_seq tokens in blocks of kKvBlockTokens; the rows live in the PagedKv
    // unless the executor keeps them on its device.
    auto kvr = runtime::single_sequence_kv(l->exe(), 0, kKvBlockTokens);
    if (!kvr.ok()) return fail(r.request_id, protocol::ErrorCode::LoadFailed, p + ": KV memory: " + kvr.message());
    l->kv.emplace(std::move(kvr).value());
    const int64_t blocks = l->kv->total_blocks();
    const uint64_t kv_bytes = caps.kv_on_device ? 0 : uint64_t(blocks) * l->kv->shape().block_bytes();
    const std::string backend = l->opened.label;
    std::string detail = p + ": " + model.source_format + ", " + std::to_string(model.parameter_count()) +
                         " parameters, KV " + std::to_string(caps.max_seq) + " positions (" + std::to_string(blocks) +
                         " blocks" + (kv_bytes ? ", " + format_memory_size(kv_bytes) + " on the host" : std::string()) +
                         "), " + runtime::describe_memory(l->exe().held_memory()) + ", loaded in " +
                         std::to_string(static_cast<int>(sw.millis())) + " ms; backend: " + backend;
    loaded_ = std::move(l);
    {
        std::lock_guard lk(stats_mu_);
        ++stats_.loads_ok;
        stats_.engine = p;
        stats_.backend = backend;
    }
    log(protocol::LogLevel::Info, detail);
    (void)out_.send(protocol::Ack{r.request_id, protocol::MsgType::LoadEngine, detail});
}

void Worker::run(const protocol::RunWorkload& r) {
    if (!loaded_)
        return fail(r.request_id, protocol::ErrorCode::NotLoaded,
                    "run-workload: no engine is loaded (send load-engine first)");
    if (r.prompts.empty()) return fail(r.request_id, protocol::ErrorCode::BadRequest, "run-workload: no prompts");
    pump_.set_rate_hz(r.telemetry_hz == 0 ? kMaxTelemetryHz : r.telemetry_hz);
    Loaded& L = *loaded_;
    runtime::Executor& exe = L.exe();
    kv::PagedKv& kv = *L.kv;
    const Tokenizer& tok = *L.tokenizer;
    const TokenizerSpec& eos = L.opened.model->tokenizer;  // eos_id and every other id that ends a turn
    const int vocab = exe.config().vocab_size, max_seq = exe.capabilities().max_seq;
    SystemCache sys(sensors_, exe);
    // One step of the prompt sequence: its next tokens, through the PagedKv.
    auto step = [&](std::span<const int32_t> tokens) {
        const runtime::PagedStep st{Loaded::kPromptSeq, tokens};
        return exe.step(kv, std::span(&st, 1));
    };
    SamplingParams sp{r.temperature, r.top_k, r.top_p, r.seed};
    log(protocol::LogLevel::Info, "run " + std::to_string(r.request_id) + ": " + std::to_string(r.prompts.size()) +
                                      " prompt(s), up to " + std::to_string(r.max_tokens) + " tokens each");
    uint64_t total_tokens = 0;
    Stopwatch total;
    size_t done = 0;
    for (size_t i = 0; i < r.prompts.size() && !cancel_; ++i, ++done) {
        Sampler sampler(sp);
        std::vector<int32_t> ids;
        if (r.chat) {
            // The prompt as a user message in the engine's own chat template.
            auto chat = tokenizer::render_chat_prompt(eos, tok, {tokenizer::ChatMessage{"user", r.prompts[i]}}, true);
            if (!chat.ok())
                return fail(r.request_id, protocol::ErrorCode::BadRequest,
                            L.path + ": prompt " + std::to_string(i) + ": " + chat.message());
            ids = std::move(chat->ids);
        } else {
            ids = tok.encode(r.prompts[i], true);
        }
        if (ids.empty()) ids.push_back(tok.bos_id() >= 0 ? tok.bos_id() : 0);
        if (static_cast<int>(ids.size()) >= max_seq)
            return fail(r.request_id, protocol::ErrorCode::RunFailed,
                        "prompt " + std::to_string(i) + " has " + std::to_string(ids.size()) +
                            " tokens, the KV cache holds " + std::to_string(max_seq));
        Stopwatch sw;
        // Longest common prefix with what the cache holds, leaving at least one token to run
        // (its logits start the generation).
        std::vector<int32_t>& cached = L.cached;
        size_t reuse = 0;
        while (reuse + 1 < ids.size() && reuse < cached.size() && cached[reuse] == ids[reuse]) ++reuse;
        if (kv.has_seq(Loaded::kPromptSeq)) {
            if (auto t = kv.apply(kv::op::Truncate{Loaded::kPromptSeq, int(reuse)}); !t.ok()) {
                L.forget();
                return fail(r.request_id, protocol::ErrorCode::RunFailed,
                            "prompt " + std::to_string(i) + ": " + t.message());
            }
            cached.resize(reuse);
        }
        L.prompt_tokens += ids.size();
        L.reused_tokens += reuse;
        const double hit_rate = static_cast<double>(L.reused_tokens) / static_cast<double>(L.prompt_tokens);
        auto first = step(std::span(ids).subspan(reuse));
        if (!first.ok()) {
            L.forget();
            return fail(r.request_id, protocol::ErrorCode::RunFailed,
                        "prompt " + std::to_string(i) + ": " + first.message());
        }
        const float* logits = first.value();
        cached = ids;
        int pos = static_cast<int>(ids.size());
        int32_t prev = ids.back();
        std::string text;
        uint32_t gen = 0;
        double ttft = 0, last = 0;
        while (gen < r.max_tokens && pos < max_seq && !cancel_) {
            int32_t next = sampler.sample(logits, vocab);
            double now = sw.millis();
            if (next == tok.eos_id() || eos.ends_generation(next)) break;  // any EOS the model names
            ++gen;
            if (gen == 1) ttft = now;
            text += tok.piece(next, prev);
            prev = next;
            protocol::TelemetrySample s;
            s.timestamp_ns = realtime_ns();
            s.request_id = r.request_id;
            s.prompt_index = static_cast<uint32_t>(i);
            s.tokens_generated = gen;
            s.token_latency_ms = now - last;
            s.ttft_ms = ttft;
            if (gen > 1) s.tpot_ms = (now - ttft) / (gen - 1);
            s.tokens_per_s = now > 0 ? gen * 1000.0 / now : 0.0;
            s.kv_blocks_used = static_cast<uint32_t>(kv.total_blocks() - kv.free_blocks());
            s.kv_blocks_free = static_cast<uint32_t>(kv.free_blocks());
            // Prompt positions served from the cache so far in this engine's life. One sequence
            // evicts nothing and compresses nothing: those stay absent.
            s.kv_hit_rate = hit_rate;
            sys.fill(s);
            {
                std::lock_guard lk(stats_mu_);
                ++stats_.tokens;
                double sec = *s.token_latency_ms / 1000.0;
                size_t b = 0;
                while (b < kLatencyBucketsS.size() && sec > kLatencyBucketsS[b]) ++b;
                ++stats_.latency_buckets[b];
                stats_.latency_sum_s += sec;
                stats_.kv_blocks_used = s.kv_blocks_used;
                stats_.kv_blocks_free = s.kv_blocks_free;
            }
            pump_.push(s);
            last = now;
            if (gen < r.max_tokens) {
                auto out = step(std::span(&next, 1));
                ++pos;
                if (!out.ok()) {
                    L.forget();
                    return fail(
                        r.request_id, protocol::ErrorCode::RunFailed,
                        "prompt " + std::to_string(i) + ", token " + std::to_string(gen) + ": " + out.message());
                }
                logits = out.value();
                cached.push_back(next);
            }
        }
        total_tokens += gen;
        {
            std::lock_guard lk(stats_mu_);
            ++stats_.prompts;
        }
        double ms = sw.millis();
        (void)out_.send(protocol::RunResult{r.request_id, static_cast<uint32_t>(i), static_cast<uint32_t>(ids.size()),
                                            gen, ttft, ms > 0 ? gen * 1000.0 / ms : 0.0, text});
    }
    pump_.flush();
    std::string detail = std::to_string(done) + "/" + std::to_string(r.prompts.size()) + " prompt(s), " +
                         std::to_string(total_tokens) + " tokens in " +
                         std::to_string(static_cast<int>(total.millis())) + " ms" + (cancel_ ? " (cancelled)" : "");
    {
        std::lock_guard lk(stats_mu_);
        ++stats_.runs;
    }
    log(protocol::LogLevel::Info, "run " + std::to_string(r.request_id) + ": " + detail);
    (void)out_.send(protocol::Ack{r.request_id, protocol::MsgType::RunWorkload, detail});
}

}  // namespace edge::agent
