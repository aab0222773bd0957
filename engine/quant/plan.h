// Quantization plans (*.plan.json): which precision, method and grouping each layer gets.
//
//   {
//     "version": 1,
//     "default": {"precision": "int4", "method": "gptq", "group_size": 32, "symmetric": true},
//     "layers": {                                   // in order; later rules override earlier
//       "blk.*.ffn_down": {"precision": "int8", "group_size": "channel"},
//       "blk.0.attn_q":   {"precision": "fp16"}
//     },
//     "keep": ["output", "blk.0.*"],                // kept at keep_precision (default fp32)
//     "keep_precision": "fp32",
//     "gptq": {"damp": 0.01, "block": 128, "act_order": false},
//     "awq": {"grid": 20}
//   }
// Layer names are canonical (blk.3.attn_q, output); patterns use * (any run of characters) and ?
// (one character). "group_size" is a positive number of elements along the input dimension,
// "channel" (one scale per output row) or, with "grouping": "flat", groups over the flattened
// tensor. "clip": true searches each group's range (rtn.h group_params_clip) instead of plain
// min/max (RTN, AWQ and GPTQ alike). "scales": "fp16" | "fp32" | "auto" says how the group
// scales are stored (auto, the default: half for INT4 where every scale of the tensor fits, float32
// for INT8; rtn.h QuantSpec::scales). "rounding": "ggml" chooses codes and scales by llama.cpp's
// Q8_0 / Q4_0 rules (engine/core/ggml_blocks.h; RTN, symmetric, groups of 32, half scales), so
// the layer exports to GGUF as those types byte for byte; "nearest" (the default) is ours. Without "default", layers no rule names stay as they are.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/quant/rtn.h"

namespace edge::quant {

enum class Precision { FP32, FP16, INT8, INT4 };
const char* precision_name(Precision p);

struct LayerRule {
    std::string pattern;  // "" for the default rule
    std::optional<Precision> precision;
    std::optional<QMethod> method;
    std::optional<QGrouping> grouping;
    std::optional<int64_t> group_size;
    std::optional<bool> symmetric;
    std::optional<bool> clip;                 // "clip": true = per-group clip search (rtn.h group_params_clip)
    std::optional<QuantSpec::Scales> scales;  // "scales": "auto" | "fp32" | "fp16"
    std::optional<bool> ggml_rounding;        // "rounding": "ggml" | "nearest"
};

struct GptqOptions {
    double damp = 0.01;  // fraction of the mean diagonal of H added to it
    int block = 128;     // lazy-update block (columns)
    bool act_order = false;
};
struct AwqOptions {
    int grid = 20;  // α in {0, 1/grid, ..., 1}
};

struct QuantPlan {
    std::optional<LayerRule> defaults;
    std::vector<LayerRule> rules;
    std::vector<std::string> keep;
    Precision keep_precision = Precision::FP32;
    GptqOptions gptq;
    AwqOptions awq;
    std::string source;  // file name for messages
};

// What one layer gets once a plan is resolved against a model.
struct LayerChoice {
    std::string layer;   // blk.3.attn_q
    std::string tensor;  // blk.3.attn_q.weight
    int block = -1;
    std::string kind;
    Precision precision = Precision::FP32;  // FP32: left as it is
    QuantSpec spec;                         // for INT8 / INT4
};

bool glob_match(std::string_view pattern, std::string_view name);
Result<QuantPlan> parse_plan(std::string_view json_text, const std::string& source = "<plan>");
Result<QuantPlan> load_plan(const std::string& path);
std::string plan_to_json(const QuantPlan& p);
// A plan that quantizes every layer the same way (benchmarks, the CLI's --precision shortcut).
QuantPlan uniform_plan(Precision p, QMethod method = QMethod::RTN, int64_t group_size = 32, bool symmetric = true,
                       QGrouping grouping = QGrouping::Group);
// One choice per layer of the model (list_layers order); unknown names and impossible settings
// are errors naming the rule and the layer.
Result<std::vector<LayerChoice>> resolve_plan(const model::Model& m, const QuantPlan& p);

}  // namespace edge::quant
