// validate_quantized: runs the suite and renders its report (JSON and a table).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "consistency.h"

using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;

namespace edge::validate {

namespace {

std::string fmt(const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

}  // namespace

Result<ValidationReport> validate_quantized(const std::shared_ptr<const Model>& ref,
                                            const std::shared_ptr<const Model>& test, std::string_view text,
                                            const ValidateOptions& o, Progress* progress) {
    if (!ref || !test) return err("validation needs a reference and a test model");
    auto tok = make_tokenizer(test->tokenizer);
    if (!tok.ok()) return err("test model tokenizer: ", tok.message());
    RuntimeOptions ro;
    ro.threads = o.threads;
    ro.max_seq = o.ppl.max_tokens;
    auto rr = LlamaCpu::create(ref, ro);
    if (!rr.ok()) return err("reference model: ", rr.message());
    auto rt = LlamaCpu::create(test, ro);
    if (!rt.ok()) return err("test model: ", rt.message());
    ValidationReport rep;
    rep.thresholds = o.thresholds;
    auto c = compare_models(**rr, **rt, **tok, text, o.ppl, progress);
    if (!c.ok()) return c.error();
    rep.consistency = *c;
    if (rep.consistency.kl_mean >= o.thresholds.kl_mean_max)
        rep.failures.push_back("mean KL " + fmt("%.4f", rep.consistency.kl_mean) +
                               " >= " + fmt("%.4f", o.thresholds.kl_mean_max));

    PplOptions few = o.ppl;
    few.max_parts = std::min(few.max_parts < 0 ? 8 : few.max_parts, 8);
    auto seqs = ppl_sequences(**tok, text, few);
    if (seqs.ok()) {
        auto health = activation_health(**rt, *seqs);
        if (!health) return err("activation health: ", health.message());
        rep.health = std::move(health).value();
    }
    for (const LayerHealth& h : rep.health)
        if (h.nan || h.inf)
            rep.failures.push_back(h.layer + ": " + std::to_string(h.nan) + " NaN and " + std::to_string(h.inf) +
                                   " Inf activations");
    rep.scales = scale_ranges(*test);
    for (const ScaleRange& s : rep.scales)
        if (s.ratio > o.thresholds.scale_ratio_warn)
            rep.warnings.push_back(s.tensor + ": scale dynamic range " + fmt("%.3g", s.ratio));

    bool quantized = false;
    for (const Tensor& t : test->tensors) quantized |= bool(t.quant);
    if (o.run_bitflip && quantized) {
        auto flipped = inject_bit_flips(*test, o.bitflip, &rep.bitflip_count);
        if (!flipped.ok()) return flipped.error();
        auto fm = std::make_shared<const Model>(std::move(flipped).value());
        auto rf = LlamaCpu::create(fm, ro);
        if (!rf.ok()) return rf.error();
        auto bf = compare_models(**rt, **rf, **tok, text, few, progress);
        if (!bf.ok()) return bf.error();
        rep.bitflip_ran = true;
        rep.bitflip = *bf;
        rep.bitflip_conf_drop =
            bf->ref_top1_conf > 0 ? (bf->ref_top1_conf - bf->test_top1_conf) / bf->ref_top1_conf : 0;
        if (rep.bitflip_conf_drop > o.thresholds.bitflip_conf_drop_max)
            rep.failures.push_back("bit flips drop top-1 confidence by " + fmt("%.1f%%", 100 * rep.bitflip_conf_drop));
    }
    auto jitter = measure_jitter(**rt, o.jitter_tokens, o.jitter_runs);
    if (!jitter) return err("decode jitter: ", jitter.message());
    rep.jitter = *jitter;
    if (rep.jitter.p99_ms - rep.jitter.p50_ms >= o.thresholds.jitter_ms_max)
        rep.failures.push_back("decode jitter p99-p50 " + fmt("%.2f ms", rep.jitter.p99_ms - rep.jitter.p50_ms));
    return rep;
}

std::string ValidationReport::to_json() const {
    using nlohmann::json;
    json j;
    const ConsistencyResult& c = consistency;
    j["consistency"] = {{"ppl_ref", c.ppl_ref},
                        {"ppl_test", c.ppl_test},
                        {"kl_mean", c.kl_mean},
                        {"kl_p99", c.kl_p99},
                        {"top1_agreement", c.top1_agreement},
                        {"tokens", c.tokens}};
    json h = json::array();
    for (const auto& x : health)
        h.push_back({{"layer", x.layer}, {"values", x.values}, {"nan", x.nan}, {"inf", x.inf}});
    j["health"] = h;
    json s = json::array();
    for (const auto& x : scales)
        s.push_back({{"tensor", x.tensor}, {"min", x.min_abs}, {"max", x.max_abs}, {"ratio", x.ratio}});
    j["scales"] = s;
    if (bitflip_ran)
        j["bitflip"] = {{"flipped", bitflip_count},
                        {"conf_drop", bitflip_conf_drop},
                        {"top1_agreement", bitflip.top1_agreement},
                        {"ppl_before", bitflip.ppl_ref},
                        {"ppl_after", bitflip.ppl_test},
                        {"kl_mean", bitflip.kl_mean}};
    j["jitter"] = {{"p50_ms", jitter.p50_ms},
                   {"p99_ms", jitter.p99_ms},
                   {"tokens_per_s", jitter.tokens_per_s},
                   {"samples", jitter.samples}};
    j["thresholds"] = {{"kl_mean_max", thresholds.kl_mean_max},
                       {"jitter_ms_max", thresholds.jitter_ms_max},
                       {"bitflip_conf_drop_max", thresholds.bitflip_conf_drop_max},
                       {"scale_ratio_warn", thresholds.scale_ratio_warn}};
    j["failures"] = failures;
    j["warnings"] = warnings;
    j["passed"] = passed();
    return j.dump(2);
}

std::string ValidationReport::to_table() const {
    const ConsistencyResult& c = consistency;
    std::string s;
    s += "check                      value        threshold   \n";
    s += "perplexity (ref -> test)   " + fmt("%.4f", c.ppl_ref) + " -> " + fmt("%.4f", c.ppl_test) + "\n";
    s += "KL mean / p99              " + fmt("%.4f", c.kl_mean) + " / " + fmt("%.4f", c.kl_p99) + "   < " +
         fmt("%.3f", thresholds.kl_mean_max) + "\n";
    s += "top-1 agreement            " + fmt("%.2f%%", 100 * c.top1_agreement) + "\n";
    int64_t bad = 0;
    for (const auto& h : health) bad += h.nan + h.inf;
    s += "NaN/Inf activations        " + std::to_string(bad) + " in " + std::to_string(health.size()) + " layers\n";
    if (bitflip_ran)
        s += "bit flips (" + std::to_string(bitflip_count) + ")  conf drop  " + fmt("%.2f%%", 100 * bitflip_conf_drop) +
             "  agreement " + fmt("%.2f%%", 100 * bitflip.top1_agreement) + "  ppl " + fmt("%.4f", bitflip.ppl_test) +
             "   <= " + fmt("%.0f%%", 100 * thresholds.bitflip_conf_drop_max) + "\n";
    s += "decode p50 / p99           " + fmt("%.3f", jitter.p50_ms) + " / " + fmt("%.3f ms", jitter.p99_ms) + "   < " +
         fmt("%.1f ms", thresholds.jitter_ms_max) + "\n";
    for (const auto& w : warnings) s += "warning: " + w + "\n";
    for (const auto& f : failures) s += "FAIL: " + f + "\n";
    s += passed() ? "PASS\n" : "FAIL\n";
    return s;
}

}  // namespace edge::validate
