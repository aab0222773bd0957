#include "consistency.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/core/thread_pool.h"
#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/one_sequence.h"

using edge::model::Model;
using edge::runtime::argmax;
using edge::runtime::LlamaCpu;
using edge::tokenizer::Tokenizer;

namespace edge::validate {

namespace {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double idx = p * double(v.size() - 1);
    const size_t lo = size_t(idx);
    const size_t hi = std::min(v.size() - 1, lo + 1);
    return v[lo] + (v[hi] - v[lo]) * (idx - double(lo));
}

}  // namespace

Result<ConsistencyResult> compare_models(runtime::Executor& ref, runtime::Executor& test, const Tokenizer& tok,
                                         std::string_view text, const PplOptions& opts, Progress* progress) {
    if (ref.config().vocab_size != test.config().vocab_size) return err("the two models have different vocabularies");
    auto sa = runtime::Scorer::create(ref, opts.max_tokens);
    if (!sa) return err("reference: ", sa.message());
    auto sb = runtime::Scorer::create(test, opts.max_tokens);
    if (!sb) return err("test: ", sb.message());
    PplOptions o = opts;
    o.max_tokens = std::min({o.max_tokens, sa->max_seq(), sb->max_seq()});
    auto seqs = ppl_sequences(tok, text, o);
    if (!seqs.ok()) return seqs.error();
    if (seqs->empty()) return err("the evaluation text has nothing to score");
    const int V = ref.config().vocab_size;
    std::vector<double> kls;
    ConsistencyResult r;
    double nll_a = 0, nll_b = 0, agree = 0, conf_a = 0, conf_b = 0;
    // Each position's figures (two log-softmaxes and the KL over the vocabulary: ~3 ms per
    // position at 128K words) are computed in parallel, then summed in position order as before,
    // so the results are the same bits; serial, they left a core idle for ~8% of a 1B validation.
    struct Position {
        double kl, conf_a, conf_b, nll_a, nll_b;
        bool agree;
    };
    std::vector<Position> at;
    ThreadPool pool(0);
    for (size_t si = 0; si < seqs->size(); ++si) {
        if (is_cancelled(progress)) return err("comparison cancelled");
        const auto& s = (*seqs)[si];
        const int n = int(s.size());
        auto ra = sa->score(s);
        if (!ra) return err("reference: ", ra.message());
        // The logits live in each executor's own buffer; one executor compared with itself would
        // overwrite the first result with the second.
        std::vector<float> copy;
        if (&ref == &test) copy.assign(*ra, *ra + size_t(n) * V);
        const float* la = copy.empty() ? *ra : copy.data();
        auto rb = sb->score(s);
        if (!rb) return err("test: ", rb.message());
        const float* lb = *rb;
        at.resize(size_t(std::max(0, n - 1)));
        pool.parallel_for(int64_t(at.size()), [&](int64_t i0, int64_t i1) {
            std::vector<double> pa, pb;
            for (int64_t i = i0; i < i1; ++i) {
                runtime::kernels::log_softmax(&la[size_t(i) * V], V, pa);
                runtime::kernels::log_softmax(&lb[size_t(i) * V], V, pb);
                double kl = 0;
                for (int v = 0; v < V; ++v) kl += std::exp(pa[size_t(v)]) * (pa[size_t(v)] - pb[size_t(v)]);
                const int32_t ta = argmax(&la[size_t(i) * V], V), tb = argmax(&lb[size_t(i) * V], V);
                at[size_t(i)] = Position{kl,
                                         std::exp(pa[size_t(ta)]),
                                         std::exp(pb[size_t(ta)]),
                                         pa[size_t(s[size_t(i) + 1])],
                                         pb[size_t(s[size_t(i) + 1])],
                                         ta == tb};
            }
        });
        for (const Position& p : at) {
            kls.push_back(std::max(0.0, p.kl));
            agree += p.agree;
            conf_a += p.conf_a;
            conf_b += p.conf_b;
            nll_a -= p.nll_a;
            nll_b -= p.nll_b;
        }
        report(progress, double(si + 1) / double(seqs->size()), "comparing");
    }
    r.tokens = int64_t(kls.size());
    const double N = double(std::max<int64_t>(1, r.tokens));
    r.ppl_ref = std::exp(nll_a / N);
    r.ppl_test = std::exp(nll_b / N);
    double sum = 0;
    for (double k : kls) sum += k;
    r.kl_mean = sum / N;
    r.kl_p99 = percentile(kls, 0.99);
    r.top1_agreement = agree / N;
    r.ref_top1_conf = conf_a / N;
    r.test_top1_conf = conf_b / N;
    return r;
}

