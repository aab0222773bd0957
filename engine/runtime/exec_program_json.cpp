// The plan section of a .edge file as JSON text (docs/edge-format.md, "plan").
#include <nlohmann/json.hpp>

#include "engine/core/json_util.h"

#include "engine/runtime/exec_program.h"

namespace edge::runtime {

namespace {

using nlohmann::json;

json memory_json(const MemoryLayout& m) {
    json bufs = json::array();
    for (const Buffer& b : m.buffers)
        bufs.push_back(
            {{"name", b.name}, {"bytes", b.bytes}, {"first", b.first}, {"last", b.last}, {"offset", b.offset}});
    return {{"batch", m.batch},
            {"wide_rows", m.wide_rows},
            {"arena_bytes", m.arena_bytes},
            {"naive_bytes", m.naive_bytes},
            {"peak_live_bytes", m.peak_live_bytes},
            {"buffers", bufs}};
}

MemoryLayout memory_from(const json& j) {
    MemoryLayout m;
    m.batch = j.at("batch");
    m.wide_rows = j.value("wide_rows", m.batch);
    m.arena_bytes = j.at("arena_bytes");
    m.naive_bytes = j.at("naive_bytes");
    m.peak_live_bytes = j.at("peak_live_bytes");
    for (const json& b : j.at("buffers"))
        m.buffers.push_back(Buffer{b.at("name"), b.at("bytes"), b.at("first"), b.at("last"), b.at("offset")});
    return m;
}

}  // namespace

std::string exec_program_to_json(const ExecProgram& p) {
    json nodes = json::array();
    for (const FusedNode& n : p.nodes) {
        json j{{"kind", n.kind},     {"name", n.name},       {"ops", n.ops},
               {"inputs", n.inputs}, {"outputs", n.outputs}, {"weights", n.weights}};
        if (!n.prologue.empty()) j["prologue"] = {n.prologue, n.prologue_weight};
        if (!n.epilogue.empty()) j["epilogue"] = {n.epilogue, n.epilogue_input};
        nodes.push_back(std::move(j));
    }
    const json j{{"version", 1},
                 {"ops_before", p.ops_before},
                 {"nodes_after", p.nodes.size()},
                 {"nodes", nodes},
                 {"memory", {{"decode", memory_json(p.decode)}, {"prefill", memory_json(p.prefill)}}}};
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<ExecProgram> exec_program_from_json(const std::string& text, const std::string& where) {
    try {
        const json j = json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object()) return err(where, ": section 'plan': not valid JSON");
        if (j.at("version") != 1)
            return err(where, ": section 'plan': plan version ", json_excerpt(j.at("version")),
                       " is not supported (expected 1)");
        ExecProgram p;
        p.ops_before = j.at("ops_before");
        for (const json& n : j.at("nodes")) {
            FusedNode f;
            f.kind = n.at("kind");
            f.name = n.at("name");
            f.ops = n.at("ops").get<std::vector<int>>();
            f.inputs = n.at("inputs").get<std::vector<std::string>>();
            f.outputs = n.at("outputs").get<std::vector<std::string>>();
            f.weights = n.at("weights").get<std::vector<std::string>>();
            if (n.contains("prologue")) {
                f.prologue = n.at("prologue").at(0);
                f.prologue_weight = n.at("prologue").at(1);
            }
            if (n.contains("epilogue")) {
                f.epilogue = n.at("epilogue").at(0);
                f.epilogue_input = n.at("epilogue").at(1);
            }
            p.nodes.push_back(std::move(f));
        }
        p.decode = memory_from(j.at("memory").at("decode"));
        p.prefill = memory_from(j.at("memory").at("prefill"));
        return p;
    } catch (const std::exception& e) {
        return err(where, ": section 'plan': malformed: ", e.what());
    }
}

}  // namespace edge::runtime
