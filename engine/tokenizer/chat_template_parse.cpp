// Chat-template parser: the tokens of chat_template_lex.cpp into the tree of chat_template_impl.h,
// with jinja2's statements and expression grammar.
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "engine/tokenizer/chat_template_impl.h"

namespace edge::tokenizer::jinja {
namespace {

const char* describe(Tok t) {
    switch (t) {
        case Tok::Data: return "template text";
        case Tok::VarBegin: return "'{{'";
        case Tok::VarEnd: return "'}}'";
        case Tok::BlockBegin: return "'{%'";
        case Tok::BlockEnd: return "'%}'";
        case Tok::String: return "a string";
        case Tok::Int:
        case Tok::Float: return "a number";
        case Tok::End: return "the end of the template";
        default: return "a token";
    }
}

class Parser {
public:
    Parser(std::vector<Token> toks, std::string_view src, const std::vector<size_t>& lines)
        : toks_(std::move(toks)), src_(src), lines_(lines) {}

    Body parse_template() {
        std::string end;
        Body b = parse_body({}, &end);
        return b;
    }

private:
    struct DepthGuard {
        DepthGuard(Parser& p, size_t off) : p_(p) {
            if (++p_.depth_ > kMaxParseDepth)
                p_.error(off, "the template nests more than " + std::to_string(kMaxParseDepth) + " levels deep");
        }
        ~DepthGuard() { --p_.depth_; }
        Parser& p_;
    };

    [[noreturn]] void error(size_t off, const std::string& msg) { fail_at(pos_of(off), msg); }
    Pos pos_of(size_t off) const { return pos_at(src_, lines_, off); }
    const Token& cur() const { return toks_[i_]; }
    const Token& peek(size_t k = 1) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
    bool is_op(const char* op) const { return cur().type == Tok::Op && cur().text == op; }
    bool is_name(const char* name) const { return cur().type == Tok::Name && cur().text == name; }
    std::string what(const Token& t) const {
        if (t.type == Tok::Name || t.type == Tok::Op) return "'" + t.text + "'";
        return describe(t.type);
    }
    void expect_op(const char* op) {
        if (!is_op(op)) error(cur().off, std::string("expected '") + op + "', got " + what(cur()));
        ++i_;
    }
    std::string expect_name() {
        if (cur().type != Tok::Name) error(cur().off, "expected a name, got " + what(cur()));
        return toks_[i_++].text;
    }
    void expect_block_end(const std::string& stmt) {
        if (cur().type != Tok::BlockEnd)
            error(cur().off, "expected '%}' to end the '" + stmt + "' statement, got " + what(cur()));
        ++i_;
    }
    ExprPtr node(ExprKind k, size_t off) {
        auto e = std::make_unique<Expr>();
        e->kind = k;
        e->pos = pos_of(off);
        return e;
    }

    // Statements until `{% <one of ends> %}`; leaves the position after the end's name.
    Body parse_body(const std::vector<std::string>& ends, std::string* which) {
        Body body;
        while (true) {
            const Token& t = cur();
            if (t.type == Tok::End) {
                if (ends.empty()) return body;
                error(t.off, "unexpected end of template: expected '{% " + ends.back() + " %}'");
            }
            if (t.type == Tok::Data) {
                auto s = std::make_unique<Stmt>();
                s->kind = StmtKind::Text;
                s->pos = pos_of(t.off);
                s->text = t.text;
                body.push_back(std::move(s));
                ++i_;
                continue;
            }
            if (t.type == Tok::VarBegin) {
                auto s = std::make_unique<Stmt>();
                s->kind = StmtKind::Output;
                s->pos = pos_of(t.off);
                ++i_;
                s->expr = parse_tuple(true);
                if (cur().type != Tok::VarEnd) error(cur().off, "expected '}}', got " + what(cur()));
                ++i_;
                body.push_back(std::move(s));
                continue;
            }
            if (t.type != Tok::BlockBegin) error(t.off, "unexpected " + what(t));
            const Token& name = peek();
            if (name.type != Tok::Name) error(name.off, "expected a statement name after '{%', got " + what(name));
            if (std::find(ends.begin(), ends.end(), name.text) != ends.end()) {
                *which = name.text;
                i_ += 2;
                return body;
            }
            body.push_back(parse_statement());
        }
    }

