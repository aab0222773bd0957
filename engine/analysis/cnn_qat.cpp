// QAT: the plan resolved to per-layer fake-quantization specs, then train_cnn().
#include "engine/analysis/cnn_qat.h"

#include <algorithm>

using edge::model::Model;

namespace edge::analysis {

Status qat_finetune_cnn(Model& m, const quant::QuantPlan& plan, const calib::LabelledImages& data,
                        const CnnQatOptions& o, Progress* progress, CnnTrainReport* report) {
    auto choices = quant::resolve_plan(m, plan);
    if (!choices) return choices.error();
    CnnTrainOptions t = o.train;
    for (const quant::LayerChoice& c : choices.value()) {
        if (c.precision != quant::Precision::INT8 && c.precision != quant::Precision::INT4) continue;
        if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), c.layer) == o.only.end()) continue;
        FakeQuantSpec f;
        f.bits = c.spec.bits;
        f.per_channel = true;
        f.symmetric = true;
        t.fake_quant[c.tensor] = f;
    }
    if (t.fake_quant.empty()) return err(plan.source, ": the plan quantizes no layer to fine-tune");
    return train_cnn(m, data, t, progress, report);
}

}  // namespace edge::analysis
