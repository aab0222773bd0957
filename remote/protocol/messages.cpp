// Payload encoders and decoders, one pair per message (byte layouts: docs/protocol.md).
#include <cmath>
#include <type_traits>

#include "remote/protocol/frame.h"
#include "remote/protocol/wire.h"

namespace edge::protocol {
namespace {

// ---- encoders --------------------------------------------------------------------------------
void put(WireWriter& w, const Hello& m) {
    w.str(m.role);
    w.str(m.software_version);
    w.str(m.hostname);
    w.str(m.cpu_model);
    w.u32(m.cpu_threads);
    w.u64(m.mem_total_bytes);
    w.str(m.backend);
}
void put(WireWriter& w, const LoadEngine& m) {
    w.u32(m.request_id);
    w.str(m.path);
    w.u8(m.expected_sha256 ? 1 : 0);
    w.bytes(m.expected_sha256.value_or(Sha256{}));
    w.str(m.tokenizer_path);
    w.str(m.traceparent);
}
void put(WireWriter& w, const RunWorkload& m) {
    w.u32(m.request_id);
    w.u32(static_cast<uint32_t>(m.prompts.size()));
    for (const auto& p : m.prompts) w.str(p);
    w.u32(m.max_tokens);
    w.f32(m.temperature);
    w.i32(m.top_k);
    w.f32(m.top_p);
    w.u64(m.seed);
    w.u32(m.telemetry_hz);
    w.str(m.traceparent);
    w.u8(m.chat ? 1 : 0);
}
template <class T>
T opt_or_zero(const std::optional<T>& o, uint32_t bit, uint32_t& present) {
    if (!o) return T{};
    present |= bit;
    return *o;
}
void put(WireWriter& w, const TelemetrySample& s) {
    uint32_t p = 0;
    // Values first (computing the mask), then written in layout order.
    double lat = opt_or_zero(s.token_latency_ms, kSampleTokenLatency, p);
    double ttft = opt_or_zero(s.ttft_ms, kSampleTtft, p);
    double tpot = opt_or_zero(s.tpot_ms, kSampleTpot, p);
    double tps = opt_or_zero(s.tokens_per_s, kSampleTokensPerS, p);
    uint64_t rss = opt_or_zero(s.rss_bytes, kSampleRss, p);
    uint64_t dused = opt_or_zero(s.device_mem_used_bytes, kSampleDeviceMemUsed, p);
    uint64_t dtotal = opt_or_zero(s.device_mem_total_bytes, kSampleDeviceMemTotal, p);
    uint64_t avail = opt_or_zero(s.mem_available_bytes, kSampleMemAvailable, p);
    uint32_t kv_used = 0, kv_free = 0;
    if (s.kv_blocks_used && s.kv_blocks_free) {
        p |= kSampleKvBlocks;
        kv_used = *s.kv_blocks_used;
        kv_free = *s.kv_blocks_free;
    }
    double hit = opt_or_zero(s.kv_hit_rate, kSampleKvHitRate, p);
    uint64_t ev = opt_or_zero(s.kv_evictions, kSampleKvEvictions, p);
    double comp = opt_or_zero(s.kv_compression_ratio, kSampleKvCompression, p);
    double pw = opt_or_zero(s.power_w, kSamplePower, p);
    double temp = opt_or_zero(s.temperature_c, kSampleTemperature, p);
    uint32_t batch = 0, queue = 0;
    if (s.batch_size && s.queue_length) {
        p |= kSampleBatch;
        batch = *s.batch_size;
        queue = *s.queue_length;
    }
    uint64_t pre = opt_or_zero(s.preemptions, kSamplePreemptions, p);

    w.u64(s.timestamp_ns);
    w.u32(p);
    w.u32(s.request_id);
    w.u32(s.prompt_index);
    w.u32(s.tokens_generated);
    w.f64(lat), w.f64(ttft), w.f64(tpot), w.f64(tps);
    w.u64(rss), w.u64(dused), w.u64(dtotal), w.u64(avail);
    w.u32(kv_used), w.u32(kv_free);
    w.f64(hit);
    w.u64(ev);
    w.f64(comp), w.f64(pw), w.f64(temp);
    w.u32(batch), w.u32(queue);
    w.u64(pre);
}
void put(WireWriter& w, const TelemetryBatch& m) {
    w.u32(m.dropped);
    w.u32(static_cast<uint32_t>(m.samples.size()));
    for (const auto& s : m.samples) put(w, s);
}
void put(WireWriter& w, const LogLine& m) {
    w.u64(m.timestamp_ns);
    w.u8(static_cast<uint8_t>(m.level));
    w.bytes(m.trace_id);
    w.bytes(m.span_id);
    w.str(m.text);
}
void put(WireWriter& w, const ErrorMsg& m) {
    w.u32(m.request_id);
    w.u16(static_cast<uint16_t>(m.code));
    w.str(m.message);
}
void put(WireWriter& w, const Stop& m) {
    w.u32(m.request_id);
    w.u8(static_cast<uint8_t>(m.scope));
    if (m.scope == StopScope::Request) w.u32(m.target);
}
void put(WireWriter& w, const Ack& m) {
    w.u32(m.request_id);
    w.u16(static_cast<uint16_t>(m.of));
    w.str(m.detail);
}
void put(WireWriter& w, const RunResult& m) {
    w.u32(m.request_id);
    w.u32(m.prompt_index);
    w.u32(m.prompt_tokens);
    w.u32(m.generated_tokens);
    w.f64(m.ttft_ms);
    w.f64(m.tokens_per_s);
    w.str(m.text);
}
void put(WireWriter& w, const ServeWorkload& m) {
    w.u32(m.request_id);
    w.str(m.workload);
    w.u32(m.concurrency);
    w.u64(m.budget_blocks);
    w.u32(m.block_tokens);
    w.u32(m.max_batch_tokens);
    w.u32(m.prefill_chunk);
    w.u8(static_cast<uint8_t>(m.preempt));
    w.f64(m.step_ms);
    w.u32(m.telemetry_hz);
    w.str(m.traceparent);
    w.u8(m.digest_logits ? 1 : 0);
}
void put(WireWriter& w, const ServeReport& m) {
    w.u32(m.request_id);
    w.str(m.backend);
    w.u32(static_cast<uint32_t>(m.requests.size()));
    for (const ServedRequest& q : m.requests) {
        w.u32(q.prompt_tokens), w.u32(q.output_tokens), w.u32(q.preemptions), w.u32(0);
        w.f64(q.arrival_ms), w.f64(q.ttft_ms), w.f64(q.tpot_ms), w.f64(q.finish_ms);
        w.u64(q.context_tokens), w.u64(q.shared_tokens), w.u64(q.logits_digest);
    }
    w.u32(m.steps), w.u32(m.preemptions), w.u32(m.queue_max);
    w.u64(m.output_tokens), w.u64(m.prompt_tokens), w.u64(m.recomputed_tokens);
    w.u64(m.swap_out_bytes), w.u64(m.swap_in_bytes), w.u64(m.peak_blocks), w.u64(m.budget_blocks);
    w.f64(m.makespan_ms), w.f64(m.tokens_per_s), w.f64(m.ttft_mean_ms), w.f64(m.ttft_p95_ms), w.f64(m.tpot_mean_ms);
    w.f64(m.kv_hit_rate), w.f64(m.queue_mean);
}
void put(WireWriter& w, const MetricsRequest& m) { w.u32(m.request_id); }
void put(WireWriter& w, const Metrics& m) {
    w.u32(m.request_id);
    w.str(m.text);
}

// ---- decoders: each returns false for a field value outside its domain ------------------------
bool get(WireReader& r, Hello& m) {
    m.role = r.str();
    m.software_version = r.str();
    m.hostname = r.str();
    m.cpu_model = r.str();
    m.cpu_threads = r.u32();
    m.mem_total_bytes = r.u64();
    m.backend = r.str();
    return true;
}
bool get(WireReader& r, LoadEngine& m) {
    m.request_id = r.u32();
    m.path = r.str();
    uint8_t has = r.u8();
    auto sha = r.bytes<32>();
    if (has > 1) return false;
    if (has) m.expected_sha256 = sha;
    m.tokenizer_path = r.str();
    m.traceparent = r.str();
    return true;
}
bool get(WireReader& r, RunWorkload& m) {
    m.request_id = r.u32();
    uint32_t n = r.count(4);
    m.prompts.reserve(n);
    for (uint32_t i = 0; i < n && r.ok(); ++i) m.prompts.push_back(r.str());
    m.max_tokens = r.u32();
    m.temperature = r.f32();
    m.top_k = r.i32();
    m.top_p = r.f32();
    m.seed = r.u64();
    m.telemetry_hz = r.u32();
    m.traceparent = r.str();
    const uint8_t chat = r.u8();
    m.chat = chat == 1;
    return std::isfinite(m.temperature) && std::isfinite(m.top_p) && chat <= 1;
}
template <class T>
std::optional<T> opt(T v, uint32_t present, uint32_t bit) {
    return (present & bit) ? std::optional<T>(v) : std::nullopt;
}
bool get(WireReader& r, TelemetrySample& s) {
    s.timestamp_ns = r.u64();
    uint32_t p = r.u32();
    s.request_id = r.u32();
    s.prompt_index = r.u32();
    s.tokens_generated = r.u32();
    s.token_latency_ms = opt(r.f64(), p, kSampleTokenLatency);
    s.ttft_ms = opt(r.f64(), p, kSampleTtft);
    s.tpot_ms = opt(r.f64(), p, kSampleTpot);
    s.tokens_per_s = opt(r.f64(), p, kSampleTokensPerS);
    s.rss_bytes = opt(r.u64(), p, kSampleRss);
    s.device_mem_used_bytes = opt(r.u64(), p, kSampleDeviceMemUsed);
    s.device_mem_total_bytes = opt(r.u64(), p, kSampleDeviceMemTotal);
    s.mem_available_bytes = opt(r.u64(), p, kSampleMemAvailable);
    s.kv_blocks_used = opt(r.u32(), p, kSampleKvBlocks);
    s.kv_blocks_free = opt(r.u32(), p, kSampleKvBlocks);
    s.kv_hit_rate = opt(r.f64(), p, kSampleKvHitRate);
    s.kv_evictions = opt(r.u64(), p, kSampleKvEvictions);
    s.kv_compression_ratio = opt(r.f64(), p, kSampleKvCompression);
    s.power_w = opt(r.f64(), p, kSamplePower);
    s.temperature_c = opt(r.f64(), p, kSampleTemperature);
    s.batch_size = opt(r.u32(), p, kSampleBatch);
    s.queue_length = opt(r.u32(), p, kSampleBatch);
    s.preemptions = opt(r.u64(), p, kSamplePreemptions);
    return (p & ~static_cast<uint32_t>(kSampleAllKnown)) == 0;
}
bool get(WireReader& r, TelemetryBatch& m) {
    m.dropped = r.u32();
    uint32_t n = r.count(kTelemetrySampleBytes);
    if (n > kMaxSamplesPerBatch) return false;
    m.samples.resize(n);
    for (auto& s : m.samples)
        if (!get(r, s)) return false;
    return true;
}
bool get(WireReader& r, LogLine& m) {
    m.timestamp_ns = r.u64();
    uint8_t level = r.u8();
    m.trace_id = r.bytes<16>();
    m.span_id = r.bytes<8>();
    m.text = r.str();
    if (level > static_cast<uint8_t>(LogLevel::Error)) return false;
    m.level = static_cast<LogLevel>(level);
    return true;
}
bool get(WireReader& r, ErrorMsg& m) {
    m.request_id = r.u32();
    uint16_t code = r.u16();
    m.message = r.str();
    if (code < 1 || code > kLastErrorCode) return false;
    m.code = static_cast<ErrorCode>(code);
    return true;
}
bool get(WireReader& r, Stop& m) {
    m.request_id = r.u32();
    uint8_t scope = r.u8();
    if (scope > static_cast<uint8_t>(StopScope::Request)) return false;
    m.scope = static_cast<StopScope>(scope);
    m.target = m.scope == StopScope::Request ? r.u32() : 0;
    return true;
}
bool get(WireReader& r, Ack& m) {
    m.request_id = r.u32();
    uint16_t of = r.u16();
    m.detail = r.str();
    if (of < kFirstMsgType || of > kLastMsgType) return false;
    m.of = static_cast<MsgType>(of);
    return true;
}
bool get(WireReader& r, RunResult& m) {
    m.request_id = r.u32();
    m.prompt_index = r.u32();
    m.prompt_tokens = r.u32();
    m.generated_tokens = r.u32();
    m.ttft_ms = r.f64();
    m.tokens_per_s = r.f64();
    m.text = r.str();
    return true;
}
bool get(WireReader& r, ServeWorkload& m) {
    m.request_id = r.u32();
    m.workload = r.str();
    m.concurrency = r.u32();
    m.budget_blocks = r.u64();
    m.block_tokens = r.u32();
    m.max_batch_tokens = r.u32();
    m.prefill_chunk = r.u32();
    const uint8_t pre = r.u8();
    m.step_ms = r.f64();
    m.telemetry_hz = r.u32();
    m.traceparent = r.str();
    const uint8_t digest = r.u8();
    if (digest > 1) return false;
    m.digest_logits = digest == 1;
    if (pre > static_cast<uint8_t>(PreemptMode::SwapInt8)) return false;
    m.preempt = static_cast<PreemptMode>(pre);
    return std::isfinite(m.step_ms) && m.step_ms >= 0;
}
bool get(WireReader& r, ServeReport& m) {
    m.request_id = r.u32();
    m.backend = r.str();
    const uint32_t n = r.count(sizeof(ServedRequestLayout));
    m.requests.resize(n);
    for (ServedRequest& q : m.requests) {
        q.prompt_tokens = r.u32(), q.output_tokens = r.u32(), q.preemptions = r.u32();
        if (r.u32() != 0) return false;  // reserved
        q.arrival_ms = r.f64(), q.ttft_ms = r.f64(), q.tpot_ms = r.f64(), q.finish_ms = r.f64();
        q.context_tokens = r.u64(), q.shared_tokens = r.u64(), q.logits_digest = r.u64();
    }
    m.steps = r.u32(), m.preemptions = r.u32(), m.queue_max = r.u32();
    m.output_tokens = r.u64(), m.prompt_tokens = r.u64(), m.recomputed_tokens = r.u64();
    m.swap_out_bytes = r.u64(), m.swap_in_bytes = r.u64(), m.peak_blocks = r.u64(), m.budget_blocks = r.u64();
    m.makespan_ms = r.f64(), m.tokens_per_s = r.f64(), m.ttft_mean_ms = r.f64(), m.ttft_p95_ms = r.f64();
    m.tpot_mean_ms = r.f64(), m.kv_hit_rate = r.f64(), m.queue_mean = r.f64();
    return true;
}
bool get(WireReader& r, MetricsRequest& m) {
    m.request_id = r.u32();
    return true;
}
bool get(WireReader& r, Metrics& m) {
    m.request_id = r.u32();
    m.text = r.str();
    return true;
}

template <size_t I = 0>
Result<Message> decode_as(size_t index, std::span<const uint8_t> payload) {
    if constexpr (I < std::variant_size_v<Message>) {
        if (index != I) return decode_as<I + 1>(index, payload);
        std::variant_alternative_t<I, Message> m;
        WireReader r(payload);
        bool valid = get(r, m);
        auto name = msg_type_name(static_cast<MsgType>(I + 1));
        if (!r.ok())
            return err("protocol: ", name, " frame truncated (payload of ", payload.size(), " bytes is too short)");
        if (!valid) return err("protocol: ", name, " frame carries a field value outside its range");
        if (!r.at_end()) return err("protocol: ", name, " frame has ", r.remaining(), " unexpected trailing bytes");
        return Message(std::move(m));
    } else {
        return err("protocol: unknown frame type ", index + 1);
    }
}

}  // namespace

const char* msg_type_name(MsgType t) {
    switch (t) {
        case MsgType::Hello: return "hello";
        case MsgType::LoadEngine: return "load-engine";
        case MsgType::RunWorkload: return "run-workload";
        case MsgType::TelemetryBatch: return "telemetry-batch";
        case MsgType::LogLine: return "log-line";
        case MsgType::Error: return "error";
        case MsgType::Stop: return "stop";
        case MsgType::Ack: return "ack";
        case MsgType::RunResult: return "run-result";
        case MsgType::MetricsRequest: return "metrics-request";
        case MsgType::Metrics: return "metrics";
        case MsgType::ServeWorkload: return "serve-workload";
        case MsgType::ServeReport: return "serve-report";
    }
    return "unknown";
}

MsgType type_of(const Message& m) { return static_cast<MsgType>(m.index() + 1); }

std::vector<uint8_t> encode_payload(const Message& m) {
    std::vector<uint8_t> out;
    WireWriter w(out);
    std::visit([&](const auto& v) { put(w, v); }, m);
    return out;
}

Result<Message> decode_message(uint16_t type, std::span<const uint8_t> payload) {
    if (type < kFirstMsgType || type > kLastMsgType) return err("protocol: unknown frame type ", type);
    return decode_as(static_cast<size_t>(type - 1), payload);
}

}  // namespace edge::protocol
