// LlamaConfig <-> JSON, one definition for every file that stores a config (.edgeq, .edge) and
// for `edgestudio-cli info --json`.
#pragma once
#include <nlohmann/json.hpp>

#include "engine/model/ir.h"

namespace edge {

nlohmann::json llama_config_to_json(const LlamaConfig& c);
// Throws nlohmann::json exceptions on missing keys or wrong types; callers parse inside their
// own try block and turn the exception into an error naming their file.
LlamaConfig llama_config_from_json(const nlohmann::json& j);

}  // namespace edge
