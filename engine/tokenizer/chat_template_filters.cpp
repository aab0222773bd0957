// Chat-template filters and tests: jinja2's builtin filters and tests, with the names the parser
// accepts (has_filter, has_test).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/tokenizer/chat_template_impl.h"

namespace edge::tokenizer::jinja {
namespace {

bool arg_true(const std::optional<Value>& v, bool def = false) { return v ? truthy(*v) : def; }

// jinja's attribute paths: "a.b.0" looks up items (then attributes) part by part.
Value attr_path(Renderer& r, const Value& v, const std::string& path) {
    Value cur = v;
    size_t start = 0;
    while (true) {
        size_t dot = path.find('.', start);
        std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (cur.is_undefined()) undefined_error(cur);
        bool digits =
            !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        cur = get_item(r, cur, digits ? make_int(std::strtoll(part.c_str(), nullptr, 10)) : make_str(part));
        if (dot == std::string::npos) return cur;
        start = dot + 1;
    }
}

Value sort_key(const Value& v, bool case_sensitive) {
    if (!case_sensitive && v.is_str()) return make_str(py_lower(v.str()));
    return v;
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

// Python's int(str): optional sign, digits with single underscores, surrounding whitespace.
std::optional<int64_t> parse_int(const std::string& text, int base) {
    std::string s = py_strip(text, 3, std::nullopt);
    std::string clean;
    for (size_t k = 0; k < s.size(); ++k) {
        if (s[k] == '_' && k > 0 && k + 1 < s.size() && std::isalnum(uint8_t(s[k - 1])) &&
            std::isalnum(uint8_t(s[k + 1])))
            continue;
        clean += s[k];
    }
    if (clean.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(clean.c_str(), &end, base);
    if (errno || *end || end == clean.c_str() || std::isspace(uint8_t(clean[0]))) return std::nullopt;
    return int64_t(v);
}
std::optional<double> parse_float(const std::string& text) {
    std::string s = py_strip(text, 3, std::nullopt);
    std::string clean;
    for (char c : s)
        if (c != '_') clean += c;
    if (clean.empty()) return std::nullopt;
    std::string low = py_lower(clean);
    if (low.rfind("0x", 0) == 0 || low.rfind("-0x", 0) == 0 || low.rfind("+0x", 0) == 0) return std::nullopt;
    char* end = nullptr;
    double d = std::strtod(clean.c_str(), &end);
    if (*end || end == clean.c_str()) return std::nullopt;
    return d;
}

Value round_value(const Value& v, int64_t precision, const std::string& method) {
    if (method != "common" && method != "ceil" && method != "floor")
        fail("round: method must be 'common', 'ceil' or 'floor'");
    if (!v.is_number()) fail("round: a number is required, not " + type_name(v));
    if (method == "common") {
        if (is_int(v) && precision >= 0) return make_int(int_of(v, "value"));
        double x = as_double(v);
        if (!std::isfinite(x)) return make_float(x);
        if (precision < 0) {
            double p = std::pow(10.0, double(-precision));
            return make_float(std::nearbyint(x / p) * p);
        }
        char buf[512];
        std::snprintf(buf, sizeof buf, "%.*f", int(std::min<int64_t>(precision, 300)), x);
        return make_float(std::strtod(buf, nullptr));
    }
    double p = std::pow(10.0, double(precision));
    double x = as_double(v) * p;
    return make_float((method == "ceil" ? std::ceil(x) : std::floor(x)) / p);
}

std::string do_indent(const std::string& s, const Value& width, bool first, bool blank) {
    std::string ind =
        width.is_str() ? width.str() : std::string(size_t(std::max<int64_t>(0, int_of(width, "width"))), ' ');
    std::vector<std::string> lines = py_splitlines(s + "\n");
    std::string rv;
    if (blank) {
        for (size_t k = 0; k < lines.size(); ++k) {
            if (k) rv += "\n" + ind;
            rv += lines[k];
        }
    } else {
        rv = lines.empty() ? std::string() : lines[0];
        for (size_t k = 1; k < lines.size(); ++k) {
            rv += "\n";
            if (!lines[k].empty()) rv += ind;
            rv += lines[k];
            if (rv.size() > kMaxString) fail("a string would exceed the output limit");
        }
    }
    if (first) rv = ind + rv;
    return rv;
}

// jinja's title filter: words begin after '-', whitespace, '(', '{', '[' or '<'.
std::string do_title(const std::string& s) {
    std::string out, word;
    auto flush = [&]() {
        if (word.empty()) return;
        auto cps = code_points(word);
        out += py_upper(cps[0]);
        out += py_lower(std::string_view(word).substr(cps[0].size()));
        word.clear();
    };
    for (std::string_view cp : code_points(s)) {
        bool sep = cp == "-" || cp == "(" || cp == "{" || cp == "[" || cp == "<" || is_py_space(cp);
        if (sep) {
            flush();
            out += cp;
        } else {
            word += cp;
        }
    }
    flush();
    return out;
}

int64_t word_count(const std::string& s) {
    int64_t n = 0;
    bool in = false;
    for (std::string_view cp : code_points(s)) {
        const bool w = is_word_cp(cp);
        if (w && !in) ++n;
        in = w;
    }
    return n;
}

std::vector<Value> select_items(Renderer& r, const Value& seq, const Args& a, bool by_attr, bool keep_if) {
    std::vector<Value> items = r.items_of(seq);
    r.charge(int64_t(items.size()));
    Args rest;
    std::string attr, test;
    size_t k = 0;
    if (by_attr) {
        if (a.pos.empty()) fail("selectattr/rejectattr need an attribute name");
        attr = str_of(a.pos[k++], "attribute");
    }
    if (k < a.pos.size()) test = str_of(a.pos[k++], "test name");
    if (!test.empty() && !has_test(test)) fail("no test named '" + test + "'");
    rest.pos.assign(a.pos.begin() + long(k), a.pos.end());
    rest.kw = a.kw;
    std::vector<Value> out;
    for (const Value& x : items) {
        Value subject = by_attr ? attr_path(r, x, attr) : x;
        bool ok = test.empty() ? truthy(subject) : apply_test(r, test, subject, rest);
        if (ok == keep_if) out.push_back(x);
    }
    return out;
}

Value min_max(Renderer& r, const Value& v, const Args& a, bool want_max, const char* fn) {
    auto p = bind_args(a, {"case_sensitive", "attribute"}, fn);
    std::vector<Value> items = r.items_of(v);
    r.charge(int64_t(items.size()));
    if (items.empty()) return make_undefined("No aggregated item, sequence was empty.");
    const bool cs = arg_true(p[0]);
    auto key = [&](const Value& x) {
        Value k = is_none_or_unset(p[1]) ? x : attr_path(r, x, to_str(*p[1]));
        return sort_key(k, cs);
    };
    size_t best = 0;
    Value bk = key(items[0]);
    for (size_t k = 1; k < items.size(); ++k) {
        Value kk = key(items[k]);
        int c = py_cmp(kk, bk, want_max ? ">" : "<");
        if (want_max ? c > 0 : c < 0) {
            best = k;
            bk = kk;
        }
    }
    return items[best];
}

const char* const kFilters[] = {"abs",      "attr",  "capitalize", "center", "count",      "d",           "default",
                                "dictsort", "e",     "escape",     "first",  "float",      "forceescape", "format",
                                "indent",   "int",   "items",      "join",   "last",       "length",      "list",
                                "lower",    "map",   "max",        "min",    "reject",     "rejectattr",  "replace",
                                "reverse",  "round", "safe",       "select", "selectattr", "sort",        "string",
                                "sum",      "title", "tojson",     "trim",   "unique",     "upper",       "wordcount"};
const char* const kTests[] = {"defined", "undefined", "none",        "boolean", "false",       "true",     "integer",
                              "float",   "number",    "string",      "mapping", "iterable",    "sequence", "callable",
                              "sameas",  "escaped",   "odd",         "even",    "divisibleby", "eq",       "equalto",
                              "==",      "ne",        "!=",          "lt",      "lessthan",    "<",        "le",
                              "<=",      "gt",        "greaterthan", ">",       "ge",          ">=",       "in",
                              "lower",   "upper",     "filter",      "test"};

}  // namespace

bool has_filter(const std::string& name) { return in_list(kFilters, name); }
bool has_test(const std::string& name) { return in_list(kTests, name); }

bool apply_test(Renderer& r, const std::string& name, const Value& v, const Args& a) {
    auto one = [&]() -> const Value& {
        if (a.pos.size() + a.kw.size() != 1) fail("the '" + name + "' test takes one argument");
        return a.pos.empty() ? a.kw[0].second : a.pos[0];
    };
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "boolean") return v.type == Type::Bool;
    if (name == "false") return v.type == Type::Bool && !v.b;
    if (name == "true") return v.type == Type::Bool && v.b;
    if (name == "integer") return v.type == Type::Int;
    if (name == "float") return v.type == Type::Float;
    if (name == "number") return v.is_number();
    if (name == "string") return v.is_str();
    if (name == "mapping") return v.is_dict();
    if (name == "iterable") return v.is_str() || v.is_list() || v.is_dict() || v.is_undefined();
    if (name == "sequence") return v.is_str() || v.is_list() || v.is_dict();
    if (name == "callable") return v.type == Type::Func;
    if (name == "escaped") return false;
    if (name == "sameas") {
        const Value& o = one();
        if (v.type != o.type) return false;
        if (v.obj || o.obj) return v.obj == o.obj;
        return py_eq(v, o);
    }
    if (name == "odd" || name == "even") {
        Value m = v.type == Type::Float ? make_float(std::fmod(std::fmod(v.f, 2.0) + 2.0, 2.0))
                                        : make_int(((int_of(v, "value") % 2) + 2) % 2);
        return py_eq(m, make_int(name == "odd" ? 1 : 0));
    }
    if (name == "divisibleby") {
        const Value& d = one();
        if (!v.is_number() || !d.is_number()) fail("divisibleby needs numbers");
        if (as_double(d) == 0) fail("integer division or modulo by zero");
        if (is_int(v) && is_int(d)) return int_of(v, "value") % int_of(d, "divisor") == 0;
        return std::fmod(as_double(v), as_double(d)) == 0;
    }
    if (name == "eq" || name == "equalto" || name == "==") return py_eq(v, one());
    if (name == "ne" || name == "!=") return !py_eq(v, one());
    if (name == "lt" || name == "lessthan" || name == "<") return py_cmp(v, one(), "<") < 0;
    if (name == "le" || name == "<=") return py_cmp(v, one(), "<=") <= 0;
    if (name == "gt" || name == "greaterthan" || name == ">") return py_cmp(v, one(), ">") > 0;
    if (name == "ge" || name == ">=") return py_cmp(v, one(), ">=") >= 0;
    if (name == "in") return contains(one(), v);
    if (name == "lower") return v.is_str() && py_lower(v.str()) == v.str();
    if (name == "upper") return v.is_str() && py_upper(v.str()) == v.str();
    if (name == "filter") return v.is_str() && has_filter(v.str());
    if (name == "test") return v.is_str() && has_test(v.str());
    (void)r;
    fail("no test named '" + name + "'");
}

Value apply_filter(Renderer& r, const std::string& name, const Value& v, const Args& a) {
    const std::string& fn = name;
    if (v.is_str()) r.charge_bytes(v.str().size());
    if (v.is_list()) r.charge(int64_t(v.list().items.size()));
    if (name == "default" || name == "d") {
        auto p = bind_args(a, {"default_value", "boolean"}, fn);
        const bool boolean = arg_true(p[1]);
        if (v.is_undefined() || (boolean && !truthy(v))) return p[0] ? *p[0] : make_str("");
        return v;
    }
    if (name == "safe" || name == "string") {
        bind_args(a, {}, fn);
        return v.is_str() ? v : make_str(to_str(v));
    }
    if (name == "e" || name == "escape" || name == "forceescape") {
        bind_args(a, {}, fn);
        return make_str(html_escape(to_str(v)));
    }
    if (name == "trim") {
        auto p = bind_args(a, {"chars"}, fn);
        std::optional<std::string> chars;
        if (!is_none_or_unset(p[0])) chars = str_of(*p[0], "chars");
        return make_str(py_strip(to_str(v), 3, chars));
    }
    if (name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
        bind_args(a, {}, fn);
        std::string s = to_str(v);
        if (name == "upper") return make_str(py_upper(s));
        if (name == "lower") return make_str(py_lower(s));
        if (name == "capitalize") return make_str(py_capitalize(s));
        return make_str(do_title(s));
    }
    if (name == "length" || name == "count") {
        bind_args(a, {}, fn);
        return make_int(py_len(v));
    }
    if (name == "first" || name == "last") {
        bind_args(a, {}, fn);
        std::vector<Value> items = r.items_of(v);
        if (items.empty()) return make_undefined("No " + name + " item, sequence was empty.");
        return name == "first" ? items.front() : items.back();
    }
    if (name == "join") {
        auto p = bind_args(a, {"d", "attribute"}, fn);
        const std::string sep = p[0] ? to_str(*p[0]) : std::string();
        std::string out;
        bool first = true;
        for (const Value& x : r.items_of(v)) {
            if (!first) out += sep;
            first = false;
            out += to_str(is_none_or_unset(p[1]) ? x : attr_path(r, x, to_str(*p[1])));
            if (out.size() > kMaxString) fail("a string would exceed the output limit");
        }
        return make_str(std::move(out));
    }
    if (name == "tojson") {
        auto p = bind_args(a, {"ensure_ascii", "indent", "separators", "sort_keys"}, fn);
        JsonOptions o;
        o.ensure_ascii = arg_true(p[0]);
        if (!is_none_or_unset(p[1])) {
            if (p[1]->is_str()) {
                o.indent = p[1]->str();
            } else {
                int64_t n = int_of(*p[1], "indent");
                if (n > 1000) fail("tojson: indent is too large");
                o.indent = std::string(size_t(std::max<int64_t>(0, n)), ' ');
            }
            o.item_sep = ",";
        }
        if (!is_none_or_unset(p[2])) {
            std::vector<Value> seps = r.items_of(*p[2]);
            if (seps.size() != 2) fail("tojson: separators must be a pair of strings");
            o.item_sep = str_of(seps[0], "separator");
            o.key_sep = str_of(seps[1], "separator");
        }
        o.sort_keys = arg_true(p[3]);
        std::string s = to_json(v, o);
        r.charge_bytes(s.size());
        return make_str(std::move(s));
    }
    if (name == "int") {
        auto p = bind_args(a, {"default", "base"}, fn);
        Value def = p[0] ? *p[0] : make_int(0);
        int base = p[1] ? int(int_of(*p[1], "base")) : 10;
        if (is_int(v)) return make_int(int_of(v, "value"));
        if (v.type == Type::Float) {
            if (!std::isfinite(v.f) || std::fabs(v.f) > 9.2e18) return def;
            return make_int(int64_t(std::trunc(v.f)));
        }
        if (v.is_str()) {
            if (auto i = parse_int(v.str(), base)) return make_int(*i);
            if (auto d = parse_float(v.str()))
                if (std::isfinite(*d) && std::fabs(*d) < 9.2e18) return make_int(int64_t(std::trunc(*d)));
        }
        return def;
    }
    if (name == "float") {
        auto p = bind_args(a, {"default"}, fn);
        Value def = p[0] ? *p[0] : make_float(0.0);
        if (v.is_number()) return make_float(as_double(v));
        if (v.is_str())
            if (auto d = parse_float(v.str())) return make_float(*d);
        return def;
    }
    if (name == "list") {
        bind_args(a, {}, fn);
        return make_list(r.items_of(v));
    }
    if (name == "items") {
        bind_args(a, {}, fn);
        if (v.is_undefined()) return make_list({});
        if (!v.is_dict()) fail("can only get item pairs from a mapping");
        std::vector<Value> out;
        for (const auto& [k, x] : v.dict().items) out.push_back(make_tuple2(k, x));
        return make_list(std::move(out));
    }
    if (name == "dictsort") {
        auto p = bind_args(a, {"case_sensitive", "by", "reverse"}, fn);
        if (!v.is_dict()) fail("dictsort: a mapping is required");
        const bool cs = arg_true(p[0]), rev = arg_true(p[2]);
        const std::string by = p[1] ? to_str(*p[1]) : "key";
        if (by != "key" && by != "value") fail("dictsort: you can only sort by either 'key' or 'value'");
        std::vector<std::pair<Value, Value>> items = v.dict().items;
        std::stable_sort(items.begin(), items.end(), [&](const auto& x, const auto& y) {
            const Value& kx = by == "key" ? x.first : x.second;
            const Value& ky = by == "key" ? y.first : y.second;
            int c = py_cmp(sort_key(kx, cs), sort_key(ky, cs), "<");
            return rev ? c > 0 : c < 0;
        });
        std::vector<Value> out;
        out.reserve(items.size());
        for (auto& [k, x] : items) out.push_back(make_tuple2(k, x));
        return make_list(std::move(out));
    }
    if (name == "reverse") {
        bind_args(a, {}, fn);
        if (v.is_str()) {
            auto cps = code_points(v.str());
            std::string out;
            for (size_t k = cps.size(); k-- > 0;) out += cps[k];
            return make_str(out);
        }
        std::vector<Value> items = r.items_of(v);
        std::reverse(items.begin(), items.end());
        return make_list(std::move(items));
    }
    if (name == "replace") {
        auto p = bind_args(a, {"old", "new", "count"}, fn);
        if (!p[0] || !p[1]) fail("replace() needs the old and new strings");
        return make_str(
            replace_all(to_str(v), to_str(*p[0]), to_str(*p[1]), is_none_or_unset(p[2]) ? -1 : int_of(*p[2], "count")));
    }
    if (name == "round") {
        auto p = bind_args(a, {"precision", "method"}, fn);
        return round_value(v, p[0] ? int_of(*p[0], "precision") : 0, p[1] ? to_str(*p[1]) : "common");
    }
    if (name == "abs") {
        bind_args(a, {}, fn);
        if (v.type == Type::Float) return make_float(std::fabs(v.f));
        int64_t x = int_of(v, "abs() argument");
        if (x == INT64_MIN) fail("integer overflow");
        return make_int(x < 0 ? -x : x);
    }
    if (name == "unique") {
        auto p = bind_args(a, {"case_sensitive", "attribute"}, fn);
        const bool cs = arg_true(p[0]);
        std::vector<Value> out, seen;
        for (const Value& x : r.items_of(v)) {
            Value k = sort_key(is_none_or_unset(p[1]) ? x : attr_path(r, x, to_str(*p[1])), cs);
            bool dup = false;
            for (const Value& s : seen)
                if (py_eq(s, k)) {
                    dup = true;
                    break;
                }
            r.charge(int64_t(seen.size()));
            if (dup) continue;
            seen.push_back(k);
            out.push_back(x);
        }
        return make_list(std::move(out));
    }
    if (name == "sort") {
        auto p = bind_args(a, {"reverse", "case_sensitive", "attribute"}, fn);
        const bool rev = arg_true(p[0]), cs = arg_true(p[1]);
        std::vector<Value> items = r.items_of(v);
        std::vector<std::pair<Value, size_t>> keyed;
        for (size_t k = 0; k < items.size(); ++k)
            keyed.emplace_back(sort_key(is_none_or_unset(p[2]) ? items[k] : attr_path(r, items[k], to_str(*p[2])), cs),
                               k);
        r.charge(int64_t(items.size()) * 20);
        std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
            int c = py_cmp(x.first, y.first, "<");
            return rev ? c > 0 : c < 0;
        });
        std::vector<Value> out;
        out.reserve(keyed.size());
        for (auto& kv : keyed) out.push_back(items[kv.second]);
        return make_list(std::move(out));
    }
    if (name == "map") {
        std::vector<Value> items = r.items_of(v), out;
        std::optional<Value> attribute, def;
        Args rest;
        for (const auto& kv : a.kw) {
            if (kv.first == "attribute") {
                attribute = kv.second;
            } else if (kv.first == "default") {
                def = kv.second;
            } else {
                rest.kw.push_back(kv);
            }
        }
        if (attribute) {
            for (const Value& x : items) {
                Value y = attr_path(r, x, to_str(*attribute));
                out.push_back(y.is_undefined() && def ? *def : y);
            }
            return make_list(std::move(out));
        }
        if (a.pos.empty()) fail("map() needs a filter name or attribute=");
        const std::string f = str_of(a.pos[0], "filter name");
        if (!has_filter(f)) fail("no filter named '" + f + "'");
        rest.pos.assign(a.pos.begin() + 1, a.pos.end());
        for (const Value& x : items) out.push_back(apply_filter(r, f, x, rest));
        return make_list(std::move(out));
    }
    if (name == "select" || name == "reject") return make_list(select_items(r, v, a, false, name == "select"));
    if (name == "selectattr" || name == "rejectattr")
        return make_list(select_items(r, v, a, true, name == "selectattr"));
    if (name == "indent") {
        auto p = bind_args(a, {"width", "first", "blank"}, fn);
        return make_str(do_indent(to_str(v), p[0] ? *p[0] : make_int(4), arg_true(p[1]), arg_true(p[2])));
    }
    if (name == "wordcount") {
        bind_args(a, {}, fn);
        return make_int(word_count(to_str(v)));
    }
    if (name == "center") {
        auto p = bind_args(a, {"width"}, fn);
        Args ca;
        ca.pos.push_back(p[0] ? *p[0] : make_int(80));
        return call_method(r, make_str(to_str(v)), "center", ca);
    }
    if (name == "min" || name == "max") return min_max(r, v, a, name == "max", name.c_str());
    if (name == "sum") {
        auto p = bind_args(a, {"attribute", "start"}, fn);
        Value acc = p[1] ? *p[1] : make_int(0);
        for (const Value& x : r.items_of(v)) {
            Value y = is_none_or_unset(p[0]) ? x : attr_path(r, x, to_str(*p[0]));
            if (!acc.is_number() || !y.is_number()) fail("sum: unsupported operand types");
            if (acc.type == Type::Float || y.type == Type::Float) {
                acc = make_float(as_double(acc) + as_double(y));
            } else {
                int64_t s;
                if (__builtin_add_overflow(int_of(acc, "sum"), int_of(y, "sum"), &s)) fail("integer overflow");
                acc = make_int(s);
            }
        }
        return acc;
    }
    if (name == "attr") {
        auto p = bind_args(a, {"name"}, fn);
        if (!p[0]) fail("attr() needs a name");
        if (v.is_undefined()) undefined_error(v);
        return get_attr(r, v, to_str(*p[0]));
    }
    if (name == "format") {
        if (!v.is_str()) fail("format: the format must be a string");
        if (!a.kw.empty()) fail("format: keyword arguments are not supported");
        return percent_format(v.str(), make_list(a.pos, true));
    }
    fail("unknown filter '" + name + "'");
}

}  // namespace edge::tokenizer::jinja
