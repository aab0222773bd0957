// Private to the chat-template renderer (chat_template*.cpp): values with Python semantics, the
// parsed tree, the lexer and parser entry points and the renderer. Not part of the engine's API.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/tokenizer/chat_template.h"

namespace edge::tokenizer::jinja {

// ---- limits: hostile templates fail with a clear error instead of crashing or hanging ----
constexpr int kMaxParseDepth = 256;             // nesting of expressions and blocks
constexpr int kMaxEvalDepth = 1536;             // nested evaluation, macro calls included
constexpr int kMaxMacroDepth = 256;             // nested macro calls
constexpr int kMaxValueDepth = 256;             // nesting of lists/dicts built or printed
constexpr size_t kMaxString = 16u << 20;        // any string value, and the output
constexpr int64_t kMaxRange = 100000;           // range() length (jinja's sandbox MAX_RANGE)
constexpr int64_t kMaxLoopIterations = 250000;  // loop iterations in one render, all loops (under kMaxWork)
constexpr size_t kMaxListSize = 1000000;        // elements of one list built by the template
// Evaluation steps, elements and bytes/64 in one render. Real templates take 20-100 per message
// (the fixtures in tests/data/chat: 114-520 for a 5-message conversation), so 4,000,000 leaves
// room for conversations of tens of thousands of messages; a release build does ~25 million a
// second. It was 60,000,000, and fuzz_chat_template found templates that used it all: 2-4 s and
// 700 MiB per render (30 s under the sanitizers).
constexpr int64_t kMaxWork = 4000000;
constexpr int kMaxNamespaces = 4096;  // namespace() objects in one render

struct Pos {
    int line = 0;
    int col = 0;
};

// Thrown inside the renderer only; render()/parse() turn it into an edge::Error.
struct Fail {
    std::string msg;
    Pos pos;
    bool has_pos = false;
};
[[noreturn]] void fail(std::string msg);
[[noreturn]] void fail_at(Pos p, std::string msg);
// A short, bounded excerpt of text for messages (quoted, at most ~40 characters).
std::string excerpt(std::string_view s);

// ---- values ----
enum class Type : uint8_t { Undefined, None, Bool, Int, Float, Str, List, Dict, Namespace, Func };

struct Value;
struct ListObj;
struct DictObj;
struct NamespaceObj;
struct FuncObj;

struct Value {
    Type type = Type::Undefined;
    union {
        bool b;
        int64_t i;
        double f;
    };
    // Str: std::string; List: ListObj; Dict: DictObj; Namespace: NamespaceObj; Func: FuncObj;
    // Undefined: std::string, the message an operation on it reports (may be null).
    std::shared_ptr<void> obj;

