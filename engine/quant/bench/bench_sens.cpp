// edge-quant-bench --mode sens: per-layer INT4 sensitivity on the calibration sequences, then
// the k most vs the k least sensitive layers at INT8 (rest INT4), at equal size, on the held-out
// evaluation text (acceptance 3).
#include <algorithm>
#include <cstdio>

#include "bench_common.h"
#include "engine/quant/sensitivity.h"

using edge::model::Model;

using namespace edge;
using namespace edge::quant;

int run_sensitivity_bench(BenchSetup& s) {
    SensitivityOptions so;
    so.threads = s.threads;
    auto sens = layer_sensitivity(*s.model, s.calib.sequences, so);
    if (!sens.ok()) return std::fprintf(stderr, "%s\n", sens.message().c_str()), 1;
    std::vector<LayerSensitivity> sorted = *sens;
    std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.kl_mean > b.kl_mean; });
    std::printf("Per-layer sensitivity: KL of quantizing that layer alone to %s RTN (calibration text)\n\n",
                spec_name(so.spec).c_str());
    std::printf("| rank | layer | shape | KL mean | KL max | NLL delta |\n|---:|---|---|---:|---:|---:|\n");
    for (size_t i = 0; i < sorted.size(); ++i)
        std::printf("| %zu | %s | %lldx%lld | %.5f | %.4f | %+.5f |\n", i + 1, sorted[i].layer.c_str(),
                    (long long)sorted[i].shape[0], (long long)sorted[i].shape[1], sorted[i].kl_mean, sorted[i].kl_max,
                    sorted[i].nll_delta);
    const QuantSpec int8{8, true, QGrouping::Group, 32, QMethod::RTN};
    struct Base {
        const char* name;
        QuantSpec spec;
    };
    const Base bases[] = {{"INT4-RTN g32", {4, true, QGrouping::Group, 32, QMethod::RTN}},
                          {"INT4-GPTQ g32 asym clip", {4, false, QGrouping::Group, 32, QMethod::GPTQ, true}}};
    std::printf(
        "\n| rest at | k | INT8 layers | weight bytes | perplexity | KL vs FP32 | top-1 agreement |\n"
        "|---|---:|---|---:|---:|---:|---:|\n");
    for (const Base& b : bases)
        for (int k : {2, 5}) {
            auto split = split_by_sensitivity(*sens, k);
            if (!split.ok()) return std::fprintf(stderr, "%s\n", split.message().c_str()), 1;
            for (int most = 1; most >= 0; --most) {
                const auto& layers = most ? split->most : split->least;
                auto q = apply_plan(*s.model, mixed_plan(layers, Precision::INT8, int8, b.spec), &s.calib, nullptr,
                                    ApplyOptions{s.threads});
                if (!q.ok()) return std::fprintf(stderr, "%s\n", q.message().c_str()), 1;
                auto qm = std::make_shared<const Model>(std::move(q->model));
                auto row = s.evaluate(qm, false);
                if (!row.ok()) return std::fprintf(stderr, "%s\n", row.message().c_str()), 1;
                std::string names = most ? "most: " : "least: ";
                for (size_t i = 0; i < layers.size(); ++i) names += (i ? ", " : "") + layers[i];
                std::printf("| %s | %d | %s | %zu | %.4f | %.4f | %.2f%% |\n", b.name, k, names.c_str(),
                            qm->weight_bytes(), row->cmp.ppl_test, row->cmp.kl_mean, 100 * row->cmp.top1_agreement);
                std::fflush(stdout);
            }
        }
    return 0;
}
