#include "sensitivity.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/runtime/cpu/kernels.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/one_sequence.h"

using edge::model::LayerInfo;
using edge::model::list_layers;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;

namespace edge::quant {

namespace {

// Log-probabilities of every scored position of every sequence.
Result<std::vector<std::vector<double>>> run_logprobs(std::shared_ptr<const Model> m,
                                                      const std::vector<std::vector<int32_t>>& seqs, int threads) {
    int longest = 0;
    for (const auto& s : seqs) longest = std::max(longest, int(s.size()));
    auto rt = LlamaCpu::create(m, RuntimeOptions{threads, longest});
    if (!rt.ok()) return rt.error();
    auto scorer = runtime::Scorer::create(**rt, longest);
    if (!scorer) return scorer.error();
    const int V = m->config.vocab_size;
    std::vector<std::vector<double>> out;
    for (const auto& s : seqs) {
        auto logits = scorer->score(s);
        if (!logits) return logits.error();
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            out.emplace_back();
            runtime::kernels::log_softmax(*logits + i * size_t(V), V, out.back());
        }
    }
    return out;
}

}  // namespace

Result<std::vector<LayerSensitivity>> layer_sensitivity(const Model& m, const std::vector<std::vector<int32_t>>& seqs,
                                                        const SensitivityOptions& opts, Progress* progress) {
    if (seqs.empty()) return err("sensitivity needs at least one calibration sequence");
    for (const auto& s : seqs)
        if (s.size() < 2) return err("a sensitivity sequence needs at least 2 tokens");
    auto base = std::make_shared<const Model>(m);
    auto ref = run_logprobs(base, seqs, opts.threads);
    if (!ref.ok()) return ref.error();
    std::vector<int32_t> targets;
    for (const auto& s : seqs)
        for (size_t i = 1; i < s.size(); ++i) targets.push_back(s[i]);
    const std::vector<LayerInfo> layers = list_layers(m);
    std::vector<LayerSensitivity> res;
    for (size_t li = 0; li < layers.size(); ++li) {
        const LayerInfo& L = layers[li];
        if (is_cancelled(progress)) return err("sensitivity cancelled");
        const Tensor* t = m.find(L.tensor);
        if (!t || t->type != DType::F32) continue;
        auto q = quantize_rtn(*t, opts.spec);
        if (!q.ok()) return err(L.name, ": ", q.message());
        LayerSensitivity s;
        s.layer = L.name;
        s.kind = L.kind;
        s.block = L.block;
        s.shape = t->shape;
        s.bytes = q->nbytes;
        Model mq = m;  // tensors share storage; only this one is replaced
        *mq.find_mut(L.tensor) = std::move(q).value();
        auto lp = run_logprobs(std::make_shared<const Model>(std::move(mq)), seqs, opts.threads);
        if (!lp.ok()) return err(L.name, ": ", lp.message());
        double sum = 0, nll = 0;
        for (size_t p = 0; p < ref->size(); ++p) {
            const auto& a = (*ref)[p];
            const auto& b = (*lp)[p];
            double kl = 0;
            for (size_t v = 0; v < a.size(); ++v) kl += std::exp(a[v]) * (a[v] - b[v]);
            kl = std::max(0.0, kl);
            sum += kl;
            s.kl_max = std::max(s.kl_max, kl);
            nll += a[size_t(targets[p])] - b[size_t(targets[p])];
        }
        s.kl_mean = sum / double(ref->size());
        s.nll_delta = nll / double(ref->size());
        res.push_back(std::move(s));
        report(progress, double(li + 1) / double(layers.size()), "layer sensitivity");
    }
    return res;
}

std::string sensitivity_to_json(const std::vector<LayerSensitivity>& s) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const LayerSensitivity& l : s)
        j.push_back({{"layer", l.layer},
                     {"kind", l.kind},
                     {"block", l.block},
                     {"shape", l.shape},
                     {"kl_mean", l.kl_mean},
                     {"kl_max", l.kl_max},
                     {"nll_delta", l.nll_delta},
                     {"bytes", l.bytes}});
    return j.dump(1);
}