Result<std::vector<LayerHealth>> activation_health(LlamaCpu& rt, const std::vector<std::vector<int32_t>>& seqs) {
    auto seq = runtime::OneSequence::create(rt);
    if (!seq) return seq.error();
    std::vector<LayerHealth> out;
    auto slot = [&](const std::string& name) -> LayerHealth& {
        for (auto& h : out)
            if (h.layer == name) return h;
        out.push_back(LayerHealth{name});
        return out.back();
    };
    rt.set_linear_hook([&](int block, std::string_view kind, const float* in, int n, int dim) {
        LayerHealth& h = slot(block < 0 ? std::string(kind) : "blk." + std::to_string(block) + "." + std::string(kind));
        for (int64_t i = 0; i < int64_t(n) * dim; ++i) {
            h.nan += std::isnan(in[i]);
            h.inf += std::isinf(in[i]);
        }
        h.values += int64_t(n) * dim;
    });
    for (size_t i = 0; i < seqs.size(); ++i) {
        if (seqs[i].empty()) continue;
        seq->reset();
        auto r = seq->next(std::span(seqs[i]).first(std::min(seqs[i].size(), size_t(seq->max_seq()))), true);
        if (!r) {
            rt.set_linear_hook(nullptr);
            return err("sequence ", i, ": ", r.message());
        }
    }
    rt.set_linear_hook(nullptr);
    return out;
}

std::vector<ScaleRange> scale_ranges(const Model& m) {
    std::vector<ScaleRange> out;
    for (const Tensor& t : m.tensors) {
        if (!t.quant) continue;
        const QuantInfo& q = *t.quant;
        ScaleRange r;
        r.tensor = t.name;
        for (int64_t g = 0; g < q.n_groups; ++g) {
            const double a = std::fabs(double(quant_scale(q, t.data.get(), g)));
            if (a == 0) continue;
            r.max_abs = std::max(r.max_abs, a);
            r.min_abs = r.min_abs == 0 ? a : std::min(r.min_abs, a);
        }
        r.ratio = r.min_abs > 0 ? r.max_abs / r.min_abs : 0;
        out.push_back(r);
    }
    return out;
}

Result<Model> inject_bit_flips(const Model& m, const BitFlipOptions& o, int64_t* flipped) {
    if (!(o.fraction >= 0 && o.fraction <= 1)) return err("bit-flip fraction ", o.fraction, " is not in [0, 1]");
    Model out = m;
    std::mt19937_64 rng(o.seed);
    std::uniform_real_distribution<double> u(0, 1);
    int64_t count = 0;
    bool any = false;
    for (Tensor& t : out.tensors) {
        if (!t.quant) continue;
        any = true;
        const QuantInfo& q = *t.quant;
        if (o.bit < 0 || o.bit >= q.bits)
            return err(t.name, ": bit ", o.bit, " does not exist in ", q.bits, "-bit codes");
        auto copy = alloc_aligned(t.nbytes);
        std::memcpy(copy.get(), t.data.get(), t.nbytes);
        uint8_t* base = copy.get();
        for (int64_t r = 0; r < q.rows; ++r)
            for (int64_t c = 0; c < q.cols; ++c) {
                if (u(rng) >= o.fraction) continue;
                if (q.bits == 8) {
                    const int64_t off = q.row_mode() ? r * q.row_bytes + c : r * q.cols + c;
                    base[off] ^= uint8_t(1u << o.bit);
                } else {
                    int64_t blk, j;
                    if (q.row_mode()) {
                        blk = r * q.row_bytes + (c / kQBlock) * (kQBlock / 2);
                        j = c % kQBlock;
                    } else {
                        const int64_t k = r * q.cols + c;
                        blk = (k / kQBlock) * (kQBlock / 2);
                        j = k % kQBlock;
                    }
                    base[blk + j % (kQBlock / 2)] ^= uint8_t(1u << (o.bit + (j < kQBlock / 2 ? 0 : 4)));
                }
                ++count;
            }
        t.data = std::move(copy);
    }
    if (!any) return err("the model holds no quantized weights to flip bits in");
    if (flipped) *flipped = count;
    return out;
}

Result<JitterResult> measure_jitter(runtime::Executor& rt, int tokens, int runs) {
    JitterResult j;
    std::vector<double> ms;
    auto seq = runtime::OneSequence::create(rt);
    if (!seq) return seq.error();
    tokens = std::min(tokens, seq->max_seq() - 1);
    for (int r = 0; r < runs; ++r) {
        int32_t tok = 1;
        seq->reset();
        for (int p = 0; p < tokens; ++p) {
            const auto t0 = std::chrono::steady_clock::now();
            auto logits = seq->next(std::span(&tok, 1));
            if (!logits) return err("decode step ", p, ": ", logits.message());
            tok = argmax(*logits, rt.config().vocab_size);
            const auto t1 = std::chrono::steady_clock::now();
            if (r > 0 || runs == 1) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
    }
    j.samples = int(ms.size());
    j.p50_ms = percentile(ms, 0.5);
    j.p99_ms = percentile(ms, 0.99);
    double s = 0;
    for (double v : ms) s += v;
    j.mean_ms = ms.empty() ? 0 : s / double(ms.size());
    j.tokens_per_s = j.mean_ms > 0 ? 1000.0 / j.mean_ms : 0;
    return j;
}

}  // namespace edge::validate
