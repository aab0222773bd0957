// The file half of open_executor.h: tells a compiled engine from other model files, reads it and
// builds its executor (engine_executor.cpp for .edge, LlamaCpu for the rest).
#include "engine/runtime/open_executor.h"

#include <fstream>

#include "engine/model/edge_file.h"
#include "engine/model/loader.h"
#include "engine/model/weights.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/exec_program.h"

using edge::model::is_edge_file;
using edge::model::kEdgeMagic;
using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;
using edge::model::read_edge_file;

namespace edge::runtime {

bool is_compiled_engine(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    uint8_t head[sizeof kEdgeMagic] = {};
    in.read(reinterpret_cast<char*>(head), sizeof head);
    return is_edge_file(head, size_t(in.gcount()));
}

Result<OpenedExecutor> open_executor(const std::string& path, const OpenOptions& o) {
    if (is_compiled_engine(path)) {
        auto f = read_edge_file(path);
        if (!f.ok()) return f.error();
        auto plan = exec_program_from_json(f->program_json, path);
        if (!plan.ok()) return plan.error();
        return make_engine_executor(std::make_shared<const Model>(std::move(f->model)), plan.value(), o, path);
    }
    LoadOptions lo;
    lo.tokenizer_path = o.tokenizer_path;
    lo.lazy_weights = true;
    auto m = load_model(path, lo);
    if (!m.ok()) return m.error();
    // The weights as stored (F16/BF16 aliasing the file, Q8_0/Q4_0 repacked): no FP32 copy.
    EDGE_TRY(model::load_weights_as_stored(*m));
    OpenedExecutor r;
    r.model = std::make_shared<const Model>(std::move(m).value());
    // The K/V live in the caller's PagedKv (the executor holds none until prefill/forward).
    auto exe = LlamaCpu::create(r.model, RuntimeOptions{o.threads, o.max_seq});
    if (!exe.ok()) return err(path, ": ", exe.message());
    r.label = exe.value()->capabilities().name;
    r.exe = std::move(exe).value();
    return r;
}

}  // namespace edge::runtime
