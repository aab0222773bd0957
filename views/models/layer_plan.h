// The per-layer quantization settings the Layers page edits (QtCore only), their validation, their
// estimated size, and their conversion to and from engine/quant plans.
//
// Estimated bytes are exact, not approximations: INT8/INT4 use quant_layout() of
// engine/core/quant_format.h (codes padded to 32-element blocks per row, 64-byte aligned scale and
// zero sections) — the same layout apply_plan() allocates; FP16 is 2 bytes per weight; FP32 leaves
// the weight as the model holds it. Pruning ratios do not change the estimate.
//
// Plan files are engine plans (engine/quant/plan.h) with one exact-name rule per layer. Pruning
// ratios are per pruning group (engine/prune/structured.h: a block's attention, KV heads with
// their query heads, or its MLP channels), so every layer of a group carries its group's ratio;
// they travel in the "prune" key, keyed by group, which `compile` and `quantize` apply first:
//   "prune": {"layers": {"blk.0.attn": 0.25, "blk.3.ffn": 0.5}}   (share of units removed, 0 <= r < 1)
#pragma once
#include <QList>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/model/ir.h"
#include "engine/prune/structured.h"
#include "engine/quant/plan.h"
#include "views/models/result.h"

namespace edge::views {

enum class PlanMethod { None, RTN, AWQ, GPTQ };  // None: floating-point layers

struct LayerSetting {
    edge::quant::Precision precision = edge::quant::Precision::FP32;
    PlanMethod method = PlanMethod::None;
    int64_t group = 32;  // elements per scale along a row; 0 = one scale per output channel
    bool symmetric = true;
    double pruning = 0.0;

    bool quantized() const {
        return precision == edge::quant::Precision::INT8 || precision == edge::quant::Precision::INT4;
    }
    bool operator==(const LayerSetting&) const = default;
};

// A bulk edit: the fields to set on every selected layer.
struct SettingPatch {
    std::optional<edge::quant::Precision> precision;
    std::optional<PlanMethod> method;
    std::optional<int64_t> group;
    std::optional<bool> symmetric;
    std::optional<double> pruning;
};

inline constexpr double kMaxPruning = 0.95;

QString precisionKey(edge::quant::Precision p);  // "int4"
std::optional<edge::quant::Precision> precisionFromKey(const QString& key);
QString methodKey(PlanMethod m);  // "none", "rtn", "awq", "gptq"
std::optional<PlanMethod> methodFromKey(const QString& key);

// Number of elements along a row (the last dimension); the group size may not exceed it.
int64_t rowLength(const edge::model::LayerInfo& layer);
// True when the layer is the output head tied to the token embedding (only RTN may touch it).
bool isTiedOutput(const edge::model::Model& model, const edge::model::LayerInfo& layer);

// Applies `patch` and repairs what follows from it: floating-point precisions take no method
// (reset to None), no group and no asymmetry (reset to the defaults); a layer that becomes
// INT8/INT4 without a method gets RTN, and one whose row is shorter than the default group gets
// one scale per channel; when `repairTied`, AWQ/GPTQ on a tied output head falls back to RTN.
// What stays impossible (an explicit group larger than the row, ...) is for settingProblem().
LayerSetting patched(LayerSetting s, const SettingPatch& patch, const edge::model::LayerInfo& layer, bool tiedOutput,
                     bool repairTied);
// The pruning group a layer belongs to ("blk.3.attn" for attn_q/k/v/output, "blk.3.ffn" for
// ffn_gate/up/down), or "" for layers that are not pruned (the output head).
QString pruneGroupOf(const edge::model::LayerInfo& layer);
// The pruning the settings ask for: one rule per group whose ratio is above 0 (the largest of its
// layers'), magnitude importance. prune::prunes_anything() says whether there is any.
edge::prune::PruneSpec settingsToPruneSpec(const std::vector<edge::model::LayerInfo>& layers,
                                           const std::vector<LayerSetting>& s);

// Empty when `s` is possible for the layer, else a translated reason naming the layer.
QString settingProblem(const LayerSetting& s, const edge::model::LayerInfo& layer, bool tiedOutput);

// Exact bytes of the layer's weight under `s` (see above).
uint64_t estimatedBytes(const LayerSetting& s, const edge::model::LayerInfo& layer);

// A saved plan (layer names and their settings, as projects and configurations keep it) laid onto
// `layers` by name; layers it does not name stay FP32. `matched` (may be null): how many it named.
std::vector<LayerSetting> settingsByName(const std::vector<edge::model::LayerInfo>& layers,
                                         const std::vector<QString>& names, const std::vector<LayerSetting>& settings,
                                         int* matched = nullptr);

// One rule per layer, in layer order; pruning ratios are not part of the engine plan.
edge::quant::QuantPlan settingsToPlan(const std::vector<edge::model::LayerInfo>& layers,
                                      const std::vector<LayerSetting>& s);
// The plan file text: the engine's JSON plus the "prune" key when any ratio is set.
QByteArray settingsToPlanJson(const std::vector<edge::model::LayerInfo>& layers, const std::vector<LayerSetting>& s);
// Reads a plan file against the model. On failure returns false and sets `error` to a message
// naming the file and the problem; `out` is then untouched.
Result loadPlanFile(const QString& path, const edge::model::Model& model,
                    const std::vector<edge::model::LayerInfo>& layers, std::vector<LayerSetting>* out);

}  // namespace edge::views
