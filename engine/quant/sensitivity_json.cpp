// The JSON of per-layer sensitivity (engine/quant/sensitivity.h): what `sensitivity --out`, the
// studio's Sensitivity page and its projects write and read. Apart from the measuring code, so the
// readers that only parse (the project fuzzer) need no runtime.
#include <cstdint>
#include <nlohmann/json.hpp>

#include "engine/quant/sensitivity.h"

namespace edge::quant {

std::string sensitivity_to_json(const std::vector<LayerSensitivity>& s) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const LayerSensitivity& l : s)
        j.push_back({{"layer", l.layer},
                     {"kind", l.kind},
                     {"block", l.block},
                     {"shape", l.shape},
                     {"kl_mean", l.kl_mean},
                     {"kl_max", l.kl_max},
                     {"nll_delta", l.nll_delta},
                     {"bytes", l.bytes}});
    return j.dump(1);
}

Result<std::vector<LayerSensitivity>> sensitivity_from_json(std::string_view text) {
    auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_array()) return err("sensitivity JSON: expected an array of layers");
    std::vector<LayerSensitivity> out;
    for (const auto& e : j) {
        if (!e.is_object() || !e.contains("layer") || !e["layer"].is_string() || !e.contains("kl_mean") ||
            !e["kl_mean"].is_number())
            return err("sensitivity JSON: entry ", out.size(), " needs \"layer\" (string) and \"kl_mean\" (number)");
        // Optional fields, when present, have their types (a wrong one is named, never thrown).
        auto bad = [&](const char* key, bool ok, const char* want) -> Status {
            if (!e.contains(key) || ok) return {};
            return err("sensitivity JSON: entry ", out.size(), " (", e["layer"].get<std::string>(), "): \"", key,
                       "\" must be ", want);
        };
        EDGE_TRY(bad("kind", e.contains("kind") && e["kind"].is_string(), "a string"));
        EDGE_TRY(bad("block", e.contains("block") && e["block"].is_number_integer(), "an integer"));
        EDGE_TRY(bad("kl_max", e.contains("kl_max") && e["kl_max"].is_number(), "a number"));
        EDGE_TRY(bad("nll_delta", e.contains("nll_delta") && e["nll_delta"].is_number(), "a number"));
        EDGE_TRY(bad("bytes", e.contains("bytes") && e["bytes"].is_number_unsigned(), "a byte count"));
        LayerSensitivity l;
        l.layer = e["layer"].get<std::string>();
        l.kind = e.value("kind", std::string());
        const int64_t block = e.value("block", int64_t(-1));
        if (block < -1 || block > INT32_MAX)
            return err("sensitivity JSON: entry ", out.size(), " (", l.layer, "): block ", block, " is out of range");
        l.block = int(block);
        if (e.contains("shape") && e["shape"].is_array())
            for (const auto& d : e["shape"])
                if (d.is_number_integer()) l.shape.push_back(d.get<int64_t>());
        l.kl_mean = e["kl_mean"].get<double>();
        l.kl_max = e.value("kl_max", 0.0);
        l.nll_delta = e.value("nll_delta", 0.0);
        l.bytes = e.value("bytes", size_t(0));
        out.push_back(std::move(l));
    }
    return out;
}

}  // namespace edge::quant
