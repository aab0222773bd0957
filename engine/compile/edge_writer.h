// Writes a .edge engine file (engine/model/edge_file.h, docs/edge-format.md).
#pragma once
#include <string>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::compile {

struct EdgeWriteInfo {
    std::string target;        // cpu | cuda-sm87 | cuda-sm90
    std::string plan_summary;  // one line: what the quantization plan did ("" = stored precision)
    std::string program_json;  // the execution plan section (exec_program_to_json)
};

// Written beside `path` and renamed over it, so a failed write never loses an existing file.
Status write_edge_file(const Model& m, const EdgeWriteInfo& info, const std::string& path,
                       Progress* progress = nullptr);

}  // namespace edge::compile