    Value() : i(0) {}
    bool is_undefined() const { return type == Type::Undefined; }
    bool is_none() const { return type == Type::None; }
    bool is_str() const { return type == Type::Str; }
    bool is_number() const { return type == Type::Int || type == Type::Float || type == Type::Bool; }
    bool is_list() const { return type == Type::List; }
    bool is_dict() const { return type == Type::Dict; }
    const std::string& str() const { return *static_cast<const std::string*>(obj.get()); }
    const ListObj& list() const { return *static_cast<const ListObj*>(obj.get()); }
    const DictObj& dict() const { return *static_cast<const DictObj*>(obj.get()); }
    NamespaceObj& ns() const { return *static_cast<NamespaceObj*>(obj.get()); }
    const FuncObj& func() const { return *static_cast<const FuncObj*>(obj.get()); }
};

struct ListObj {
    std::vector<Value> items;
    bool tuple = false;
    int depth = 1;
};
struct DictObj {
    std::vector<std::pair<Value, Value>> items;  // insertion order, unique keys
    int depth = 1;
    const Value* find(const Value& key) const;
};
struct NamespaceObj {
    std::vector<std::pair<std::string, Value>> attrs;
    const Value* find(const std::string& name) const;
    void set(const std::string& name, Value v);
};

struct Stmt;
struct Scope;
enum class FuncKind : uint8_t { Global, Method, Macro, LoopCycle };
struct FuncObj {
    FuncKind kind = FuncKind::Global;
    std::string name;
    Value self;                    // Method: the bound object; LoopCycle: the 0-based index
    const Stmt* macro = nullptr;   // Macro: its definition
    std::weak_ptr<Scope> closure;  // Macro: the scope it was defined in
};

Value make_none();
Value make_bool(bool b);
Value make_int(int64_t i);
Value make_float(double f);
Value make_str(std::string s);
Value make_undefined(std::string hint);
Value make_list(std::vector<Value> items, bool tuple = false);
Value make_dict(std::vector<std::pair<Value, Value>> items);
Value make_func(FuncObj f);
Value from_json(const nlohmann::ordered_json& j, int depth = 0);

// Python semantics.
bool truthy(const Value& v);
std::string type_name(const Value& v);    // 'str', 'int', 'list', 'dict', 'NoneType', ...
std::string object_repr(const Value& v);  // jinja's object_type_repr: 'dict object', 'None'
std::string to_str(const Value& v);       // str(v)
std::string repr(const Value& v);         // repr(v)
bool py_eq(const Value& a, const Value& b, int depth = 0);
int py_cmp(const Value& a, const Value& b, const char* op);  // <0, 0, >0; fails when unorderable
double as_double(const Value& v);
bool contains(const Value& container, const Value& item);
[[noreturn]] void undefined_error(const Value& u);
std::vector<Value> iterate(const Value& v);  // list items, dict keys, characters; undefined: empty
int64_t py_len(const Value& v);

struct JsonOptions {
    std::optional<std::string> indent;  // none: one line
    std::string item_sep = ", ";
    std::string key_sep = ": ";
    bool sort_keys = false;
    bool ensure_ascii = false;
};
std::string to_json(const Value& v, const JsonOptions& o);

// Unicode helpers over UTF-8 (invalid bytes are taken one at a time, as U+FFFD-free bytes).
std::vector<std::string_view> code_points(std::string_view s);
void append_utf8(std::string& out, uint32_t c);  // one code point, encoded
bool is_py_space(std::string_view cp);           // str.isspace() for one code point
bool is_word_cp(std::string_view cp);            // regex \w for one code point (common scripts)
std::string py_strip(std::string_view s, int mode, const std::optional<std::string>& chars);  // 1 l, 2 r, 3 both
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_title(std::string_view s);       // str.title()
std::string py_capitalize(std::string_view s);  // str.capitalize()
std::vector<std::string> py_splitlines(std::string_view s);

// ---- the parsed tree ----
enum class ExprKind : uint8_t {
    Literal,
    Name,
    List,
    Tuple,
    Dict,
    Attr,
    Item,
    Slice,
    Call,
    Filter,
    Test,
    Unary,
    Binary,
    Compare,
    Cond
};
struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct Expr {
    ExprKind kind;
    Pos pos;
    Value literal;              // Literal
    std::string name;           // Name, Attr, Filter, Test: the name; Unary/Binary: the operator
    std::vector<ExprPtr> args;  // operands; Call: callee then positional; Filter/Test: operand then args
    std::vector<std::pair<std::string, ExprPtr>> kwargs;  // Call, Filter, Test keyword arguments
    std::vector<std::string> ops;                         // Compare: the operators between args
    bool negated = false;                                 // Test: `is not`
};

struct Target {
    enum Kind : uint8_t { Name, Tuple, NsAttr } kind = Name;
    std::string name, attr;
    std::vector<Target> items;
    Pos pos;
};

enum class StmtKind : uint8_t { Text, Output, If, For, Break, Continue, Set, SetBlock, Macro, FilterBlock, With, Body };
struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;
struct Stmt {
    StmtKind kind;
    Pos pos;
    std::string text;                                // Text; Macro: its name
    ExprPtr expr;                                    // Output, For iter, Set value, FilterBlock filters
    ExprPtr cond;                                    // For `if` filter
    std::vector<std::pair<ExprPtr, Body>> branches;  // If: (condition, body) for if and each elif
    Target target;                                   // For, Set, SetBlock
    Body body, else_body;
    std::vector<std::pair<std::string, ExprPtr>> params;  // Macro params (default or null); With assignments
};

struct Program {
    std::string origin;
    Body body;
};

// ---- the lexer (chat_template_lex.cpp) ----
enum class Tok : uint8_t { Data, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };

struct Token {
    Tok type;
    std::string text;  // Data: the text; Name/Op/Int/Float: the token; String: the decoded value
    size_t off;        // byte offset in the normalized source
};

// Splits normalized source (newlines are "\n"; line_starts holds each line's byte offset) into
// tokens, the last one Tok::End, applying the whitespace controls (errors are thrown as Fail).
std::vector<Token> lex(std::string_view src, const std::vector<size_t>& line_starts);
// The line and column (1-based, in code points) of byte offset `off` in that source.
Pos pos_at(std::string_view src, const std::vector<size_t>& line_starts, size_t off);

// Parses a template (chat_template_parse.cpp; errors are thrown as Fail with a position).
void parse_program(std::string_view text, Program& out);

// Renders; throws Fail.
std::string render_program(const Program& p, const nlohmann::ordered_json& context, const RenderHooks& hooks);

// ---- renderer internals shared by the evaluator and the builtins ----
struct Args {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
};
// Binds arguments to parameter names (positional first, then keywords); unknown or repeated
// arguments fail naming `fn`. Unset parameters are nullopt.
std::vector<std::optional<Value>> bind_args(const Args& a, std::initializer_list<const char*> names,
                                            const std::string& fn);

// printf-style `fmt % args` (args: a tuple, else one value) for %s %r %d %i %f %%: the `%`
// operator and the `format` filter.
Value percent_format(const std::string& fmt, const Value& args);

// Helpers shared by the filters (chat_template_filters.cpp) and the methods
// (chat_template_methods.cpp).
inline bool is_int(const Value& v) { return v.type == Type::Int || v.type == Type::Bool; }
int64_t int_of(const Value& v, const char* what);      // an int (or bool), else fails naming `what`
std::string str_of(const Value& v, const char* what);  // a str, else fails naming `what`
inline bool is_none_or_unset(const std::optional<Value>& v) { return !v || v->is_none(); }
inline Value make_tuple2(Value a, Value b) { return make_list({std::move(a), std::move(b)}, true); }
// str.replace: the first `count` occurrences of `old` (all when count < 0); fails past kMaxString.
std::string replace_all(const std::string& s, const std::string& old, const std::string& rep, int64_t count);
template <size_t N>
bool in_list(const char* const (&list)[N], const std::string& name) {
    for (const char* x : list)
        if (name == x) return true;
    return false;
}

class Renderer;
// Filters and tests (chat_template_filters.cpp), methods and globals (chat_template_methods.cpp).
// `has_*` answers at parse time.
bool has_filter(const std::string& name);
bool has_test(const std::string& name);
Value apply_filter(Renderer& r, const std::string& name, const Value& v, const Args& a);
bool apply_test(Renderer& r, const std::string& name, const Value& v, const Args& a);
Value get_attr(Renderer& r, const Value& obj, const std::string& name);  // obj.name
Value get_item(Renderer& r, const Value& obj, const Value& key);         // obj[key]
Value call_method(Renderer& r, const Value& self, const std::string& name, const Args& a);
Value call_global(Renderer& r, const std::string& name, const Args& a);

class Renderer {
public:
    Renderer(const Program& p, const RenderHooks& hooks) : program_(p), hooks_(hooks) {}
    std::string run(const nlohmann::ordered_json& context);

