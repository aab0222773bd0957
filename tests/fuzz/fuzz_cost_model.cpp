// libFuzzer target: a boards' cost-model file (what deploy --cost-models writes and autoplan --board,
// predict-tpot read; engine/runtime/cost_model.h) -> board_cost_model for a board it may name, and
// one board's model alone; whatever parses is written back and must read back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/runtime/cost_model.h"

namespace {

void same_after_round_trip(const edge::runtime::BoardCostModel& cm) {
    auto text = edge::runtime::with_board_cost_model("", "<fuzz>", "b", cm);
    if (!text.ok()) std::abort();  // a model we read must write
    auto back = edge::runtime::board_cost_model(*text, "<fuzz>", "b");
    if (!back.ok() || back->linears.size() != cm.linears.size() || back->threads != cm.threads) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const char* board : {"orin", "b"}) {
        auto cm = edge::runtime::board_cost_model(text, "<fuzz>", board);
        if (cm.ok()) {
            same_after_round_trip(*cm);
            auto merged = edge::runtime::with_board_cost_model(text, "<fuzz>", "other", *cm);
            if (!merged.ok()) std::abort();  // a file we read takes another board
        }
    }
    auto one = edge::runtime::cost_model_from_json(text, "<fuzz>");
    if (one.ok()) same_after_round_trip(*one);
    return 0;
}
