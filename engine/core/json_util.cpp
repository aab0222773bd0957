#include "engine/core/json_util.h"

namespace edge {

int json_nesting_depth(std::string_view text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
            if (deepest > limit) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

namespace {

template <class J>
Result<J> parse_any(std::string_view text, std::string_view where) {
    if (const int d = json_nesting_depth(text, kMaxJsonDepth); d > kMaxJsonDepth)
        return err(where, ": JSON nested more than ", kMaxJsonDepth, " levels deep (refused)");
    try {
        return J::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {
        // nlohmann's message carries the byte position; drop its "[json.exception.parse_error.101] " tag.
        std::string what = e.what();
        if (auto p = what.find("] "); what.rfind("[json.exception", 0) == 0 && p != std::string::npos)
            what = what.substr(p + 2);
        return err(where, ": not valid JSON: ", what);
    }
}

template <class J>
void excerpt_into(const J& v, std::string& out, size_t max_chars, int depth) {
    if (out.size() > max_chars) return;
    if (v.is_array() || v.is_object()) {
        const bool arr = v.is_array();
        out += arr ? '[' : '{';
        if (depth >= 3 && !v.empty()) {
            out += "...";
        } else {
            bool first = true;
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (out.size() > max_chars) break;
                if (!first) out += ',';
                first = false;
                if (!arr) out += J(it.key()).dump() + ':';
                excerpt_into(*it, out, max_chars, depth + 1);
            }
        }
        out += arr ? ']' : '}';
        return;
    }
    out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

template <class J>
std::string excerpt_any(const J& v, size_t max_chars) {
    std::string s;
    excerpt_into(v, s, max_chars, 0);
    if (s.size() > max_chars) {
        s.resize(max_chars);
        s += "...";
    }
    return s;
}

}  // namespace

Result<nlohmann::json> parse_json(std::string_view text, std::string_view where) {
    return parse_any<nlohmann::json>(text, where);
}
Result<nlohmann::ordered_json> parse_ordered_json(std::string_view text, std::string_view where) {
    return parse_any<nlohmann::ordered_json>(text, where);
}
std::string json_excerpt(const nlohmann::json& v, size_t max_chars) { return excerpt_any(v, max_chars); }
std::string json_excerpt(const nlohmann::ordered_json& v, size_t max_chars) { return excerpt_any(v, max_chars); }

}  // namespace edge
