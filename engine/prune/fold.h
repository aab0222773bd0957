// Reparameterisation of CNN graphs (IR -> IR, in place; engine/model/cnn_ir.h):
//   - fold_batchnorm: a BatchNorm whose input is a Conv2d (or Linear) output read by nothing
//     else is folded into that op's weight and bias, exactly:
//       a = scale / sqrt(var + eps);  W' = a * W (per output channel);  b' = a * (b - mean) + beta
//     (computed in double, stored in F32).
//   - merge_linear: a constant Add after a Conv2d/Linear whose constant is a per-output-channel
//     vector ([C], [C,1,1], [1,C,1,1], [1,C]) becomes the op's bias; a Linear feeding only another
//     Linear (no activation between) becomes one Linear: W = W2 W1, b = W2 b1 + b2.
// Both drop the tensors that no op uses any more and report node counts before and after.
#pragma once
#include "engine/core/result.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/ir.h"

namespace edge::prune {

struct FoldReport {
    model::NodeCounts before, after;
    int batchnorms_folded = 0;
    int adds_merged = 0;     // constant Adds merged into a bias
    int linears_merged = 0;  // Linear+Linear pairs merged
    int64_t params_before = 0, params_after = 0;
};

Result<FoldReport> fold_batchnorm(model::Model& m);
Result<FoldReport> merge_linear(model::Model& m);
// Both, BatchNorm folding first.
Result<FoldReport> simplify_cnn(model::Model& m);

}  // namespace edge::prune
