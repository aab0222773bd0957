// CNN sensitivity: torch_cnn_curvature (LibTorch) + quant::cnn_layer_losses (runtime), fused.
#include "engine/analysis/cnn_sensitivity.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/analysis/torch_cnn.h"
#include "engine/model/cnn_ir.h"
#include "engine/quant/cnn_quant.h"

using edge::model::Model;
using edge::model::Op;
using edge::model::OpType;

namespace edge::analysis {

Result<AnalysisReport> analyze_cnn_sensitivity(const Model& m, const calib::LabelledImages& data,
                                               const AnalysisOptions& opts, Progress* progress) {
    if (!(opts.alpha >= 0.0 && opts.alpha <= 1.0)) return err("alpha must be in [0, 1] (got ", opts.alpha, ")");
    const auto t0 = std::chrono::steady_clock::now();
    CnnCurvatureOptions co;
    co.topk = opts.topk;
    co.lanczos_steps = opts.lanczos_steps;
    co.hessian_images = opts.hessian_sequences;
    co.batches = opts.batches;
    co.batch_size = opts.batch_size;
    co.seed = opts.seed;
    co.threads = opts.threads;
    auto curv = torch_cnn_curvature(m, data, co, progress);
    if (!curv) return curv.error();
    AnalysisReport rep;
    rep.options = opts;
    rep.options.seq_len = 0;
    rep.quant_spec = "int4 sym channel";
    for (const LayerCurvature& c : *curv) {
        LayerAnalysis L;
        L.layer = c.layer;
        L.kind = "conv";
        for (const Op& op : m.graph.ops)
            if (op.name == c.layer && op.type == OpType::Linear) L.kind = "linear";
        L.shape = m.find(c.tensor)->shape;
        L.params = c.params;
        L.eigenvalues = c.eigenvalues;
        const double n = double(c.grad_norms.size());
        for (double g : c.grad_norms) L.grad_norm_mean += g / n;
        double var = 0;
        for (double g : c.grad_norms) var += (g - L.grad_norm_mean) * (g - L.grad_norm_mean);
        L.grad_norm_std = c.grad_norms.size() > 1 ? std::sqrt(var / (n - 1.0)) : 0.0;
        rep.layers.push_back(std::move(L));
    }
    fuse_importance(rep.layers, opts.alpha);
    if (opts.quant) {
        const int64_t n = std::min<int64_t>(data.count, std::max(1, opts.quant_sequences));
        std::vector<float> px(data.pixels.begin(), data.pixels.begin() + n * data.image_size());
        std::vector<uint8_t> lb(data.labels.begin(), data.labels.begin() + n);
        auto losses = quant::cnn_layer_losses(m, quant::Precision::INT4, px, lb, progress);
        if (!losses) return err("empirical INT4 pass: ", losses.message());
        for (const quant::CnnLayerLoss& q : *losses)
            for (LayerAnalysis& L : rep.layers)
                if (L.layer == q.layer) {
                    L.int4_kl = q.kl_mean;
                    L.int4_kl_max = q.kl_max;
                    L.int4_nll_delta = q.nll_delta;
                    L.int4_top1_delta = q.top1 - q.top1_ref;
                    // codes at 4 bits plus one f32 scale per output channel
                    L.int4_bytes = (q.params + 1) / 2 + int64_t(L.shape.empty() ? 0 : L.shape[0]) * 4;
                }
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report(progress, 1.0, "done");
    return rep;
}

}  // namespace edge::analysis
