// Chat-template values with Python semantics: construction, truthiness, str()/repr() printing,
// equality and ordering, json.dumps, and the Unicode helpers the string methods need.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/tokenizer/chat_template_impl.h"

namespace edge::tokenizer::jinja {

void fail(std::string msg) { throw Fail{std::move(msg), {}, false}; }
void fail_at(Pos p, std::string msg) { throw Fail{std::move(msg), p, true}; }

std::string excerpt(std::string_view s) {
    std::string out = "'";
    size_t n = 0;
    for (std::string_view cp : code_points(s)) {
        if (n++ == 40) {
            out += "...";
            break;
        }
        if (cp == "\n") {
            out += "\\n";
        } else if (cp.size() == 1 && (uint8_t(cp[0]) < 0x20 || cp[0] == 0x7f)) {
            out += '?';
        } else {
            out += cp;
        }
    }
    return out + "'";
}

// ---- construction ----
Value make_none() {
    Value v;
    v.type = Type::None;
    return v;
}
Value make_bool(bool b) {
    Value v;
    v.type = Type::Bool;
    v.b = b;
    return v;
}
Value make_int(int64_t i) {
    Value v;
    v.type = Type::Int;
    v.i = i;
    return v;
}
Value make_float(double f) {
    Value v;
    v.type = Type::Float;
    v.f = f;
    return v;
}
Value make_str(std::string s) {
    if (s.size() > kMaxString) fail("a string would exceed the " + std::to_string(kMaxString >> 20) + " MiB limit");
    Value v;
    v.type = Type::Str;
    v.obj = std::make_shared<std::string>(std::move(s));
    return v;
}
Value make_undefined(std::string hint) {
    Value v;
    if (!hint.empty()) v.obj = std::make_shared<std::string>(std::move(hint));
    return v;
}
static int child_depth(const Value& v) {
    if (v.type == Type::List) return v.list().depth;
    if (v.type == Type::Dict) return v.dict().depth;
    return 0;
}
Value make_list(std::vector<Value> items, bool tuple) {
    if (items.size() > kMaxListSize) fail("a list would exceed " + std::to_string(kMaxListSize) + " items");
    auto l = std::make_shared<ListObj>();
    int d = 0;
    for (const Value& x : items) d = std::max(d, child_depth(x));
    if (d + 1 > kMaxValueDepth) fail("lists and dicts nested more than " + std::to_string(kMaxValueDepth) + " deep");
    l->depth = d + 1;
    l->items = std::move(items);
    l->tuple = tuple;
    Value v;
    v.type = Type::List;
    v.obj = std::move(l);
    return v;
}
Value make_dict(std::vector<std::pair<Value, Value>> items) {
    auto m = std::make_shared<DictObj>();
    int d = 0;
    for (auto& item : items) {
        const Value& k = item.first;
        if (k.type == Type::List && !k.list().tuple) fail("unhashable type: 'list'");
        if (k.type == Type::Dict) fail("unhashable type: 'dict'");
        d = std::max(d, child_depth(item.second));
        const auto same =
            std::find_if(m->items.begin(), m->items.end(), [&](const auto& kv) { return py_eq(kv.first, k); });
        if (same != m->items.end())
            same->second = std::move(item.second);
        else
            m->items.push_back(std::move(item));
    }
    if (d + 1 > kMaxValueDepth) fail("lists and dicts nested more than " + std::to_string(kMaxValueDepth) + " deep");
    m->depth = d + 1;
    Value v;
    v.type = Type::Dict;
    v.obj = std::move(m);
    return v;
}
Value make_func(FuncObj f) {
    Value v;
    v.type = Type::Func;
    v.obj = std::make_shared<FuncObj>(std::move(f));
    return v;
}

const Value* DictObj::find(const Value& key) const {
    if (key.type == Type::Str) {  // the common case: compare strings directly
        for (const auto& kv : items)
            if (kv.first.type == Type::Str && kv.first.str() == key.str()) return &kv.second;
        return nullptr;
    }
    for (const auto& kv : items)
        if (py_eq(kv.first, key)) return &kv.second;
    return nullptr;
}
const Value* NamespaceObj::find(const std::string& name) const {
    for (const auto& kv : attrs)
        if (kv.first == name) return &kv.second;
    return nullptr;
}
void NamespaceObj::set(const std::string& name, Value v) {
    for (auto& kv : attrs)
        if (kv.first == name) {
            kv.second = std::move(v);
            return;
        }
    attrs.emplace_back(name, std::move(v));
}

Value from_json(const nlohmann::ordered_json& j, int depth) {
    if (depth > kMaxValueDepth) fail("the context nests more than " + std::to_string(kMaxValueDepth) + " deep");
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null: return make_none();
        case nlohmann::ordered_json::value_t::boolean: return make_bool(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer: return make_int(j.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned: {
            uint64_t u = j.get<uint64_t>();
            if (u <= uint64_t(std::numeric_limits<int64_t>::max())) return make_int(int64_t(u));
            return make_float(double(u));
        }
        case nlohmann::ordered_json::value_t::number_float: return make_float(j.get<double>());
        case nlohmann::ordered_json::value_t::string: return make_str(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            std::vector<Value> items;
            items.reserve(j.size());
            for (const auto& x : j) items.push_back(from_json(x, depth + 1));
            return make_list(std::move(items));
        }
        case nlohmann::ordered_json::value_t::object: {
            std::vector<std::pair<Value, Value>> items;
            items.reserve(j.size());
            for (auto it = j.begin(); it != j.end(); ++it)
                items.emplace_back(make_str(it.key()), from_json(it.value(), depth + 1));
            return make_dict(std::move(items));
        }
        default: return make_none();
    }
}

// ---- Python semantics ----
bool truthy(const Value& v) {
    switch (v.type) {
        case Type::Undefined:
        case Type::None: return false;
        case Type::Bool: return v.b;
        case Type::Int: return v.i != 0;
        case Type::Float: return v.f != 0.0;
        case Type::Str: return !v.str().empty();
        case Type::List: return !v.list().items.empty();
        case Type::Dict: return !v.dict().items.empty();
        default: return true;
    }
}

std::string type_name(const Value& v) {
    switch (v.type) {
        case Type::Undefined: return "Undefined";
        case Type::None: return "NoneType";
        case Type::Bool: return "bool";
        case Type::Int: return "int";
        case Type::Float: return "float";
        case Type::Str: return "str";
        case Type::List: return v.list().tuple ? "tuple" : "list";
        case Type::Dict: return "dict";
        case Type::Namespace: return "Namespace";
        case Type::Func: return v.func().kind == FuncKind::Macro ? "Macro" : "function";
    }
    return "object";
}

std::string object_repr(const Value& v) {
    if (v.type == Type::None) return "None";
    return type_name(v) + " object";
}

void undefined_error(const Value& u) {
    if (u.obj) fail(*static_cast<const std::string*>(u.obj.get()));
    fail("a value is undefined");
}

static std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    std::string sign = std::signbit(d) ? "-" : "";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
    std::string s(buf, r.ptr);
    size_t e = s.find('e');
    std::string digits;
    for (size_t k = 0; k < e; ++k)
        if (s[k] != '.') digits += s[k];
    int exp = std::atoi(s.c_str() + e + 1);
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    int decpt = exp + 1, nd = int(digits.size());
    std::string out;
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out = "0." + std::string(size_t(-decpt), '0') + digits;
        } else if (decpt >= nd) {
            out = digits + std::string(size_t(decpt - nd), '0') + ".0";
        } else {
            out = digits.substr(0, size_t(decpt)) + "." + digits.substr(size_t(decpt));
        }
    } else {
        out = digits.substr(0, 1);
        if (nd > 1) out += "." + digits.substr(1);
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        out += eb;
    }
    return sign + out;
}