    std::unique_ptr<Stmt> parse_statement() {
        const size_t begin = cur().off;
        ++i_;  // '{%'
        const Token& nt = cur();
        const std::string name = nt.text;
        DepthGuard guard(*this, nt.off);
        auto s = std::make_unique<Stmt>();
        s->pos = pos_of(begin);
        ++i_;
        std::string end;
        if (name == "if") {
            s->kind = StmtKind::If;
            ExprPtr cond = parse_tuple(false);
            expect_block_end("if");
            while (true) {
                Body b = parse_body({"elif", "else", "endif"}, &end);
                s->branches.emplace_back(std::move(cond), std::move(b));
                if (end == "elif") {
                    cond = parse_tuple(false);
                    expect_block_end("elif");
                    continue;
                }
                if (end == "else") {
                    expect_block_end("else");
                    s->else_body = parse_body({"endif"}, &end);
                }
                expect_block_end("endif");
                break;
            }
        } else if (name == "for") {
            s->kind = StmtKind::For;
            s->target = parse_target(false);
            if (!is_name("in")) error(cur().off, "expected 'in' in the 'for' statement, got " + what(cur()));
            ++i_;
            s->expr = parse_tuple(false);
            if (is_name("if")) {
                ++i_;
                s->cond = parse_tuple(true);
            }
            if (is_name("recursive")) error(cur().off, "recursive loops are not supported");
            expect_block_end("for");
            ++loop_depth_;
            s->body = parse_body({"else", "endfor"}, &end);
            --loop_depth_;
            if (end == "else") {
                expect_block_end("else");
                s->else_body = parse_body({"endfor"}, &end);
            }
            expect_block_end("endfor");
        } else if (name == "break" || name == "continue") {
            if (loop_depth_ == 0) error(nt.off, "'" + name + "' outside of a loop");
            s->kind = name == "break" ? StmtKind::Break : StmtKind::Continue;
            expect_block_end(name);
        } else if (name == "set") {
            s->target = parse_target(true);
            if (is_op("=")) {
                ++i_;
                s->kind = StmtKind::Set;
                s->expr = parse_tuple(true);
                expect_block_end("set");
            } else {
                if (s->target.kind == Target::Tuple) error(cur().off, "a block 'set' assigns one name");
                s->kind = StmtKind::SetBlock;
                if (is_op("|")) s->expr = parse_filters(nullptr, cur().off);
                expect_block_end("set");
                s->body = parse_body({"endset"}, &end);
                expect_block_end("endset");
            }
        } else if (name == "macro") {
            s->kind = StmtKind::Macro;
            s->text = expect_name();
            expect_op("(");
            while (!is_op(")")) {
                std::string p = expect_name();
                ExprPtr def;
                if (is_op("=")) {
                    ++i_;
                    def = parse_expression(true);
                }
                s->params.emplace_back(std::move(p), std::move(def));
                if (!is_op(")")) expect_op(",");
            }
            ++i_;
            expect_block_end("macro");
            const int saved = loop_depth_;
            loop_depth_ = 0;
            s->body = parse_body({"endmacro"}, &end);
            loop_depth_ = saved;
            expect_block_end("endmacro");
        } else if (name == "filter") {
            s->kind = StmtKind::FilterBlock;
            s->expr = parse_filters(nullptr, cur().off, true);
            expect_block_end("filter");
            s->body = parse_body({"endfilter"}, &end);
            expect_block_end("endfilter");
        } else if (name == "with") {
            s->kind = StmtKind::With;
            while (cur().type != Tok::BlockEnd) {
                if (!s->params.empty()) expect_op(",");
                std::string var = expect_name();
                expect_op("=");
                s->params.emplace_back(var, parse_expression(true));
            }
            expect_block_end("with");
            s->body = parse_body({"endwith"}, &end);
            expect_block_end("endwith");
        } else if (name == "generation") {
            s->kind = StmtKind::Body;
            expect_block_end("generation");
            s->body = parse_body({"endgeneration"}, &end);
            expect_block_end("endgeneration");
        } else if (name.rfind("end", 0) == 0 || name == "elif" || name == "else") {
            static const char* kOpeners[][2] = {{"endif", "if"},         {"elif", "if"},
                                                {"else", "if' or 'for"}, {"endfor", "for"},
                                                {"endset", "set"},       {"endmacro", "macro"},
                                                {"endfilter", "filter"}, {"endwith", "with"},
                                                {"endraw", "raw"},       {"endgeneration", "generation"}};
            for (auto& o : kOpeners)
                if (name == o[0]) error(nt.off, "'" + name + "' without a matching '" + o[1] + "'");
            error(nt.off, "unknown statement '" + name.substr(0, 40) + "'");
        } else {
            error(nt.off, "unknown statement '" + name.substr(0, 40) + "'");
        }
        return s;
    }

