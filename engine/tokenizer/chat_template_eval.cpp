// Chat-template evaluator: statements (scopes as jinja2 has them: loop bodies and macros get their
// own, `if` does not), expressions with Python operators, loops with the `loop` object, macros,
// and the limits that keep hostile templates bounded.
#include <cmath>
#include <cstdio>

#include "engine/tokenizer/chat_template_impl.h"

namespace edge::tokenizer::jinja {

struct Scope {
    std::shared_ptr<Scope> parent;
    std::vector<std::pair<std::string, Value>> vars;

    const Value* find(const std::string& name) const {
        for (const Scope* s = this; s; s = s->parent.get())
            for (const auto& kv : s->vars)
                if (kv.first == name) return &kv.second;
        return nullptr;
    }
    void set(const std::string& name, Value v) {
        for (auto& kv : vars)
            if (kv.first == name) {
                kv.second = std::move(v);
                return;
            }
        vars.emplace_back(name, std::move(v));
    }
};

namespace {

std::shared_ptr<Scope> child_of(const std::shared_ptr<Scope>& parent) {
    auto s = std::make_shared<Scope>();
    s->parent = parent;
    return s;
}

int64_t as_int(const Value& v) { return v.type == Type::Bool ? int64_t(v.b) : v.i; }

[[noreturn]] void bad_operands(const char* op, const Value& a, const Value& b) {
    fail(std::string("unsupported operand type(s) for ") + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

Value repeat_str(const std::string& s, int64_t n) {
    if (n <= 0 || s.empty()) return make_str("");
    if (uint64_t(n) > kMaxString / s.size())
        fail("a string would exceed the " + std::to_string(kMaxString >> 20) + " MiB limit");
    std::string out;
    out.reserve(s.size() * size_t(n));
    for (int64_t k = 0; k < n; ++k) out += s;
    return make_str(std::move(out));
}
Value repeat_list(const ListObj& l, int64_t n) {
    if (n <= 0 || l.items.empty()) return make_list({}, l.tuple);
    if (uint64_t(n) > kMaxListSize / l.items.size())
        fail("a list would exceed " + std::to_string(kMaxListSize) + " items");
    std::vector<Value> out;
    out.reserve(l.items.size() * size_t(n));
    for (int64_t k = 0; k < n; ++k) out.insert(out.end(), l.items.begin(), l.items.end());
    return make_list(std::move(out), l.tuple);
}

}  // namespace

Value percent_format(const std::string& fmt, const Value& args) {
    std::vector<Value> items =
        (args.type == Type::List && args.list().tuple) ? args.list().items : std::vector<Value>{args};
    std::string out;
    size_t next = 0;
    for (size_t k = 0; k < fmt.size(); ++k) {
        if (fmt[k] != '%') {
            out += fmt[k];
            continue;
        }
        if (++k >= fmt.size()) fail("incomplete format");
        char c = fmt[k];
        if (c == '%') {
            out += '%';
            continue;
        }
        if (next >= items.size()) fail("not enough arguments for format string");
        const Value& v = items[next++];
        if (c == 's') {
            out += to_str(v);
        } else if (c == 'r') {
            out += repr(v);
        } else if (c == 'd' || c == 'i') {
            if (!v.is_number()) fail("%d format: a real number is required, not " + type_name(v));
            out += std::to_string(v.type == Type::Float ? int64_t(std::trunc(v.f)) : as_int(v));
        } else if (c == 'f') {
            if (!v.is_number()) fail("%f format: a real number is required, not " + type_name(v));
            char buf[64];
            std::snprintf(buf, sizeof buf, "%f", as_double(v));
            out += buf;
        } else {
            fail(std::string("unsupported format character '") + c + "'");
        }
        if (out.size() > kMaxString) fail("a string would exceed the output limit");
    }
    if (next < items.size()) fail("not all arguments converted during string formatting");
    return make_str(std::move(out));
}

namespace {

Value arith(const std::string& op, const Value& a, const Value& b) {
    if (a.is_undefined()) undefined_error(a);
    if (b.is_undefined()) undefined_error(b);
    const char* o = op.c_str();
    if (a.is_number() && b.is_number()) {
        const bool fl = a.type == Type::Float || b.type == Type::Float;
        if (op == "/") {
            double y = as_double(b);
            if (y == 0) fail("division by zero");
            return make_float(as_double(a) / y);
        }
        if (fl) {
            double x = as_double(a), y = as_double(b);
            if (op == "+") return make_float(x + y);
            if (op == "-") return make_float(x - y);
            if (op == "*") return make_float(x * y);
            if (op == "**") return make_float(std::pow(x, y));
            if (y == 0) fail("float division by zero");
            if (op == "//") return make_float(std::floor(x / y));
            double m = std::fmod(x, y);
            if (m != 0 && ((m < 0) != (y < 0))) m += y;
            return make_float(m);
        }
        int64_t x = as_int(a), y = as_int(b), r = 0;
        if (op == "+") {
            if (__builtin_add_overflow(x, y, &r)) fail("integer overflow");
            return make_int(r);
        }
        if (op == "-") {
            if (__builtin_sub_overflow(x, y, &r)) fail("integer overflow");
            return make_int(r);
        }
        if (op == "*") {
            if (__builtin_mul_overflow(x, y, &r)) fail("integer overflow");
            return make_int(r);
        }
        if (op == "**") {
            if (y < 0) return make_float(std::pow(double(x), double(y)));
            int64_t acc = 1, base = x;
            for (int64_t e = y; e > 0; e >>= 1) {
                if ((e & 1) && __builtin_mul_overflow(acc, base, &acc)) fail("integer overflow");
                if (e > 1 && __builtin_mul_overflow(base, base, &base)) fail("integer overflow");
            }
            return make_int(acc);
        }
        if (y == 0) fail("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) fail("integer overflow");
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
            --q;
            m += y;
        }
        return make_int(op == "//" ? q : m);
    }
    if (op == "+") {
        if (a.is_str() && b.is_str()) {
            if (a.str().size() + b.str().size() > kMaxString) fail("a string would exceed the output limit");
            return make_str(a.str() + b.str());
        }
        if (a.is_list() && b.is_list() && a.list().tuple == b.list().tuple) {
            std::vector<Value> items = a.list().items;
            if (items.size() + b.list().items.size() > kMaxListSize) fail("a list would exceed the size limit");
            items.insert(items.end(), b.list().items.begin(), b.list().items.end());
            return make_list(std::move(items), a.list().tuple);
        }
        if (a.is_str()) fail("can only concatenate str (not \"" + type_name(b) + "\") to str");
        bad_operands(o, a, b);
    }
    if (op == "*") {
        const bool ai = a.type == Type::Int || a.type == Type::Bool, bi = b.type == Type::Int || b.type == Type::Bool;
        if (a.is_str() && bi) return repeat_str(a.str(), as_int(b));
        if (b.is_str() && ai) return repeat_str(b.str(), as_int(a));
        if (a.is_list() && bi) return repeat_list(a.list(), as_int(b));
        if (b.is_list() && ai) return repeat_list(b.list(), as_int(a));
        bad_operands(o, a, b);
    }
    if (op == "%" && a.is_str()) return percent_format(a.str(), b);
    bad_operands(o, a, b);
}

int64_t slice_index(const Value& v) {
    if (v.type == Type::Int || v.type == Type::Bool) return as_int(v);
    fail("slice indices must be integers or None, not " + type_name(v));
}

}  // namespace

Renderer::DepthGuard::DepthGuard(Renderer& r) : r_(r) {
    if (++r_.depth_ > kMaxEvalDepth) {
        --r_.depth_;
        fail("evaluation nests more than " + std::to_string(kMaxEvalDepth) + " levels deep");
    }
}

void Renderer::charge(int64_t n) {
    work_ += n;
    if (work_ > kMaxWork)
        fail("the template did too much work (more than " + std::to_string(kMaxWork) + " steps); is it looping?");
}

std::vector<Value> Renderer::items_of(const Value& v) {
    if (v.is_str()) charge(int64_t(v.str().size()));  // (bytes: at least the code points)
    if (v.is_list()) charge(int64_t(v.list().items.size()));
    if (v.is_dict()) charge(int64_t(v.dict().items.size()));
    return iterate(v);
}

Value Renderer::new_namespace() {
    if (namespaces_.size() >= size_t(kMaxNamespaces))
        fail("more than " + std::to_string(kMaxNamespaces) + " namespace() objects in one render");
    auto ns = std::make_shared<NamespaceObj>();
    namespaces_.push_back(ns);
    Value v;
    v.type = Type::Namespace;
    v.obj = std::move(ns);
    return v;
}

std::string Renderer::run(const nlohmann::ordered_json& context) {
    struct Cleanup {  // break namespace cycles and chains without deep recursion
        ~Cleanup() {
            for (auto& p : r.namespaces_) static_cast<NamespaceObj*>(p.get())->attrs.clear();
        }
        Renderer& r;
    } cleanup{*this};
    if (!context.is_object()) fail("the render context must be a JSON object");
    globals_ = std::make_shared<Scope>();
    for (auto it = context.begin(); it != context.end(); ++it) globals_->set(it.key(), from_json(it.value()));
    scope_ = globals_;
    std::string out;
    out_ = &out;
    exec(program_.body);
    scope_.reset();
    globals_.reset();
    return out;
}

void Renderer::emit(std::string_view s) {
    if (out_->size() + s.size() > kMaxString)
        fail("the output would exceed " + std::to_string(kMaxString >> 20) + " MiB");
    out_->append(s);
    charge_bytes(s.size());
}

Value Renderer::lookup(const std::string& name) const {
    if (const Value* v = scope_->find(name)) return *v;
    static const char* kGlobals[] = {"range", "namespace", "dict", "raise_exception"};
    for (const char* g : kGlobals)
        if (name == g) return make_func(FuncObj{FuncKind::Global, name, {}, nullptr, {}});
    if (name == "strftime_now" && hooks_.strftime_now)
        return make_func(FuncObj{FuncKind::Global, name, {}, nullptr, {}});
    return make_undefined("'" + name + "' is undefined");
}

Renderer::Flow Renderer::exec(const Body& b) {
    for (const auto& s : b) {
        Flow f = exec_stmt(*s);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

Renderer::Flow Renderer::exec_stmt(const Stmt& s) {
    DepthGuard guard(*this);
    try {
        switch (s.kind) {
            case StmtKind::Text: emit(s.text); return Flow::Normal;
            case StmtKind::Output: {
                Value v = eval(*s.expr);
                if (v.type == Type::Str) {
                    emit(v.str());
                } else {
                    emit(to_str(v));
                }
                return Flow::Normal;
            }
            case StmtKind::If:
                for (const auto& [cond, body] : s.branches)
                    if (truthy(eval(*cond))) return exec(body);
                return exec(s.else_body);
            case StmtKind::For: return exec_for(s);
            case StmtKind::Break: return Flow::Break;
            case StmtKind::Continue: return Flow::Continue;
            case StmtKind::Set: assign(s.target, eval(*s.expr)); return Flow::Normal;
            case StmtKind::SetBlock:
            case StmtKind::FilterBlock: {
                std::string buf;
                std::string* saved = out_;
                out_ = &buf;
                Flow f = exec(s.body);
                out_ = saved;
                Value v = make_str(std::move(buf));
                if (s.expr) {
                    block_input_ = v;
                    v = eval(*s.expr);
                }
                if (s.kind == StmtKind::SetBlock) {
                    assign(s.target, v);
                } else {
                    emit(to_str(v));
                }
                return f;
            }
            case StmtKind::Macro: {
                FuncObj f{FuncKind::Macro, s.text, {}, &s, scope_};
                scope_->set(s.text, make_func(std::move(f)));
                return Flow::Normal;
            }
            case StmtKind::With: {
                auto inner = child_of(scope_);
                for (const auto& [name, e] : s.params) inner->set(name, eval(*e));
                auto saved = scope_;
                scope_ = inner;
                Flow f = exec(s.body);
                scope_ = saved;
                return f;
            }
            case StmtKind::Body: return exec(s.body);
        }
    } catch (Fail& f) {
        if (!f.has_pos) {
            f.pos = s.pos;
            f.has_pos = true;
        }
        throw;
    }
    return Flow::Normal;
}

void Renderer::assign(const Target& t, const Value& v) {
    switch (t.kind) {
        case Target::Name: scope_->set(t.name, v); return;
        case Target::NsAttr: {
            Value ns = lookup(t.name);
            if (ns.type != Type::Namespace)
                fail_at(t.pos, "cannot assign attribute '" + t.attr + "' on '" + t.name + "': it is not a namespace()");
            ns.ns().set(t.attr, v);
            return;
        }
        case Target::Tuple: {
            std::vector<Value> items = items_of(v);
            if (items.size() != t.items.size())
                fail_at(t.pos, items.size() > t.items.size()
                                   ? "too many values to unpack (expected " + std::to_string(t.items.size()) + ")"
                                   : "not enough values to unpack (expected " + std::to_string(t.items.size()) +
                                         ", got " + std::to_string(items.size()) + ")");
            for (size_t k = 0; k < items.size(); ++k) assign(t.items[k], items[k]);
            return;
        }
    }
}

Renderer::Flow Renderer::exec_for(const Stmt& s) {
    const Value seq = eval(*s.expr);
    std::vector<Value> items = items_of(seq);  // (charged there, one unit per item)
    const std::shared_ptr<Scope> outer = scope_;
    if (s.cond) {
        std::vector<Value> kept;
        for (Value& x : items) {
            scope_ = child_of(outer);
            assign(s.target, x);
            bool keep = truthy(eval(*s.cond));
            scope_ = outer;
            if (keep) kept.push_back(std::move(x));
        }
        items = std::move(kept);
    }
    if (items.empty()) {
        scope_ = child_of(outer);
        Flow f = exec(s.else_body);
        scope_ = outer;
        return f == Flow::Break || f == Flow::Continue ? Flow::Normal : f;
    }
    static const char* kKeys[] = {"index",  "index0", "revindex", "revindex0", "first",    "last",
                                  "length", "depth",  "depth0",   "cycle",     "previtem", "nextitem"};
    std::vector<Value> keys;
    for (const char* k : kKeys) keys.push_back(make_str(k));
    const int64_t n = int64_t(items.size());
    for (int64_t k = 0; k < n; ++k) {
        if (++iterations_ > kMaxLoopIterations)
            fail_at(s.pos, "loops ran more than " + std::to_string(kMaxLoopIterations) + " iterations in one render");
        charge(1);
        scope_ = child_of(outer);
        assign(s.target, items[size_t(k)]);
        auto loop = std::make_shared<DictObj>();
        auto& li = loop->items;
        li.reserve(12);
        li.emplace_back(keys[0], make_int(k + 1));
        li.emplace_back(keys[1], make_int(k));
        li.emplace_back(keys[2], make_int(n - k));
        li.emplace_back(keys[3], make_int(n - k - 1));
        li.emplace_back(keys[4], make_bool(k == 0));
        li.emplace_back(keys[5], make_bool(k == n - 1));
        li.emplace_back(keys[6], make_int(n));
        li.emplace_back(keys[7], make_int(1));
        li.emplace_back(keys[8], make_int(0));
        li.emplace_back(keys[9], make_func(FuncObj{FuncKind::LoopCycle, "loop.cycle", make_int(k), nullptr, {}}));
        if (k > 0) li.emplace_back(keys[10], items[size_t(k - 1)]);
        if (k + 1 < n) li.emplace_back(keys[11], items[size_t(k + 1)]);
        Value lv;
        lv.type = Type::Dict;
        lv.obj = std::move(loop);
        scope_->set("loop", std::move(lv));
        Flow f = exec(s.body);
        scope_ = outer;
        if (f == Flow::Break) break;
    }
    return Flow::Normal;
}

Args Renderer::eval_args(const Expr& e, size_t first) {
    Args a;
    for (size_t k = first; k < e.args.size(); ++k) a.pos.push_back(eval(*e.args[k]));
    for (const auto& [name, x] : e.kwargs) a.kw.emplace_back(name, eval(*x));
    return a;
}

Value Renderer::eval(const Expr& e) {
    DepthGuard guard(*this);
    charge(1);
    try {
        return eval_inner(e);
    } catch (Fail& f) {
        if (!f.has_pos) {
            f.pos = e.pos;
            f.has_pos = true;
        }
        throw;
    }
}

Value Renderer::eval_inner(const Expr& e) {
    switch (e.kind) {
        case ExprKind::Literal: return e.literal;
        case ExprKind::Name: return lookup(e.name);
        case ExprKind::List:
        case ExprKind::Tuple: {
            std::vector<Value> items;
            items.reserve(e.args.size());
            for (const auto& x : e.args) items.push_back(eval(*x));
            return make_list(std::move(items), e.kind == ExprKind::Tuple);
        }
        case ExprKind::Dict: {
            std::vector<std::pair<Value, Value>> items;
            for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
                Value key = eval(*e.args[k]);
                items.emplace_back(std::move(key), eval(*e.args[k + 1]));
            }
            return make_dict(std::move(items));
        }
        case ExprKind::Attr: {
            Value obj = eval(*e.args[0]);
            if (obj.is_undefined()) undefined_error(obj);
            return get_attr(*this, obj, e.name);
        }
        case ExprKind::Item: {
            Value obj = eval(*e.args[0]);
            if (obj.is_undefined()) undefined_error(obj);
            return get_item(*this, obj, eval(*e.args[1]));
        }
        case ExprKind::Slice: {
            Value obj = eval(*e.args[0]);
            if (obj.is_undefined()) undefined_error(obj);
            Value parts[3];
            for (int k = 0; k < 3; ++k)
                if (e.args[size_t(k) + 1]) parts[k] = eval(*e.args[size_t(k) + 1]);
            const bool is_str = obj.is_str();
            if (!is_str && !obj.is_list()) return make_undefined(object_repr(obj) + " cannot be sliced");
            std::vector<std::string_view> cps;
            if (is_str) cps = code_points(obj.str());
            const int64_t n = is_str ? int64_t(cps.size()) : int64_t(obj.list().items.size());
            int64_t step = (parts[2].is_undefined() || parts[2].is_none()) ? 1 : slice_index(parts[2]);
            if (step == 0) fail("slice step cannot be zero");
            auto adjust = [&](const Value& v, bool is_start) {
                if (v.is_undefined() || v.is_none()) return is_start ? (step < 0 ? n - 1 : 0) : (step < 0 ? -1 : n);
                int64_t x = slice_index(v);
                if (x < 0) {
                    x += n;
                    if (x < 0) x = step < 0 ? -1 : 0;
                } else if (x >= n) {
                    x = step < 0 ? n - 1 : n;
                }
                return x;
            };
            int64_t start = adjust(parts[0], true), stop = adjust(parts[1], false);
            std::string s;
            std::vector<Value> items;
            for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
                if (is_str) {
                    s += cps[size_t(k)];
                } else {
                    items.push_back(obj.list().items[size_t(k)]);
                }
            }
            charge(int64_t(items.size() + s.size() / 64));
            return is_str ? make_str(std::move(s)) : make_list(std::move(items), obj.list().tuple);
        }
        case ExprKind::Call: {
            Value f = eval(*e.args[0]);
            Args a = eval_args(e, 1);
            return call(f, a, e.pos);
        }
        case ExprKind::Filter: {
            Value v = e.args[0] ? eval(*e.args[0]) : block_input_;
            Args a = eval_args(e, 1);
            return apply_filter(*this, e.name, v, a);
        }
        case ExprKind::Test: {
            Value v = eval(*e.args[0]);
            Args a = eval_args(e, 1);
            bool r = apply_test(*this, e.name, v, a);
            return make_bool(e.negated ? !r : r);
        }
        case ExprKind::Unary: {
            Value v = eval(*e.args[0]);
            if (e.name == "not") return make_bool(!truthy(v));
            if (v.is_undefined()) undefined_error(v);
            if (v.type == Type::Float) return make_float(e.name == "-" ? -v.f : v.f);
            if (v.type == Type::Int || v.type == Type::Bool) {
                int64_t x = as_int(v);
                if (e.name == "-" && x == INT64_MIN) fail("integer overflow");
                return make_int(e.name == "-" ? -x : x);
            }
            fail("bad operand type for unary " + e.name + ": '" + type_name(v) + "'");
        }
        case ExprKind::Binary: return eval_binary(e);
        case ExprKind::Compare: return eval_compare(e);
        case ExprKind::Cond: {
            if (truthy(eval(*e.args[1]))) return eval(*e.args[0]);
            if (e.args[2]) return eval(*e.args[2]);
            return make_undefined("the inline if-expression evaluated to false and has no else section");
        }
    }
    return Value();
}

Value Renderer::eval_binary(const Expr& e) {
    Value a = eval(*e.args[0]);
    if (e.name == "and") return truthy(a) ? eval(*e.args[1]) : a;
    if (e.name == "or") return truthy(a) ? a : eval(*e.args[1]);
    Value b = eval(*e.args[1]);
    Value r;
    if (e.name == "~") {
        std::string x = to_str(a), y = to_str(b);
        if (x.size() + y.size() > kMaxString) fail("a string would exceed the output limit");
        r = make_str(x + y);
    } else {
        r = arith(e.name, a, b);
    }
    if (r.is_str()) charge_bytes(r.str().size());
    if (r.is_list()) charge(int64_t(r.list().items.size()));
    return r;
}

Value Renderer::eval_compare(const Expr& e) {
    Value left = eval(*e.args[0]);
    for (size_t k = 0; k < e.ops.size(); ++k) {
        Value right = eval(*e.args[k + 1]);
        const std::string& op = e.ops[k];
        bool ok;
        if (op == "==") {
            ok = py_eq(left, right);
        } else if (op == "!=") {
            ok = !py_eq(left, right);
        } else if (op == "in") {
            ok = contains(right, left);
        } else if (op == "not in") {
            ok = !contains(right, left);
        } else {
            int c = py_cmp(left, right, op.c_str());
            ok = op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0;
        }
        if (!ok) return make_bool(false);
        left = std::move(right);
    }
    return make_bool(true);
}

Value Renderer::call(const Value& f, const Args& a, Pos pos) {
    if (f.is_undefined()) undefined_error(f);
    if (f.type != Type::Func) fail("'" + type_name(f) + "' object is not callable");
    const FuncObj& fn = f.func();
    switch (fn.kind) {
        case FuncKind::Global: return call_global(*this, fn.name, a);
        case FuncKind::Method: return call_method(*this, fn.self, fn.name, a);
        case FuncKind::Macro: return call_macro(fn, a, pos);
        case FuncKind::LoopCycle:
            if (a.pos.empty()) fail("no items for loop.cycle()");
            return a.pos[size_t(fn.self.i % int64_t(a.pos.size()))];
    }
    return Value();
}

Value Renderer::call_macro(const FuncObj& f, const Args& a, Pos pos) {
    (void)pos;
    const Stmt& m = *f.macro;
    if (macro_depth_ >= kMaxMacroDepth)
        fail("macro calls nest more than " + std::to_string(kMaxMacroDepth) + " deep (a recursive macro?)");
    std::shared_ptr<Scope> closure = f.closure.lock();
    if (!closure) closure = globals_;
    auto sc = child_of(closure);
    if (a.pos.size() > m.params.size())
        fail("macro '" + m.text + "' takes not more than " + std::to_string(m.params.size()) + " argument(s)");
    std::vector<bool> set(m.params.size(), false);
    for (size_t k = 0; k < a.pos.size(); ++k) {
        sc->set(m.params[k].first, a.pos[k]);
        set[k] = true;
    }
    for (const auto& [name, v] : a.kw) {
        size_t k = 0;
        while (k < m.params.size() && m.params[k].first != name) ++k;
        if (k == m.params.size()) fail("macro '" + m.text + "' has no argument '" + name + "'");
        if (set[k]) fail("macro '" + m.text + "' got multiple values for argument '" + name + "'");
        sc->set(name, v);
        set[k] = true;
    }
    auto saved_scope = scope_;
    scope_ = sc;
    for (size_t k = 0; k < m.params.size(); ++k) {
        if (set[k]) continue;
        if (m.params[k].second) {
            sc->set(m.params[k].first, eval(*m.params[k].second));
        } else {
            sc->set(m.params[k].first, make_undefined("'" + m.params[k].first + "' is undefined"));
        }
    }
    std::string buf;
    std::string* saved_out = out_;
    out_ = &buf;
    ++macro_depth_;
    exec(m.body);
    --macro_depth_;
    out_ = saved_out;
    scope_ = saved_scope;
    charge_bytes(buf.size());
    return make_str(std::move(buf));
}

std::string render_program(const Program& p, const nlohmann::ordered_json& context, const RenderHooks& hooks) {
    Renderer r(p, hooks);
    return r.run(context);
}

}  // namespace edge::tokenizer::jinja