// Decodes one code point from a UTF-8 sequence view (invalid: the byte value).
static uint32_t decode(std::string_view cp) {
    auto b = [&](size_t k) { return uint32_t(uint8_t(cp[k])); };
    switch (cp.size()) {
        case 2: return ((b(0) & 0x1f) << 6) | (b(1) & 0x3f);
        case 3: return ((b(0) & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f);
        case 4: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3f) << 12) | ((b(2) & 0x3f) << 6) | (b(3) & 0x3f);
        default: return cp.empty() ? 0 : b(0);
    }
}
void append_utf8(std::string& out, uint32_t c) {
    if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xc0 | (c >> 6));
        out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        out += char(0xe0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    } else {
        out += char(0xf0 | (c >> 18));
        out += char(0x80 | ((c >> 12) & 0x3f));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    }
}
static std::string encode(uint32_t c) {
    std::string s;
    append_utf8(s, c);
    return s;
}

static bool printable(uint32_t c) {
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x7f) return true;
    if (c <= 0xa0 || c == 0xad || c == 0x1680 || c == 0x061c || c == 0x180e || c == 0x3000 || c == 0xfeff) return false;
    if ((c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x206f)) return false;
    if ((c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff9 && c <= 0xfffb)) return false;
    return true;
}

static void repr_str(const std::string& s, std::string& out) {
    bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
    char q = (has_single && !has_double) ? '"' : '\'';
    out += q;
    char buf[16];
    for (std::string_view cp : code_points(s)) {
        uint32_t c = decode(cp);
        if (c == uint32_t(q) || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (printable(c)) {
            out += cp;
        } else {
            if (c < 0x100) {
                std::snprintf(buf, sizeof buf, "\\x%02x", c);
            } else if (c < 0x10000) {
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
            } else {
                std::snprintf(buf, sizeof buf, "\\U%08x", c);
            }
            out += buf;
        }
        if (out.size() > kMaxString) fail("printing a value would exceed the output limit");
    }
    out += q;
}

static void repr_into(const Value& v, std::string& out, int depth, bool top);

static void repr_into(const Value& v, std::string& out, int depth, bool top) {
    if (depth > kMaxValueDepth) fail("a value nests too deeply to print");
    if (out.size() > kMaxString) fail("printing a value would exceed the output limit");
    switch (v.type) {
        case Type::Undefined: out += top ? "" : "Undefined"; return;
        case Type::None: out += "None"; return;
        case Type::Bool: out += v.b ? "True" : "False"; return;
        case Type::Int: out += std::to_string(v.i); return;
        case Type::Float: out += float_repr(v.f); return;
        case Type::Str:
            if (top) {
                out += v.str();
            } else {
                repr_str(v.str(), out);
            }
            return;
        case Type::List: {
            const ListObj& l = v.list();
            out += l.tuple ? '(' : '[';
            for (size_t k = 0; k < l.items.size(); ++k) {
                if (k) out += ", ";
                repr_into(l.items[k], out, depth + 1, false);
            }
            if (l.tuple && l.items.size() == 1) out += ',';
            out += l.tuple ? ')' : ']';
            return;
        }
        case Type::Dict: {
            out += '{';
            bool first = true;
            for (const auto& [k, x] : v.dict().items) {
                if (!first) out += ", ";
                first = false;
                repr_into(k, out, depth + 1, false);
                out += ": ";
                repr_into(x, out, depth + 1, false);
            }
            out += '}';
            return;
        }
        case Type::Namespace: {
            out += "<Namespace {";
            bool first = true;
            for (const auto& [k, x] : v.ns().attrs) {
                if (!first) out += ", ";
                first = false;
                repr_str(k, out);
                out += ": ";
                repr_into(x, out, depth + 1, false);
            }
            out += "}>";
            return;
        }
        case Type::Func:
            out += v.func().kind == FuncKind::Macro ? "<Macro '" + v.func().name + "'>"
                                                    : "<function " + v.func().name + ">";
            return;
    }
}

std::string to_str(const Value& v) {
    if (v.type == Type::Str) return v.str();
    std::string out;
    repr_into(v, out, 0, true);
    return out;
}
std::string repr(const Value& v) {
    std::string out;
    repr_into(v, out, 0, false);
    return out;
}

double as_double(const Value& v) {
    switch (v.type) {
        case Type::Bool: return v.b ? 1.0 : 0.0;
        case Type::Int: return double(v.i);
        case Type::Float: return v.f;
        default: fail("expected a number, got " + type_name(v));
    }
}

bool py_eq(const Value& a, const Value& b, int depth) {
    if (depth > kMaxValueDepth) fail("values nest too deeply to compare");
    if (a.is_number() && b.is_number()) {
        if (a.type == Type::Float || b.type == Type::Float) return as_double(a) == as_double(b);
        int64_t x = a.type == Type::Bool ? a.b : a.i, y = b.type == Type::Bool ? b.b : b.i;
        return x == y;
    }
    if (a.type != b.type) return false;
    switch (a.type) {
        case Type::Undefined:
        case Type::None: return true;
        case Type::Str: return a.str() == b.str();
        case Type::List: {
            const ListObj &x = a.list(), &y = b.list();
            if (x.tuple != y.tuple || x.items.size() != y.items.size()) return false;
            for (size_t k = 0; k < x.items.size(); ++k)
                if (!py_eq(x.items[k], y.items[k], depth + 1)) return false;
            return true;
        }
        case Type::Dict: {
            const DictObj &x = a.dict(), &y = b.dict();
            if (x.items.size() != y.items.size()) return false;
            for (const auto& [k, v] : x.items) {
                const Value* o = y.find(k);
                if (!o || !py_eq(v, *o, depth + 1)) return false;
            }
            return true;
        }
        default: return a.obj == b.obj;
    }
}

int py_cmp(const Value& a, const Value& b, const char* op) {
    if (a.is_undefined()) undefined_error(a);
    if (b.is_undefined()) undefined_error(b);
    if (a.is_number() && b.is_number()) {
        if (a.type == Type::Float || b.type == Type::Float) {
            double x = as_double(a), y = as_double(b);
            return x < y ? -1 : (x > y ? 1 : 0);
        }
        int64_t x = a.type == Type::Bool ? a.b : a.i, y = b.type == Type::Bool ? b.b : b.i;
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.type == Type::Str && b.type == Type::Str) {
        int c = a.str().compare(b.str());
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.type == Type::List && b.type == Type::List && a.list().tuple == b.list().tuple) {
        const auto &x = a.list().items, &y = b.list().items;
        for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
            if (py_eq(x[k], y[k])) continue;
            return py_cmp(x[k], y[k], op);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    fail(std::string("'") + op + "' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) +
         "'");
}

bool contains(const Value& c, const Value& item) {
    switch (c.type) {
        case Type::Undefined: return false;
        case Type::Str:
            if (item.type != Type::Str) fail("'in <string>' requires string as left operand, not " + type_name(item));
            return c.str().find(item.str()) != std::string::npos;
        case Type::List:
            for (const Value& x : c.list().items)
                if (py_eq(x, item)) return true;
            return false;
        case Type::Dict: return c.dict().find(item) != nullptr;
        default: fail("argument of type '" + type_name(c) + "' is not iterable");
    }
}

std::vector<Value> iterate(const Value& v) {
    switch (v.type) {
        case Type::Undefined: return {};
        case Type::List: return v.list().items;
        case Type::Dict: {
            std::vector<Value> keys;
            keys.reserve(v.dict().items.size());
            for (const auto& kv : v.dict().items) keys.push_back(kv.first);
            return keys;
        }
        case Type::Str: {
            std::vector<Value> out;
            for (std::string_view cp : code_points(v.str())) out.push_back(make_str(std::string(cp)));
            return out;
        }
        default: fail("'" + type_name(v) + "' object is not iterable");
    }
}

int64_t py_len(const Value& v) {
    switch (v.type) {
        case Type::Undefined: return 0;
        case Type::Str: return int64_t(code_points(v.str()).size());
        case Type::List: return int64_t(v.list().items.size());
        case Type::Dict: return int64_t(v.dict().items.size());
        default: fail("object of type '" + type_name(v) + "' has no len()");
    }
}

// ---- json.dumps ----
static void json_str(const std::string& s, std::string& out, bool ensure_ascii) {
    out += '"';
    char buf[16];
    for (std::string_view cp : code_points(s)) {
        uint32_t c = decode(cp);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else if (ensure_ascii && c >= 0x80) {
                    if (c >= 0x10000) {
                        uint32_t u = c - 0x10000;
                        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + (u >> 10), 0xdc00 + (u & 0x3ff));
                    } else {
                        std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    }
                    out += buf;
                } else {
                    out += cp;
                }
        }
    }
    out += '"';
}