    Target parse_target(bool allow_attr) {
        Target t;
        t.pos = pos_of(cur().off);
        bool paren = false;
        if (is_op("(")) {
            paren = true;
            ++i_;
        }
        std::vector<Target> items;
        while (true) {
            Target one;
            one.pos = pos_of(cur().off);
            one.name = expect_name();
            if (allow_attr && is_op(".")) {
                ++i_;
                one.kind = Target::NsAttr;
                one.attr = expect_name();
            }
            items.push_back(std::move(one));
            if (!is_op(",")) break;
            ++i_;
            if (cur().type != Tok::Name) break;
        }
        if (paren) expect_op(")");
        if (items.size() == 1 && !paren) return std::move(items[0]);
        if (items.size() == 1 && paren) return std::move(items[0]);
        for (auto& x : items)
            if (x.kind == Target::NsAttr) fail_at(x.pos, "cannot unpack into a namespace attribute");
        t.kind = Target::Tuple;
        t.items = std::move(items);
        return t;
    }

    bool tuple_end() const {
        const Token& t = cur();
        if (t.type == Tok::VarEnd || t.type == Tok::BlockEnd || t.type == Tok::End) return true;
        if (t.type == Tok::Op && (t.text == ")" || t.text == "]" || t.text == "}")) return true;
        return false;
    }

    // Comma-separated expressions: a tuple when there is a comma.
    ExprPtr parse_tuple(bool with_condexpr) {
        const size_t off = cur().off;
        std::vector<ExprPtr> items;
        bool is_tuple = false;
        while (true) {
            if (!items.empty() && tuple_end()) break;
            items.push_back(parse_expression(with_condexpr));
            if (!is_op(",")) break;
            ++i_;
            is_tuple = true;
        }
        if (!is_tuple) return std::move(items[0]);
        auto e = node(ExprKind::Tuple, off);
        e->args = std::move(items);
        return e;
    }

    ExprPtr parse_expression(bool with_condexpr) {
        DepthGuard guard(*this, cur().off);
        if (!with_condexpr) return parse_or();
        ExprPtr e = parse_or();
        while (is_name("if")) {
            const size_t off = cur().off;
            ++i_;
            auto c = node(ExprKind::Cond, off);
            c->pos = e->pos;
            ExprPtr test = parse_or();
            ExprPtr other;
            if (is_name("else")) {
                ++i_;
                other = parse_expression(true);
            }
            c->args.push_back(std::move(e));
            c->args.push_back(std::move(test));
            c->args.push_back(std::move(other));
            e = std::move(c);
        }
        return e;
    }

