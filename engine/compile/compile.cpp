#include "engine/compile/compile.h"

#include <algorithm>
#include <filesystem>

#include "engine/compile/edge_writer.h"
#include "engine/model/loader.h"
#include "engine/prune/structured.h"
#include "engine/quant/apply.h"

using edge::model::build_llama_graph;
using edge::model::Graph;
using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;
using edge::model::read_edge_file;
using edge::model::validate_llama;

namespace edge::compile {

const char* target_name(Target t) {
    switch (t) {
        case Target::Cpu: return "cpu";
        case Target::CudaSm87: return "cuda-sm87";
        case Target::CudaSm90: return "cuda-sm90";
    }
    return "?";
}

Result<Target> parse_target(const std::string& s) {
    for (Target t : {Target::Cpu, Target::CudaSm87, Target::CudaSm90})
        if (s == target_name(t)) return t;
    return err("unknown target '", s, "' (expected cpu, cuda-sm87 or cuda-sm90)");
}

Result<ExecProgram> build_exec_program(const Model& m, int prefill_batch, int max_seq, int wide_rows) {
    const Graph g = m.graph.ops.empty() ? build_llama_graph(m.config) : m.graph;
    if (max_seq <= 0) max_seq = std::min(m.config.context_length > 0 ? m.config.context_length : 2048, 4096);
    ExecProgram p;
    p.ops_before = int(g.ops.size());
    p.nodes = fuse(g);
    auto d = plan_memory(p.nodes, g, m.config, 1, max_seq);
    if (!d.ok()) return err(m.source_path, ": ", d.message());
    auto pf = plan_memory(p.nodes, g, m.config, std::max(prefill_batch, 1), max_seq, wide_rows);
    if (!pf.ok()) return err(m.source_path, ": ", pf.message());
    p.decode = std::move(d).value();
    p.prefill = std::move(pf).value();
    return p;
}

Result<CompileReport> compile(const Model& model, const CompileOptions& opts, Progress* progress) {
    if (opts.out_path.empty()) return err(model.source_path, ": no output path given for the engine file");
    EDGE_TRY(validate_llama(model));
    CompileReport rep;
    rep.out_path = opts.out_path;
    auto plan = build_exec_program(model, opts.prefill_batch, opts.max_seq, opts.wide_rows);
    if (!plan.ok()) return plan.error();
    rep.nodes_before = plan->ops_before;
    rep.nodes_after = int(plan->nodes.size());
    rep.decode = plan->decode;
    rep.prefill = plan->prefill;
    EdgeWriteInfo info{target_name(opts.target), "", exec_program_to_json(*plan)};
    if (!opts.plan) {
        EDGE_TRY(write_edge_file(model, info, opts.out_path, progress));
        for (const Tensor& t : model.tensors) rep.weight_bytes += t.nbytes;
    } else {
        // Quantized block by block straight into the file: one block's tensors in memory at a time.
        auto writer = EdgeWriter::create(opts.out_path);
        if (!writer.ok()) return writer.error();
        quant::ApplyOptions ao;
        ao.threads = opts.threads;
        ao.sink = [w = writer->get()](const Tensor& t) { return w->add(t); };
        report(progress, 0.0, "quantizing and writing block by block");
        auto q = quant::apply_plan(model, *opts.plan, opts.calib, progress, ao);
        if (!q.ok()) return q.error();
        size_t n = 0;
        std::string first;
        for (const auto& l : q->layers)
            if (l.format != "fp32") {
                ++n;
                if (first.empty()) first = l.format;
            }
        rep.plan_summary = (opts.plan->source.empty() ? std::string("plan") : opts.plan->source) + ": " +
                           std::to_string(n) + " of " + std::to_string(q->layers.size()) + " layers converted" +
                           (first.empty() ? "" : " (first: " + first + ")");
        info.plan_summary = rep.plan_summary;
        if (is_cancelled(progress)) return err(opts.out_path, ": cancelled");
        EDGE_TRY((*writer)->finish(q->model, info));
        rep.weight_bytes = (*writer)->weight_bytes();
    }
    std::error_code ec;
    rep.file_bytes = size_t(std::filesystem::file_size(opts.out_path, ec));
    return rep;
}

Result<CompileReport> compile_file(const std::string& model_path, const std::string& plan_path,
                                   const CompileOptions& opts, Progress* progress) {
    LoadOptions lo;
    lo.lazy_weights = true;  // compile streams: one tensor read (and converted) at a time
    auto m = load_model(model_path, lo, progress);
    if (!m.ok()) return m.error();
    CompileOptions o = opts;
    if (plan_path.empty()) return compile(*m, o, progress);
    auto p = quant::load_plan(plan_path);
    if (!p.ok()) return p.error();
    o.plan = std::move(p).value();
    // A plan that also prunes: the smaller model is what gets quantized and compiled.
    auto prunes = prune::plan_prunes(plan_path);
    if (!prunes.ok()) return prunes.error();
    if (!*prunes) return compile(*m, o, progress);
    report(progress, 0.0, "pruning");
    auto pruned = prune::prune_with_plan(*m, plan_path);
    if (!pruned.ok()) return pruned.error();
    auto r = compile(pruned->model, o, progress);
    if (r.ok())
        r->plan_summary += (r->plan_summary.empty() ? "" : "; ") + std::string("pruned: ") +
                           pruned->report.config_before + " -> " + pruned->report.config_after;
    return r;
}

Result<Engine> load_engine(const std::string& path, Progress* progress) {
    auto f = read_edge_file(path, progress);
    if (!f.ok()) return f.error();
    auto p = exec_program_from_json(f->program_json, path);
    if (!p.ok()) return p.error();
    return Engine{std::move(f).value(), std::move(p).value()};
}

}  // namespace edge::compile
