// A board's decode cost model (docs/remote.md, "Cost model"): what one token's matrix-vector
// product takes on the board for each linear shape of a model at each precision the runtime runs
// (F32, F16, INT8 and INT4 in groups of 32: the kernels and thread count the agent decodes with),
// and what the rest of a decode step takes (attention, norms, the embedding row, sampling), from
// the deployed engine's own measured time per token. A plan's predicted time per output token is
// the rest plus its layers' products. The agent measures it on deploy (`edge-agent
// --micro-profile ENGINE`); `autoplan --board` chooses plans against it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/core/tensor.h"

namespace edge::runtime {

// The precisions a cost model prices, as LinearTiming::precision names them.
inline constexpr const char* kCostPrecisions[] = {"fp32", "fp16", "int8", "int4"};

// One measured product: a [rows, cols] weight at `precision` ("fp32", "fp16", "int8", "int4")
// times one token's activations, microseconds (median of the repetitions).
struct LinearTiming {
    int64_t rows = 0, cols = 0;
    std::string precision;
    double us = 0.0;
};

struct BoardCostModel {
    std::string cpu;      // the board's processor, as /proc/cpuinfo names it
    std::string kernels;  // "avx512-vnni kernels, 2 threads"
    int threads = 0;
    std::string engine;                 // the engine measured (its file name)
    std::vector<LinearTiming> linears;  // every shape of the engine's linears at every precision
    double engine_tpot_ms = 0.0;        // the engine's measured time per decoded token (median)
    double engine_linear_ms = 0.0;      // what `linears` predict for the engine's own layers
    double rest_ms = 0.0;               // engine_tpot_ms - engine_linear_ms (>= 0)
};

// The precision a weight runs at, by its held type: "fp32", "fp16", "int8" (QI8), "int4" (QI4);
// "" for others (bf16, ggml block types), which the cost model does not price.
std::string executed_precision(const Tensor& w);

// The time of one [rows, cols] product at `precision`, microseconds; an error naming what is
// missing when the model has no such timing.
Result<double> linear_us(const BoardCostModel& cm, int64_t rows, int64_t cols, std::string_view precision);

struct MicroProfileOptions {
    int threads = 0;                             // <= 0: all
    int decode_tokens = 32;                      // tokens the engine decodes for its own time per token
    int repetitions = 15;                        // per product (the median is kept)
    uint64_t stream_bytes = uint64_t(64) << 20;  // copies of each weight cycled so a product
                                                 // reads from memory, as decoding does
};

// Loads the engine (open_executor's CPU path), decodes opts.decode_tokens tokens after a short
// prompt for its time per token, and times a product of every distinct linear shape at every
// precision with random weights in the executor's layouts.
Result<BoardCostModel> micro_profile(const std::string& engine_path, const MicroProfileOptions& opts = {});

std::string cost_model_to_json(const BoardCostModel& cm);
Result<BoardCostModel> cost_model_from_json(std::string_view text, const std::string& source);

// The cost models of several boards in one file (`deploy --cost-models FILE` keeps it, `autoplan
// --board` reads it): {"version": 1, "boards": {"NAME": <cost model>, ...}}.
Result<BoardCostModel> board_cost_model(std::string_view file_text, const std::string& source,
                                        const std::string& board);
// `file_text` ("" for a new file) with board's entry set to `cm`; other boards kept.
Result<std::string> with_board_cost_model(std::string_view file_text, const std::string& source,
                                          const std::string& board, const BoardCostModel& cm);

}  // namespace edge::runtime
