// The cost model's JSON (engine/runtime/cost_model.h): one board's model and the per-board file.
// Apart from the measuring code so the fuzz target (tests/fuzz/fuzz_cost_model.cpp) links it
// without the runtime.
#include <algorithm>
#include <iterator>

#include "engine/core/json_util.h"
#include "engine/runtime/cost_model.h"

namespace edge::runtime {

std::string cost_model_to_json(const BoardCostModel& cm) {
    nlohmann::ordered_json j;
    j["version"] = 1;
    j["cpu"] = cm.cpu;
    j["kernels"] = cm.kernels;
    j["threads"] = cm.threads;
    j["engine"] = cm.engine;
    j["engine_tpot_ms"] = cm.engine_tpot_ms;
    j["engine_linear_ms"] = cm.engine_linear_ms;
    j["rest_ms"] = cm.rest_ms;
    nlohmann::ordered_json ls = nlohmann::ordered_json::array();
    for (const LinearTiming& l : cm.linears)
        ls.push_back({{"rows", l.rows}, {"cols", l.cols}, {"precision", l.precision}, {"us", l.us}});
    j["linears"] = ls;
    return j.dump(2) + "\n";
}

Result<BoardCostModel> cost_model_from_json(std::string_view text, const std::string& source) {
    auto parsed = parse_json(text, source);
    if (!parsed.ok()) return parsed.error();
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) return err(source, ": a cost model is a JSON object");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int64_t>() != 1)
        return err(source, ": cost model version ", j.contains("version") ? json_excerpt(j["version"]) : "(none)",
                   " is not 1");
    BoardCostModel cm;
    auto text_of = [&](const char* key, std::string& out) -> Status {
        if (!j.contains(key)) return {};
        if (!j[key].is_string()) return err(source, ": '", key, "' must be a string, not ", json_excerpt(j[key]));
        out = j[key].get<std::string>();
        return {};
    };
    auto number_of = [&](const nlohmann::json& o, const char* key, double& out, const std::string& where) -> Status {
        if (!o.contains(key) || !o[key].is_number())
            return err(source, ": ", where, "'", key, "' must be a number",
                       o.contains(key) ? ", not " + json_excerpt(o[key]) : "");
        out = o[key].get<double>();
        if (!(out >= 0.0) || out > 1e12) return err(source, ": ", where, "'", key, "' is out of range: ", out);
        return {};
    };
    EDGE_TRY(text_of("cpu", cm.cpu));
    EDGE_TRY(text_of("kernels", cm.kernels));
    EDGE_TRY(text_of("engine", cm.engine));
    double threads = 0;
    EDGE_TRY(number_of(j, "threads", threads, ""));
    cm.threads = int(std::min(threads, 4096.0));
    EDGE_TRY(number_of(j, "engine_tpot_ms", cm.engine_tpot_ms, ""));
    EDGE_TRY(number_of(j, "engine_linear_ms", cm.engine_linear_ms, ""));
    EDGE_TRY(number_of(j, "rest_ms", cm.rest_ms, ""));
    if (!j.contains("linears") || !j["linears"].is_array()) return err(source, ": 'linears' must be an array");
    for (size_t i = 0; i < j["linears"].size(); ++i) {
        const nlohmann::json& l = j["linears"][i];
        const std::string where = "linears[" + std::to_string(i) + "]: ";
        if (!l.is_object()) return err(source, ": ", where, "not an object: ", json_excerpt(l));
        LinearTiming t;
        double rows = 0, cols = 0;
        EDGE_TRY(number_of(l, "rows", rows, where));
        EDGE_TRY(number_of(l, "cols", cols, where));
        EDGE_TRY(number_of(l, "us", t.us, where));
        if (rows < 1 || cols < 1 || rows > 1e9 || cols > 1e9)
            return err(source, ": ", where, "a ", rows, "x", cols, " weight is not a matrix shape");
        t.rows = int64_t(rows);
        t.cols = int64_t(cols);
        if (!l.contains("precision") || !l["precision"].is_string() ||
            std::none_of(std::begin(kCostPrecisions), std::end(kCostPrecisions),
                         [&](const char* p) { return l["precision"].get<std::string>() == p; }))
            return err(source, ": ", where, "'precision' must be one of fp32, fp16, int8, int4",
                       l.contains("precision") ? ", not " + json_excerpt(l["precision"]) : "");
        t.precision = l["precision"].get<std::string>();
        cm.linears.push_back(std::move(t));
    }
    return cm;
}

namespace {

Result<nlohmann::json> boards_file(std::string_view text, const std::string& source) {
    if (text.empty()) return nlohmann::json{{"version", 1}, {"boards", nlohmann::json::object()}};
    auto j = parse_json(text, source);
    if (!j.ok()) return j.error();
    if (!j->is_object() || !j->contains("boards") || !(*j)["boards"].is_object())
        return err(source, ": a cost-model file is {\"version\": 1, \"boards\": {NAME: model, ...}}");
    if (!j->contains("version") || (*j)["version"] != 1)
        return err(source, ": cost-model file version ",
                   j->contains("version") ? json_excerpt((*j)["version"]) : "(none)", " is not 1");
    return j;
}

}  // namespace

Result<BoardCostModel> board_cost_model(std::string_view file_text, const std::string& source,
                                        const std::string& board) {
    auto j = boards_file(file_text, source);
    if (!j.ok()) return j.error();
    const nlohmann::json& boards = (*j)["boards"];
    if (!boards.contains(board)) {
        std::string known;
        for (auto it = boards.begin(); it != boards.end(); ++it) known += (known.empty() ? "" : ", ") + it.key();
        return err(source, ": no cost model for board '", board, "' (", known.empty() ? "none yet" : "has " + known,
                   "); deploy to it with --cost-models ", source);
    }
    return cost_model_from_json(boards[board].dump(), source + ": board '" + board + "'");
}

Result<std::string> with_board_cost_model(std::string_view file_text, const std::string& source,
                                          const std::string& board, const BoardCostModel& cm) {
    auto j = boards_file(file_text, source);
    if (!j.ok()) return j.error();
    (*j)["boards"][board] = nlohmann::json::parse(cost_model_to_json(cm));
    return j->dump(2) + "\n";
}

}  // namespace edge::runtime
