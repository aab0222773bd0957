#include "engine/runtime/one_sequence.h"

#include <algorithm>
#include <cstring>

#include "engine/runtime/cpu/llama_cpu.h"

using edge::model::LlamaConfig;

namespace edge::runtime {

Result<kv::PagedKv> single_sequence_kv(const Executor& exe, int max_seq, int block_tokens) {
    const ExecutorCaps caps = exe.capabilities();
    if (caps.max_seq <= 0) return err(caps.name, " cannot run batch steps");
    const int n = max_seq > 0 ? std::min(max_seq, caps.max_seq) : caps.max_seq;
    const LlamaConfig& c = exe.config();
    const kv::KvShape shape{c.n_layers, c.n_kv_heads, c.head_dim, block_tokens};
    return kv::PagedKv::create(
        kv::KvConfig{shape, (int64_t(n) + block_tokens - 1) / block_tokens, !caps.kv_on_device, false});
}

Result<OneSequence> OneSequence::create(Executor& exe, int max_seq) {
    auto kv = single_sequence_kv(exe, max_seq, kBlockTokens);
    if (!kv.ok()) return kv.error();
    const int cap = exe.capabilities().max_seq;
    return OneSequence(exe, std::move(kv).value(), max_seq > 0 ? std::min(max_seq, cap) : cap);
}

Result<const float*> OneSequence::next(std::span<const int32_t> tokens, bool all_logits) {
    if (tokens.empty()) return err("no tokens to run");
    if (int64_t(length()) + int64_t(tokens.size()) > max_seq_)
        return err("the sequence would reach ", int64_t(length()) + int64_t(tokens.size()), " tokens, more than the ",
                   max_seq_, " this run holds");
    const PagedStep st{kSeq, tokens, all_logits};
    return exe_->step(kv_, std::span(&st, 1));
}

void OneSequence::reset() {
    if (kv_.has_seq(kSeq)) (void)kv_.apply(kv::op::Remove{kSeq});
}

Result<const float*> OwnSequence::run(Executor& exe, const int32_t* tokens, int n, int pos, float* all_logits) {
    if (n <= 0) return err("no tokens to run");
    if (!kv_) {
        auto kv = single_sequence_kv(exe, 0, OneSequence::kBlockTokens);
        if (!kv) return kv.error();
        kv_.emplace(std::move(kv).value());
    }
    constexpr kv::SeqId kSeq = OneSequence::kSeq;
    const int len = kv_->has_seq(kSeq) ? kv_->seq_len(kSeq) : 0;
    if (pos < 0 || pos > len) return err("position ", pos, " does not follow on the sequence's ", len, " tokens");
    if (pos == 0 && len > 0)
        EDGE_TRY(kv_->apply(kv::op::Remove{kSeq}));
    else if (pos < len)
        EDGE_TRY(kv_->apply(kv::op::Truncate{kSeq, pos}));
    const PagedStep st{kSeq, std::span(tokens, size_t(n)), all_logits != nullptr};
    auto r = exe.step(*kv_, std::span(&st, 1));
    if (!r) return r.error();
    const size_t V = size_t(exe.config().vocab_size);
    const float* last = *r;
    if (all_logits) {
        std::memcpy(all_logits, *r, sizeof(float) * V * size_t(n));
        last = all_logits + size_t(n - 1) * V;
    }
    last_.assign(last, last + V);
    return static_cast<const float*>(last_.data());
}

size_t OwnSequence::kv_bytes() const {
    if (!kv_) return 0;
    const kv::KvUsage u = kv_->usage();
    return size_t(u.blocks_total) * u.block_bytes;
}

Result<Scorer> Scorer::create(Executor& exe, int max_seq) {
    Scorer s;
    if (auto* cpu = dynamic_cast<LlamaCpu*>(&exe); cpu && exe.capabilities().max_seq <= 0) {
        s.prefill_ = cpu;
        s.max_seq_ = max_seq > 0 ? std::min(max_seq, cpu->max_seq()) : cpu->max_seq();
        return s;
    }
    auto one = OneSequence::create(exe, max_seq);
    if (!one.ok()) return one.error();
    s.max_seq_ = one->max_seq();
    s.seq_.emplace(std::move(one).value());
    return s;
}

Result<const float*> Scorer::score(std::span<const int32_t> tokens) {
    if (seq_) return seq_->score(tokens);
    if (tokens.empty()) return err("no tokens to run");
    if (int(tokens.size()) > max_seq_)
        return err("the sequence has ", tokens.size(), " tokens, more than the ", max_seq_, " this run holds");
    logits_.resize(tokens.size() * size_t(prefill_->config().vocab_size));
    prefill_->prefill(tokens.data(), int(tokens.size()), 0, logits_.data());
    return static_cast<const float*>(logits_.data());
}

}  // namespace edge::runtime