    ExprPtr binary(const char* op, ExprPtr a, ExprPtr b, size_t off) {
        auto e = node(ExprKind::Binary, off);
        e->name = op;
        e->args.push_back(std::move(a));
        e->args.push_back(std::move(b));
        return e;
    }

    // One left-associative level `next (op next)*`: `ops` are operator tokens, or keyword names
    // when `keywords`.
    template <class Next>
    ExprPtr binary_chain(std::initializer_list<const char*> ops, bool keywords, Next next) {
        ExprPtr e = next();
        while (true) {
            const char* op = nullptr;
            for (const char* o : ops)
                if (keywords ? is_name(o) : is_op(o)) op = o;
            if (!op) return e;
            size_t off = cur().off;
            ++i_;
            e = binary(op, std::move(e), next(), off);
        }
    }

    ExprPtr parse_or() {
        return binary_chain({"or"}, true, [this] { return parse_and(); });
    }
    ExprPtr parse_and() {
        return binary_chain({"and"}, true, [this] { return parse_not(); });
    }
    ExprPtr parse_not() {
        if (is_name("not")) {
            DepthGuard guard(*this, cur().off);
            auto e = node(ExprKind::Unary, cur().off);
            ++i_;
            e->name = "not";
            e->args.push_back(parse_not());
            return e;
        }
        return parse_compare();
    }
    ExprPtr parse_compare() {
        const size_t off = cur().off;
        ExprPtr first = parse_math1();
        std::unique_ptr<Expr> cmp;
        while (true) {
            std::string op;
            if (cur().type == Tok::Op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                          cur().text == ">" || cur().text == "<=" || cur().text == ">=")) {
                op = cur().text;
                ++i_;
            } else if (is_name("in")) {
                op = "in";
                ++i_;
            } else if (is_name("not") && peek().type == Tok::Name && peek().text == "in") {
                op = "not in";
                i_ += 2;
            } else {
                break;
            }
            if (!cmp) {
                cmp = node(ExprKind::Compare, off);
                cmp->args.push_back(std::move(first));
            }
            cmp->ops.push_back(op);
            cmp->args.push_back(parse_math1());
        }
        return cmp ? std::move(cmp) : std::move(first);
    }
    ExprPtr parse_math1() {
        return binary_chain({"+", "-"}, false, [this] { return parse_concat(); });
    }
    ExprPtr parse_concat() {
        return binary_chain({"~"}, false, [this] { return parse_math2(); });
    }
    ExprPtr parse_math2() {
        return binary_chain({"*", "/", "//", "%"}, false, [this] { return parse_pow(); });
    }
    ExprPtr parse_pow() {
        return binary_chain({"**"}, false, [this] { return parse_unary(true); });
    }
    ExprPtr parse_unary(bool with_filter) {
        const size_t off = cur().off;
        ExprPtr e;
        if (is_op("-") || is_op("+")) {
            DepthGuard guard(*this, off);
            e = node(ExprKind::Unary, off);
            e->name = cur().text;
            ++i_;
            e->args.push_back(parse_unary(false));
        } else {
            e = parse_primary();
        }
        e = parse_postfix(std::move(e));
        if (with_filter) e = parse_filter_expr(std::move(e));
        return e;
    }

    // `item, item, ...` up to `close` (a trailing comma allowed), then past `close`.
    template <class Item>
    void comma_items(const char* close, Item item) {
        for (bool first = true; !is_op(close); first = false) {
            if (!first) expect_op(",");
            if (is_op(close)) break;
            item();
        }
        ++i_;
    }

