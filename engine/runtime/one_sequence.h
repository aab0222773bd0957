// One sequence at a time through the executor interface: what generate, perplexity, validation
// and bench run. It owns a PagedKv sized for the executor's longest sequence (blocks of
// kBlockTokens; the rows on the host, or only the books when the executor keeps K/V on its
// device) and appends each call's tokens to sequence 0 by one batch step.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/core/result.h"
#include "engine/kv/paged_kv.h"
#include "engine/runtime/executor.h"

namespace edge::runtime {
class LlamaCpu;
}  // namespace edge::runtime

namespace edge::runtime {

// The KV memory of one sequence of max_seq positions (0: the executor's maximum) in blocks of
// block_tokens for this executor: rows on the host, or only the books when it keeps K/V on its
// device; no prefix index (there is nothing to share with). OneSequence and the board agent's
// run-workload use it.
Result<kv::PagedKv> single_sequence_kv(const Executor& exe, int max_seq, int block_tokens);

class OneSequence {
public:
    static constexpr int kBlockTokens = 16;
    static constexpr kv::SeqId kSeq = 0;  // the sequence's id in kv()
    // max_seq: positions to hold (0: the executor's own maximum).
    static Result<OneSequence> create(Executor& exe, int max_seq = 0);

    // Appends tokens at the sequence's end; the logits of the last one, or with all_logits of each
    // ([tokens][vocab]), valid until the next call.
    Result<const float*> next(std::span<const int32_t> tokens, bool all_logits = false);
    // Scores a whole new sequence: drops the current one, then every token's logits.
    Result<const float*> score(std::span<const int32_t> tokens) {
        reset();
        return next(tokens, true);
    }
    void reset();  // the next call starts again at position 0
    int length() const { return kv_.has_seq(kSeq) ? kv_.seq_len(kSeq) : 0; }
    int max_seq() const { return max_seq_; }
    Executor& executor() { return *exe_; }
    const kv::PagedKv& kv() const { return kv_; }

private:
    OneSequence(Executor& exe, kv::PagedKv kv, int max_seq) : exe_(&exe), kv_(std::move(kv)), max_seq_(max_seq) {}
    Executor* exe_;
    kv::PagedKv kv_;
    int max_seq_;
};

// The single-sequence pass an executor offers besides its batch step (LlamaCpu::prefill,
// Backend::run): tokens at positions pos..pos+n-1 of one sequence in a KV memory the executor
// owns, made at the first call, run by the executor's own step(). pos may go back (the sequence
// is cut there; 0 starts a new one) but not skip ahead. So a reference run and a served request
// share one KV storage and one arithmetic.
class OwnSequence {
public:
    // The logits of the last token, valid until the next call; every token's into all_logits
    // ([n][vocab]) when it is not null.
    Result<const float*> run(Executor& exe, const int32_t* tokens, int n, int pos, float* all_logits);
    size_t kv_bytes() const;  // 0 before the first call
    const kv::PagedKv* kv() const { return kv_ ? &*kv_ : nullptr; }

private:
    std::optional<kv::PagedKv> kv_;
    std::vector<float> last_;
};

// Every token's logits of one whole sequence at a time (perplexity, validation): OneSequence
// steps, or for an executor without batch steps (LlamaCpu in llama.cpp numerics, whose F16 cache
// is its own) its contiguous prefill.
class Scorer {
public:
    static Result<Scorer> create(Executor& exe, int max_seq = 0);
    // [tokens][vocab], valid until the next call.
    Result<const float*> score(std::span<const int32_t> tokens);
    int max_seq() const { return max_seq_; }

private:
    Scorer() = default;
    std::optional<OneSequence> seq_;
    edge::runtime::LlamaCpu* prefill_ = nullptr;
    std::vector<float> logits_;
    int max_seq_ = 0;
};

}  // namespace edge::runtime
