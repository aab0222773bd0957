// compile(): Model (+ optional quantization plan) -> .edge engine file. Runs the fusion passes
// and the memory planner on the model's graph, applies the plan (engine/quant, RTN/FP16 unless
// calibration data is given), and writes the file (edge_writer.h). load_engine() reads it back
// with its execution program. edgestudio-cli's `compile` command calls compile_file().
#pragma once
#include <optional>
#include <string>

#include "engine/compile/passes.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/edge_file.h"
#include "engine/model/ir.h"
#include "engine/quant/calib.h"
#include "engine/quant/plan.h"

namespace edge::compile {

enum class Target { Cpu, CudaSm87, CudaSm90 };
const char* target_name(Target t);  // cpu, cuda-sm87, cuda-sm90
Result<Target> parse_target(const std::string& s);

struct CompileOptions {
    Target target = Target::Cpu;
    std::optional<quant::QuantPlan> plan;  // none: weights at their stored precision
    std::string out_path;                  // X.edge
    int prefill_batch = 512;               // batch of the prefill memory plan (tokens a pass)
    int wide_rows = kWideRows;             // rows of its logits and score scratch (MemoryLayout)
    int max_seq = 0;                       // <= 0: the model's context length (capped at 4096)
    int threads = 0;                       // for apply_plan
    // Calibration for a plan with AWQ or GPTQ layers (block-streamed like the rest; null: such a
    // plan is refused by apply_plan with the reason).
    const quant::CalibSet* calib = nullptr;
};

struct CompileReport {
    std::string out_path;
    size_t file_bytes = 0;
    size_t weight_bytes = 0;
    int nodes_before = 0, nodes_after = 0;
    MemoryLayout decode, prefill;
    std::string plan_summary;
};

// Builds the execution program of a model (fusion + memory layouts) without writing anything.
Result<ExecProgram> build_exec_program(const model::Model& m, int prefill_batch, int max_seq,
                                       int wide_rows = kWideRows);

Result<CompileReport> compile(const model::Model& m, const CompileOptions& opts, Progress* progress = nullptr);

// For the CLI: loads `model_path` (any format load_model reads), an optional plan file
// (plan_path empty: stored precision), and compiles to opts.out_path. A plan with a "prune"
// section prunes first (prune::prune_with_plan) and compiles the smaller model.
Result<CompileReport> compile_file(const std::string& model_path, const std::string& plan_path,
                                   const CompileOptions& opts, Progress* progress = nullptr);

// A loaded engine: the model (tensors alias the mapping) and its execution program.
struct Engine {
    model::EdgeFile file;
    ExecProgram program;
};
Result<Engine> load_engine(const std::string& path, Progress* progress = nullptr);

}  // namespace edge::compile
