#include "engine/calib/pseudo_label.h"

#include <algorithm>
#include <cmath>

#include "engine/model/cnn_ir.h"
#include "engine/runtime/cnn/cnn.h"

using edge::model::Model;
using edge::model::Op;
using edge::model::OpType;
using edge::runtime::Activation;
using edge::runtime::CnnExecutor;

namespace edge::calib {

std::vector<std::string> classifier_layers(const Model& cnn) {
    std::vector<std::string> out;
    for (const Op& op : cnn.graph.ops)
        if (op.type == OpType::Conv2d || op.type == OpType::Linear || op.type == OpType::MatMul) out.push_back(op.name);
    return out;
}

Result<PseudoLabels> pseudo_label(const Model& cnn, const std::vector<float>& pixels, int64_t count, int64_t batch,
                                  int threads, const Progress* progress) {
    const std::string src = cnn.source_path.empty() ? cnn.name : cnn.source_path;
    if (count < 1) return err("pseudo-labels: the pool is empty");
    auto exec = CnnExecutor::create(cnn, threads);
    if (!exec) return exec.error();
    const auto& shape = (*exec)->input_shape();
    const int64_t per = shape[1] * shape[2] * shape[3];
    if (int64_t(pixels.size()) != count * per)
        return err(src, ": the pool holds ", pixels.size(), " values for ", count, " images of ", per, " values");
    const bool probabilities = !cnn.graph.ops.empty() && cnn.graph.ops.back().type == OpType::Softmax;
    PseudoLabels pl;
    pl.layers = classifier_layers(cnn);
    pl.label.reserve(size_t(count));
    pl.confidence.reserve(size_t(count));
    batch = std::max<int64_t>(1, batch);
    for (int64_t b = 0; b < count; b += batch) {
        if (is_cancelled(progress)) return err("pseudo-labelling cancelled");
        const int64_t m = std::min(batch, count - b);
        Activation in;
        in.shape = {m, shape[1], shape[2], shape[3]};
        in.data.assign(pixels.begin() + b * per, pixels.begin() + (b + m) * per);
        auto out = (*exec)->run(in);
        if (!out) return out.error();
        const int64_t classes = out->numel() / m;
        if (classes < 2 || classes * m != out->numel())
            return err(src, ": output of ", out->numel(), " values for ", m, " images is not a classifier's");
        pl.classes = int(classes);
        for (int64_t i = 0; i < m; ++i) {
            const float* v = out->data.data() + i * classes;
            const int64_t top = std::max_element(v, v + classes) - v;
            double conf = double(v[top]);
            if (!probabilities) {
                double sum = 0.0;
                for (int64_t c = 0; c < classes; ++c) sum += std::exp(double(v[c]) - double(v[top]));
                conf = 1.0 / sum;
            }
            if (!std::isfinite(conf)) return err(src, ": non-finite output for image ", b + i);
            pl.label.push_back(int32_t(top));
            pl.confidence.push_back(conf);
        }
        report(progress, double(b + m) / double(count), "pseudo-labels");
    }
    return pl;
}

Result<double> threshold_for_depth(const PseudoLabelOptions& opts, int depth, int layers) {
    const auto check = [](double t, const std::string& what) -> Status {
        if (!(t >= 0.0 && t <= 1.0))
            return err("pseudo-label threshold ", t, " for ", what, " is outside [0, 1] (it is a softmax probability)");
        return {};
    };
    EDGE_TRY(check(opts.threshold, "the default"));
    for (const auto& [d, t] : opts.per_depth) {
        if (d < 0 || d >= layers)
            return err("pseudo-label threshold for depth ", d, ": the model has ", layers, " layers (depths 0..",
                       layers - 1, ")");
        EDGE_TRY(check(t, "depth " + std::to_string(d)));
    }
    if (depth < 0 || depth >= layers)
        return err("depth ", depth, " is outside the model's ", layers, " layers (depths 0..", layers - 1, ")");
    const auto it = opts.per_depth.find(depth);
    return it == opts.per_depth.end() ? opts.threshold : it->second;
}

Result<std::vector<int64_t>> accepted_samples(const PseudoLabels& pl, const PseudoLabelOptions& opts, int depth) {
    auto t = threshold_for_depth(opts, depth, int(pl.layers.size()));
    if (!t) return t.error();
    std::vector<int64_t> out;
    for (size_t i = 0; i < pl.confidence.size(); ++i)
        if (pl.confidence[i] >= t.value()) out.push_back(int64_t(i));
    return out;
}

}  // namespace edge::calib