static std::string json_key(const Value& k) {
    switch (k.type) {
        case Type::Str: return k.str();
        case Type::Int: return std::to_string(k.i);
        case Type::Float: return float_repr(k.f);
        case Type::Bool: return k.b ? "true" : "false";
        case Type::None: return "null";
        default: fail("keys must be str, int, float, bool or None, not " + type_name(k));
    }
}

static void json_into(const Value& v, const JsonOptions& o, std::string& out, int level) {
    if (level > kMaxValueDepth) fail("a value nests too deeply for tojson");
    if (out.size() > kMaxString) fail("tojson output would exceed the output limit");
    auto newline = [&](int lv) {
        if (!o.indent) return;
        out += '\n';
        for (int k = 0; k < lv; ++k) out += *o.indent;
    };
    switch (v.type) {
        case Type::None: out += "null"; return;
        case Type::Bool: out += v.b ? "true" : "false"; return;
        case Type::Int: out += std::to_string(v.i); return;
        case Type::Float:
            if (std::isnan(v.f)) {
                out += "NaN";
            } else if (std::isinf(v.f)) {
                out += v.f < 0 ? "-Infinity" : "Infinity";
            } else {
                out += float_repr(v.f);
            }
            return;
        case Type::Str: json_str(v.str(), out, o.ensure_ascii); return;
        case Type::List: {
            const auto& items = v.list().items;
            if (items.empty()) {
                out += "[]";
                return;
            }
            out += '[';
            for (size_t k = 0; k < items.size(); ++k) {
                if (k) out += o.item_sep;
                newline(level + 1);
                json_into(items[k], o, out, level + 1);
            }
            newline(level);
            out += ']';
            return;
        }
        case Type::Dict: {
            std::vector<const std::pair<Value, Value>*> items;
            for (const auto& kv : v.dict().items) items.push_back(&kv);
            if (items.empty()) {
                out += "{}";
                return;
            }
            if (o.sort_keys)
                std::stable_sort(items.begin(), items.end(),
                                 [](auto* a, auto* b) { return py_cmp(a->first, b->first, "<") < 0; });
            out += '{';
            for (size_t k = 0; k < items.size(); ++k) {
                if (k) out += o.item_sep;
                newline(level + 1);
                json_str(json_key(items[k]->first), out, o.ensure_ascii);
                out += o.key_sep;
                json_into(items[k]->second, o, out, level + 1);
            }
            newline(level);
            out += '}';
            return;
        }
        default: fail("Object of type " + type_name(v) + " is not JSON serializable");
    }
}

