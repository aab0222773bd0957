// Reading user-supplied JSON safely: a nesting limit checked before nlohmann builds (and later
// copies or prints) anything recursive, and short excerpts of bad values for error messages.
// A hostile file nested 100,000 deep must give an error, not a stack overflow.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/core/result.h"

namespace edge {

// Deepest nesting a reader accepts ([[[...]]] or {"a":{"b":...}}). Real configs, plans,
// tokenizer.json and project files stay under 10.
inline constexpr int kMaxJsonDepth = 128;

// Depth of the deepest array/object in `text` (strings skipped, escapes honoured); stops
// counting once it passes `limit`. Malformed text is the parser's business, not this scan's.
int json_nesting_depth(std::string_view text, int limit = kMaxJsonDepth);

// Parses `text` as JSON. Errors name `where` and say what is wrong: not JSON (with nlohmann's
// byte position), or nested deeper than kMaxJsonDepth.
Result<nlohmann::json> parse_json(std::string_view text, std::string_view where);
Result<nlohmann::ordered_json> parse_ordered_json(std::string_view text, std::string_view where);

// At most `max_chars` of a value's JSON text for an error message ("...," appended when cut).
// Never recurses past a few levels, whatever the value's depth.
std::string json_excerpt(const nlohmann::json& v, size_t max_chars = 48);
std::string json_excerpt(const nlohmann::ordered_json& v, size_t max_chars = 48);

}  // namespace edge