    ExprPtr parse_primary() {
        const Token& t = cur();
        const size_t off = t.off;
        if (t.type == Tok::Name) {
            ++i_;
            auto e = node(ExprKind::Literal, off);
            if (t.text == "true" || t.text == "True") {
                e->literal = make_bool(true);
            } else if (t.text == "false" || t.text == "False") {
                e->literal = make_bool(false);
            } else if (t.text == "none" || t.text == "None") {
                e->literal = make_none();
            } else {
                e->kind = ExprKind::Name;
                e->name = t.text;
            }
            return e;
        }
        if (t.type == Tok::String) {
            std::string s;
            while (cur().type == Tok::String) s += toks_[i_++].text;
            auto e = node(ExprKind::Literal, off);
            e->literal = make_str(std::move(s));
            return e;
        }
        if (t.type == Tok::Int || t.type == Tok::Float) {
            ++i_;
            auto e = node(ExprKind::Literal, off);
            if (t.type == Tok::Int) {
                errno = 0;
                char* end = nullptr;
                long long v = std::strtoll(t.text.c_str(), &end, 10);
                if (errno == ERANGE) error(off, "integer literal " + excerpt(t.text) + " is too large");
                e->literal = make_int(v);
            } else {
                e->literal = make_float(std::strtod(t.text.c_str(), nullptr));
            }
            return e;
        }
        if (is_op("(")) {
            ++i_;
            if (is_op(")")) {
                ++i_;
                return node(ExprKind::Tuple, off);
            }
            ExprPtr inner = parse_tuple(true);
            expect_op(")");
            return inner;
        }
        if (is_op("[")) {
            ++i_;
            auto e = node(ExprKind::List, off);
            comma_items("]", [&] { e->args.push_back(parse_expression(true)); });
            return e;
        }
        if (is_op("{")) {
            ++i_;
            auto e = node(ExprKind::Dict, off);
            comma_items("}", [&] {
                e->args.push_back(parse_expression(true));
                expect_op(":");
                e->args.push_back(parse_expression(true));
            });
            return e;
        }
        error(off, "expected an expression, got " + what(t));
    }