std::string to_json(const Value& v, const JsonOptions& o) {
    std::string out;
    json_into(v, o, out, 0);
    return out;
}

// ---- Unicode helpers ----
std::vector<std::string_view> code_points(std::string_view s) {
    std::vector<std::string_view> out;
    out.reserve(s.size());
    size_t k = 0;
    while (k < s.size()) {
        uint8_t c = uint8_t(s[k]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
        if (k + n > s.size()) n = 1;
        for (size_t j = 1; j < n; ++j)
            if ((uint8_t(s[k + j]) & 0xc0) != 0x80) {
                n = 1;
                break;
            }
        out.push_back(s.substr(k, n));
        k += n;
    }
    return out;
}

static bool space_cp(uint32_t c) {
    return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}
bool is_py_space(std::string_view cp) { return space_cp(decode(cp)); }

bool is_word_cp(std::string_view cp) {
    const uint32_t c = decode(cp);
    if (c < 0x80) return std::isalnum(int(c)) || c == '_';
    // Letters and digits of the common scripts (regex \w); symbols, emoji and marks are not.
    if (c == 0xaa || c == 0xb2 || c == 0xb3 || c == 0xb5 || c == 0xb9 || c == 0xba) return true;
    if (c >= 0xc0 && c <= 0x24f) return c != 0xd7 && c != 0xf7;
    return (c >= 0x370 && c <= 0x3ff && c != 0x37e && c != 0x387) || (c >= 0x400 && c <= 0x481) ||
           (c >= 0x48a && c <= 0x52f) || (c >= 0x5d0 && c <= 0x5ea) || (c >= 0x620 && c <= 0x64a) ||
           (c >= 0x660 && c <= 0x669) || (c >= 0x904 && c <= 0x939) || (c >= 0xe01 && c <= 0xe30) ||
           (c >= 0x3041 && c <= 0x3096) || (c >= 0x30a1 && c <= 0x30fa) || (c >= 0x3400 && c <= 0x4dbf) ||
           (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
           (c >= 0xff10 && c <= 0xff19) || (c >= 0xff21 && c <= 0xff3a) || (c >= 0xff41 && c <= 0xff5a) ||
           (c >= 0x20000 && c <= 0x2fa1f);
}

std::string py_strip(std::string_view s, int mode, const std::optional<std::string>& chars) {
    auto cps = code_points(s);
    std::vector<std::string_view> set;
    if (chars)
        for (auto c : code_points(*chars)) set.push_back(c);
    auto strip_it = [&](std::string_view cp) {
        if (!chars) return is_py_space(cp);
        return std::find(set.begin(), set.end(), cp) != set.end();
    };
    size_t b = 0, e = cps.size();
    if (mode & 1)
        while (b < e && strip_it(cps[b])) ++b;
    if (mode & 2)
        while (e > b && strip_it(cps[e - 1])) --e;
    if (b == e) return {};
    return std::string(cps[b].data(), size_t(cps[e - 1].data() + cps[e - 1].size() - cps[b].data()));
}

// Simple case mappings: ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic.
static uint32_t upper_cp(uint32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0x80) return c;
    if ((c >= 0xe0 && c <= 0xfe && c != 0xf7)) return c - 32;
    if (c == 0xff) return 0x178;
    if (c == 0xb5) return 0x39c;
    if (c >= 0x100 && c <= 0x17f && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17f) {
        bool odd_lower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e);
        if (odd_lower) return (c % 2 == 0) ? c - 1 : c;
        return (c % 2 == 1) ? c - 1 : c;
    }
    if (c >= 0x3b1 && c <= 0x3c9 && c != 0x3c2) return c - 32;
    if (c == 0x3c2) return 0x3a3;
    if (c >= 0x430 && c <= 0x44f) return c - 32;
    if (c >= 0x450 && c <= 0x45f) return c - 80;
    return c;
}
static uint32_t lower_cp(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0x80) return c;
    if ((c >= 0xc0 && c <= 0xde && c != 0xd7)) return c + 32;
    if (c == 0x178) return 0xff;
    if (c >= 0x100 && c <= 0x17f && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17f) {
        bool odd_lower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e);
        if (odd_lower) return (c % 2 == 1) ? c + 1 : c;
        return (c % 2 == 0) ? c + 1 : c;
    }
    if (c >= 0x391 && c <= 0x3a9 && c != 0x3a2) return c + 32;
    if (c >= 0x410 && c <= 0x42f) return c + 32;
    if (c >= 0x400 && c <= 0x40f) return c + 80;
    return c;
}
static bool cased(uint32_t c) { return upper_cp(c) != c || lower_cp(c) != c || c == 0xdf; }

