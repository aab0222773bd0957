// Structured pruning over the one IR (no Qt, no LibTorch; docs/pruning.md).
//
// A *group* is what a plan, the CLI table and the studio's Pruning page call a layer: a set of
// weight tensors whose units are removed together.
//   - LLM attention, "blk.N.attn": units are KV heads. GQA: a KV head goes with its whole query
//     group (n_heads / n_kv_heads query heads), so a unit removes that many attn_q row blocks,
//     one attn_k and one attn_v row block, and the matching attn_output columns.
//   - LLM MLP, "blk.N.ffn": units are intermediate channels (ffn_gate and ffn_up rows, ffn_down
//     columns).
//   - CNN, named after its first producing conv: units are output channels. Dependencies are
//     followed channel by channel (union-find over the channels of every value): BatchNorm, Relu
//     and pooling follow their input, a residual Add ties the channels of both operands (and so
//     of every conv feeding the chain), a channel Pad maps its input channels onto shifted
//     output channels, and consumers (Conv2d input channels, Linear column blocks after a
//     flatten) shrink. Channels tied to the graph input or output, or reaching an op whose
//     channel mapping is not followed (grouped conv, MatMul, Softmax, an un-followable Reshape),
//     are pinned: the group is listed with the reason and cannot be pruned.
//
// Importance of a unit (higher = keep):
//   magnitude  L2 norm of every weight the unit removes (producer rows, consumer columns); a
//              producer followed by BatchNorm counts with its folded scale gamma/sqrt(var+eps).
//   taylor     sum over the same weights of |w * dL/dw|; the caller supplies the gradients (mean
//              over calibration batches; engine/analysis/prune_finetune.h computes them).
//   hessian    the fused Hessian importance of the group's layers (engine/analysis/sensitivity,
//              one number per layer, mean over the group's member layers) times the unit's
//              magnitude relative to its group's mean. With one global ratio the CNN removals
//              are then ranked across the conv groups, so layers with a larger Hessian score lose
//              fewer channels (each keeps one and loses at most twice the ratio). LLM groups keep
//              the per-layer count (blocks share one config: an uneven split would only be zero
//              padding); give LLMs per-layer ratios in a plan instead.
//
// A ratio r removes round(r * units) units of a group (lowest importance first). A ratio that
// would remove every unit of a group is refused with an error naming the group; a plan naming a
// layer that matches no group is refused.
//
// Physically pruning (apply_masks) gives a smaller Model that the runtime runs and the exporters
// write: LLM configs stay uniform across blocks (n_kv_heads, n_heads, hidden_dim = the largest
// kept count over the blocks; a block that keeps fewer gets zero units, which contribute exactly
// nothing), CNN tensors and op attributes shrink. mask_model() zeroes the removed units in place
// instead (same shapes); both give the same outputs (tested).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/ir.h"

namespace edge::prune {

enum class Importance { Magnitude, Taylor, Hessian };
Result<Importance> parse_importance(std::string_view name);  // magnitude|taylor|hessian
const char* importance_name(Importance i);

enum class UnitKind { AttentionHeads, MlpChannels, ConvChannels };
const char* unit_kind_name(UnitKind k);  // "heads", "mlp", "conv"

// One weight tensor slice a unit owns: rows (axis 0) or columns (axis 1, for consumers) of
// `tensor`, or entries of a 1-D tensor (bias, BatchNorm, constant Add).
struct UnitSlice {
    std::string tensor;
    int axis = 0;                  // 0: rows (or entries), 1: columns
    std::vector<int64_t> indices;  // along that axis, ascending
};

struct PruneGroup {
    std::string layer;  // "blk.3.attn", "blk.3.ffn", "layer1.0.conv1"
    UnitKind kind = UnitKind::ConvChannels;
    int block = -1;                              // LLM decoder block, -1 for CNN groups
    int64_t units = 0;                           // KV heads / channels
    int query_heads_per_unit = 1;                // GQA group size (attention only)
    std::vector<std::string> producers;          // layers whose outputs are the units (attn_q, ..., convs)
    std::vector<std::string> consumers;          // layers whose inputs shrink (attn_output, ffn_down, next convs)
    std::vector<std::string> followers;          // other ops carrying the channels (BatchNorm, Add, Pad, Reshape)
    std::vector<std::vector<UnitSlice>> slices;  // per unit: every weight slice it removes
    bool prunable = true;
    std::string pinned_reason;  // why not, when !prunable
    int64_t params = 0;         // parameters the units own (sum over slices)
};

// Every group of a Llama or CNN model (F32 weights), in graph order.
Result<std::vector<PruneGroup>> find_groups(const model::Model& m);

// Gradients of the loss w.r.t. weight tensors, by tensor name, same element order as the tensor.
using Gradients = std::map<std::string, std::vector<float>>;

struct PruneSpec {
    Importance importance = Importance::Magnitude;
    double ratio = 0.0;                                               // for groups no rule names (0: untouched)
    std::vector<std::pair<std::string, double>> rules;                // pattern (* and ?) -> ratio, later wins
    bool heads = true, mlp = true, conv = true;                       // which kinds `ratio` applies to (rules name any)
    const Gradients* gradients = nullptr;                             // taylor
    const std::map<std::string, double>* layer_importance = nullptr;  // hessian: layer -> fused I
    // Units already removed (e.g. by an earlier iterative round): group -> unit indices. They stay
    // removed and count towards the group's ratio.
    std::map<std::string, std::vector<int64_t>> already_removed;
};

// One group's mask: what the Pruning page shows.
struct LayerMask {
    std::string layer;
    UnitKind kind = UnitKind::ConvChannels;
    int64_t units = 0;
    int query_heads_per_unit = 1;
    std::vector<uint8_t> keep;   // per unit, 1 = kept
    std::vector<double> scores;  // per unit importance (empty when the group was not scored)
    bool prunable = true;
    std::string pinned_reason;
    int64_t params_before = 0, params_after = 0;  // parameters the units own

