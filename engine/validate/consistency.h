// Post-quantization validation (issue 3): consistency against the FP32 model (perplexity, KL
// divergence mean/p99, top-1 agreement), numerical health (NaN/Inf per layer's activations, scale
// dynamic range), fault tolerance (seeded bit flips in stored quantized weights) and decode
// latency jitter; thresholds with defaults, a human table and JSON, and a pass/fail verdict.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/validate/perplexity.h"

namespace edge::validate {

struct ConsistencyResult {
    double ppl_ref = 0, ppl_test = 0;
    double kl_mean = 0, kl_p99 = 0;  // KL(P_ref || P_test) per scored token, natural log
    double top1_agreement = 0;       // fraction of tokens with the same argmax
    double ref_top1_conf = 0;        // mean probability of the reference's top-1 token under ref
    double test_top1_conf = 0;       // ... and under test
    int64_t tokens = 0;
};
// Scores the protocol's sequences through both executors (same tokenizer and text), each sequence
// as one batch step asking for all logits (runtime::Scorer).
Result<ConsistencyResult> compare_models(runtime::Executor& ref, runtime::Executor& test,
                                         const tokenizer::Tokenizer& tok, std::string_view text, const PplOptions& opts,
                                         Progress* progress = nullptr);

struct LayerHealth {
    std::string layer;  // blk.3.attn_q (its input activations), output
    int64_t values = 0, nan = 0, inf = 0;
};
// NaN/Inf counts of every linear layer's input activations over the given sequences.
// Sequences longer than the executor holds are cut to its length.
Result<std::vector<LayerHealth>> activation_health(runtime::LlamaCpu& rt,
                                                   const std::vector<std::vector<int32_t>>& seqs);

struct ScaleRange {
    std::string tensor;
    double min_abs = 0, max_abs = 0, ratio = 0;  // over non-zero group scales
};
// Quantized tensors' scale dynamic range (ratio > threshold is a warning).
std::vector<ScaleRange> scale_ranges(const model::Model& m);

struct BitFlipOptions {
    uint64_t seed = 1234;
    double fraction = 0.01;  // of the stored codes of every QI8/QI4 tensor
    int bit = 0;             // 0 = least significant; < 8 for INT8, < 4 for INT4
};
// A copy of m whose quantized codes have `fraction` of their elements' `bit` flipped (seeded);
// other tensors are shared. flipped receives the count.
Result<model::Model> inject_bit_flips(const model::Model& m, const BitFlipOptions& o, int64_t* flipped = nullptr);

struct JitterResult {
    double p50_ms = 0, p99_ms = 0, mean_ms = 0, tokens_per_s = 0;
    int samples = 0;
};
// Per-token decode latency over `runs` repetitions of `tokens` greedy steps after a BOS.
Result<JitterResult> measure_jitter(runtime::Executor& rt, int tokens = 64, int runs = 5);

struct Thresholds {
    double kl_mean_max = 0.08;
    double jitter_ms_max = 3.5;           // p99 - p50
    double bitflip_conf_drop_max = 0.05;  // relative drop of top-1 confidence
    double scale_ratio_warn = 1e6;
};

struct ValidationReport {
    ConsistencyResult consistency;
    std::vector<LayerHealth> health;
    std::vector<ScaleRange> scales;
    bool bitflip_ran = false;
    int64_t bitflip_count = 0;
    ConsistencyResult bitflip;  // flipped quantized model vs the unflipped one
    double bitflip_conf_drop = 0;
    JitterResult jitter;
    Thresholds thresholds;
    std::vector<std::string> failures, warnings;
    bool passed() const { return failures.empty(); }
    std::string to_json() const;
    std::string to_table() const;
};

struct ValidateOptions {
    PplOptions ppl;
    Thresholds thresholds;
    BitFlipOptions bitflip;
    bool run_bitflip = true;
    int jitter_tokens = 64, jitter_runs = 5;
    int threads = 0;
};
// The whole suite: `test` (quantized) against `ref` (FP32) on `text`.
Result<ValidationReport> validate_quantized(const std::shared_ptr<const model::Model>& ref,
                                            const std::shared_ptr<const model::Model>& test, std::string_view text,
                                            const ValidateOptions& o, Progress* progress = nullptr);

}  // namespace edge::validate