static std::string map_case(std::string_view s, int mode) {  // 0 upper, 1 lower
    std::string out;
    out.reserve(s.size());
    for (std::string_view cp : code_points(s)) {
        if (cp.size() == 1) {
            char c = cp[0];
            out += mode == 0 ? char(c >= 'a' && c <= 'z' ? c - 32 : c) : char(c >= 'A' && c <= 'Z' ? c + 32 : c);
            continue;
        }
        uint32_t c = decode(cp);
        if (mode == 0 && c == 0xdf) {
            out += "SS";
            continue;
        }
        uint32_t m = mode == 0 ? upper_cp(c) : lower_cp(c);
        out += m == c ? std::string(cp) : encode(m);
    }
    return out;
}
std::string py_upper(std::string_view s) { return map_case(s, 0); }
std::string py_lower(std::string_view s) { return map_case(s, 1); }

std::string py_title(std::string_view s) {
    std::string out;
    bool prev_cased = false;
    for (std::string_view cp : code_points(s)) {
        uint32_t c = decode(cp);
        bool is_cased = cased(c);
        uint32_t m = prev_cased ? lower_cp(c) : upper_cp(c);
        out += m == c ? std::string(cp) : encode(m);
        prev_cased = is_cased;
    }
    return out;
}

std::string py_capitalize(std::string_view s) {
    auto cps = code_points(s);
    std::string out;
    for (size_t k = 0; k < cps.size(); ++k) {
        uint32_t c = decode(cps[k]);
        uint32_t m = k == 0 ? upper_cp(c) : lower_cp(c);
        out += m == c ? std::string(cps[k]) : encode(m);
    }
    return out;
}

std::vector<std::string> py_splitlines(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    auto cps = code_points(s);
    for (size_t k = 0; k < cps.size(); ++k) {
        uint32_t c = decode(cps[k]);
        bool brk = c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e) || c == 0x85 ||
                   c == 0x2028 || c == 0x2029;
        if (!brk) {
            cur += cps[k];
            continue;
        }
        if (c == '\r' && k + 1 < cps.size() && cps[k + 1] == "\n") ++k;
        out.push_back(std::move(cur));
        cur.clear();
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

}  // namespace edge::tokenizer::jinja
