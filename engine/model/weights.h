// Lazy weights: a model opened with LoadOptions::lazy_weights holds its configuration, tokenizer
// and tensor table, but its GGUF / Hugging Face tensors keep no data ("unread tensors": name, shape,
// type F32, source_type, nbytes = the F32 size, data null). The importer leaves a WeightSource
// behind that reads one tensor from the file mapping exactly as the eager importer would
// (dequantized to F32, Q/K rows permuted, fused tensors split), so a command that streams over
// the model - compile, RTN quantization - holds one tensor's FP32 copy at a time, and `info`,
// `tokenize` or the studio's Model and Layers pages touch no tensor data at all.
//
// The eager path is the same code: load_model without lazy_weights opens lazily, then calls
// load_weights. Every FP32 buffer a source makes is counted (f32_weight_stats), so tests can
// check that a streamed command never held more than one block of FP32 weights.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

class WeightSource {
public:
    virtual ~WeightSource() = default;
    // The F32 contents of unread tensor `t`, as the eager importer makes it (source_type kept).
    virtual Result<Tensor> load_f32(const Tensor& t) const = 0;
    // Unread 2-D tensor `t` the way the CPU executor runs it without an FP32 copy: F32, F16 and
    // BF16 as stored (aliasing the mapping when its rows need no reordering, else copied row by
    // row in their own type), ggml Q8_0 / Q4_0 repacked exactly as QI8 / QI4 (symmetric, groups
    // of 32, half scales: the same codes and scales, rows_as_stored), ggml's other block types
    // (Q4_1, Q5_x, K-quants) kept as blocks for the kernels that dequantize a row at a time.
    // Types no kernel reads come as load_f32 gives them (the default).
    virtual Result<Tensor> load_stored(const Tensor& t) const { return load_f32(t); }
    // Drops the file pages `t` was read from out of this process's resident set (they stay
    // in the page cache). A no-op where the source cannot tell.
    virtual void release(const Tensor& t) const { (void)t; }
};

// A tensor not read yet (no data, and the model has a source to read it from).
inline bool is_unread(const Tensor& t) { return !t.data; }
// True when every tensor of `m` holds its data.
bool weights_resident(const Model& m);

// Reads every unread tensor of `m` through its source, then lets the source go (nothing is left
// to read). The eager importers end with this.
Status load_weights(Model& m, Progress* progress = nullptr);

// Reads every unread tensor of `m` as the executors run it (WeightSource::load_stored): matrices
// in their stored type or repacked, 1-D tensors (norms, biases) as F32. What the CPU executor
// runs from a model file (generate, perplexity, bench, the agent): no FP32 copy of the weights.
Status load_weights_as_stored(Model& m, Progress* progress = nullptr);
// The bytes load_weights_as_stored will hold for `m`'s unread tensors (the preflight's figure).
size_t as_stored_bytes(const Model& m);

// Types load_stored keeps without an FP32 copy: F32, F16, BF16 and ggml's Q8_0, Q4_0, Q4_1,
// Q5_0, Q5_1, Q2_K..Q6_K.
bool runs_as_stored(DType stored);
// The result type of such a type (Q8_0 -> QI8, Q4_0 -> QI4, the rest themselves).
DType as_stored_type(DType stored);
// A [rows, cols] tensor (shape) built from stored rows of `type` (runs_as_stored), row r of the
// result read from row(r) (a row of cols elements as the file holds it): Q8_0 / Q4_0 repacked into
// QI8 / QI4, other types copied as they are. source_type is `type`. What the sources use for tensors
// whose rows are sliced or permuted, or that need repacking.
Result<Tensor> rows_as_stored(const std::string& name, const std::vector<int64_t>& shape, DType type,
                              const std::function<const uint8_t*(int64_t)>& row);

// `t` (a tensor of `m`) as F32: itself (sharing storage) when it is resident F32, else read from
// m's source. Errors name the model and the tensor.
Result<Tensor> weight_f32(const Model& m, const Tensor& t);
// `t` (a tensor of `m`) as the executors hold it: itself when held, else read through the source's
// load_stored (a matrix in its stored type, no FP32 copy): for reading a few rows of a large
// tensor, such as the embedding rows of calibration tokens.
Result<Tensor> weight_as_stored(const Model& m, const Tensor& t);
// Releases the file pages behind unread tensor `t` after a streaming command is done with it.
void release_weight(const Model& m, const Tensor& t);
// Calls use(t) with tensor `t` of `m` as it is held, or - unread - with its F32 contents read for
// the call and let go after it (the file pages released): what the streaming writers do.
Status use_weight(const Model& m, const Tensor& t, const std::function<Status(const Tensor&)>& use);

// `m` itself when its weights are resident, else a copy with every tensor read (for commands
// that need the whole model in memory: the FP32 reference executor, AWQ/GPTQ capture).
Result<std::shared_ptr<const Model>> with_weights(std::shared_ptr<const Model> m, Progress* progress = nullptr);

// FP32 weight bytes made by sources and alive now, and the most alive at once since the last
// reset (process-wide, thread-safe).
struct F32WeightStats {
    size_t live_bytes = 0;
    size_t peak_bytes = 0;
};
F32WeightStats f32_weight_stats();
void reset_f32_weight_peak();
// An owned, 64-byte aligned F32 buffer of n floats whose bytes count in f32_weight_stats while
// alive (what sources allocate their results with).
std::shared_ptr<uint8_t> alloc_counted_f32(int64_t n);

// Bytes the tensors take as stored in their file (dtype_bytes of each source type).
size_t stored_weight_bytes(const Model& m);
// What a model's weights take now, or - lazily opened, nothing read yet - in the file: for labels.
inline size_t shown_weight_bytes(const Model& m) {
    const size_t held = m.weight_bytes();
    return held == 0 && m.weights ? stored_weight_bytes(m) : held;
}

// A placeholder for an F32 tensor of `shape` read later from a source.
Tensor make_unread(std::string name, std::vector<int64_t> shape, DType source_type);

}  // namespace edge::model
