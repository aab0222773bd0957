// Chat-template methods and globals: attribute/item lookup with the immutable sandbox's rules,
// the str/dict/list methods templates call, the globals (range, namespace, dict, raise_exception,
// strftime_now), and the argument helpers the filters (chat_template_filters.cpp) share.
#include <cctype>
#include <cstdlib>

#include "engine/tokenizer/chat_template_impl.h"

namespace edge::tokenizer::jinja {

std::vector<std::optional<Value>> bind_args(const Args& a, std::initializer_list<const char*> names,
                                            const std::string& fn) {
    std::vector<const char*> n(names);
    std::vector<std::optional<Value>> out(n.size());
    if (a.pos.size() > n.size())
        fail(fn + "() takes at most " + std::to_string(n.size()) + " argument(s), got " + std::to_string(a.pos.size()));
    for (size_t k = 0; k < a.pos.size(); ++k) out[k] = a.pos[k];
    for (const auto& [key, v] : a.kw) {
        size_t k = 0;
        while (k < n.size() && key != n[k]) ++k;
        if (k == n.size() || out[k]) {
            std::string why = fn;
            why += k == n.size() ? "() got an unexpected keyword argument '" : "() got multiple values for argument '";
            why += key + "'";
            fail(std::move(why));
        }
        out[k] = v;
    }
    return out;
}

int64_t int_of(const Value& v, const char* what) {
    if (v.type == Type::Int) return v.i;
    if (v.type == Type::Bool) return v.b;
    fail(std::string(what) + " must be an integer, not " + type_name(v));
}
std::string str_of(const Value& v, const char* what) {
    if (v.is_str()) return v.str();
    fail(std::string(what) + " must be a string, not " + type_name(v));
}

std::string replace_all(const std::string& s, const std::string& old, const std::string& rep, int64_t count) {
    std::string out;
    if (old.empty()) {
        auto cps = code_points(s);
        int64_t done = 0;
        for (size_t k = 0; k <= cps.size(); ++k) {
            if (count < 0 || done < count) {
                out += rep;
                ++done;
            }
            if (k < cps.size()) out += cps[k];
            if (out.size() > kMaxString) fail("a string would exceed the output limit");
        }
        return out;
    }
    size_t pos = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        size_t f = s.find(old, pos);
        if (f == std::string::npos) break;
        out.append(s, pos, f - pos);
        out += rep;
        if (out.size() > kMaxString) fail("a string would exceed the output limit");
        pos = f + old.size();
        ++done;
    }
    out.append(s, pos, std::string::npos);
    if (out.size() > kMaxString) fail("a string would exceed the output limit");
    return out;
}

namespace {

std::vector<Value> py_split(const std::string& s, const std::optional<std::string>& sep, int64_t maxsplit) {
    std::vector<Value> out;
    if (!sep) {
        auto cps = code_points(s);
        size_t k = 0;
        while (k < cps.size()) {
            while (k < cps.size() && is_py_space(cps[k])) ++k;
            if (k == cps.size()) break;
            if (maxsplit >= 0 && int64_t(out.size()) == maxsplit) {
                std::string rest;
                for (size_t j = k; j < cps.size(); ++j) rest += cps[j];
                out.push_back(make_str(py_strip(rest, 2, std::nullopt)));
                return out;
            }
            std::string word;
            while (k < cps.size() && !is_py_space(cps[k])) word += cps[k++];
            out.push_back(make_str(std::move(word)));
        }
        return out;
    }
    if (sep->empty()) fail("empty separator");
    size_t pos = 0;
    while (maxsplit < 0 || int64_t(out.size()) < maxsplit) {
        size_t f = s.find(*sep, pos);
        if (f == std::string::npos) break;
        out.push_back(make_str(s.substr(pos, f - pos)));
        pos = f + sep->size();
    }
    out.push_back(make_str(s.substr(pos)));
    return out;
}

const char* const kStrMethods[] = {
    "strip",  "lstrip", "rstrip",  "split",      "rsplit",   "splitlines", "startswith",   "endswith",
    "upper",  "lower",  "title",   "capitalize", "replace",  "find",       "rfind",        "index",
    "count",  "join",   "isdigit", "isalpha",    "isalnum",  "isspace",    "islower",      "isupper",
    "format", "center", "ljust",   "rjust",      "swapcase", "zfill",      "removeprefix", "removesuffix"};
const char* const kDictMethods[] = {"items", "keys", "values", "get", "copy"};
const char* const kListMethods[] = {"index", "count", "copy"};
const char* const kUnsafe[] = {"append",  "extend", "insert",     "remove",  "pop", "clear",  "sort",
                               "reverse", "update", "setdefault", "popitem", "add", "discard"};

Value bound(const Value& self, const std::string& name) {
    return make_func(FuncObj{FuncKind::Method, name, self, nullptr, {}});
}

}  // namespace