Result<std::vector<LayerSensitivity>> sensitivity_from_json(std::string_view text) {
    auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_array()) return err("sensitivity JSON: expected an array of layers");
    std::vector<LayerSensitivity> out;
    for (const auto& e : j) {
        if (!e.is_object() || !e.contains("layer") || !e["layer"].is_string() || !e.contains("kl_mean") ||
            !e["kl_mean"].is_number())
            return err("sensitivity JSON: entry ", out.size(), " needs \"layer\" (string) and \"kl_mean\" (number)");
        LayerSensitivity l;
        l.layer = e["layer"].get<std::string>();
        l.kind = e.value("kind", std::string());
        l.block = e.value("block", -1);
        if (e.contains("shape") && e["shape"].is_array())
            for (const auto& d : e["shape"])
                if (d.is_number_integer()) l.shape.push_back(d.get<int64_t>());
        l.kl_mean = e["kl_mean"].get<double>();
        l.kl_max = e.value("kl_max", 0.0);
        l.nll_delta = e.value("nll_delta", 0.0);
        l.bytes = e.value("bytes", size_t(0));
        out.push_back(std::move(l));
    }
    return out;
}

Result<SensitivitySplit> split_by_sensitivity(const std::vector<LayerSensitivity>& s, int k) {
    if (k < 0 || size_t(k) > s.size()) return err("k = ", k, " is outside 0..", s.size(), " layers");
    std::vector<size_t> order(s.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a].kl_mean > s[b].kl_mean; });
    SensitivitySplit r;
    std::vector<bool> used(s.size(), false);
    for (int i = 0; i < k; ++i) {
        r.most.push_back(s[order[size_t(i)]].layer);
        used[order[size_t(i)]] = true;
    }
    for (int i = 0; i < k; ++i) {
        const auto& shape = s[order[size_t(i)]].shape;
        bool found = false;
        for (size_t j = order.size(); j-- > 0;) {
            const size_t c = order[j];
            if (used[c] || s[c].shape != shape) continue;
            used[c] = found = true;
            r.least.push_back(s[c].layer);
            break;
        }
        if (!found) {
            // No layer of that shape left (the output head): the least sensitive layers whose
            // element counts add up to exactly the same number.
            int64_t left = 1;
            for (int64_t d : shape) left *= d;
            std::vector<size_t> picked;
            for (size_t j = order.size(); j-- > 0 && left > 0;) {
                const size_t c = order[j];
                int64_t n = 1;
                for (int64_t d : s[c].shape) n *= d;
                if (used[c] || n > left) continue;
                picked.push_back(c);
                left -= n;
            }
            if (left == 0) {
                for (size_t c : picked) {
                    used[c] = true;
                    r.least.push_back(s[c].layer);
                }
                found = true;
            }
        }
        if (!found) {
            std::string dims;
            for (int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
            return err("no same-size counterpart for ", s[order[size_t(i)]].layer, " (", dims,
                       "): too few layers of that shape outside the ", k, " most sensitive");
        }
    }
    return r;
}

QuantPlan mixed_plan(const std::vector<std::string>& layers, Precision high, const QuantSpec& high_spec,
                     const QuantSpec& base_spec) {
    QuantPlan p = uniform_plan(Precision(base_spec.bits == 8 ? Precision::INT8 : Precision::INT4), base_spec.method,
                               base_spec.group_size, base_spec.symmetric, base_spec.grouping);
    if (p.defaults) p.defaults->clip = base_spec.clip;
    for (const std::string& l : layers) {
        LayerRule r;
        r.pattern = l;
        r.precision = high;
        if (high == Precision::INT8 || high == Precision::INT4) {
            r.method = high_spec.method;
            r.grouping = high_spec.grouping;
            r.group_size = high_spec.group_size;
            r.symmetric = high_spec.symmetric;
            r.clip = high_spec.clip;
        }
        p.rules.push_back(std::move(r));
    }
    p.source = "<mixed plan>";
    return p;
}

}  // namespace edge::quant
