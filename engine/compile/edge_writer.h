// Writes a .edge engine file (engine/model/edge_file.h, docs/edge-format.md).
//
// The weights section comes first and is written tensor by tensor as the compiler produces them
// (EdgeWriter::add), so a compile holds one block's converted tensors at a time, never the whole
// engine; the meta, tokenizer and program sections follow, then the table (with every section's
// checksum, hashed as the bytes went out) and the header are rewritten in place.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::compile {

struct EdgeWriteInfo {
    std::string target;        // cpu | cuda-sm87 | cuda-sm90
    std::string plan_summary;  // one line: what the quantization plan did ("" = stored precision)
    std::string program_json;  // the execution plan section (exec_program_to_json)
};

class EdgeWriter {
public:
    // Opens `path`.partial; the file appears at `path` only when finish() succeeds (a failed or
    // abandoned write never loses an existing file, and leaves no partial one).
    static Result<std::unique_ptr<EdgeWriter>> create(const std::string& path);
    ~EdgeWriter();
    EdgeWriter(const EdgeWriter&) = delete;
    EdgeWriter& operator=(const EdgeWriter&) = delete;

    // Appends one tensor (its data must be present) to the weights section.
    Status add(const Tensor& t);
    // Writes the other sections for model `m` (configuration, tokenizer, metadata; its tensors'
    // data is not used: the table lists what add() wrote, in that order) and moves the file into
    // place.
    Status finish(const model::Model& m, const EdgeWriteInfo& info);

    uint64_t weight_bytes() const { return weight_bytes_; }  // tensor bytes added so far

private:
    struct State;
    explicit EdgeWriter(std::unique_ptr<State> s);
    std::unique_ptr<State> s_;
    uint64_t weight_bytes_ = 0;
};

// Every tensor of `m` through one EdgeWriter; tensors not read yet (a lazily opened model) are
// read, written and let go one at a time.
Status write_edge_file(const model::Model& m, const EdgeWriteInfo& info, const std::string& path,
                       Progress* progress = nullptr);

}  // namespace edge::compile