Value get_attr(Renderer& r, const Value& obj, const std::string& name) {
    (void)r;
    switch (obj.type) {
        case Type::Dict:
            if (in_list(kDictMethods, name)) return bound(obj, name);
            if (in_list(kUnsafe, name))
                return make_undefined("access to attribute '" + name + "' of 'dict' object is unsafe");
            if (const Value* v = obj.dict().find(make_str(name))) return *v;
            break;
        case Type::Str:
            if (in_list(kStrMethods, name)) return bound(obj, name);
            break;
        case Type::List:
            if (in_list(kListMethods, name)) return bound(obj, name);
            if (in_list(kUnsafe, name))
                return make_undefined("access to attribute '" + name + "' of '" + type_name(obj) +
                                      "' object is unsafe");
            break;
        case Type::Namespace:
            if (const Value* v = obj.ns().find(name)) return *v;
            break;
        default: break;
    }
    return make_undefined("'" + object_repr(obj) + "' has no attribute '" + name + "'");
}

Value get_item(Renderer& r, const Value& obj, const Value& key) {
    if (obj.type == Type::Dict) {
        if (key.type == Type::List && !key.list().tuple) fail("unhashable type: 'list'");
        if (const Value* v = obj.dict().find(key)) return *v;
    } else if ((obj.type == Type::List || obj.type == Type::Str) && is_int(key)) {
        int64_t k = int_of(key, "index");
        if (obj.type == Type::List) {
            const auto& items = obj.list().items;
            const int64_t n = int64_t(items.size());
            if (k < 0) k += n;
            if (k >= 0 && k < n) return items[size_t(k)];
        } else {
            auto cps = code_points(obj.str());
            const int64_t n = int64_t(cps.size());
            if (k < 0) k += n;
            if (k >= 0 && k < n) return make_str(std::string(cps[size_t(k)]));
        }
        return make_undefined(object_repr(obj) + " has no element " + repr(key));
    }
    if (key.is_str()) {
        Value v = get_attr(r, obj, key.str());
        return v;
    }
    return make_undefined(object_repr(obj) + " has no element " + repr(key));
}

