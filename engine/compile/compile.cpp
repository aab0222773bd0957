#include "engine/compile/compile.h"

#include <algorithm>
#include <filesystem>

#include "engine/compile/edge_writer.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"

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

Result<ExecProgram> build_exec_program(const Model& m, int prefill_batch, int max_seq) {
    const Graph g = m.graph.ops.empty() ? build_llama_graph(m.config) : m.graph;
    if (max_seq <= 0) max_seq = std::min(m.config.context_length > 0 ? m.config.context_length : 2048, 4096);
    ExecProgram p;
    p.ops_before = int(g.ops.size());
    p.nodes = fuse(g);
    auto d = plan_memory(p.nodes, g, m.config, 1, max_seq);
    if (!d.ok()) return err(m.source_path, ": ", d.message());
    auto pf = plan_memory(p.nodes, g, m.config, std::max(prefill_batch, 1), max_seq);
    if (!pf.ok()) return err(m.source_path, ": ", pf.message());
    p.decode = std::move(d).value();
    p.prefill = std::move(pf).value();
    return p;
}

Result<CompileReport> compile(const Model& model, const CompileOptions& opts, Progress* progress) {
    if (opts.out_path.empty()) return err(model.source_path, ": no output path given for the engine file");
    EDGE_TRY(validate_llama(model));
    const Model* m = &model;
    std::optional<quant::QuantizeResult> q;
    CompileReport rep;
    rep.out_path = opts.out_path;
    if (opts.plan) {
        report(progress, 0.0, "applying the quantization plan");
        quant::ApplyOptions ao;
        ao.threads = opts.threads;
        auto r = quant::apply_plan(model, *opts.plan, nullptr, nullptr, ao);
        if (!r.ok()) return r.error();
        q = std::move(r).value();
        m = &q->model;
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
    }
    if (is_cancelled(progress)) return err(opts.out_path, ": cancelled");
    report(progress, 0.3, "fusing and planning memory");
    auto plan = build_exec_program(*m, opts.prefill_batch, opts.max_seq);
    if (!plan.ok()) return plan.error();
    rep.nodes_before = plan->ops_before;
    rep.nodes_after = int(plan->nodes.size());
    rep.decode = plan->decode;
    rep.prefill = plan->prefill;
    rep.weight_bytes = m->weight_bytes();
    EdgeWriteInfo info{target_name(opts.target), rep.plan_summary, exec_program_to_json(*plan)};
    EDGE_TRY(write_edge_file(*m, info, opts.out_path, progress));
    std::error_code ec;
    rep.file_bytes = size_t(std::filesystem::file_size(opts.out_path, ec));
    return rep;
}

Result<CompileReport> compile_file(const std::string& model_path, const std::string& plan_path,
                                   const CompileOptions& opts, Progress* progress) {
    auto m = load_model(model_path, {}, progress);
    if (!m.ok()) return m.error();
    CompileOptions o = opts;
    if (!plan_path.empty()) {
        auto p = quant::load_plan(plan_path);
        if (!p.ok()) return p.error();
        o.plan = std::move(p).value();
    }
    return compile(*m, o, progress);
}

Result<Engine> load_engine(const std::string& path, Progress* progress) {
    auto f = read_edge_file(path, progress);
    if (!f.ok()) return f.error();
    auto p = exec_program_from_json(f->program_json, path);
    if (!p.ok()) return p.error();
    return Engine{std::move(f).value(), std::move(p).value()};
}

}  // namespace edge::compile