    int64_t kept() const;
    int64_t removed() const { return units - kept(); }
    double ratio() const { return units ? double(removed()) / double(units) : 0.0; }
    std::vector<int64_t> kept_units() const;
    std::vector<int64_t> removed_units() const;
    // Attention: the query heads of the kept / removed KV heads (KV head h owns query heads
    // h*g .. h*g+g-1). Other kinds: the same as kept_units / removed_units.
    std::vector<int64_t> kept_heads() const;
    std::vector<int64_t> removed_heads() const;
};

struct PruneReport {
    Importance importance = Importance::Magnitude;
    std::vector<LayerMask> layers;  // every group, prunable or not, in graph order
    model::NodeCounts nodes_before, nodes_after;
    int64_t params_before = 0, params_after = 0;  // whole model (after: the physical model)
    std::string config_before, config_after;      // "dim 64, heads 8/4 kv, ffn 172" or "" (CNN)
};

// Scores every prunable group the spec touches and chooses the units to remove. The report's
// params_after/nodes_after describe the physically pruned model (apply_masks) without building it.
Result<PruneReport> plan_pruning(const model::Model& m, const PruneSpec& spec);

// Importance of each unit of each group (prunable groups only; the others get empty vectors).
Result<std::map<std::string, std::vector<double>>> unit_importance(const model::Model& m,
                                                                   const std::vector<PruneGroup>& groups,
                                                                   const PruneSpec& spec);

// Builds the physically smaller model for `masks` (a report's layers; a group missing from
// `masks` keeps every unit). Errors name the group when a mask does not fit the model.
Result<model::Model> apply_masks(const model::Model& m, const std::vector<LayerMask>& masks);
// Zeroes the removed units' weights in place (same shapes): the reference apply_masks must match.
Status mask_model(model::Model& m, const std::vector<LayerMask>& masks);

// Reads the pruning part of a plan file: {"prune": {"importance": "taylor", "ratio": 0.25,
// "layers": {"blk.*.ffn": 0.25, "conv1": 0.5}}} (importance and ratio optional). Errors name the
// file and the key.
Status read_prune_plan(const std::string& path, PruneSpec& spec);

// Whether the plan file at `path` has a "prune" section (a quantization plan may carry one beside
// its layers; `quantize` and `compile` apply it first). Errors only for a file that is not JSON.
Result<bool> plan_prunes(const std::string& path);

// A plan's pruning applied before its quantization: `m` read as F32 where it is not (pruning
// scores and slices whole tensors; the estimate is checked against the machine first), units
// chosen by magnitude (taylor and hessian importance need gradients or an analysis: the `prune`
// command), then physically removed. The smaller model and what was removed.
struct PrunedModel {
    model::Model model;
    PruneReport report;
};
Result<PrunedModel> prune_with_plan(const model::Model& m, const std::string& plan_path);
// The same from a spec (magnitude importance); `what` names the plan in messages.
Result<PrunedModel> prune_with_spec(const model::Model& m, const PruneSpec& spec, const std::string& what);
// Whether a spec removes anything (a ratio or a rule above 0).
bool prunes_anything(const PruneSpec& spec);

// JSON text of a report (masks with kept/removed units, ratios, counts), for the CLI and the GUI.
std::string report_to_json(const PruneReport& r);

// Glob match with * and ? (plan patterns).
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace edge::prune