Value call_method(Renderer& r, const Value& self, const std::string& name, const Args& a) {
    const std::string fn = type_name(self) + "." + name;
    if (self.is_str()) {
        const std::string& s = self.str();
        r.charge_bytes(s.size());
        if (name == "strip" || name == "lstrip" || name == "rstrip") {
            auto p = bind_args(a, {"chars"}, fn);
            std::optional<std::string> chars;
            if (!is_none_or_unset(p[0])) chars = str_of(*p[0], "chars");
            return make_str(py_strip(s, name == "strip" ? 3 : name == "lstrip" ? 1 : 2, chars));
        }
        if (name == "split" || name == "rsplit") {
            auto p = bind_args(a, {"sep", "maxsplit"}, fn);
            std::optional<std::string> sep;
            if (!is_none_or_unset(p[0])) sep = str_of(*p[0], "sep");
            int64_t maxsplit = p[1] ? int_of(*p[1], "maxsplit") : -1;
            if (name == "rsplit" && maxsplit >= 0) {
                // rsplit with a limit: split fully, then join the leading parts back.
                std::vector<Value> all = py_split(s, sep, -1);
                if (int64_t(all.size()) <= maxsplit + 1 || !sep) return make_list(std::move(all));
                size_t keep = all.size() - size_t(maxsplit);
                std::string head;
                for (size_t k = 0; k < keep; ++k) head += (k ? *sep : "") + all[k].str();
                std::vector<Value> out{make_str(head)};
                out.insert(out.end(), all.begin() + long(keep), all.end());
                return make_list(std::move(out));
            }
            return make_list(py_split(s, sep, maxsplit));
        }
        if (name == "splitlines") {
            std::vector<Value> out;
            for (auto& l : py_splitlines(s)) out.push_back(make_str(l));
            return make_list(std::move(out));
        }
        if (name == "startswith" || name == "endswith") {
            auto p = bind_args(a, {"prefix"}, fn);
            if (!p[0]) fail(fn + "() takes at least 1 argument");
            std::vector<Value> opts =
                p[0]->is_list() && p[0]->list().tuple ? p[0]->list().items : std::vector<Value>{*p[0]};
            for (const Value& o : opts) {
                const std::string x = str_of(o, "prefix");
                if (x.size() > s.size()) continue;
                if (name == "startswith" ? s.compare(0, x.size(), x) == 0
                                         : s.compare(s.size() - x.size(), x.size(), x) == 0)
                    return make_bool(true);
            }
            return make_bool(false);
        }
        if (name == "upper") return make_str(py_upper(s));
        if (name == "lower") return make_str(py_lower(s));
        if (name == "title") return make_str(py_title(s));
        if (name == "capitalize") return make_str(py_capitalize(s));
        if (name == "swapcase") {
            std::string out;
            for (auto cp : code_points(s)) {
                std::string u = py_upper(cp);
                out += u != cp ? u : py_lower(cp);
            }
            return make_str(out);
        }
        if (name == "replace") {
            auto p = bind_args(a, {"old", "new", "count"}, fn);
            if (!p[0] || !p[1]) fail(fn + "() takes at least 2 arguments");
            return make_str(
                replace_all(s, str_of(*p[0], "old"), str_of(*p[1], "new"), p[2] ? int_of(*p[2], "count") : -1));
        }
        if (name == "find" || name == "rfind" || name == "index" || name == "count") {
            auto p = bind_args(a, {"sub"}, fn);
            if (!p[0]) fail(fn + "() takes at least 1 argument");
            const std::string sub = str_of(*p[0], "sub");
            if (name == "count") {
                if (sub.empty()) return make_int(int64_t(code_points(s).size()) + 1);
                int64_t n = 0;
                for (size_t pos = s.find(sub); pos != std::string::npos; pos = s.find(sub, pos + sub.size())) ++n;
                return make_int(n);
            }
            size_t f = name == "rfind" ? s.rfind(sub) : s.find(sub);
            if (f == std::string::npos) {
                if (name == "index") fail("substring not found");
                return make_int(-1);
            }
            return make_int(int64_t(code_points(std::string_view(s).substr(0, f)).size()));
        }
        if (name == "join") {
            auto p = bind_args(a, {"iterable"}, fn);
            if (!p[0]) fail(fn + "() takes exactly one argument");
            std::string out;
            bool first = true;
            for (const Value& x : r.items_of(*p[0])) {
                if (!first) out += s;
                first = false;
                out += str_of(x, "sequence item");
                if (out.size() > kMaxString) fail("a string would exceed the output limit");
            }
            return make_str(out);
        }
        if (name.rfind("is", 0) == 0) {
            auto cps = code_points(s);
            if (cps.empty()) return make_bool(false);
            bool any_cased = false, ok = true;
            for (auto cp : cps) {
                const bool ascii = cp.size() == 1;
                const char c = cp[0];
                if (name == "isdigit") ok &= ascii && std::isdigit(uint8_t(c));
                if (name == "isalpha") ok &= ascii ? bool(std::isalpha(uint8_t(c))) : !is_py_space(cp);
                if (name == "isalnum") ok &= ascii ? bool(std::isalnum(uint8_t(c))) : !is_py_space(cp);
                if (name == "isspace") ok &= is_py_space(cp);
                if (name == "islower" || name == "isupper") {
                    std::string up = py_upper(cp), low = py_lower(cp);
                    if (up != low) {
                        any_cased = true;
                        if (name == "islower" && std::string(cp) != low) ok = false;
                        if (name == "isupper" && std::string(cp) != up) ok = false;
                    }
                }
            }
            if (name == "islower" || name == "isupper") ok &= any_cased;
            return make_bool(ok);
        }
        if (name == "center" || name == "ljust" || name == "rjust" || name == "zfill") {
            auto p = bind_args(a, {"width", "fillchar"}, fn);
            if (!p[0]) fail(fn + "() takes at least 1 argument");
            int64_t width = int_of(*p[0], "width"), len = int64_t(code_points(s).size());
            std::string fill = p[1] ? str_of(*p[1], "fillchar") : (name == "zfill" ? "0" : " ");
            if (width > int64_t(kMaxString)) fail("a string would exceed the output limit");
            if (width <= len) return self;
            int64_t pad = width - len,
                    left = name == "center" ? pad / 2 + (pad & width & 1) : (name == "ljust" ? 0 : pad);
            std::string out;
            for (int64_t k = 0; k < left; ++k) out += fill;
            out += s;
            for (int64_t k = 0; k < pad - left; ++k) out += fill;
            return make_str(out);
        }
        if (name == "removeprefix" || name == "removesuffix") {
            auto p = bind_args(a, {"affix"}, fn);
            if (!p[0]) fail(fn + "() takes exactly one argument");
            const std::string x = str_of(*p[0], "affix");
            if (name == "removeprefix" && s.compare(0, x.size(), x) == 0) return make_str(s.substr(x.size()));
            if (name == "removesuffix" && x.size() <= s.size() && s.compare(s.size() - x.size(), x.size(), x) == 0)
                return make_str(s.substr(0, s.size() - x.size()));
            return self;
        }
        if (name == "format") {
            std::string out;
            size_t auto_idx = 0;
            for (size_t k = 0; k < s.size(); ++k) {
                char c = s[k];
                if (c == '{' && k + 1 < s.size() && s[k + 1] == '{') {
                    out += '{';
                    ++k;
                } else if (c == '}' && k + 1 < s.size() && s[k + 1] == '}') {
                    out += '}';
                    ++k;
                } else if (c == '{') {
                    size_t e = s.find('}', k);
                    if (e == std::string::npos) fail("single '{' encountered in format string");
                    std::string field = s.substr(k + 1, e - k - 1);
                    if (field.find_first_of(":!") != std::string::npos) fail("format specs are not supported");
                    const Value* v = nullptr;
                    if (field.empty()) {
                        if (auto_idx >= a.pos.size()) fail("Replacement index out of range for positional args tuple");
                        v = &a.pos[auto_idx++];
                    } else if (std::isdigit(uint8_t(field[0]))) {
                        size_t idx = size_t(std::strtoul(field.c_str(), nullptr, 10));
                        if (idx >= a.pos.size()) fail("Replacement index out of range for positional args tuple");
                        v = &a.pos[idx];
                    } else {
                        for (const auto& kv : a.kw)
                            if (kv.first == field) v = &kv.second;
                        if (!v) fail("format: no argument named '" + field + "'");
                    }
                    out += to_str(*v);
                    k = e;
                } else {
                    out += c;
                }
                if (out.size() > kMaxString) fail("a string would exceed the output limit");
            }
            return make_str(out);
        }
    }
    if (self.is_dict()) {
        const DictObj& d = self.dict();
        r.charge(int64_t(d.items.size()));
        if (name == "items" || name == "keys" || name == "values") {
            bind_args(a, {}, fn);
            std::vector<Value> out;
            for (const auto& [k, v] : d.items)
                out.push_back(name == "items" ? make_tuple2(k, v) : name == "keys" ? k : v);
            return make_list(std::move(out));
        }
        if (name == "get") {
            auto p = bind_args(a, {"key", "default"}, fn);
            if (!p[0]) fail(fn + "() takes at least 1 argument");
            if (const Value* v = d.find(*p[0])) return *v;
            return p[1] ? *p[1] : make_none();
        }
        if (name == "copy") return self;
    }
    if (self.is_list()) {
        const auto& items = self.list().items;
        r.charge(int64_t(items.size()));
        if (name == "copy") return self;
        auto p = bind_args(a, {"value"}, fn);
        if (!p[0]) fail(fn + "() takes exactly one argument");
        if (name == "count") {
            int64_t n = 0;
            for (const Value& x : items) n += py_eq(x, *p[0]);
            return make_int(n);
        }
        if (name == "index") {
            for (size_t k = 0; k < items.size(); ++k)
                if (py_eq(items[k], *p[0])) return make_int(int64_t(k));
            fail(repr(*p[0]).substr(0, 40) + " is not in list");
        }
    }
    fail("'" + type_name(self) + "' object has no method '" + name + "'");
}

