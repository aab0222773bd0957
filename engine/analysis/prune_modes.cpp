// The pruning modes of prune_finetune.h (one-shot, iterative, DST). No torch include: training
// goes through train_cnn (torch_cnn.h) / train_llama (torch_llama.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numbers>

#include "engine/analysis/prune_finetune.h"
#include "engine/analysis/torch_llama.h"
#include "engine/model/cnn_ir.h"

using edge::model::is_cnn;
using edge::model::Model;

namespace edge::analysis {

namespace {

std::string origin(const Model& m) { return m.source_path.empty() ? m.name : m.source_path; }

}  // namespace

CnnTrainOptions prune_cnn_train_defaults() {
    CnnTrainOptions t;
    t.optimizer = CnnOptimizer::Adam;
    t.lr = 3e-3f;
    t.weight_decay = 1e-4f;
    t.batch = 64;
    t.epochs = 0;  // each phase sets steps
    t.cosine_decay = true;
    return t;
}

// ---- modes -----------------------------------------------------------------------------------------

Result<PruneMode> parse_prune_mode(std::string_view name) {
    if (name == "oneshot" || name == "one-shot") return PruneMode::OneShot;
    if (name == "iterative") return PruneMode::Iterative;
    if (name == "dst") return PruneMode::Dst;
    return err("unknown pruning mode '", name, "' (oneshot, iterative or dst)");
}

const char* prune_mode_name(PruneMode m) {
    switch (m) {
        case PruneMode::OneShot: return "oneshot";
        case PruneMode::Iterative: return "iterative";
        case PruneMode::Dst: return "dst";
    }
    return "?";
}

Result<WeightMasks> consumer_masks(const Model& m, const std::vector<prune::LayerMask>& masks) {
    auto groups = prune::find_groups(m);
    if (!groups) return groups.error();
    WeightMasks out;
    for (const prune::LayerMask& mk : masks) {
        const prune::PruneGroup* g = nullptr;
        for (const auto& x : groups.value())
            if (x.layer == mk.layer) g = &x;
        if (!g) return err(origin(m), ": no prunable layer '", mk.layer, "' in the model");
        if (int64_t(mk.keep.size()) != g->units)
            return err(origin(m), ": the mask of '", mk.layer, "' has ", mk.keep.size(), " units; the model has ",
                       g->units);
        for (int64_t u = 0; u < g->units; ++u) {
            if (mk.keep[size_t(u)]) continue;
            for (const prune::UnitSlice& s : g->slices[size_t(u)]) {
                if (s.axis != 1) continue;
                const Tensor* t = m.find(s.tensor);
                if (!t || t->shape.size() < 2) continue;
                auto& v = out[s.tensor];
                if (v.empty()) v.assign(size_t(t->numel()), 1.0f);
                const int64_t d0 = t->shape[0], d1 = t->shape[1], rest = t->numel() / (d0 * d1);
                for (int64_t o = 0; o < d0; ++o)
                    for (int64_t c : s.indices)
                        for (int64_t k = 0; k < rest; ++k) v[size_t((o * d1 + c) * rest + k)] = 0.0f;
            }
        }
    }
    return out;
}

namespace {

using TrainFn = std::function<Status(Model&, int steps, const WeightMasks*, uint64_t seed)>;
using GradFn = std::function<Result<prune::Gradients>(const Model&)>;

std::map<std::string, std::vector<int64_t>> removed_of(const std::vector<prune::LayerMask>& masks) {
    std::map<std::string, std::vector<int64_t>> r;
    for (const auto& l : masks)
        if (l.removed() > 0) r[l.layer] = l.removed_units();
    return r;
}

Status train_masked(Model& m, const std::vector<prune::LayerMask>& masks, int steps, const TrainFn& train,
                    uint64_t seed, int& total) {
    if (steps <= 0) return {};
    auto wm = consumer_masks(m, masks);
    if (!wm) return wm.error();
    EDGE_TRY(train(m, steps, &wm.value(), seed));
    total += steps;
    return {};
}

Result<PruneRun> run_modes(const Model& m0, const PruneRunOptions& o, const TrainFn& train, const GradFn& grads,
                           Progress* progress) {
    const auto t0 = std::chrono::steady_clock::now();
    PruneRun run;
    Model m = m0;
    prune::Gradients g;
    auto scored_spec = [&](prune::PruneSpec s) -> Result<prune::PruneSpec> {
        if (s.importance == prune::Importance::Taylor) {
            auto gr = grads(m);
            if (!gr) return gr.error();
            g = std::move(gr.value());
            s.gradients = &g;
        }
        return s;
    };
    // The target: the one-shot plan on the original model.
    auto s0 = scored_spec(o.spec);
    if (!s0) return s0.error();
    auto target = prune::plan_pruning(m, s0.value());
    if (!target) return target.error();
    std::vector<prune::LayerMask> masks = target->layers;

    if (o.mode == PruneMode::Iterative) {
        if (o.step <= 0 || o.step > 1) return err("iterative pruning step ", o.step, " is outside (0, 1]");
        double max_ratio = 0;
        for (const auto& l : target->layers) max_ratio = std::max(max_ratio, l.ratio());
        const int rounds = std::max(1, int(std::ceil(max_ratio / o.step - 1e-9)));
        std::map<std::string, std::vector<int64_t>> removed;  // none yet
        for (int k = 1; k <= rounds; ++k) {
            if (is_cancelled(progress)) return err("pruning cancelled");
            prune::PruneSpec s = o.spec;
            s.ratio = 0;
            s.rules.clear();
            for (const auto& l : target->layers) {
                if (l.removed() == 0) continue;
                const int64_t want = std::min(l.removed(), int64_t(std::llround(double(k) * o.step * double(l.units))));
                s.rules.emplace_back(l.layer, double(want) / double(l.units));
            }
            s.already_removed = removed;
            auto sk = scored_spec(s);
            if (!sk) return sk.error();
            auto plan = prune::plan_pruning(m, sk.value());
            if (!plan) return plan.error();
            masks = plan->layers;
            removed = removed_of(masks);
            EDGE_TRY(
                train_masked(m, masks, k == rounds ? 0 : o.round_steps, train, o.seed + uint64_t(k), run.train_steps));
            run.rounds = k;
            report(progress, double(k) / rounds, "pruning round " + std::to_string(k) + "/" + std::to_string(rounds));
        }
    } else if (o.mode == PruneMode::Dst) {
        if (o.dst_every <= 0 || o.dst_steps <= 0)
            return err("dynamic sparse training needs positive dst_steps and dst_every");
        const int updates = std::max(1, o.dst_steps / o.dst_every);
        for (int u = 0; u < updates; ++u) {
            if (is_cancelled(progress)) return err("pruning cancelled");
            EDGE_TRY(train_masked(m, masks, o.dst_every, train, o.seed + uint64_t(u), run.train_steps));
            if (u + 1 == updates) break;
            const double frac =
                o.dst_fraction * 0.5 * (1.0 + std::cos(std::numbers::pi * double(u) / double(updates - 1)));
            // Magnitude of the kept units on the current weights; gradient on the removed units'
            // consumer columns (held at zero) for regrowth.
            auto gr = grads(m);
            if (!gr) return gr.error();
            auto groups = prune::find_groups(m);
            if (!groups) return groups.error();
            prune::PruneSpec mag;
            mag.importance = prune::Importance::Magnitude;
            auto scores = prune::unit_importance(m, groups.value(), mag);
            if (!scores) return scores.error();
            for (auto& mk : masks) {
                const int64_t r = mk.removed();
                const int64_t k = std::min(r, int64_t(std::llround(frac * double(r))));
                if (k <= 0) continue;
                const prune::PruneGroup* grp = nullptr;
                for (const auto& x : groups.value())
                    if (x.layer == mk.layer) grp = &x;
                const auto& sc = (*scores)[mk.layer];
                std::vector<std::pair<double, int64_t>> active, dead;
                for (int64_t i = 0; i < mk.units; ++i) {
                    if (mk.keep[size_t(i)]) {
                        active.emplace_back(sc[size_t(i)], i);
                        continue;
                    }
                    double s2 = 0;
                    for (const prune::UnitSlice& s : grp->slices[size_t(i)]) {
                        if (s.axis != 1) continue;
                        const Tensor* t = m.find(s.tensor);
                        const auto& gv = gr->at(s.tensor);
                        const int64_t d0 = t->shape[0], d1 = t->shape[1], rest = t->numel() / (d0 * d1);
                        for (int64_t o2 = 0; o2 < d0; ++o2)
                            for (int64_t c : s.indices)
                                for (int64_t q = 0; q < rest; ++q) {
                                    const double x = gv[size_t((o2 * d1 + c) * rest + q)];
                                    s2 += x * x;
                                }
                    }
                    dead.emplace_back(-std::sqrt(s2), i);  // largest gradient first
                }
                std::sort(active.begin(), active.end());
                std::sort(dead.begin(), dead.end());
                for (int64_t j = 0; j < k; ++j) {
                    mk.keep[size_t(active[size_t(j)].second)] = 0;
                    mk.keep[size_t(dead[size_t(j)].second)] = 1;
                }
                run.units_swapped += k;
            }
            ++run.rounds;
            report(progress, double(u + 1) / updates, "dynamic sparse training update " + std::to_string(u + 1));
        }
    }
    EDGE_TRY(train_masked(m, masks, o.final_steps, train, o.seed + 1000, run.train_steps));
    // The report against the original model: the final masks, re-planned with nothing more to remove.
    prune::PruneSpec fin;
    fin.already_removed = removed_of(masks);
    auto rep = prune::plan_pruning(m0, fin);
    if (!rep) return rep.error();
    for (auto& l : rep->layers)
        for (const auto& t : masks)
            if (t.layer == l.layer && !t.scores.empty()) l.scores = t.scores;
    rep->importance = o.spec.importance;
    auto pruned = prune::apply_masks(m, masks);
    if (!pruned) return pruned.error();
    run.model = std::move(pruned.value());
    run.report = std::move(rep.value());
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return run;
}

}  // namespace

Result<PruneRun> prune_cnn(const Model& m, const calib::LabelledImages& data, const PruneRunOptions& o,
                           Progress* progress) {
    if (!is_cnn(m)) return err(origin(m), ": prune_cnn needs a CNN model");
    if (o.grad_batches <= 0 || o.cnn.batch <= 0) return err("gradient batches and batch size must be positive");
    // Gradients (Taylor scores, DST regrowth) on the first grad_batches * batch images.
    calib::LabelledImages head = data;
    head.count = std::min<int64_t>(data.count, int64_t(o.grad_batches) * o.cnn.batch);
    head.pixels.resize(size_t(head.count * data.image_size()));
    head.labels.resize(size_t(head.count));
    TrainFn train = [&](Model& x, int steps, const WeightMasks* masks, uint64_t seed) -> Status {
        CnnTrainOptions t = o.cnn;
        t.steps = steps;
        t.epochs = 0;
        t.seed = seed;
        if (masks)
            for (const auto& [name, mk] : *masks) {
                auto& dst = t.masks[name];
                dst.resize(mk.size());
                for (size_t i = 0; i < mk.size(); ++i) dst[i] = mk[i] != 0.0f ? 1 : 0;
            }
        return train_cnn(x, data, t);
    };
    GradFn grads = [&](const Model& x) -> Result<prune::Gradients> {
        auto g = torch_cnn_gradients(x, head, {}, o.cnn.batch);
        if (!g) return g.error();
        return prune::Gradients(std::move(g.value()));
    };
    return run_modes(m, o, train, grads, progress);
}

Result<PruneRun> prune_llama(const Model& m, const std::vector<std::vector<int32_t>>& seqs, const PruneRunOptions& o,
                             Progress* progress) {
    if (is_cnn(m)) return err(origin(m), ": prune_llama needs a llama model");
    TrainFn train = [&](Model& x, int steps, const WeightMasks* masks, uint64_t seed) -> Status {
        TrainOptions t;
        t.steps = steps;
        t.seed = seed;
        t.batch = o.llm_batch;
        t.seq_len = o.llm_seq_len;
        t.lr = o.llm_lr;
        t.threads = o.threads;
        t.masks = masks;
        return train_llama(x, seqs, t);
    };
    GradFn grads = [&](const Model& x) {
        return torch_llama_gradients(x, seqs, o.grad_batches, o.llm_batch, o.llm_seq_len, o.seed);
    };
    return run_modes(m, o, train, grads, progress);
}

}  // namespace edge::analysis