    // Accounting: charge(n) adds n work units and fails past kMaxWork.
    void charge(int64_t n);
    void charge_bytes(size_t n) { charge(int64_t(n / 64) + 1); }
    // iterate(v), charged one unit per element before the elements are made: iterating a string
    // makes a one-character string per code point, so a 16 MiB string (charged 256 Ki as bytes)
    // would become 16 million values, over a gigabyte (fuzz_chat_template: `s | sort`).
    std::vector<Value> items_of(const Value& v);
    Value call(const Value& f, const Args& a, Pos pos);
    Value new_namespace();
    const RenderHooks& hooks() const { return hooks_; }

private:
    enum class Flow : uint8_t { Normal, Break, Continue };
    Flow exec(const Body& b);
    Flow exec_stmt(const Stmt& s);
    Flow exec_for(const Stmt& s);
    void exec_set(const Stmt& s);
    void assign(const Target& t, const Value& v);
    Value eval(const Expr& e);
    Value eval_inner(const Expr& e);
    Value eval_binary(const Expr& e);
    Value eval_compare(const Expr& e);
    Args eval_args(const Expr& e, size_t first);
    Value call_macro(const FuncObj& f, const Args& a, Pos pos);
    void emit(std::string_view s);
    Value lookup(const std::string& name) const;

    struct DepthGuard {
        explicit DepthGuard(Renderer& r);
        ~DepthGuard() { --r_.depth_; }
        Renderer& r_;
    };

    const Program& program_;
    const RenderHooks& hooks_;
    std::shared_ptr<Scope> globals_;
    std::shared_ptr<Scope> scope_;
    std::string* out_ = nullptr;
    Value block_input_;  // the captured body a filter block or set block filters
    int depth_ = 0;
    int macro_depth_ = 0;
    int64_t work_ = 0;
    int64_t iterations_ = 0;
    std::vector<std::shared_ptr<void>> namespaces_;  // every namespace made, emptied at the end
};

}  // namespace edge::tokenizer::jinja