    ExprPtr parse_postfix(ExprPtr e) {
        while (true) {
            const size_t off = cur().off;
            if (is_op(".")) {
                ++i_;
                if (cur().type == Tok::Int) {
                    auto it = node(ExprKind::Item, off);
                    it->pos = e->pos;
                    auto key = node(ExprKind::Literal, cur().off);
                    key->literal = make_int(std::strtoll(cur().text.c_str(), nullptr, 10));
                    ++i_;
                    it->args.push_back(std::move(e));
                    it->args.push_back(std::move(key));
                    e = std::move(it);
                    continue;
                }
                auto a = node(ExprKind::Attr, off);
                a->pos = e->pos;
                a->name = expect_name();
                a->args.push_back(std::move(e));
                e = std::move(a);
            } else if (is_op("[")) {
                ++i_;
                e = parse_subscript(std::move(e));
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr obj) {
        const size_t off = cur().off;
        ExprPtr parts[3];
        int n = 0;
        bool slice = false;
        if (!is_op(":")) parts[0] = parse_tuple(true);
        if (is_op(":")) {
            slice = true;
            ++i_;
            n = 1;
            if (!is_op("]") && !is_op(":")) parts[1] = parse_expression(true);
            if (is_op(":")) {
                ++i_;
                if (!is_op("]")) parts[2] = parse_expression(true);
            }
        }
        (void)n;
        expect_op("]");
        auto e = node(slice ? ExprKind::Slice : ExprKind::Item, off);
        e->pos = obj->pos;
        e->args.push_back(std::move(obj));
        if (slice) {
            for (auto& p : parts) e->args.push_back(std::move(p));
        } else {
            e->args.push_back(std::move(parts[0]));
        }
        return e;
    }

    // `callee(args)` at the `(`; the call takes the callee's position.
    ExprPtr parse_call(ExprPtr callee) {
        auto c = node(ExprKind::Call, cur().off);
        c->pos = callee->pos;
        c->args.push_back(std::move(callee));
        parse_call_args(*c);
        return c;
    }
    void parse_call_args(Expr& call) {
        expect_op("(");
        while (!is_op(")")) {
            if (is_op("*") || is_op("**")) error(cur().off, "*args and **kwargs in calls are not supported");
            if (cur().type == Tok::Name && peek().type == Tok::Op && peek().text == "=") {
                std::string k = cur().text;
                i_ += 2;
                call.kwargs.emplace_back(std::move(k), parse_expression(true));
            } else {
                if (!call.kwargs.empty()) error(cur().off, "a positional argument follows a keyword argument");
                call.args.push_back(parse_expression(true));
            }
            if (!is_op(")")) expect_op(",");
        }
        ++i_;
    }

    // `| name(args) | ...` (operand may be null for filter blocks and `set` blocks).
    ExprPtr parse_filters(ExprPtr e, size_t off, bool first_without_pipe = false) {
        (void)off;
        bool first = true;
        while (is_op("|") || (first && first_without_pipe)) {
            if (!(first && first_without_pipe)) ++i_;
            first = false;
            const size_t noff = cur().off;
            std::string name = expect_name();
            while (is_op(".")) {
                ++i_;
                name += "." + expect_name();
            }
            if (!has_filter(name)) error(noff, "unknown filter '" + name.substr(0, 40) + "'");
            auto f = node(ExprKind::Filter, noff);
            f->name = name;
            f->args.push_back(std::move(e));
            if (is_op("(")) parse_call_args(*f);
            e = std::move(f);
        }
        return e;
    }

    ExprPtr parse_filter_expr(ExprPtr e) {
        while (true) {
            if (is_op("|")) {
                e = parse_filters(std::move(e), cur().off);
            } else if (is_name("is")) {
                ++i_;
                auto t = node(ExprKind::Test, cur().off);
                if (is_name("not")) {
                    ++i_;
                    t->negated = true;
                }
                const size_t noff = cur().off;
                std::string name = expect_name();
                if (name == "none" || name == "true" || name == "false") {
                    // names that are also literals
                }
                if (!has_test(name)) error(noff, "unknown test '" + name.substr(0, 40) + "'");
                t->pos = pos_of(noff);
                t->name = name;
                t->args.push_back(std::move(e));
                if (is_op("(")) {
                    parse_call_args(*t);
                } else {
                    const Token& c = cur();
                    bool arg = (c.type == Tok::Name || c.type == Tok::String || c.type == Tok::Int ||
                                c.type == Tok::Float || (c.type == Tok::Op && (c.text == "[" || c.text == "{"))) &&
                               !(c.type == Tok::Name && (c.text == "else" || c.text == "or" || c.text == "and"));
                    if (c.type == Tok::Name && c.text == "is") error(c.off, "tests cannot be chained with 'is'");
                    if (arg) t->args.push_back(parse_postfix(parse_primary()));
                }
                e = std::move(t);
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    std::vector<Token> toks_;
    std::string_view src_;
    const std::vector<size_t>& lines_;
    size_t i_ = 0;
    int depth_ = 0;
    int loop_depth_ = 0;
};

}  // namespace

void parse_program(std::string_view text, Program& out) {
    // jinja2 normalizes newlines to "\n" and drops one trailing newline (keep_trailing_newline=False).
    std::string src;
    src.reserve(text.size());
    for (size_t k = 0; k < text.size(); ++k) {
        if (text[k] == '\r') {
            src += '\n';
            if (k + 1 < text.size() && text[k + 1] == '\n') ++k;
        } else {
            src += text[k];
        }
    }
    if (!src.empty() && src.back() == '\n') src.pop_back();
    std::vector<size_t> lines{0};
    for (size_t k = 0; k < src.size(); ++k)
        if (src[k] == '\n') lines.push_back(k + 1);
    std::vector<Token> toks = lex(src, lines);
    Parser parser(std::move(toks), src, lines);
    out.body = parser.parse_template();
}

}  // namespace edge::tokenizer::jinja
