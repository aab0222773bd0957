// edge-calib-bench: the docs/calibration.md table. For each seed, calibration sets of N
// paragraphs are chosen from a pool (tinystories_val minus its first `eval` paragraphs) by
// k-means on stories260K's pooled hidden states (with and without the hardware weights) and at
// random; each set quantizes the model to INT4 g32 with AWQ and with GPTQ, exactly the way
// `quantize --calib` reads the written file (paragraphs concatenated, cut into calib-len
// windows); perplexity is measured on the first `eval` paragraphs (para protocol), disjoint from
// the pool. Prints mean +- sample standard deviation over the seeds, per-seed values, and the
// paired (k-means - random) differences.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "engine/calib/embed.h"
#include "engine/calib/select.h"
#include "engine/calib/weighting.h"
#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/quant/calib.h"
#include "engine/quant/plan.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/validate/perplexity.h"

using edge::model::load_model;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;
using edge::validate::evaluate_perplexity;
using edge::validate::PplOptions;
using edge::validate::PplProtocol;
using edge::validate::PplResult;

using namespace edge;

namespace {

struct Args {
    std::string model = std::string(EDGE_SHARED_DIR) + "/models/stories260K/stories260K.gguf";
    std::string text = std::string(EDGE_SHARED_DIR) + "/data/tinystories_val.txt";
    int eval = 200, pool = 2000, n = 64, seeds = 5, calib_len = 128, max_tokens = 128, threads = 0;
    uint64_t seed0 = 1;
    std::string methods = "random,kmeans";  // of random, kmeans, kmeans+hw
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Stat {
    std::vector<double> v;
    double mean() const {
        double s = 0;
        for (double x : v) s += x;
        return v.empty() ? 0.0 : s / double(v.size());
    }
    double sd() const {
        if (v.size() < 2) return 0.0;
        const double m = mean();
        double s = 0;
        for (double x : v) s += (x - m) * (x - m);
        return std::sqrt(s / double(v.size() - 1));
    }
};

int usage() {
    std::fprintf(
        stderr,
        "usage: edge-calib-bench [--model M] [--text T] [--eval P] [--pool P] [--n N] [--seeds S] [--seed0 S0]\n"
        "                        [--methods random,kmeans,kmeans+hw] [--calib-len L] [--max-tokens T] [--threads K]\n"
        "The first --eval paragraphs of --text are the evaluation text; the next --pool paragraphs the pool.\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) return usage();
        const char* v = argv[++i];
        if (k == "--model")
            a.model = v;
        else if (k == "--text")
            a.text = v;
        else if (k == "--eval")
            a.eval = std::atoi(v);
        else if (k == "--n")
            a.n = std::atoi(v);
        else if (k == "--pool")
            a.pool = std::atoi(v);
        else if (k == "--methods")
            a.methods = v;
        else if (k == "--seeds")
            a.seeds = std::atoi(v);
        else if (k == "--seed0")
            a.seed0 = std::strtoull(v, nullptr, 10);
        else if (k == "--calib-len")
            a.calib_len = std::atoi(v);
        else if (k == "--max-tokens")
            a.max_tokens = std::atoi(v);
        else if (k == "--threads")
            a.threads = std::atoi(v);
        else
            return usage();
    }
    const double t_start = now();
    auto loaded = load_model(a.model);
    if (!loaded) return std::fprintf(stderr, "%s\n", loaded.message().c_str()), 1;
    auto model = std::make_shared<const Model>(std::move(loaded).value());
    auto tok = make_tokenizer(model->tokenizer);
    if (!tok) return std::fprintf(stderr, "%s: %s\n", a.model.c_str(), tok.message().c_str()), 1;
    auto text = read_text_file(a.text);
    if (!text) return std::fprintf(stderr, "%s\n", text.message().c_str()), 1;
    const auto paras = calib::split_paragraphs(text.value());
    if (a.eval < 1 || a.n < 1 || a.pool < a.n || a.seeds < 1 || a.calib_len < 2) return usage();
    if (int(paras.size()) < a.eval + a.pool)
        return std::fprintf(stderr, "%s: %zu paragraphs, need %d\n", a.text.c_str(), paras.size(), a.eval + a.pool), 1;
    const std::string eval_text =
        calib::join_paragraphs(std::vector<std::string>(paras.begin(), paras.begin() + a.eval));
    const std::vector<std::string> pool(paras.begin() + a.eval, paras.begin() + a.eval + a.pool);

    PplOptions ppl;
    ppl.protocol = PplProtocol::Para;
    ppl.max_parts = a.eval;
    const auto perplexity = [&](const std::shared_ptr<const Model>& m) -> Result<PplResult> {
        auto rt = LlamaCpu::create(m, RuntimeOptions{a.threads, 512});
        if (!rt) return rt.error();
        return evaluate_perplexity(**rt, *tok.value(), eval_text, ppl);
    };
    auto fp32 = perplexity(model);
    if (!fp32) return std::fprintf(stderr, "%s\n", fp32.message().c_str()), 1;

    double t0 = now();
    calib::LlmEmbedOptions eo;
    eo.max_tokens = a.max_tokens;
    eo.threads = a.threads;
    auto emb = calib::llm_embeddings(model, *tok.value(), pool, eo);
    if (!emb) return std::fprintf(stderr, "%s\n", emb.message().c_str()), 1;
    const double t_embed = now() - t0;
    std::fprintf(stderr, "FP32 ppl %.4f; pool embedded in %.1f s\n", fp32->perplexity, t_embed);
    std::vector<calib::SampleShape> shapes(pool.size());
    int64_t pool_tokens = 0;
    for (size_t i = 0; i < pool.size(); ++i) {
        shapes[i].tokens = emb->tokens[i];
        pool_tokens += emb->tokens[i];
    }
    calib::HardwareProfile hw;
    hw.preferred_tokens = a.max_tokens;
    auto weights = calib::hardware_weights(shapes, hw);
    if (!weights) return std::fprintf(stderr, "%s\n", weights.message().c_str()), 1;

    struct Method {
        const char* name;
        calib::SelectMethod method;
        bool weighted;
    };
    std::vector<Method> methods;
    for (const Method& m :
         {Method{"random", calib::SelectMethod::Random, false}, Method{"kmeans", calib::SelectMethod::KMeans, false},
          Method{"kmeans+hw", calib::SelectMethod::KMeans, true}})
        if (("," + a.methods + ",").find("," + std::string(m.name) + ",") != std::string::npos) methods.push_back(m);
    if (methods.empty()) return usage();
    const std::pair<const char*, QMethod> quants[] = {{"AWQ", QMethod::AWQ}, {"GPTQ", QMethod::GPTQ}};
    std::map<std::string, Stat> ppl_of, tokens_of;
    std::map<std::string, double> select_s;
    std::string per_seed;
    for (int si = 0; si < a.seeds; ++si) {
        const uint64_t seed = a.seed0 + uint64_t(si);
        std::map<std::string, double> row;
        for (const Method& m : methods) {
            calib::SelectOptions so;
            so.n = a.n;
            so.method = m.method;
            so.seed = seed;
            so.threads = a.threads;
            if (m.weighted) so.weights = weights->weight;
            t0 = now();
            auto sel = calib::select_samples(emb->emb, so);
            if (!sel) return std::fprintf(stderr, "%s\n", sel.message().c_str()), 1;
            select_s[m.name] += now() - t0;
            std::vector<std::string> chosen;
            for (int64_t i : sel->indices) chosen.push_back(pool[size_t(i)]);
            const std::string calib_text = calib::join_paragraphs(chosen);
            // All the chosen text, as whole calib-len windows (what quantize --calib reads).
            int64_t toks = 0;
            for (int64_t i : sel->indices) toks += emb->tokens[size_t(i)] - 1;  // no BOS in the stream
            const int n_seq = std::max<int>(1, int(toks / (a.calib_len - 1)));
            auto cs = quant::calib_from_text(*tok.value(), calib_text, n_seq, a.calib_len);
            if (!cs) return std::fprintf(stderr, "calibration: %s\n", cs.message().c_str()), 1;
            tokens_of[m.name].v.push_back(double(cs->sequences.size()) * a.calib_len);
            for (const auto& [qname, qm] : quants) {
                auto q = quant::apply_plan(*model, quant::uniform_plan(quant::Precision::INT4, qm, 32), &cs.value(),
                                           nullptr, quant::ApplyOptions{a.threads});
                if (!q)
                    return std::fprintf(stderr, "%s %s seed %llu: %s\n", qname, m.name, (unsigned long long)seed,
                                        q.message().c_str()),
                           1;
                auto r = perplexity(std::make_shared<const Model>(std::move(q->model)));
                if (!r) return std::fprintf(stderr, "%s\n", r.message().c_str()), 1;
                const std::string key = std::string(qname) + " " + m.name;
                ppl_of[key].v.push_back(r->perplexity);
                row[key] = r->perplexity;
                std::fprintf(stderr, "seed %llu %-16s ppl %.4f (%zu x %d calibration tokens) at %.0f s\n",
                             (unsigned long long)seed, key.c_str(), r->perplexity, cs->sequences.size(), a.calib_len,
                             now() - t_start);
            }
        }
        per_seed += "| " + std::to_string(seed);
        for (const auto& [qname, qm] : quants) {
            (void)qm;
            for (const Method& m : methods) {
                char cell[32];
                std::snprintf(cell, sizeof cell, " | %.4f", row[std::string(qname) + " " + m.name]);
                per_seed += cell;
            }
        }
        per_seed += " |\n";
    }

    std::printf(
        "%s INT4 g32 (symmetric), N = %d calibration paragraphs from a pool of %zu (%lld tokens),\n"
        "perplexity on the first %d paragraphs of %s (para protocol, %lld tokens scored; FP32 %.4f),\n"
        "%d seeds (%llu..%llu). Pool embedding: %.2f s (%d tokens max per paragraph).\n\n",
        a.model.substr(a.model.find_last_of('/') + 1).c_str(), a.n, pool.size(), (long long)pool_tokens, a.eval,
        a.text.c_str(), (long long)fp32->tokens, fp32->perplexity, a.seeds, (unsigned long long)a.seed0,
        (unsigned long long)(a.seed0 + uint64_t(a.seeds) - 1), t_embed, a.max_tokens);
    std::printf(
        "| quantizer | selection | perplexity mean +- sd | min | max | calibration tokens (mean) | selection time "
        "(mean) |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const auto& [qname, qm] : quants) {
        (void)qm;
        for (const Method& m : methods) {
            const Stat& s = ppl_of[std::string(qname) + " " + m.name];
            double lo = s.v[0], hi = s.v[0];
            for (double x : s.v) lo = std::min(lo, x), hi = std::max(hi, x);
            std::printf("| %s | %s | %.4f +- %.4f | %.4f | %.4f | %.0f | %.3f s |\n", qname, m.name, s.mean(), s.sd(),
                        lo, hi, tokens_of[m.name].mean(), select_s[m.name] / a.seeds);
        }
    }
    const bool has_random = std::any_of(methods.begin(), methods.end(),
                                        [](const Method& m) { return m.method == calib::SelectMethod::Random; });
    if (has_random) {
        std::printf(
            "\nPaired differences (same seed), perplexity k-means minus random (negative: k-means better):\n\n");
        std::printf(
            "| quantizer | selection | mean +- sd of the difference | seeds where k-means is better "
            "|\n|---|---|---|---|\n");
        for (const auto& [qname, qm] : quants) {
            (void)qm;
            for (const Method& km : methods) {
                if (km.method != calib::SelectMethod::KMeans) continue;
                Stat d;
                int better = 0;
                const auto& k = ppl_of[std::string(qname) + " " + km.name].v;
                const auto& r = ppl_of[std::string(qname) + " random"].v;
                for (size_t i = 0; i < k.size(); ++i) {
                    d.v.push_back(k[i] - r[i]);
                    better += k[i] < r[i];
                }
                std::printf("| %s | %s | %+.4f +- %.4f | %d of %zu |\n", qname, km.name, d.mean(), d.sd(), better,
                            k.size());
            }
        }
    }
    std::printf("\nPer seed:\n\n| seed |");
    std::string rule = "|---|";
    for (const auto& [qname, qm] : quants) {
        (void)qm;
        for (const Method& m : methods) {
            std::printf(" %s %s |", qname, m.name);
            rule += "---|";
        }
    }
    std::printf("\n%s\n%s", rule.c_str(), per_seed.c_str());
    std::printf("\nWall time: %.0f s (%s).\n", now() - t_start,
                a.threads > 0 ? (std::to_string(a.threads) + " threads").c_str() : "all threads");
    return 0;
}
