#include "waste.h"

#include <random>
#include <vector>

#include "engine/kv/paged_kv.h"

namespace edge::kv {

namespace {
Status check_range(const char* what, int lo, int hi) {
    if (lo <= 0 || hi < lo || hi > (1 << 22)) return err("workload ", what, " range [", lo, ", ", hi, "] is invalid");
    return {};
}
}  // namespace

Result<WasteReport> measure_waste(const KvShape& shape, const MixedWorkload& w) {
    EDGE_TRY(validate_shape(shape));
    EDGE_TRY(check_range("prompt length", w.prompt_min, w.prompt_max));
    EDGE_TRY(check_range("output length", w.output_min, w.output_max));
    if (w.requests <= 0 || w.concurrent <= 0 || w.concurrent > 100000)
        return err("workload needs at least one request and a concurrency in [1, 100000]");
    const int64_t max_len = int64_t(w.prompt_max) + w.output_max;
    const int64_t per_req = (max_len + shape.block_tokens - 1) / shape.block_tokens;
    auto kv = PagedKv::create(KvConfig{shape, per_req * w.concurrent, false});
    if (!kv) return kv.error();

    std::mt19937_64 rng(w.seed);
    std::uniform_int_distribution<int> prompt(w.prompt_min, w.prompt_max), output(w.output_min, w.output_max);
    std::uniform_int_distribution<int32_t> tok(0, 1 << 30);
    struct Slot {
        SeqId seq = -1;
        int left = 0;  // output tokens still to decode
    };
    std::vector<Slot> slots(size_t(w.concurrent));
    std::vector<int32_t> buf;
    int started = 0, finished = 0;
    double paged_slots = 0, paged_tokens = 0, contig_slots = 0;
    WasteReport rep;
    auto start = [&](Slot& s) -> Status {
        s.seq = started++;
        s.left = output(rng);
        buf.resize(size_t(prompt(rng)));
        for (auto& t : buf) t = tok(rng);
        auto r = kv->apply(op::Append{s.seq, buf});
        if (!r) return r.error();
        return {};
    };
    for (Slot& s : slots)
        if (started < w.requests) EDGE_TRY(start(s));
    while (finished < w.requests) {
        int active = 0;
        for (Slot& s : slots) {
            if (s.seq < 0) continue;
            const int32_t t = tok(rng);
            auto r = kv->apply(op::Append{s.seq, std::span<const int32_t>(&t, 1)});
            if (!r) return r.error();
            ++active;
        }
        const KvUsage u = kv->usage();
        paged_slots += double(u.blocks_used) * shape.block_tokens;
        paged_tokens += double(u.tokens_held);
        contig_slots += double(active) * double(max_len);
        rep.paged_peak_bytes = std::max<int64_t>(rep.paged_peak_bytes, u.blocks_used * int64_t(u.block_bytes));
        rep.contiguous_peak_bytes =
            std::max<int64_t>(rep.contiguous_peak_bytes,
                              int64_t(active) * max_len * int64_t(shape.block_bytes() / size_t(shape.block_tokens)));
        ++rep.steps;
        for (Slot& s : slots) {
            if (s.seq < 0 || --s.left > 0) continue;
            auto r = kv->apply(op::Remove{s.seq});
            if (!r) return r.error();
            ++finished;
            s.seq = -1;
            if (started < w.requests) EDGE_TRY(start(s));
        }
    }
    rep.paged_waste = paged_slots > 0 ? 1.0 - paged_tokens / paged_slots : 0.0;
    rep.contiguous_waste = contig_slots > 0 ? 1.0 - paged_tokens / contig_slots : 0.0;
    return rep;
}

Result<SharingReport> measure_prefix_sharing(const KvShape& shape, int requests, int system_tokens, int user_tokens,
                                             uint64_t seed) {
    EDGE_TRY(validate_shape(shape));
    if (requests <= 0 || system_tokens < 0 || user_tokens < 0 || requests > 100000 ||
        system_tokens + user_tokens > (1 << 20))
        return err("prefix-sharing workload: requests ", requests, ", system ", system_tokens, ", user ", user_tokens,
                   " tokens is invalid");
    const int64_t per_req = (int64_t(system_tokens) + user_tokens + shape.block_tokens - 1) / shape.block_tokens;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> tok(0, 1 << 30);
    std::vector<int32_t> sys(static_cast<size_t>(system_tokens));
    for (auto& t : sys) t = tok(rng);
    std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(requests));
    for (auto& p : prompts) {
        p = sys;
        for (int i = 0; i < user_tokens; ++i) p.push_back(tok(rng));
    }
    SharingReport rep;
    for (int shared = 0; shared < 2; ++shared) {
        auto kv = PagedKv::create(KvConfig{shape, per_req * requests, false, shared == 1});
        if (!kv) return kv.error();
        for (int r = 0; r < requests; ++r) {
            const std::span<const int32_t> p = prompts[size_t(r)];
            int skip = 0;
            if (shared) {
                auto a = kv->apply(op::AttachPrefix{r, p});
                if (!a) return a.error();
                skip = a->tokens_shared;
            }
            auto a = kv->apply(op::Append{r, p.subspan(size_t(skip))});
            if (!a) return a.error();
        }
        (shared ? rep.blocks_shared : rep.blocks_unshared) = kv->usage().blocks_used;
    }
    return rep;
}

}  // namespace edge::kv