Value call_global(Renderer& r, const std::string& name, const Args& a) {
    if (name == "range") {
        if (!a.kw.empty()) fail("range() takes no keyword arguments");
        if (a.pos.empty() || a.pos.size() > 3)
            fail("range expected 1 to 3 arguments, got " + std::to_string(a.pos.size()));
        int64_t start = 0, stop, step = 1;
        if (a.pos.size() == 1) {
            stop = int_of(a.pos[0], "range() argument");
        } else {
            start = int_of(a.pos[0], "range() argument");
            stop = int_of(a.pos[1], "range() argument");
            if (a.pos.size() == 3) step = int_of(a.pos[2], "range() argument");
        }
        if (step == 0) fail("range() arg 3 must not be zero");
        long double len = step > 0 ? (stop > start ? ((long double)stop - start + step - 1) / step : 0)
                                   : (start > stop ? ((long double)start - stop - step - 1) / -step : 0);
        if (len > (long double)kMaxRange)
            fail("range too big: the sandbox allows at most " + std::to_string(kMaxRange) + " items");
        std::vector<Value> out;
        for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) out.push_back(make_int(k));
        r.charge(int64_t(out.size()));
        return make_list(std::move(out));
    }
    if (name == "namespace" || name == "dict") {
        if (a.pos.size() > 1) fail(name + "() takes at most 1 positional argument");
        std::vector<std::pair<Value, Value>> items;
        if (a.pos.size() == 1) {
            const Value& src = a.pos[0];
            if (src.is_dict()) {
                items = src.dict().items;
            } else {
                for (const Value& pair : r.items_of(src)) {
                    std::vector<Value> kv = r.items_of(pair);
                    if (kv.size() != 2) fail(name + "(): each sequence element must have 2 items");
                    items.emplace_back(kv[0], kv[1]);
                }
            }
        }
        for (const auto& [k, v] : a.kw) items.emplace_back(make_str(k), v);
        if (name == "dict") return make_dict(std::move(items));
        Value ns = r.new_namespace();
        for (auto& [k, v] : items) {
            if (!k.is_str()) fail("namespace() keys must be strings");
            ns.ns().set(k.str(), v);
        }
        return ns;
    }
    if (name == "raise_exception") {
        auto p = bind_args(a, {"message"}, name);
        fail("the template raised: " + (p[0] ? to_str(*p[0]) : std::string()));
    }
    if (name == "strftime_now") {
        auto p = bind_args(a, {"format"}, name);
        if (!p[0]) fail("strftime_now() takes exactly one argument");
        if (!r.hooks().strftime_now) fail("'strftime_now' is undefined");
        return make_str(r.hooks().strftime_now(str_of(*p[0], "format")));
    }
    fail("'" + name + "' is not callable");
}

}  // namespace edge::tokenizer::jinja
